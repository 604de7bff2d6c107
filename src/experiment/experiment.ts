// An experiment end to end: pretrain every seed's models, train and evaluate every condition ×
// seed, diagnose the simulators, and assemble the RunReport (docs/architecture.md#contracts). Tasks go to an Executor,
// so the same code runs inline, on worker_threads (CLI) or on web workers (app).
import { benchmarkFor, benchmarkModule } from "../benchmarks/registry";
import type { Calibration, ReferenceLine } from "../benchmarks/types";
import type { Checkpoint } from "../engine/checkpoint";
import type { MicroBenchmark } from "../engine/micro-benchmark";
import { Rng } from "../engine/random";
import {
  hierarchicalBootstrap,
  pairedDifference,
  summarize,
  type BootstrapInterval,
  type PairedSummary,
  type Summary,
} from "./stats";
import { type ConditionId, type ExperimentConfig, seedsOf } from "./config";
import type { DiagnosticsReport } from "./diagnostics";
import { checkLmPanel } from "./lm-simulators";
import {
  assemblePretrained,
  describeJob,
  pretrainJobs,
  type PretrainedSet,
  type PretrainJob,
  type PretrainResult,
} from "./pretrain";
import type { SeedMetrics, UnitProgress } from "./runner";
import { jobKey, lookUp, type PretrainStore } from "./store";
import type { Executor } from "./tasks";
import { corporaOf, corpusRefs, requireCorpora, type Corpora } from "./corpora";

export const REPORT_SCHEMA = "collapse-lab/run-report@1";
export const VERSION = "0.1.0";

/** Rough relative cost of a condition × seed unit (RL steps of `single` = 1), for scheduling. */
const UNIT_COST: Record<ConditionId, number> = {
  base: 0.1,
  single: 1,
  ensemble: 1,
  vs: 1.15,
  cotrain: 2,
  population: 2.2,
};

export const SUMMARY_METRICS = [
  "trainSuccess",
  "heldoutSuccess",
  "humanSuccess",
  "policyEntropy",
  "humanReward",
  "distinct2",
] as const;
export type SummaryMetric = (typeof SUMMARY_METRICS)[number];

/**
 * Strategy diversity with humans (SeedMetrics.strategy…): summarised and compared where every seed
 * has it (reports written before it was measured have none).
 */
export const STRATEGY_METRICS = ["strategyEntropy", "strategyTypeInfo", "strategyModes"] as const;
export type StrategyMetric = (typeof STRATEGY_METRICS)[number];

/** The values each metric can take: intervals are not cut there, and figures draw them as limits. */
export const METRIC_BOUNDS: Record<SummaryMetric | StrategyMetric, [number, number]> = {
  trainSuccess: [0, 1],
  heldoutSuccess: [0, 1],
  humanSuccess: [0, 1],
  humanReward: [0, 1],
  distinct2: [0, 1],
  policyEntropy: [0, Infinity],
  strategyEntropy: [0, Infinity],
  strategyTypeInfo: [-Infinity, Infinity], // bias-corrected: an estimate below 0 is noise around 0
  strategyModes: [0, Infinity],
};

export interface ConditionReport {
  id: ConditionId;
  seeds: SeedMetrics[];
  summary: Record<SummaryMetric, Summary> & Partial<Record<StrategyMetric, Summary>>;
}

export interface Comparison {
  a: ConditionId;
  b: ConditionId;
  metric: SummaryMetric | StrategyMetric;
  difference: PairedSummary; // a − b over paired seeds
  /** Held-out success only: the difference against each panel member, paired over seeds. */
  byMember?: Record<string, PairedSummary>;
  /** Held-out success only: the pooled difference's hierarchical bootstrap (seeds, then members). */
  bootstrap?: BootstrapInterval;
}

export interface RunReport {
  schema: typeof REPORT_SCHEMA;
  preset: string | null;
  config: ExperimentConfig;
  // microBenchmark: ms per (train + sampling step) of this experiment's simulator model on this
  // machine, measured before the run; the app scales the wall time by its own measurement of the
  // same benchmark to say how long a live run will take there (absent in older reports)
  // fallback: why and when a run that started on WebGPU moved to wasm (its backend then reads
  // "wasm (started on webgpu)"); tasks that had finished on WebGPU are kept
  env: {
    backend: string;
    parallel: number;
    versions: Record<string, string>;
    microBenchmark?: MicroBenchmark;
    fallback?: string;
  };
  world: WorldDescription;
  calibration: Calibration;
  pretraining: PretrainingReport[];
  store?: StoreReport; // absent from reports recorded before the store existed
  conditions: ConditionReport[];
  comparisons: Comparison[];
  simulators: DiagnosticsReport[];
  diagnosticsErrors?: { seed: number; message: string }[]; // diagnostics that failed (the run's results are kept)
  // diagnosticsMs: wall time from submitting the diagnostics until they finish — they share the
  // workers with training, so it includes waiting for a free worker, not only their own compute
  timing: {
    totalMs: number;
    pretrainMs: number;
    trainMs: number;
    diagnosticsMs: number;
    units?: UnitTiming[];
  };
  // the runs this report was merged from (merge-reports.ts), each on its own seeds; its timing is
  // then their sum. Absent for a report of one run.
  parts?: ReportPart[];
  // present when this report re-scores another's stored policies (rescore.ts, `collapse-lab
  // evaluate`): its metrics are the final evaluation of those policies under `config`
  rescoring?: Rescoring;
  corpora?: CorpusReport[]; // the imported dialogue corpora the run used (absent: none)
}

/** An imported dialogue corpus a run used (docs/humans.md): as what, and which file exactly. */
export interface CorpusReport {
  use: "humans" | "panel" | "reference";
  member?: string; // the panel member it played
  file: string;
  sha256: string;
  dialogues: number;
  source?: string; // from the file's header
  licence?: string;
  success: number; // its own dialogues' success: what its agents reached with its people
}

/** What a re-scoring report re-scored: the run, its policies, and the evaluation settings changed. */
export interface Rescoring {
  report: string; // the report of the run that trained the policies, as named to the command
  reportSha256: string; // its bytes' SHA-256
  preset: string | null;
  policies: string; // the policies folder
  overrides: string[]; // the --set assignments, as given
  changed: { path: string; trained: string; evaluated: string }[]; // the config leaves they changed
  kept: string[]; // what the report keeps from the run rather than measuring again, in words
  notes: string[]; // other ways its numbers may differ from the run's, in words
}

/** One run a merged report was made of: its seeds and its own wall time. */
export interface ReportPart {
  seedBase: number;
  seeds: number;
  totalMs: number;
  parallel: number;
}

/** Wall time of one condition × seed unit's RL steps and evaluation (absent in older reports). */
export interface UnitTiming {
  condition: ConditionId;
  seed: number;
  rlMs: number;
  evalMs: number;
}

/** One seed's pretraining: its models, its held-out panel's included. */
export interface PretrainingReport {
  seed: number;
  referenceNll: number[];
  policyNll: number[];
  models?: PretrainedModelSource[]; // absent from reports recorded before the store existed
}

export interface PretrainedModelSource {
  model: string; // describeJob: "reference simulator", "panel simulator family-a", …
  key: string; // its store key (store.ts)
  source: "store" | "trained";
  problem?: string; // why a stored file for it was not used
}

/** The store of pretrained models a run consulted (location null: none, e.g. `--no-store`). */
export interface StoreReport {
  location: string | null;
  loaded: number; // models loaded from the store
  trained: number; // models pretrained live
  messages: string[]; // store problems: no store, or a stored file that could not be used
}

export interface WorldDescription {
  benchmark: string;
  vocabulary: number;
  types: { name: string; prior: number; description: string }[];
  parameters: unknown; // the population's parameters, as used
  budgets: {
    pretrainSteps: { simulator: number; policy: number };
    rlSteps: number;
    rolloutsPerStep: number;
    corpusDialogues: number;
    evalEpisodes: number;
  };
  referenceLines?: ReferenceLine[]; // reference agents' success with humans, exact where the world allows (absent from reports recorded before it was added)
}

export type ExperimentProgress =
  | { phase: "pretrain"; done: number; total: number; detail: string; source: "store" | "trained" }
  | { phase: "train"; done: number; total: number; unit: UnitProgress }
  | { phase: "diagnose"; done: number; total: number; detail: string };

function calibration(config: ExperimentConfig): Calibration {
  return benchmarkModule(config.benchmark).calibration(
    benchmarkFor(config),
    config.corpus,
    Rng.seed(12345),
  );
}

/** Each corpus the config names: as what, which file, and its own dialogues' success. */
export function corpusReports(config: ExperimentConfig, corpora: Corpora): CorpusReport[] {
  const bench = benchmarkFor(config);
  return corpusRefs(config).map(({ ref, use }) => {
    const c = corpora[ref.sha256!];
    const wins = c.dialogues.filter((d) => bench.success({ card: d.card ?? [], acts: d.acts }));
    return {
      ...use,
      file: c.file,
      sha256: c.sha256,
      dialogues: c.dialogues.length,
      ...(c.source ? { source: c.source } : {}),
      ...(c.licence ? { licence: c.licence } : {}),
      success: wins.length / c.dialogues.length,
    };
  });
}

/**
 * The reference agents' success with the humans. With an imported corpus as the humans, the
 * benchmark's lines are of its hand-written population, not of these people: they stay in the
 * report, off the figures, and the corpus' own agents (what they reached with its people) are drawn.
 */
function referenceLines(config: ExperimentConfig, corpora: Corpora): ReferenceLine[] {
  const m = benchmarkModule(config.benchmark);
  const lines = m.referenceLines(benchmarkFor(config));
  if (!config.humans) return lines;
  const own = corpusReports(config, corpora).find((r) => r.use === "humans")!;
  const agents = `${m.roles.agent.toLowerCase()}s`;
  return [
    {
      id: "corpus-agents",
      label: "corpus dialogues",
      description: `the ${agents} of ${own.file} with its own people: the share of its ${own.dialogues} dialogues that succeed`,
      humanSuccess: own.success,
      onFigure: true,
    },
    ...lines.map((l) => ({
      ...l,
      description: `${l.description} (with the benchmark's hand-written population, not the imported humans)`,
      onFigure: false,
    })),
  ];
}

/** A condition's seeds, in seed order, with their means and intervals. */
export function conditionReport(id: ConditionId, seeds: SeedMetrics[]): ConditionReport {
  const sorted = [...seeds].sort((a, b) => a.seed - b.seed);
  const summary = Object.fromEntries(
    SUMMARY_METRICS.map((k) => [
      k,
      summarize(
        sorted.map((s) => s[k]),
        0.95,
      ),
    ]),
  ) as Record<SummaryMetric, Summary>;
  for (const k of STRATEGY_METRICS) {
    const xs = strategyValues(sorted, k);
    if (xs) (summary as ConditionReport["summary"])[k] = summarize(xs, 0.95);
  }
  return { id, seeds: sorted, summary };
}

/** A strategy metric of every seed, or null when a seed lacks it (an older report's). */
function strategyValues(seeds: readonly SeedMetrics[], k: StrategyMetric): number[] | null {
  const xs = seeds.map((s) => s[k]);
  return xs.every((x): x is number => typeof x === "number" && Number.isFinite(x)) ? xs : null;
}

/** The comparisons the paper's claims are about: every RL condition against `single`. */
export function comparisons(conditions: ConditionReport[]): Comparison[] {
  const single = conditions.find((c) => c.id === "single");
  if (!single) return [];
  const out: Comparison[] = [];
  for (const c of conditions) {
    if (c.id === "single") continue;
    for (const metric of ["heldoutSuccess", "humanSuccess", "policyEntropy"] as const) {
      const a = c.seeds.map((s) => s[metric]);
      const b = single.seeds.map((s) => s[metric]);
      out.push({
        a: c.id,
        b: "single",
        metric,
        difference: pairedDifference(a, b, 0.95),
        ...(metric === "heldoutSuccess" ? heldoutDetail(c.seeds, single.seeds) : {}),
      });
    }
    for (const metric of ["strategyEntropy", "strategyTypeInfo"] as const) {
      const a = strategyValues(c.seeds, metric);
      const b = strategyValues(single.seeds, metric);
      if (a && b && a.length === b.length)
        out.push({ a: c.id, b: "single", metric, difference: pairedDifference(a, b, 0.95) });
    }
  }
  return out;
}

/**
 * The held-out difference a − b per panel member (paired over seeds) and the pooled one's
 * hierarchical bootstrap, for two conditions' seeds in the same seed order. Empty when the seeds
 * do not all have the same members, or a member's success is not a finite number.
 */
export function heldoutDetail(
  a: readonly Pick<SeedMetrics, "seed" | "heldoutByMember">[],
  b: readonly Pick<SeedMetrics, "seed" | "heldoutByMember">[],
): Pick<Comparison, "byMember" | "bootstrap"> {
  const members = Object.keys(a[0]?.heldoutByMember ?? {});
  const usable = (s: Pick<SeedMetrics, "heldoutByMember">) =>
    s.heldoutByMember &&
    Object.keys(s.heldoutByMember).length === members.length &&
    members.every((m) => Number.isFinite(s.heldoutByMember[m]));
  if (!members.length || a.length !== b.length || ![...a, ...b].every(usable)) return {};
  if (a.some((s, i) => s.seed !== b[i].seed)) return {};
  const byMember = Object.fromEntries(
    members.map((m) => [
      m,
      pairedDifference(
        a.map((s) => s.heldoutByMember[m]),
        b.map((s) => s.heldoutByMember[m]),
      ),
    ]),
  );
  const d = a.map((s, i) => members.map((m) => s.heldoutByMember[m] - b[i].heldoutByMember[m]));
  return { byMember, bootstrap: hierarchicalBootstrap(d) };
}

/**
 * Where finished tasks are kept so that an interrupted run resumes without redoing them (the app
 * keeps them in IndexedDB). Tasks are deterministic, so a resumed run gives the same numbers.
 */
export interface TaskCache {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
}

/**
 * A pretraining task's key in a TaskCache: its job's store key, which names everything the model
 * depends on, so a kept model may stand in wherever that key recurs (another config of a sweep).
 */
export const pretrainTaskKey = (storeKey: string) => `pretrain:${storeKey}`;

async function cached<T>(
  cache: TaskCache | undefined,
  key: string,
  compute: () => Promise<T>,
  onHit?: () => void,
): Promise<T> {
  const hit = (await cache?.get(key)) as T | undefined;
  if (hit !== undefined) {
    onHit?.();
    return hit;
  }
  const value = await compute();
  await cache?.put(key, value);
  return value;
}

/** Every seed's pretrained models, and where each came from. */
export interface PretrainedModels {
  pretrained: Map<number, PretrainedSet>;
  pretraining: PretrainingReport[];
  store: StoreReport;
}

/**
 * Pretrains (or loads from `store`) the models of every seed of a config: each job is looked up in
 * the store first, else run on the executor (kept in `cache`, so a resumed run does not redo it).
 */
export async function pretrainModels(
  config: ExperimentConfig,
  executor: Executor,
  opts: {
    backend: string;
    onProgress?: (p: ExperimentProgress) => void;
    cache?: TaskCache;
    store?: PretrainStore;
    onNote?: (message: string) => void;
    corpora?: Corpora; // the imported corpora the config names, by hash (corporaOf)
  },
): Promise<PretrainedModels> {
  const { cache, store } = opts;
  const withCorpora =
    opts.corpora && Object.keys(opts.corpora).length ? { corpora: opts.corpora } : {};
  const seeds = seedsOf(config);
  const jobs = seeds.flatMap((s) => pretrainJobs(config, s));
  const results = new Map<PretrainJob, PretrainResult>();
  const sources = new Map<PretrainJob, PretrainedModelSource>();
  const messages: string[] = [];
  const note = (m: string) => {
    if (messages.includes(m)) return; // "no store" once, not once per job
    messages.push(m);
    opts.onNote?.(m);
  };
  let done = 0;
  let resumed = 0; // pretrained in an earlier sitting of this run (the task cache), not now
  await Promise.all(
    jobs.map(async (job) => {
      const what = `seed ${job.seed}: ${describeJob(config, job)}`;
      const found = store
        ? await lookUp(store, config, job, opts.backend)
        : { source: "trained" as const, key: jobKey(config, job, opts.backend) };
      if (found.source === "trained" && found.unavailable)
        note(`${found.unavailable}; every model pretrains live`);
      if (found.source === "trained" && found.problem)
        note(`${found.problem} — pretraining ${what} live instead`);
      const result =
        found.source === "store"
          ? found.result
          : await cached(
              cache,
              pretrainTaskKey(found.key),
              () => executor.run({ kind: "pretrain", config, job, ...withCorpora }),
              () => resumed++,
            );
      results.set(job, result);
      const problem = found.source === "trained" ? found.problem : undefined;
      sources.set(job, {
        model: describeJob(config, job),
        key: found.key,
        source: found.source,
        ...(problem ? { problem } : {}),
      });
      opts.onProgress?.({
        phase: "pretrain",
        done: ++done,
        total: jobs.length,
        detail: found.source === "store" ? `${what} (from the store)` : what,
        source: found.source,
      });
    }),
  );
  const loaded = [...sources.values()].filter((s) => s.source === "store").length;
  const storeReport: StoreReport = {
    location: store?.location ?? null,
    loaded,
    trained: jobs.length - loaded,
    messages,
  };
  const live = jobs.length - loaded - resumed;
  if (store)
    opts.onNote?.(
      `pretraining: ${loaded} of ${jobs.length} models from the store (${store.location})${resumed ? `, ${resumed} from the run's earlier sittings` : ""}${live ? `, ${live} pretrained live` : ""}`,
    );
  const pretrained = new Map<number, PretrainedSet>(
    seeds.map((s) => [s, assemblePretrained(config, s, results)]),
  );
  return {
    pretrained,
    pretraining: seeds.map((s) => ({
      seed: s,
      referenceNll: pretrained.get(s)!.reference.nll,
      policyNll: pretrained.get(s)!.basePolicy.nll,
      models: jobs.filter((j) => j.seed === s).map((j) => sources.get(j)!),
    })),
    store: storeReport,
  };
}

export async function runExperiment(
  config: ExperimentConfig,
  executor: Executor,
  opts: {
    backend: string;
    preset?: string;
    onProgress?: (p: ExperimentProgress) => void;
    cache?: TaskCache;
    store?: PretrainStore; // consulted before a pretraining job goes to the executor
    microBenchmark?: MicroBenchmark; // this machine's speed, kept in the report's env
    onNote?: (message: string) => void; // store problems as they happen, and where the models came from
    onPolicy?: (condition: ConditionId, seed: number, policy: Checkpoint) => void; // each unit's trained policy (never in the report)
    corpora?: Corpora; // the imported corpora the config names, by hash (corpora.ts: resolveCorpora)
  },
): Promise<RunReport> {
  const t0 = performance.now();
  requireCorpora(config, opts.corpora ?? {}); // a corpus the config names but nobody read fails now
  const corpora = corporaOf(config, opts.corpora ?? {});
  const withCorpora = Object.keys(corpora).length ? { corpora } : {};
  await checkLmPanel(config, opts.onNote); // a missing LM folder or an unreachable remote model fails now, not after pretraining
  const { cache } = opts;
  const seeds = seedsOf(config);
  const models = await pretrainModels(config, executor, { ...opts, corpora });
  const { pretrained } = models;
  const tPretrain = performance.now();

  const units = config.conditions.flatMap((condition) =>
    seeds.map((seed) => ({ condition, seed })),
  );
  const diagSeeds = seeds.slice(0, config.eval.diagnosticSeeds);
  let trained = 0;
  let diagnosed = 0;
  let diagMs = 0;
  const diagnosticsErrors: { seed: number; message: string }[] = [];
  const unitTimings: UnitTiming[] = [];
  // Longest first, so that two workers do not end waiting on one population unit: the diagnostics
  // (about a unit's work), then units by their cost (co-training plays and trains a simulator too).
  const [diagnostics, metrics] = await Promise.all([
    Promise.all(
      diagSeeds.map(async (seed) => {
        const t = performance.now();
        // a diagnostic that fails is reported (once the units have finished too); it never costs the run its trained conditions
        const d = await cached(cache, `diagnose:${seed}`, () =>
          executor.run({
            kind: "diagnose",
            config,
            pretrained: pretrained.get(seed)!,
            ...withCorpora,
          }),
        ).catch((e: unknown) => {
          diagnosticsErrors.push({ seed, message: (e as Error).message });
          return null;
        });
        diagMs += performance.now() - t;
        opts.onProgress?.({
          phase: "diagnose",
          done: ++diagnosed,
          total: diagSeeds.length,
          detail: `seed ${seed}`,
        });
        return d;
      }),
    ),
    Promise.all(
      [...units]
        .sort((a, b) => UNIT_COST[b.condition] - UNIT_COST[a.condition])
        .map(async ({ condition, seed }) => {
          let m = await cached(cache, `unit:${condition}:${seed}`, () =>
            executor.run(
              {
                kind: "unit",
                config,
                pretrained: pretrained.get(seed)!,
                condition,
                ...withCorpora,
              },
              (unit) =>
                opts.onProgress?.({ phase: "train", done: trained, total: units.length, unit }),
            ),
          );
          trained++;
          // timings vary run to run; the report keeps them apart from the metrics, which do not
          const { timing, finalPolicy, ...metricsOnly } = m;
          if (timing) unitTimings.push({ condition, seed, ...timing });
          if (finalPolicy) opts.onPolicy?.(condition, seed, finalPolicy);
          m = metricsOnly;
          const last = m.curve[m.curve.length - 1];
          opts.onProgress?.({
            phase: "train",
            done: trained,
            total: units.length,
            unit: { condition, seed, step: last?.step ?? 0, steps: last?.step ?? 0, point: last },
          });
          return { condition, m };
        }),
    ),
  ]);
  for (const e of diagnosticsErrors)
    opts.onNote?.(
      `the simulator diagnostics of seed ${e.seed} failed (${e.message}); every condition's results are kept`,
    );

  const conditions = config.conditions.map((id) =>
    conditionReport(
      id,
      metrics.filter((x) => x.condition === id).map((x) => x.m),
    ),
  );
  const bench = benchmarkFor(config);
  const tTrained = performance.now();
  const module = benchmarkModule(config.benchmark);
  const calibrationRows = calibration(config);
  const total = performance.now() - t0;
  return {
    schema: REPORT_SCHEMA,
    preset: opts.preset ?? null,
    config,
    env: {
      backend: opts.backend,
      parallel: executor.parallelism,
      versions: { "collapse-lab": VERSION, "@jax-js/jax": "0.1.25" },
      microBenchmark: opts.microBenchmark,
    },
    world: {
      benchmark: bench.title,
      vocabulary: bench.acts.length,
      types: bench.humans.types,
      parameters: module.parameters(bench),
      budgets: {
        pretrainSteps: {
          simulator: config.simulator.pretrain.steps,
          policy: config.policy.pretrain.steps,
        },
        rlSteps: config.rl.steps,
        rolloutsPerStep: config.rl.prompts * config.rl.groupSize,
        corpusDialogues: config.corpus.dialogues,
        evalEpisodes: config.eval.episodes,
      },
      referenceLines: referenceLines(config, corpora),
    },
    calibration: calibrationRows,
    pretraining: models.pretraining,
    store: models.store,
    conditions,
    comparisons: comparisons(conditions),
    simulators: diagnostics.filter((d) => d !== null),
    ...(diagnosticsErrors.length ? { diagnosticsErrors } : {}),
    ...(Object.keys(corpora).length ? { corpora: corpusReports(config, corpora) } : {}),
    timing: {
      totalMs: total,
      pretrainMs: tPretrain - t0,
      trainMs: tTrained - tPretrain,
      diagnosticsMs: diagMs,
      units: unitTimings,
    },
  };
}
