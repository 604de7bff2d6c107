// Runs an experiment: per seed, pretrain the shared models, then train one policy per condition
// with GRPO against that condition's simulators, and evaluate every policy against its training
// simulators, the held-out panel and the human population. A (condition, seed) unit is a pure
// function of config + seed + pretrained checkpoints (and the panel's LM files, if any), so units
// can run in parallel workers.
import type { Benchmark, Dialogue } from "../benchmarks/types";
import type { EngineBackend, EngineModel, ModelOptions } from "../engine/backend";
import type { Checkpoint } from "../engine/checkpoint";
import { DEFAULT_OPTIM } from "../engine/backend";
import { grpoUpdate, type GrpoHyper } from "../engine/grpo";
import { Rng } from "../engine/random";
import { distinctN, klDivergence } from "../metrics/diversity";
import { strategyMeasures } from "../metrics/strategy";
import { NeuralSimulator } from "../simulators/neural";
import type { UserSimulator } from "../simulators/simulator";
import { emptyUsage, type BackoffUsage } from "../simulators/empirical";
import type { Corpora } from "./corpora";
import { CorpusTables, corpusPanel, evaluationHumans, lmEntries } from "./corpus-simulators";
import { CONDITIONS, type ConditionId, type ExperimentConfig } from "./config";
import { createOpponents, TRAINS_ITS_SIMULATOR } from "./conditions";
import { encode } from "../benchmarks/encode";
import { openLmPanel } from "./lm-simulators";
import type { RemoteSimulatorStats } from "../simulators/remote";
import { benchmarkFor, benchmarkModule } from "../benchmarks/registry";
import { modelOptions, type PretrainedSet } from "./pretrain";
import { groupedPersonas, outcome, play } from "./rollout";
import { passCurve } from "../metrics/pass-k";

export interface CurvePoint {
  step: number;
  train: number; // success vs the training simulator(s)
  heldout: number; // mean success over the held-out panel
  human: number;
  entropy: number; // policy entropy against humans
  reward: number; // mean training reward of the step
}

export interface SeedMetrics {
  seed: number;
  trainSuccess: number;
  heldoutSuccess: number;
  humanSuccess: number;
  humanReward: number;
  policyEntropy: number; // mean per-turn entropy (nats) of the policy talking to humans
  distinct2: number; // distinct-2 over the policy's act sequences with humans
  heldoutByMember: Record<string, number>;
  strategyHistogram: Record<string, number>; // share of the policy's acts with humans
  curve: CurvePoint[];
  samples: DialogueSample[]; // a few final dialogues with humans and with the training simulator, for reading
  /**
   * Mean KL(Bayes predictive ‖ reference simulator) over the user turns of this policy's final
   * dialogues with humans: how well π_ref models people where the trained policy goes (a policy
   * can steer into states the corpus rarely shows and game the reference's errors there).
   */
  referenceKLOnPolicy?: number;
  /** pass^1 … pass^k with humans over k trials of each task (benchmarks with BenchmarkModule.passK); absent otherwise. */
  humanPassK?: number[];
  /**
   * Strategy diversity with humans (src/metrics/strategy.ts; BenchmarkModule.strategy defines a
   * strategy and the task): H(strategy | task), the bias-corrected I(strategy; user type | task)
   * and the strategies seen ≥ 5 times, in nats and a count; absent in older reports.
   */
  strategyEntropy?: number;
  strategyTypeInfo?: number;
  strategyModes?: number;
  /** The same evaluation's plug-in I(strategy; type | task) and the distinct strategies. */
  strategyDetail?: { typeInfoPlugIn: number; distinct: number };
  /** Wall time of this unit's RL steps and of its evaluation (curve points and the final one), ms; absent in older reports. */
  timing?: { rlMs: number; evalMs: number };
  /** Remote panel members: how each scored (log-probs or sampled replies), its requests, fallbacks and unmapped replies; absent without them. */
  remoteSimulators?: RemoteSimulatorStats[];
  /**
   * Imported corpora's people (humans.corpus, corpus panel members; docs/humans.md): in the final
   * evaluation, the user turns each answered at every back-off level, by "humans" or member name.
   */
  backoff?: Record<string, BackoffUsage>;
  /** The trained policy's parameters (no Adam state), for the Play page; runExperiment hands them to onPolicy and keeps them out of the report. */
  finalPolicy?: Checkpoint;
}

export interface DialogueSample {
  opponent: "humans" | "train";
  card: number[];
  type: number; // latent type (humans); −1 for simulators
  acts: number[];
  hidden?: number[]; // the episode's hidden state, for benchmarks that have one (the outcome and the text read it)
  reward: number;
  success: boolean;
}

/** Dialogues kept per opponent in SeedMetrics.samples. */
export const SAMPLES_PER_OPPONENT = 12;

export interface UnitProgress {
  condition: ConditionId;
  seed: number;
  step: number;
  steps: number;
  point?: CurvePoint;
}

/** Success of the policy against a simulator over n dialogues (in chunks of the model capacity). */
export async function evaluate(
  bench: Benchmark,
  policy: Parameters<typeof play>[1],
  user: UserSimulator,
  n: number,
  rng: Rng,
  temperature: number,
  capacity: number,
) {
  const all: Awaited<ReturnType<typeof play>>[] = [];
  for (let done = 0; done < n; done += capacity) {
    all.push(
      await play(
        bench,
        policy,
        user,
        user.personas(Math.min(capacity, n - done), rng),
        rng,
        temperature,
      ),
    );
  }
  const merged = {
    dialogues: all.flatMap((p) => p.dialogues),
    personas: all.flatMap((p) => p.personas),
    entropySum: Float64Array.from(all.flatMap((p) => Array.from(p.entropySum))),
    agentTurns: Int32Array.from(all.flatMap((p) => Array.from(p.agentTurns))),
  };
  return { played: merged, outcome: outcome(bench, merged) };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** pass^1 … pass^k: `tasks` people (each with their task) drawn once, each played k times. */
async function passKWithHumans(
  bench: Benchmark,
  policy: Parameters<typeof play>[1],
  humans: UserSimulator,
  tasks: number,
  k: number,
  rng: Rng,
  temperature: number,
  capacity: number,
): Promise<number[]> {
  const personas = humans.personas(tasks, rng).flatMap((p) =>
    Array.from({ length: k }, () => ({
      ...p,
      card: [...p.card],
      ...(p.hidden ? { hidden: [...p.hidden] } : {}),
    })),
  );
  const wins = new Int32Array(tasks);
  for (let start = 0; start < personas.length; start += capacity) {
    const chunk = personas.slice(start, start + capacity);
    const p = await play(bench, policy, humans, chunk, rng, temperature);
    p.dialogues.forEach((d, j) => (wins[Math.floor((start + j) / k)] += bench.success(d) ? 1 : 0));
  }
  return passCurve(Array.from(wins), k);
}

/** Mean KL(Bayes ‖ reference) over the user turns of the dialogues (the model is disposed after). */
async function klOnStates(
  bench: Benchmark,
  referenceModel: EngineModel,
  dialogues: Dialogue[],
): Promise<number> {
  try {
    const states: Dialogue[] = [];
    for (const d of dialogues) {
      for (let i = 0; i < d.acts.length; i++) {
        const prefix = { card: d.card, acts: d.acts.slice(0, i) };
        if (bench.turn(prefix) === "user") states.push(prefix);
      }
    }
    if (states.length === 0) return 0;
    const ref = await new NeuralSimulator("reference", bench, referenceModel, 1, true).distribution(
      states,
    );
    const V = bench.acts.length;
    return mean(
      states.map((d, j) =>
        klDivergence(bench.bayesPredictive(d), ref.subarray(j * V, (j + 1) * V)),
      ),
    );
  } finally {
    referenceModel.dispose();
  }
}

/** The condition whose RL random stream `condition` draws: its own, or its partner's under rl.streamSwap. */
export function rlStream(config: ExperimentConfig, condition: ConditionId): ConditionId {
  const swap = config.rl.streamSwap;
  if (!swap) return condition;
  return condition === swap[0] ? swap[1] : condition === swap[1] ? swap[0] : condition;
}

/** The held-out panel of one seed as simulators: networks collapsed to their γ, LM and remote members opened. */
async function openPanel(
  backend: EngineBackend,
  bench: Benchmark,
  config: ExperimentConfig,
  pretrained: PretrainedSet,
  opts: ModelOptions,
  tables: CorpusTables,
): Promise<{
  simulators: UserSimulator[];
  corpusMembers: ReturnType<typeof corpusPanel>;
  remoteStats: () => RemoteSimulatorStats[];
  dispose: () => Promise<void>;
}> {
  const corpusMembers = corpusPanel(tables, pretrained.panel);
  // LM members first: one that fails to load fails the unit before any engine model exists
  const lmPanel = await openLmPanel(bench, config, lmEntries(pretrained.panel), backend.name);
  const owned: EngineModel[] = [];
  const simulators = pretrained.panel.map((m) => {
    if ("corpus" in m) return corpusMembers.get(m.name)!;
    if (!("result" in m)) return lmPanel.simulators.get(m.name)!;
    const model = backend.createModel(m.result.checkpoint, opts);
    owned.push(model);
    return new NeuralSimulator(m.name, bench, model, m.gamma, true);
  });
  return {
    simulators,
    corpusMembers,
    remoteStats: lmPanel.remoteStats,
    dispose: async () => {
      for (const m of owned) m.dispose();
      await lmPanel.dispose();
    },
  };
}

/** The simulator `base` is reported against: the aligned one `single` trains on. */
function alignedSimulator(
  backend: EngineBackend,
  bench: Benchmark,
  config: ExperimentConfig,
  pretrained: PretrainedSet,
  opts: ModelOptions,
  owned: { dispose(): void }[],
): UserSimulator {
  const model = backend.createModel(pretrained.reference.checkpoint, opts);
  owned.push(model);
  return new NeuralSimulator("aligned simulator", bench, model, config.simulator.gamma, true);
}

/** What the final evaluation measures of a trained policy (the rest of SeedMetrics is the training's). */
export type FinalMetrics = Omit<
  SeedMetrics,
  "seed" | "trainSuccess" | "curve" | "timing" | "remoteSimulators" | "finalPolicy"
> & {
  trainSuccess: number | null; // null: the training simulators were not given (not kept after training)
};

/**
 * The final evaluation of a policy, with the same draws for every condition (and for a re-scoring
 * of a stored policy, src/experiment/rescore.ts): humans, each panel member, the training
 * simulators, then dialogues kept for reading, the reference's KL on the policy's states, pass^k
 * and the strategy measures. Without `trainSims` their success and samples are left out, and the
 * draws after them (pass^k) differ from a run's.
 */
export async function finalEvaluation(e: {
  backend: EngineBackend;
  bench: Benchmark;
  config: ExperimentConfig;
  pretrained: PretrainedSet;
  opts: ModelOptions;
  policy: EngineModel;
  panel: UserSimulator[];
  corpusMembers: ReturnType<typeof corpusPanel>;
  newHumans: ReturnType<typeof evaluationHumans>;
  trainSims: (() => UserSimulator[]) | null;
}): Promise<FinalMetrics> {
  const { backend, bench, config, pretrained, opts, policy } = e;
  const cap = opts.capacity;
  const T = config.rl.temperature;
  const humans = e.newHumans(); // its own, so an imported corpus' back-off counts this evaluation only
  const finalRng = Rng.seed(pretrained.seed).fork(200).fork(1); // runUnit's evalRng.fork(1)
  const human = await evaluate(bench, policy, humans, config.eval.episodes, finalRng, T, cap);
  const backoff: Record<string, BackoffUsage> = {};
  if (humans.usage) backoff.humans = structuredClone(humans.usage);
  const before = new Map(
    [...e.corpusMembers].map(([name, sim]) => [name, structuredClone(sim.usage)]),
  );
  const heldoutByMember: Record<string, number> = {};
  for (const sim of e.panel)
    heldoutByMember[sim.name] = (
      await evaluate(bench, policy, sim, config.eval.episodes, finalRng, T, cap)
    ).outcome.success;
  for (const [name, sim] of e.corpusMembers) {
    const was = before.get(name)!;
    const u = emptyUsage();
    u.turns = sim.usage.turns - was.turns;
    for (const l of Object.keys(u.levels) as (keyof BackoffUsage["levels"])[])
      u.levels[l] = sim.usage.levels[l] - was.levels[l];
    backoff[name] = u;
  }
  let trainSuccess: number | null = null;
  let trainPlay: Awaited<ReturnType<typeof evaluate>> | null = null;
  if (e.trainSims) {
    // successAgainst's split: the n dialogues are shared among a population's simulators
    const sims = e.trainSims();
    const each = Math.max(8, Math.round(config.eval.episodes / sims.length));
    const xs: number[] = [];
    for (const sim of sims)
      xs.push((await evaluate(bench, policy, sim, each, finalRng, T, cap)).outcome.success);
    trainSuccess = mean(xs);
    trainPlay = await evaluate(
      bench,
      policy,
      e.trainSims()[0],
      SAMPLES_PER_OPPONENT,
      finalRng.fork(7),
      T,
      cap,
    );
  }
  const referenceKLOnPolicy = await klOnStates(
    bench,
    backend.createModel(pretrained.reference.checkpoint, opts),
    human.played.dialogues,
  );
  const sample = (
    opponent: DialogueSample["opponent"],
    p: Awaited<ReturnType<typeof evaluate>>["played"],
  ): DialogueSample[] =>
    p.dialogues.slice(0, SAMPLES_PER_OPPONENT).map((d, i) => ({
      opponent,
      card: d.card,
      type: p.personas[i].type,
      acts: d.acts,
      ...(d.hidden ? { hidden: d.hidden } : {}),
      reward: bench.reward(d),
      success: bench.success(d),
    }));
  const agentSeqs = human.played.dialogues.map((d) =>
    d.acts.filter(
      (_, i) =>
        bench.turn({ card: d.card, acts: d.acts.slice(0, i), hidden: d.hidden }) === "agent",
    ),
  );
  const module = benchmarkModule(config.benchmark);
  const trials = module.passK;
  const humanPassK = trials
    ? await passKWithHumans(
        bench,
        policy,
        humans,
        Math.max(1, Math.floor(config.eval.episodes / trials)),
        trials,
        finalRng.fork(11),
        T,
        cap,
      )
    : undefined;
  const histogram: Record<string, number> = {};
  const allActs = agentSeqs.flat();
  for (const a of allActs)
    histogram[bench.acts[a].name] = (histogram[bench.acts[a].name] ?? 0) + 1 / allActs.length;
  const strategies = strategyMeasures(
    human.played.dialogues.map((d, i) => ({
      strategy: module.strategy.signature(bench, d),
      task: module.strategy.task(bench, d),
      type: human.played.personas[i].type,
    })),
  );
  return {
    trainSuccess,
    heldoutSuccess: mean(Object.values(heldoutByMember)),
    humanSuccess: human.outcome.success,
    humanReward: human.outcome.reward,
    policyEntropy: human.outcome.entropy,
    distinct2: distinctN(agentSeqs, 2),
    heldoutByMember,
    strategyHistogram: histogram,
    samples: [
      ...sample("humans", human.played),
      ...(trainPlay ? sample("train", trainPlay.played) : []),
    ],
    referenceKLOnPolicy,
    ...(humanPassK ? { humanPassK } : {}),
    ...(Object.keys(backoff).length ? { backoff } : {}),
    strategyEntropy: strategies.entropy,
    strategyTypeInfo: strategies.typeInformation,
    strategyModes: strategies.modes,
    strategyDetail: {
      typeInfoPlugIn: strategies.typeInformationPlugIn,
      distinct: strategies.distinct,
    },
  };
}

/** Trains and evaluates one condition for one seed. */
export async function runUnit(
  backend: EngineBackend,
  config: ExperimentConfig,
  pretrained: PretrainedSet,
  condition: ConditionId,
  onProgress?: (p: UnitProgress) => void,
  signal?: AbortSignal,
  gate?: () => Promise<void>, // awaited before every RL step: the app pauses and steps a run here
  corpora: Corpora = {}, // the imported corpora the config names, by hash (corpora.ts)
): Promise<SeedMetrics> {
  const bench = benchmarkFor(config);
  const opts = modelOptions(bench, config);
  const cap = opts.capacity;
  const seed = pretrained.seed;
  const rng = Rng.seed(seed).fork(100 + CONDITIONS.indexOf(rlStream(config, condition)));
  const evalRng = Rng.seed(seed).fork(200); // the same evaluation draws for every condition
  const T = config.rl.temperature;
  const tables = new CorpusTables(bench, corpora);
  const newHumans = evaluationHumans(tables, config);
  const humans = newHumans();
  const openedPanel = await openPanel(backend, bench, config, pretrained, opts, tables);
  const panel = openedPanel.simulators;
  const owned = [] as { dispose(): void }[];
  const policy = backend.createModel(pretrained.basePolicy.checkpoint, opts);
  const basePolicy = backend.createModel(pretrained.basePolicy.checkpoint, opts);
  owned.push(policy, basePolicy);
  const opponents = createOpponents(condition, { backend, bench, config, pretrained, opts });
  // `base` is reported against the simulator `single` trains on
  const trainSims = opponents
    ? () => opponents.evaluationSimulators()
    : (() => {
        const sim = alignedSimulator(backend, bench, config, pretrained, opts, owned);
        return () => [sim];
      })();

  // mean success over several simulators; `split` shares the n dialogues among them (train
  // simulators: a population of 10 snapshots costs what one simulator does)
  const successAgainst = async (sims: UserSimulator[], n: number, r: Rng, split = false) => {
    const xs: number[] = [];
    const each = split ? Math.max(8, Math.round(n / sims.length)) : n;
    for (const s of sims)
      xs.push((await evaluate(bench, policy, s, each, r, T, cap)).outcome.success);
    return mean(xs);
  };

  const curve: CurvePoint[] = [];
  const timing = { rlMs: 0, evalMs: 0 };
  const curvePoint = async (step: number, reward: number) => {
    const t0 = performance.now();
    const r = evalRng.fork(10_000 + step);
    const human = await evaluate(bench, policy, humans, config.eval.curveEpisodes, r, T, cap);
    const point: CurvePoint = {
      step,
      train: await successAgainst(trainSims(), config.eval.curveEpisodes, r, true),
      heldout: await successAgainst(panel, config.eval.curveEpisodes, r),
      human: human.outcome.success,
      entropy: human.outcome.entropy,
      reward,
    };
    curve.push(point);
    timing.evalMs += performance.now() - t0;
    return point;
  };

  try {
    const steps = opponents ? config.rl.steps : 0;
    const start = await curvePoint(0, NaN); // not inside onProgress?.(…): the curve must not depend on whether anyone listens
    onProgress?.({ condition, seed, step: 0, steps, point: start });
    const hyper: GrpoHyper = {
      ...DEFAULT_OPTIM,
      lr: config.rl.lr,
      epsLow: config.rl.epsLow,
      epsHigh: config.rl.epsHigh,
      klCoef: config.rl.klCoef,
      temperature: T,
      groupSize: config.rl.groupSize,
      updatesPerBatch: 1,
      scaleByStd: true,
    };
    for (let step = 1; step <= steps && opponents; step++) {
      await gate?.();
      signal?.throwIfAborted();
      const t0 = performance.now();
      const sim = opponents.simulatorFor(step, rng);
      const personas = groupedPersonas(sim, config.rl.prompts, config.rl.groupSize, rng);
      const played = await play(bench, policy, sim, personas, rng, T);
      const rewards = Float64Array.from(played.dialogues, (d) => bench.reward(d));
      const s = await grpoUpdate(
        policy,
        basePolicy,
        encode(bench, played.dialogues, "policy"),
        rewards,
        hyper,
      );
      if (!Number.isFinite(s.gradNorm))
        throw new Error(
          `${condition}, seed ${seed}: policy training diverged at step ${step} (gradient norm ${s.gradNorm}); lower rl.lr`,
        );
      await opponents.afterStep?.(step, played, rewards, async (own) => {
        const p = await play(
          bench,
          policy,
          own,
          groupedPersonas(own, config.rl.prompts, config.rl.groupSize, rng),
          rng,
          T,
        );
        return { played: p, rewards: Float64Array.from(p.dialogues, (d) => bench.reward(d)) };
      });
      timing.rlMs += performance.now() - t0;
      const point =
        step % config.rl.evalEvery === 0 || step === steps
          ? await curvePoint(step, s.rewardMean)
          : undefined;
      onProgress?.({ condition, seed, step, steps, point });
      await new Promise<void>((resolve) => setTimeout(resolve, 0)); // let messages (cancel, pause) in
    }

    // final evaluation, with the same draws for every condition
    const tEval = performance.now();
    const final = await finalEvaluation({
      backend,
      bench,
      config,
      pretrained,
      opts,
      policy,
      panel,
      corpusMembers: openedPanel.corpusMembers,
      newHumans,
      trainSims,
    });
    timing.evalMs += performance.now() - tEval;
    const { format, config: modelConfig, tensors } = await policy.checkpoint();
    const remoteStats = [...openedPanel.remoteStats(), ...(opponents?.remoteStats?.() ?? [])];
    return {
      seed,
      ...final,
      trainSuccess: final.trainSuccess!,
      curve,
      timing,
      ...(remoteStats.length ? { remoteSimulators: remoteStats } : {}),
      finalPolicy: { format, config: modelConfig, tensors },
    };
  } finally {
    opponents?.dispose();
    for (const m of owned) m.dispose();
    await openedPanel.dispose();
  }
}

/**
 * The final evaluation of a stored trained policy (a re-scoring, src/experiment/rescore.ts): the
 * same code as a run's, against this config's panel. The training simulators of `cotrain` and
 * `population` are trained with the policy and not kept, so their success is left out (null).
 */
export async function rescoreUnit(
  backend: EngineBackend,
  config: ExperimentConfig,
  pretrained: PretrainedSet,
  condition: ConditionId,
  trained: Checkpoint,
  corpora: Corpora = {}, // the imported corpora the config names, by hash (corpora.ts)
): Promise<
  FinalMetrics & { seed: number; evalMs: number; remoteSimulators?: RemoteSimulatorStats[] }
> {
  const t0 = performance.now();
  const bench = benchmarkFor(config);
  const opts = modelOptions(bench, config);
  const tables = new CorpusTables(bench, corpora);
  const openedPanel = await openPanel(backend, bench, config, pretrained, opts, tables);
  const owned: { dispose(): void }[] = [];
  const policy = backend.createModel(trained, opts);
  owned.push(policy);
  const opponents = TRAINS_ITS_SIMULATOR.has(condition)
    ? null
    : createOpponents(condition, { backend, bench, config, pretrained, opts });
  try {
    const trainSims = TRAINS_ITS_SIMULATOR.has(condition)
      ? null
      : opponents
        ? () => opponents.evaluationSimulators()
        : (() => {
            const sim = alignedSimulator(backend, bench, config, pretrained, opts, owned);
            return () => [sim];
          })();
    const final = await finalEvaluation({
      backend,
      bench,
      config,
      pretrained,
      opts,
      policy,
      panel: openedPanel.simulators,
      corpusMembers: openedPanel.corpusMembers,
      newHumans: evaluationHumans(tables, config),
      trainSims,
    });
    const remoteStats = [...openedPanel.remoteStats(), ...(opponents?.remoteStats?.() ?? [])];
    return {
      seed: pretrained.seed,
      ...final,
      evalMs: performance.now() - t0,
      ...(remoteStats.length ? { remoteSimulators: remoteStats } : {}),
    };
  } finally {
    opponents?.dispose();
    for (const m of owned) m.dispose();
    await openedPanel.dispose();
  }
}
