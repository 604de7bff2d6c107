// Reading a RunReport back (an imported file, a recorded run, a stored run): the parts the app
// draws from are checked with zod, so a bad file gets a message naming what is wrong instead of
// a broken page. Numbers written as null by JSON (NaN) are accepted where a metric may be NaN.
// Intervals and paired differences are restated from the per-seed metrics by today's rules
// (stats.ts: uncut t intervals, the sign-flip p-value, no claim under MIN_CLAIM_SEEDS seeds), so a
// report written under older rules reads as a new one would; every measured number stays as it is.
import { z } from "zod";
import { benchmarkModule } from "../benchmarks/registry";
import type { BenchmarkModule } from "../benchmarks/types";
import { CONDITIONS, validateConfig, type ExperimentConfig } from "./config";
import { heldoutDetail, REPORT_SCHEMA, type RunReport } from "./experiment";
import { pairedDifference, summarize } from "./stats";

const num = z.number().nullable();
const summary = z.looseObject({ mean: z.number(), lo: z.number(), hi: z.number() });
const point = z.looseObject({
  step: z.number(),
  train: num,
  heldout: num,
  human: num,
  entropy: num,
});
const seed = z.looseObject({
  seed: z.number(),
  trainSuccess: z.number(),
  heldoutSuccess: z.number(),
  humanSuccess: z.number(),
  policyEntropy: z.number(),
  curve: z.array(point),
});
// where each pretrained model came from; reports recorded before the store have neither part
const pretraining = z.array(
  z.looseObject({
    seed: z.number(),
    models: z
      .array(
        z.looseObject({
          model: z.string(),
          key: z.string(),
          source: z.enum(["store", "trained"]),
          problem: z.string().optional(),
        }),
      )
      .optional(),
  }),
);
const store = z.looseObject({
  location: z.string().nullable(),
  loaded: z.number(),
  trained: z.number(),
  messages: z.array(z.string()),
});
const ReportSchema = z.looseObject({
  schema: z.literal(REPORT_SCHEMA),
  config: z.unknown(),
  env: z.looseObject({ backend: z.string(), fallback: z.string().optional() }),
  conditions: z
    .array(
      z.looseObject({
        id: z.enum(CONDITIONS),
        seeds: z.array(seed).min(1),
        summary: z.looseObject({
          trainSuccess: summary,
          heldoutSuccess: summary,
          humanSuccess: summary,
          policyEntropy: summary,
        }),
      }),
    )
    .min(1),
  simulators: z.array(z.unknown()),
  pretraining: pretraining.optional(),
  store: store.optional(),
});

export class ReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReportError";
  }
}

/** Parses and checks a RunReport from JSON text; throws ReportError with a readable reason. */
export function parseReport(text: string): RunReport {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ReportError(`not JSON: ${(e as Error).message}`);
  }
  if (typeof data !== "object" || data === null)
    throw new ReportError("not a RunReport: expected a JSON object");
  const schema = (data as { schema?: unknown }).schema;
  if (schema !== REPORT_SCHEMA)
    throw new ReportError(
      `not a RunReport: "schema" is ${JSON.stringify(schema)}, expected "${REPORT_SCHEMA}"`,
    );
  const r = ReportSchema.safeParse(data);
  if (!r.success) {
    const first = r.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`);
    throw new ReportError(`RunReport is malformed — ${first.join("; ")}`);
  }
  let config: ExperimentConfig;
  try {
    config = validateConfig((data as { config: unknown }).config);
  } catch (e) {
    throw new ReportError(`RunReport's config is invalid — ${(e as Error).message}`);
  }
  benchmarkModule(config.benchmark).upgradeReport?.(
    data as Parameters<NonNullable<BenchmarkModule["upgradeReport"]>>[0],
  );
  restateIntervals(data as RunReport);
  return data as RunReport;
}

/**
 * Recomputes every summary's interval and every paired difference from the seeds' metrics, where
 * they are finite numbers (a metric that was NaN, or is missing from older seeds, keeps its entry).
 */
export function restateIntervals(report: RunReport): void {
  const values = (seeds: readonly object[], key: string) => {
    const xs = seeds.map((s) => (s as Record<string, unknown>)[key]);
    return xs.every((x): x is number => typeof x === "number" && Number.isFinite(x)) ? xs : null;
  };
  for (const c of report.conditions)
    for (const [key, old] of Object.entries(c.summary)) {
      const xs = values(c.seeds, key);
      if (xs) (c.summary as Record<string, unknown>)[key] = { ...old, ...summarize(xs) };
    }
  for (const cmp of report.comparisons ?? []) {
    const a = report.conditions.find((c) => c.id === cmp.a);
    const b = report.conditions.find((c) => c.id === cmp.b);
    if (!a || !b) continue;
    // paired by seed, whatever order the file lists them in
    const seeds = a.seeds.map((s) => s.seed);
    const bBySeed = new Map(b.seeds.map((s) => [s.seed, s]));
    if (!seeds.every((s) => bBySeed.has(s)) || seeds.length !== b.seeds.length) continue;
    const xa = values(a.seeds, cmp.metric);
    const xb = values(
      seeds.map((s) => bBySeed.get(s)!),
      cmp.metric,
    );
    if (xa && xb) cmp.difference = pairedDifference(xa, xb);
    if (cmp.metric === "heldoutSuccess")
      Object.assign(
        cmp,
        heldoutDetail(
          a.seeds,
          seeds.map((s) => bBySeed.get(s)!),
        ),
      );
  }
}
