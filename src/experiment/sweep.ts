// Dose-response sweeps (docs/config.md#sweeps): a preset run at every point of a grid of settings
// (one list of values per config path, in the language of `--set`; the points are their product),
// one RunReport per point, and a summary of the effects against the swept values: each point's
// paired differences vs `single`, and, over simulator.gamma, the collapse's cost
// single(γ = 1) − single(γ) paired over seeds. Pure: the CLI (src/cli/sweep-command.ts) and the app
// run the points as ordinary runs; this file plans them, shares their pretraining and sums them up.
import { z } from "zod";
import { CONDITIONS, ConfigError, type ConditionId, type ExperimentConfig } from "./config";
import { configDifferences } from "./config-diff";
import { applySet, validateConfig } from "./config";
import type { RunReport, SummaryMetric, TaskCache } from "./experiment";
import { pairedDifference, type PairedSummary, type Summary } from "./stats";
import { canonicalJson } from "./store";

export const SWEEP_SCHEMA = "collapse-lab/sweep@1";

/** The file a sweep's summary is written to, beside its points' reports. */
export const SWEEP_FILE = "sweep.json";

/** The path whose value 1 is the no-collapse point, against which the collapse's cost is taken. */
export const GAMMA_PATH = "simulator.gamma";

/** The metrics a point's effects are given for: those the run report compares with `single`. */
export const EFFECT_METRICS = ["heldoutSuccess", "humanSuccess", "policyEntropy"] as const;
export type EffectMetric = (typeof EFFECT_METRICS)[number];

/** Whether a report's metric is one of the headline metrics a sweep summarises. */
export const isEffectMetric = (metric: string): metric is EffectMetric =>
  (EFFECT_METRICS as readonly string[]).includes(metric);

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** One swept setting: a config path and the values it takes, in the order given. */
export interface SweepAxis {
  path: string;
  values: Json[];
}

/** A bad grid: said in one line before any work. */
export class SweepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SweepError";
  }
}

// ---------------------------------------------------------------------------------------------
// the grid

/** Splits at the commas outside brackets, braces and double-quoted strings. */
export function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth--;
    else if (c === "," && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

/** A value as `--set` reads it: JSON, else the text as a string. */
function readValue(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

/** A value as it is written in a point's name and in `--set`: strings bare, the rest as JSON. */
export const valueText = (v: Json): string => (typeof v === "string" ? v : canonicalJson(v));

/**
 * Reads one `--set-grid path=v1,v2,…`: each value as `--set` reads it (JSON, else a string; commas
 * inside brackets, braces or quotes do not split). An empty list, an empty value or a value given
 * twice is refused.
 */
export function parseGridSpec(spec: string): SweepAxis {
  const eq = spec.indexOf("=");
  const flag = `--set-grid ${spec}`;
  if (eq <= 0) throw new SweepError(`${flag}: expected path=value,value,…`);
  const path = spec.slice(0, eq).trim();
  const list = spec.slice(eq + 1).trim();
  if (!list) throw new SweepError(`${flag}: no values; give one or more, separated by commas`);
  const texts = splitTopLevel(list).map((t) => t.trim());
  const empty = texts.findIndex((t) => t === "");
  if (empty >= 0) throw new SweepError(`${flag}: value ${empty + 1} is empty`);
  const values = texts.map(readValue);
  const seen = new Map<string, string>();
  values.forEach((v, i) => {
    const key = canonicalJson(v);
    const first = seen.get(key);
    if (first !== undefined)
      throw new SweepError(
        `${flag}: ${texts[i]} is given twice${first === texts[i] ? "" : ` (as ${first} and ${texts[i]})`}`,
      );
    seen.set(key, texts[i]);
  });
  return { path, values };
}

/** A path given twice (two grids, or a grid and a --set) is refused: which one counts would be unclear. */
export function checkGrid(grid: readonly SweepAxis[], sets: readonly string[]): void {
  if (grid.length === 0) throw new SweepError("no --set-grid: a sweep needs one or more");
  const setPaths = sets.map((s) => s.slice(0, Math.max(0, s.indexOf("="))).trim());
  grid.forEach((axis, i) => {
    if (grid.findIndex((a) => a.path === axis.path) !== i)
      throw new SweepError(`--set-grid ${axis.path} is given twice; give its values in one list`);
    if (setPaths.includes(axis.path))
      throw new SweepError(
        `${axis.path} is given by --set and by --set-grid; remove one (the grid's values replace --set's)`,
      );
  });
}

/** One point of a grid: its values (one per axis, in the grid's order) and their `--set` form. */
export interface PointSpec {
  name: string;
  values: Json[];
  sets: string[];
}

/** A name that is safe as a file name on every system and in a URL. */
const fileSafe = (s: string) => s.replace(/[^A-Za-z0-9._=,+-]/g, "_");

/** The grid's points: the product of its axes, the last axis varying fastest. */
export function gridPoints(grid: readonly SweepAxis[]): PointSpec[] {
  let combos: Json[][] = [[]];
  for (const axis of grid) combos = combos.flatMap((c) => axis.values.map((v) => [...c, v]));
  const used = new Set<string>();
  return combos.map((values) => {
    const parts = grid.map((a, i) => `${a.path}=${valueText(values[i])}`);
    let name = fileSafe(parts.join("_"));
    for (let k = 2; used.has(name.toLowerCase()); k++) name = `${fileSafe(parts.join("_"))}-${k}`;
    used.add(name.toLowerCase()); // case-insensitive file systems
    return { name, values, sets: grid.map((a, i) => `${a.path}=${JSON.stringify(values[i])}`) };
  });
}

/** A point with its resolved config. */
export interface PlannedPoint extends PointSpec {
  config: ExperimentConfig;
}

/**
 * Every point's config, resolved as `run` resolves `--set`: `resolve(sets)` is the run's config with
 * those assignments after the fixed ones (it throws ConfigError). Each axis value is first checked
 * alone, so a refused value is named; then every point, and two points that would run the same
 * experiment are refused. Nothing runs before all are good.
 */
export function planSweep(
  grid: readonly SweepAxis[],
  sets: readonly string[],
  resolve: (sets: string[]) => ExperimentConfig,
): PlannedPoint[] {
  checkGrid(grid, sets);
  const reword = (what: string, e: unknown): never => {
    if (e instanceof ConfigError || e instanceof SweepError)
      throw new SweepError(`${what}: ${e.message.replace(/^--set [^:]*: /, "")}`);
    throw e;
  };
  for (const axis of grid)
    for (const v of axis.values) {
      const set = `${axis.path}=${JSON.stringify(v)}`;
      try {
        resolve([set]);
      } catch (e) {
        reword(`--set-grid ${axis.path}=${valueText(v)}`, e);
      }
    }
  const points = gridPoints(grid).map((p) => {
    try {
      return { ...p, config: resolve(p.sets) };
    } catch (e) {
      return reword(`the point ${p.name}`, e);
    }
  });
  const seen = new Map<string, string>();
  for (const p of points) {
    const key = canonicalJson(p.config);
    const first = seen.get(key);
    if (first !== undefined)
      throw new SweepError(`the points ${first} and ${p.name} are the same experiment`);
    seen.set(key, p.name);
  }
  return points;
}

// ---------------------------------------------------------------------------------------------
// pretraining shared between points

const isPretrainKey = (key: string) => key.startsWith("pretrain:");

/**
 * A point's task cache whose pretraining is shared with the sweep's other points. Pretraining tasks
 * are keyed by their job's store key (what the model depends on: not γ, for one), so a model
 * pretrained for one point stands in for another point's same job; it is copied into this point's
 * own cache too, which stays complete on its own. `shared` holds every model this sweep has seen;
 * `onShared` is called for each one a point took from there instead of pretraining.
 */
export function sharePretraining(
  own: TaskCache,
  shared: Map<string, unknown>,
  onShared?: () => void,
): TaskCache {
  return {
    async get(key) {
      const kept = await own.get(key);
      if (kept !== undefined) {
        if (isPretrainKey(key)) shared.set(key, kept);
        return kept;
      }
      if (!isPretrainKey(key) || !shared.has(key)) return undefined;
      const value = shared.get(key);
      await own.put(key, value);
      onShared?.();
      return value;
    },
    async put(key, value) {
      await own.put(key, value);
      if (isPretrainKey(key)) shared.set(key, value);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the summary

/** A paired difference of one metric. */
export interface SweepEffect {
  metric: EffectMetric;
  difference: PairedSummary;
}

/** A comparison of a point's report: condition a − b, paired over seeds. */
export interface SweepComparison extends SweepEffect {
  a: ConditionId;
  b: ConditionId;
}

export interface SweepPoint {
  name: string;
  values: Json[]; // one per axis of the grid, in its order
  sets: string[]; // the same as --set assignments, applied after the sweep's own
  report: string; // the point's RunReport, a file beside the summary
  seeds: number[];
  /** Each condition's means and t intervals over seeds, as in the report. */
  conditions: { id: ConditionId; summary: Partial<Record<SummaryMetric, Summary>> }[];
  /** The report's paired differences vs `single`. */
  comparisons: SweepComparison[];
  /** single(γ = 1) − single(this point's γ), paired over seeds: what the collapse costs. */
  cost?: { baseline: string; effects: SweepEffect[] };
  totalMs: number; // the point's wall time (varies run to run, unlike everything else here)
}

export interface SweepSummary {
  schema: typeof SWEEP_SCHEMA;
  preset: string;
  backend: string;
  /** The config every point starts from: the preset with the sweep's --seeds, --seed-base and --set. */
  config: ExperimentConfig;
  sets: string[]; // the sweep's --set, already in `config`
  grid: SweepAxis[];
  points: SweepPoint[];
  /** Why a point has no cost, when the grid sweeps γ and some do not. */
  costNotes?: string[];
}

const SUMMARY_KEYS = ["trainSuccess", "heldoutSuccess", "humanSuccess", "policyEntropy"] as const;

/** Condition a − b of one metric, paired by seed; null when the two were not run on the same seeds. */
function paired(
  a: RunReport["conditions"][number],
  b: RunReport["conditions"][number],
  metric: EffectMetric,
): PairedSummary | null {
  const bBySeed = new Map(b.seeds.map((s) => [s.seed, s[metric]]));
  if (a.seeds.length !== b.seeds.length || !a.seeds.every((s) => bBySeed.has(s.seed))) return null;
  const xa = a.seeds.map((s) => s[metric]);
  const xb = a.seeds.map((s) => bBySeed.get(s.seed)!);
  if (![...xa, ...xb].every(Number.isFinite)) return null;
  return pairedDifference(xa, xb);
}

/** The point whose settings are this one's but for γ = 1, if the grid has it. */
function gammaBaseline(grid: readonly SweepAxis[], points: readonly PointSpec[], p: PointSpec) {
  const g = grid.findIndex((a) => a.path === GAMMA_PATH);
  return points.find(
    (q) =>
      q.values[g] === 1 &&
      q.values.every((v, i) => i === g || canonicalJson(v) === canonicalJson(p.values[i])),
  );
}

/**
 * The summary of a finished sweep: each point's report, named by `reportFile(point)`, reduced to
 * its conditions' summaries and paired differences, and, when the grid sweeps simulator.gamma
 * through 1, each point's collapse cost against the point with the same other settings at γ = 1.
 */
export function summarizeSweep(
  run: { preset: string; backend: string; config: ExperimentConfig; sets: readonly string[] },
  grid: readonly SweepAxis[],
  points: readonly (PointSpec & { report: RunReport; file: string })[],
): SweepSummary {
  const costNotes: string[] = [];
  const sweepsGamma = grid.some((a) => a.path === GAMMA_PATH && a.values.includes(1));
  const out: SweepPoint[] = points.map((p) => {
    const r = p.report;
    const point: SweepPoint = {
      name: p.name,
      values: p.values,
      sets: p.sets,
      report: p.file,
      seeds: r.conditions[0].seeds.map((s) => s.seed),
      conditions: r.conditions.map((c) => ({
        id: c.id,
        summary: Object.fromEntries(SUMMARY_KEYS.map((k) => [k, c.summary[k]])),
      })),
      comparisons: r.comparisons
        .filter((c) => isEffectMetric(c.metric))
        .map((c) => ({
          a: c.a,
          b: c.b,
          metric: c.metric as EffectMetric,
          difference: c.difference,
        })),
      totalMs: r.timing.totalMs,
    };
    if (!sweepsGamma) return point;
    const base = gammaBaseline(grid, points, p);
    const baseReport = points.find((q) => q.name === base?.name)?.report;
    const single = r.conditions.find((c) => c.id === "single");
    const baseSingle = baseReport?.conditions.find((c) => c.id === "single");
    if (!base || !single || !baseSingle) {
      costNotes.push(
        `${p.name}: no cost (${!single ? "the point has no single condition" : "no point at γ = 1 with its other settings"})`,
      );
      return point;
    }
    const effects = EFFECT_METRICS.flatMap((metric) => {
      const d = paired(baseSingle, single, metric);
      return d ? [{ metric, difference: d }] : [];
    });
    if (effects.length === 0) {
      costNotes.push(`${p.name}: no cost (it and ${base.name} were not run on the same seeds)`);
      return point;
    }
    return { ...point, cost: { baseline: base.name, effects } };
  });
  return {
    schema: SWEEP_SCHEMA,
    preset: run.preset,
    backend: run.backend,
    config: run.config,
    sets: [...run.sets],
    grid: grid.map((a) => ({ path: a.path, values: [...a.values] })),
    points: out,
    ...(costNotes.length ? { costNotes } : {}),
  };
}

/** A point's config: the sweep's, with the point's settings (what its report's config must be). */
export function pointConfig(summary: SweepSummary, point: SweepPoint): ExperimentConfig {
  return validateConfig(point.sets.reduce(applySet, summary.config as unknown));
}

/**
 * Why `report` is not the report of `point`, or null when it is: its config differs (the first
 * setting that does is named) or its seeds do.
 */
export function reportMismatch(
  summary: SweepSummary,
  point: SweepPoint,
  report: RunReport,
): string | null {
  const [d] = configDifferences(pointConfig(summary, point), report.config);
  if (d) return `its ${d.path} is ${d.wanted}, the point's is ${d.shown}`;
  return null;
}

// ---------------------------------------------------------------------------------------------
// reading a summary back (an imported file, a recorded sweep)

const json: z.ZodType<Json> = z.lazy(() =>
  z.union([
    z.null(),
    z.boolean(),
    z.number(),
    z.string(),
    z.array(json),
    z.record(z.string(), json),
  ]),
);
const summary = z.looseObject({
  mean: z.number(),
  lo: z.number(),
  hi: z.number(),
  sd: z.number(),
  n: z.number().int().min(1),
});
const pairedSummary = summary.extend({ excludesZero: z.boolean(), p: z.number().optional() });
const effect = z.looseObject({ metric: z.enum(EFFECT_METRICS), difference: pairedSummary });
const SweepSchema = z.looseObject({
  schema: z.literal(SWEEP_SCHEMA),
  preset: z.string(),
  backend: z.string(),
  config: z.unknown(),
  sets: z.array(z.string()),
  grid: z.array(z.looseObject({ path: z.string().min(1), values: z.array(json).min(1) })).min(1),
  points: z
    .array(
      z.looseObject({
        name: z.string().regex(/^[A-Za-z0-9._=,+-]+$/, "a plain file name"),
        values: z.array(json),
        sets: z.array(z.string()),
        report: z.string().regex(/^[A-Za-z0-9._=,+-]+\.json$/, "a JSON file beside the summary"),
        seeds: z.array(z.number().int()).min(1),
        conditions: z.array(
          z.looseObject({ id: z.enum(CONDITIONS), summary: z.record(z.string(), summary) }),
        ),
        comparisons: z.array(effect.extend({ a: z.enum(CONDITIONS), b: z.enum(CONDITIONS) })),
        cost: z.looseObject({ baseline: z.string(), effects: z.array(effect) }).optional(),
        totalMs: z.number(),
      }),
    )
    .min(1),
  costNotes: z.array(z.string()).optional(),
});

/** Parses and checks a sweep summary from JSON text; throws SweepError with a readable reason. */
export function parseSweep(text: string): SweepSummary {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new SweepError(`not JSON: ${(e as Error).message}`);
  }
  const schema = (data as { schema?: unknown } | null)?.schema;
  if (schema !== SWEEP_SCHEMA)
    throw new SweepError(
      `not a sweep summary: "schema" is ${JSON.stringify(schema)}, expected "${SWEEP_SCHEMA}"`,
    );
  const r = SweepSchema.safeParse(data);
  if (!r.success) {
    const first = r.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`);
    throw new SweepError(`the sweep summary is malformed — ${first.join("; ")}`);
  }
  const s = data as SweepSummary;
  try {
    s.config = validateConfig(s.config);
  } catch (e) {
    throw new SweepError(`the sweep's config is invalid — ${(e as Error).message}`);
  }
  const names = new Set<string>();
  for (const p of s.points) {
    if (p.values.length !== s.grid.length)
      throw new SweepError(
        `the sweep summary is malformed — point ${p.name} has ${p.values.length} values for ${s.grid.length} swept settings`,
      );
    if (names.has(p.name))
      throw new SweepError(`the sweep summary is malformed — point ${p.name} is listed twice`);
    names.add(p.name);
  }
  return s;
}
