// Re-scoring a run's stored policies (`collapse-lab evaluate`): the final evaluation of every
// condition × seed's trained policy, as the run made it (runner.ts' finalEvaluation), against the
// humans and a held-out panel that may differ from the run's, without training again. Only
// evaluation settings may change (EVALUATION_SETTINGS); the run's models are rebuilt from its
// config, loaded from the store or pretrained as the run did. The result is a RunReport of the same
// schema with `rescoring` saying what it re-scored and what it keeps from the run.
import { benchmarkModule } from "../benchmarks/registry";
import type { Checkpoint } from "../engine/checkpoint";
import { applySet, CONDITIONS, seedsOf, validateConfig } from "./config";
import { configDifferences } from "./config-diff";
import type { ConditionId, ExperimentConfig } from "./config";
import { TRAINS_ITS_SIMULATOR } from "./conditions";
import type { DiagnosticsReport } from "./diagnostics";
import {
  comparisons,
  conditionReport,
  pretrainModels,
  VERSION,
  type ExperimentProgress,
  type RunReport,
  type UnitTiming,
} from "./experiment";
import { checkLmPanel } from "./lm-simulators";
import type { SeedMetrics } from "./runner";
import type { PretrainStore } from "./store";
import type { Executor } from "./tasks";

/**
 * The settings a re-scoring may change (a path, or a section and everything in it): what the
 * policies are evaluated against and how much, never what they were trained on.
 */
export const EVALUATION_SETTINGS = [
  "panel",
  "eval.episodes",
  "eval.diagnosticSamples",
  "eval.diagnosticSeeds",
] as const;

/** Settings the simulator diagnostics read: when one changes, they are made again. */
const DIAGNOSTIC_SETTINGS = ["panel", "eval.diagnosticSamples", "eval.diagnosticSeeds"];

const within = (path: string, setting: string) =>
  path === setting || path.startsWith(`${setting}.`);

/** A re-scoring that cannot be made as asked; its message is one line for the user. */
export class RescoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RescoreError";
  }
}

/**
 * The config a run's policies are re-scored under: the run's own with the `--set` assignments
 * applied and validated. An assignment that changes anything but an evaluation setting is refused.
 */
export function evaluationConfig(
  trained: ExperimentConfig,
  sets: readonly string[],
): ExperimentConfig {
  const config = validateConfig(sets.reduce(applySet, trained as unknown));
  const bad = configDifferences(trained, config).find(
    (d) => !EVALUATION_SETTINGS.some((s) => within(d.path, s)),
  );
  if (bad)
    throw new RescoreError(
      `${bad.path} is not an evaluation setting (the policies were trained with ${bad.shown}, the override gives ${bad.wanted}); only ${EVALUATION_SETTINGS.join(", ")} can change`,
    );
  return config;
}

/** A run's policies folder, read through `read` (a file of it by name). */
export interface StoredPolicies {
  name: string; // the folder, for messages
  backend: string; // the backend they were trained on (index.json's)
  /** The decoded policy of a condition and seed, checked against the run's config; throws why not. */
  policy(condition: ConditionId, seed: number): Checkpoint;
}

/**
 * Re-scores the stored policies of `run` under `config` (evaluationConfig). Every condition × seed
 * of the run must have its policy. Numbers equal the run's where `config` is the run's own, except
 * what `rescoring.kept` lists.
 */
export async function rescoreRun(
  run: { report: RunReport; name: string; sha256: string },
  policies: StoredPolicies,
  config: ExperimentConfig,
  overrides: readonly string[],
  executor: Executor,
  opts: {
    backend: string;
    store?: PretrainStore;
    onProgress?: (p: ExperimentProgress) => void;
    onNote?: (message: string) => void;
  },
): Promise<RunReport> {
  const t0 = performance.now();
  const original = run.report;
  if (original.rescoring)
    throw new RescoreError(
      `${run.name} is itself a re-scoring (of ${original.rescoring.report}); give the report of the run that trained the policies`,
    );
  const trained = original.config;
  const changed = configDifferences(trained, config).map((d) => ({
    path: d.path,
    trained: d.shown,
    evaluated: d.wanted,
  }));
  const panelChanged = changed.some((d) => within(d.path, "panel"));
  const diagnose = changed.some((d) => DIAGNOSTIC_SETTINGS.some((s) => within(d.path, s)));
  const seeds = seedsOf(config);
  const units = config.conditions.flatMap((condition) =>
    seeds.map((seed) => {
      try {
        return { condition, seed, policy: policies.policy(condition, seed) };
      } catch (e) {
        throw new RescoreError(
          `${policies.name}: the policy of ${condition}, seed ${seed}: ${(e as Error).message}`,
        );
      }
    }),
  );
  await checkLmPanel(config, opts.onNote);
  const models = await pretrainModels(config, executor, opts);
  const tPretrain = performance.now();

  let done = 0;
  let diagnosed = 0;
  let diagMs = 0;
  const diagSeeds = diagnose ? seeds.slice(0, config.eval.diagnosticSeeds) : [];
  const diagnosticsErrors: { seed: number; message: string }[] = [];
  const [diagnostics, results] = await Promise.all([
    Promise.all(
      diagSeeds.map(async (seed) => {
        const t = performance.now();
        const d = await executor
          .run({ kind: "diagnose", config, pretrained: models.pretrained.get(seed)! })
          .catch((e: unknown) => {
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
      units.map(async ({ condition, seed, policy }) => {
        const r = await executor.run({
          kind: "rescore",
          config,
          pretrained: models.pretrained.get(seed)!,
          condition,
          policy,
        });
        opts.onProgress?.({
          phase: "train",
          done: ++done,
          total: units.length,
          unit: { condition, seed, step: 0, steps: 0 },
        });
        return { condition, seed, r };
      }),
    ),
  ]);
  const tEval = performance.now();

  const unitTimings: UnitTiming[] = [];
  const conditions = config.conditions.map((id) =>
    conditionReport(
      id,
      results
        .filter((x) => x.condition === id)
        .map(({ seed, r }): SeedMetrics => {
          const was = original.conditions
            .find((c) => c.id === id)
            ?.seeds.find((s) => s.seed === seed);
          if (!was) throw new RescoreError(`${run.name} has no metrics of ${id}, seed ${seed}`);
          const { evalMs, trainSuccess, samples, ...measured } = r;
          unitTimings.push({ condition: id, seed, rlMs: 0, evalMs });
          return {
            ...measured,
            seed,
            // the co-trained simulators are not kept: their success and dialogues are the run's
            trainSuccess: trainSuccess ?? was.trainSuccess,
            samples:
              trainSuccess === null
                ? [...samples, ...was.samples.filter((x) => x.opponent === "train")]
                : samples,
            // the learning curve is the run's; its held-out points were measured on the run's panel
            curve: panelChanged ? was.curve.map((p) => ({ ...p, heldout: NaN })) : was.curve,
          };
        }),
    ),
  );

  const coTrained = config.conditions.filter((c) => TRAINS_ITS_SIMULATOR.has(c));
  const kept = [
    panelChanged
      ? "the learning curves, without their held-out points (measured on the run's panel)"
      : "the learning curves",
    ...(coTrained.length
      ? [
          `the train-sim success and train dialogues of ${coTrained.join(", ")} (their co-trained simulators are not stored)`,
        ]
      : []),
    ...(diagnose ? [] : ["the simulator diagnostics (nothing they read changed)"]),
  ];
  const notes = [
    ...(coTrained.length && benchmarkModule(config.benchmark).passK
      ? [
          `pass^k of ${coTrained.join(", ")} is drawn anew: the run drew it after playing the co-trained simulator, so it is not the run's draw`,
        ]
      : []),
    ...(opts.backend !== policies.backend
      ? [`evaluated on ${opts.backend}; the policies were trained on ${policies.backend}`]
      : []),
  ];
  const simulators: DiagnosticsReport[] = diagnose
    ? diagnostics.filter((d) => d !== null)
    : original.simulators;
  const errors = diagnose ? diagnosticsErrors : (original.diagnosticsErrors ?? []);
  unitTimings.sort(
    (a, b) => CONDITIONS.indexOf(a.condition) - CONDITIONS.indexOf(b.condition) || a.seed - b.seed,
  );
  return {
    schema: original.schema,
    preset: original.preset,
    config,
    env: {
      backend: opts.backend,
      parallel: executor.parallelism,
      versions: { "collapse-lab": VERSION, "@jax-js/jax": "0.1.25" },
    },
    world: original.world,
    calibration: original.calibration,
    pretraining: models.pretraining,
    store: models.store,
    conditions,
    comparisons: comparisons(conditions),
    simulators,
    ...(errors.length ? { diagnosticsErrors: errors } : {}),
    timing: {
      totalMs: performance.now() - t0,
      pretrainMs: tPretrain - t0,
      trainMs: tEval - tPretrain,
      diagnosticsMs: diagnose ? diagMs : 0,
      units: unitTimings,
    },
    ...(original.parts ? { parts: original.parts } : {}),
    rescoring: {
      report: run.name,
      reportSha256: run.sha256,
      preset: original.preset,
      policies: policies.name,
      overrides: [...overrides],
      changed,
      kept,
      notes,
    },
  };
}
