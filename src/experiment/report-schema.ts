// Reading a RunReport back (an imported file, a recorded run, a stored run): the parts the app
// draws from are checked with zod, so a bad file gets a message naming what is wrong instead of
// a broken page. Numbers written as null by JSON (NaN) are accepted where a metric may be NaN.
// Intervals and paired differences are restated from the per-seed metrics by today's rules
// (stats.ts: uncut t intervals, the sign-flip p-value, no claim under MIN_CLAIM_SEEDS seeds), so a
// report written under older rules reads as a new one would; every measured number stays as it is.
// The same schema, as JSON Schema, is what other languages read a report by
// (schema/run-report.schema.json, written by scripts/report-json-schema.ts).
import { z } from "zod";
import { benchmarkModule } from "../benchmarks/registry";
import type { BenchmarkModule } from "../benchmarks/types";
import { CONDITIONS, validateConfig, type ExperimentConfig } from "./config";
import { heldoutDetail, REPORT_SCHEMA, type RunReport } from "./experiment";
import { pairedDifference, summarize } from "./stats";

const num = z.number().nullable();
const summary = z
  .looseObject({
    mean: z.number(),
    lo: z.number().describe("lower end of the 95% Student-t interval over seeds"),
    hi: z.number().describe("upper end of the 95% Student-t interval over seeds"),
    sd: z.number().optional().describe("sample standard deviation over seeds"),
    n: z.number().optional().describe("seeds"),
  })
  .describe("a metric over seeds: its mean and 95% interval");
// metrics added after the first reports, and differences, may be NaN (written as null)
const summaryOrNaN = summary.extend({ mean: num, lo: num, hi: num });
const paired = summaryOrNaN
  .extend({
    excludesZero: z
      .boolean()
      .optional()
      .describe("the interval lies on one side of 0, with at least 4 seeds"),
    p: z
      .number()
      .optional()
      .describe(
        "two-sided sign-flip permutation p-value over seeds; absent in reports written before it (collapse-lab restates it on reading)",
      ),
  })
  .describe("a paired difference a − b over the seeds both conditions ran");
const point = z
  .looseObject({
    step: z.number().describe("RL steps done"),
    train: num.describe("success against the training simulator"),
    heldout: num.describe("success against the held-out panel"),
    human: num.describe("success against the humans"),
    entropy: num.describe("the policy's mean per-turn entropy with humans, nats"),
    reward: num.optional().describe("mean reward with humans"),
  })
  .describe("one evaluation during training (null: not measured, or NaN)");
const seed = z
  .looseObject({
    seed: z.number(),
    trainSuccess: z.number(),
    heldoutSuccess: z.number(),
    humanSuccess: z.number(),
    policyEntropy: z.number(),
    humanReward: num.optional(),
    distinct2: num.optional().describe("distinct-2 over the policy's act sequences with humans"),
    heldoutByMember: z
      .record(z.string(), num)
      .optional()
      .describe("held-out success against each panel member"),
    curve: z.array(point),
  })
  .describe("one seed's final metrics and its learning curve");
const comparison = z
  .looseObject({
    a: z.enum(CONDITIONS),
    b: z.enum(CONDITIONS),
    metric: z.string().describe("the metric compared, a key of a condition's summary"),
    difference: paired,
    byMember: z
      .record(z.string(), paired)
      .optional()
      .describe("held-out success only: the difference against each panel member"),
    bootstrap: z
      .looseObject({ lo: z.number(), hi: z.number(), level: z.number(), draws: z.number() })
      .optional()
      .describe("held-out success only: a hierarchical bootstrap interval (seeds, then members)"),
  })
  .describe("condition a against condition b on one metric, paired by seed");
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
export const ReportSchema = z
  .looseObject({
    schema: z.literal(REPORT_SCHEMA),
    preset: z
      .string()
      .nullable()
      .optional()
      .describe("the preset run, or null for a custom config"),
    config: z.unknown().describe("the resolved experiment config (docs/config.md)"),
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
            humanReward: summaryOrNaN.optional(),
            distinct2: summaryOrNaN.optional(),
          }),
        }),
      )
      .min(1),
    comparisons: z.array(comparison).optional(),
    simulators: z.array(z.unknown()),
    pretraining: pretraining.optional(),
    store: store.optional(),
  })
  .describe(
    "A collapse-lab RunReport: one experiment's conditions, each over seeds, and their paired comparisons",
  );

/** The RunReport's JSON Schema (draft 2020-12), for readers in other languages. */
export function runReportJsonSchema(): Record<string, unknown> {
  const { $schema, ...schema } = z.toJSONSchema(ReportSchema, { io: "input" });
  return { $schema, title: "collapse-lab RunReport", ...schema };
}

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
