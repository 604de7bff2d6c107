// Runs an experiment: per seed, pretrain the shared models, then train one policy per condition
// with GRPO against that condition's simulators, and evaluate every policy against its training
// simulators, the held-out panel and the human population. A (condition, seed) unit is a pure
// function of config + seed + pretrained checkpoints (and the panel's LM files, if any), so units
// can run in parallel workers.
import type { Benchmark, Dialogue } from "../benchmarks/types";
import type { EngineBackend, EngineModel } from "../engine/backend";
import type { Checkpoint } from "../engine/checkpoint";
import { DEFAULT_OPTIM } from "../engine/backend";
import { grpoUpdate, type GrpoHyper } from "../engine/grpo";
import { Rng } from "../engine/random";
import { distinctN, klDivergence } from "../metrics/diversity";
import { NeuralSimulator } from "../simulators/neural";
import type { UserSimulator } from "../simulators/simulator";
import { emptyUsage, type BackoffUsage } from "../simulators/empirical";
import type { Corpora } from "./corpora";
import { CorpusTables, corpusPanel, evaluationHumans, lmEntries } from "./corpus-simulators";
import { CONDITIONS, type ConditionId, type ExperimentConfig } from "./config";
import { createOpponents } from "./conditions";
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
  const rng = Rng.seed(seed).fork(100 + CONDITIONS.indexOf(condition));
  const evalRng = Rng.seed(seed).fork(200); // the same evaluation draws for every condition
  const T = config.rl.temperature;
  const tables = new CorpusTables(bench, corpora);
  const newHumans = evaluationHumans(tables, config);
  const humans = newHumans();
  const corpusMembers = corpusPanel(tables, pretrained.panel);
  // LM members first: one that fails to load fails the unit before any engine model exists
  const lmPanel = await openLmPanel(bench, config, lmEntries(pretrained.panel), backend.name);
  const owned = [] as { dispose(): void }[];
  const policy = backend.createModel(pretrained.basePolicy.checkpoint, opts);
  const basePolicy = backend.createModel(pretrained.basePolicy.checkpoint, opts);
  owned.push(policy, basePolicy);
  const panel: UserSimulator[] = pretrained.panel.map((m) => {
    if ("corpus" in m) return corpusMembers.get(m.name)!;
    if (!("result" in m)) return lmPanel.simulators.get(m.name)!;
    const model = backend.createModel(m.result.checkpoint, opts);
    owned.push(model);
    return new NeuralSimulator(m.name, bench, model, m.gamma, true);
  });
  const opponents = createOpponents(condition, { backend, bench, config, pretrained, opts });
  // `base` is reported against the simulator `single` trains on
  const trainSims = opponents
    ? () => opponents.evaluationSimulators()
    : (() => {
        const model = backend.createModel(pretrained.reference.checkpoint, opts);
        owned.push(model);
        const sim = new NeuralSimulator(
          "aligned simulator",
          bench,
          model,
          config.simulator.gamma,
          true,
        );
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
    const finalRng = evalRng.fork(1);
    const finalHumans = newHumans();
    const human = await evaluate(
      bench,
      policy,
      finalHumans,
      config.eval.episodes,
      finalRng,
      T,
      cap,
    );
    const backoff: Record<string, BackoffUsage> = {};
    if (finalHumans.usage) backoff.humans = finalHumans.usage;
    const before = new Map(
      [...corpusMembers].map(([name, sim]) => [name, structuredClone(sim.usage)]),
    );
    const heldoutByMember: Record<string, number> = {};
    for (const sim of panel)
      heldoutByMember[sim.name] = (
        await evaluate(bench, policy, sim, config.eval.episodes, finalRng, T, cap)
      ).outcome.success;
    for (const [name, sim] of corpusMembers) {
      const was = before.get(name)!;
      const u = emptyUsage();
      u.turns = sim.usage.turns - was.turns;
      for (const l of Object.keys(u.levels) as (keyof BackoffUsage["levels"])[])
        u.levels[l] = sim.usage.levels[l] - was.levels[l];
      backoff[name] = u;
    }
    const trainSuccess = await successAgainst(trainSims(), config.eval.episodes, finalRng, true);
    const trainPlay = await evaluate(
      bench,
      policy,
      trainSims()[0],
      SAMPLES_PER_OPPONENT,
      finalRng.fork(7),
      T,
      cap,
    );
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
    const trials = benchmarkModule(config.benchmark).passK;
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
    timing.evalMs += performance.now() - tEval;
    const { format, config: modelConfig, tensors } = await policy.checkpoint();
    const remoteStats = [...lmPanel.remoteStats(), ...(opponents?.remoteStats?.() ?? [])];
    return {
      seed,
      trainSuccess,
      heldoutSuccess: mean(Object.values(heldoutByMember)),
      humanSuccess: human.outcome.success,
      humanReward: human.outcome.reward,
      policyEntropy: human.outcome.entropy,
      distinct2: distinctN(agentSeqs, 2),
      heldoutByMember,
      strategyHistogram: histogram,
      curve,
      samples: [...sample("humans", human.played), ...sample("train", trainPlay.played)],
      referenceKLOnPolicy,
      ...(humanPassK ? { humanPassK } : {}),
      timing,
      ...(remoteStats.length ? { remoteSimulators: remoteStats } : {}),
      ...(Object.keys(backoff).length ? { backoff } : {}),
      finalPolicy: { format, config: modelConfig, tensors },
    };
  } finally {
    opponents?.dispose();
    for (const m of owned) m.dispose();
    await lmPanel.dispose();
  }
}
