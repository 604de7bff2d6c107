// The six training conditions (DESIGN §3.5). They differ only in the simulators the policy trains
// against; the policy, its RL (GRPO with a KL to the base policy), its budget and its evaluation
// are the same code for all. Nothing here sees humans or the held-out panel.
import type { Benchmark } from "../benchmarks/types";
import type { EngineBackend, EngineModel, ModelOptions } from "../engine/backend";
import { DEFAULT_OPTIM } from "../engine/backend";
import { cloneCheckpoint, type Checkpoint } from "../engine/checkpoint";
import { groupAdvantages, grpoUpdate, type GrpoHyper } from "../engine/grpo";
import type { Rng } from "../engine/random";
import { bakeGamma, NeuralSimulator } from "../simulators/neural";
import { RoutedSimulator } from "../simulators/routed";
import type { UserSimulator } from "../simulators/simulator";
import { VerbalizedSampling } from "../simulators/vs";
import type { ConditionId, ExperimentConfig } from "./config";
import { encode } from "../benchmarks/encode";
import type { PretrainedSet } from "./pretrain";
import { remoteSimulator } from "./lm-panel";
import type { RemoteSimulator, RemoteSimulatorStats } from "../remote/remote-simulator";
import type { Played } from "./rollout";

/** What a condition trains against, step by step. */
export interface TrainingOpponents {
  /** The simulator for this step's batch (per-episode routing is inside it). */
  simulatorFor(step: number, rng: Rng): UserSimulator;
  /**
   * Called after the policy's update with the dialogues of this step (co-training updates here).
   * `playOwn` plays a fresh batch of the current policy against a given simulator (not used to
   * update the policy), for a trainable simulator that did not play this step's batch.
   */
  afterStep?(step: number, played: Played, rewards: Float64Array, playOwn?: PlayOwn): Promise<{ simReward?: number; simKl?: number }>;
  /** The simulators whose success is reported as "train-simulator success". */
  evaluationSimulators(): UserSimulator[];
  /** What remote training simulators did (config simulator.remote), for the report. */
  remoteStats?(): RemoteSimulatorStats[];
  dispose(): void;
}

export type PlayOwn = (sim: UserSimulator) => Promise<{ played: Played; rewards: Float64Array }>;

export interface ConditionContext {
  backend: EngineBackend;
  bench: Benchmark;
  config: ExperimentConfig;
  pretrained: PretrainedSet;
  opts: ModelOptions;
}

function frozen(ctx: ConditionContext, name: string, ck: Checkpoint, gamma: number, owned: EngineModel[]): NeuralSimulator {
  const model = ctx.backend.createModel(ck, ctx.opts);
  owned.push(model);
  return new NeuralSimulator(name, ctx.bench, model, gamma, true);
}

/**
 * The co-trained simulator's reward per row from the agent's rewards (rows g·G … g·G+G−1 are one
 * start state's group). Curriculum: exp(−(Var − 0.25)² / 0.02) of the group's reward variance,
 * the same for every row of the group; acts are masked to the allowed class, so no row is invalid
 * and SCOPE's invalid-act penalty never applies here.
 */
export function simulatorRewards(kind: ExperimentConfig["cotrain"]["reward"], rewards: Float64Array, G: number): Float64Array {
  if (kind === "adversarial") return rewards.map((r) => 1 - r);
  if (kind === "cooperative") return Float64Array.from(rewards);
  const out = new Float64Array(rewards.length);
  for (let g = 0; g < rewards.length; g += G) {
    const xs = rewards.subarray(g, g + G);
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    const v = xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length;
    out.fill(Math.exp(-((v - 0.25) ** 2) / 0.02), g, g + xs.length);
  }
  return out;
}

/** The co-trained simulator (and its FIFO snapshot pool for `population`). */
class CoTraining implements TrainingOpponents {
  readonly #ctx: ConditionContext;
  readonly #owned: EngineModel[] = [];
  readonly #sim: NeuralSimulator; // trainable, initialised from the aligned simulator
  readonly #anchor: EngineModel; // the reference simulator π_ref: the realism anchor
  readonly #pool: { ck: Checkpoint; sim: NeuralSimulator }[] = [];
  readonly #withPool: boolean;
  #snapshots = 0; // snapshots taken so far (names stay unique after eviction)
  #current = 0; // this batch's simulator: index into [current, ...pool]; −1: drawn per episode

  constructor(ctx: ConditionContext, withPool: boolean) {
    this.#ctx = ctx;
    this.#withPool = withPool;
    const { config, pretrained } = ctx;
    const model = ctx.backend.createModel(bakeGamma(pretrained.reference.checkpoint, config.simulator.gamma), ctx.opts);
    this.#owned.push(model);
    this.#sim = new NeuralSimulator("co-trained simulator", ctx.bench, model, 1, false);
    this.#anchor = ctx.backend.createModel(pretrained.reference.checkpoint, ctx.opts);
    this.#owned.push(this.#anchor);
  }

  #members(): UserSimulator[] {
    return [this.#sim, ...this.#pool.map((p) => p.sim)];
  }

  simulatorFor(_step: number, rng: Rng): UserSimulator {
    const members = this.#members();
    const { selection, draw } = this.#ctx.config.population;
    if (!this.#withPool || selection === "latest" || members.length === 1) {
      this.#current = 0;
      return this.#sim;
    }
    if (draw === "batch") {
      this.#current = rng.int(members.length);
      return members[this.#current];
    }
    // per episode: each start state (a group of G rollouts) is played by its own draw
    this.#current = -1;
    return new RoutedSimulator(members);
  }

  async afterStep(step: number, played: Played, rewards: Float64Array, playOwn?: PlayOwn) {
    const { config } = this.#ctx;
    const G = config.rl.groupSize;
    // which rows the current (trainable) simulator played
    let mine = played.personas.map((p) => (this.#current < 0 ? p.member === 0 : this.#current === 0));
    // As in cotrain, the simulator is updated every step on a full batch: when a snapshot played
    // (part of) this one, it plays its own against the current policy.
    if (playOwn && !mine.every(Boolean)) {
      ({ played, rewards } = await playOwn(this.#sim));
      mine = played.personas.map(() => true);
    }
    const n = played.dialogues.length;
    let out = {};
    if (mine.some(Boolean)) {
      const simRewards = simulatorRewards(config.cotrain.reward, rewards, G);
      const adv = new Float32Array(n);
      if (config.cotrain.reward === "curriculum") {
        // a group's rows share its reward, so advantages compare groups: centred and scaled over the rows it played
        const rows = Array.from({ length: n }, (_, b) => b).filter((b) => mine[b]);
        const a = groupAdvantages(
          rows.map((b) => simRewards[b]),
          rows.length,
        );
        rows.forEach((b, j) => (adv[b] = a[j]));
      } else {
        // group-relative advantages among the rows this simulator played in each group
        for (let g = 0; g < n; g += G) {
          const rows = Array.from({ length: G }, (_, i) => g + i).filter((b) => mine[b]);
          if (rows.length < 2) continue;
          const a = groupAdvantages(
            rows.map((b) => simRewards[b]),
            rows.length,
          );
          rows.forEach((b, j) => (adv[b] = a[j]));
        }
      }
      const batch = encode(this.#ctx.bench, played.dialogues, "simulator");
      batch.mask = batch.mask.map((m, i) => (mine[Math.floor(i / this.#ctx.bench.context)] ? m : 0));
      const hyper: GrpoHyper = {
        ...DEFAULT_OPTIM,
        lr: config.cotrain.lr,
        epsLow: config.rl.epsLow,
        epsHigh: config.rl.epsHigh,
        klCoef: config.cotrain.anchor === "reverse" ? config.cotrain.klCoef : 0,
        forwardKlCoef: config.cotrain.anchor === "forward" ? config.cotrain.klCoef : 0,
        temperature: 1,
        groupSize: G,
        updatesPerBatch: 1,
        scaleByStd: true,
      };
      const s = await grpoUpdate(this.#sim.model, this.#anchor, batch, simRewards, hyper, adv);
      out = { simReward: s.rewardMean, simKl: config.cotrain.anchor === "forward" ? s.forwardKl : s.kl };
    }
    if (this.#withPool && step % config.population.snapshotEvery === 0) await this.#snapshot();
    return out;
  }

  async #snapshot(): Promise<void> {
    const { config } = this.#ctx;
    const ck = cloneCheckpoint(await this.#sim.model.checkpoint(), { withOptimizer: false });
    const model = this.#ctx.backend.createModel(ck, this.#ctx.opts);
    this.#pool.push({ ck, sim: new NeuralSimulator(`snapshot ${++this.#snapshots}`, this.#ctx.bench, model, 1, true) });
    while (this.#pool.length > config.population.poolSize) this.#pool.shift()!.sim.model.dispose(); // FIFO
  }

  /** Pool contents (oldest first), for tests and reports. */
  poolSize(): number {
    return this.#pool.length;
  }

  evaluationSimulators(): UserSimulator[] {
    return this.#withPool ? this.#members() : [this.#sim];
  }

  dispose(): void {
    for (const m of this.#owned) m.dispose();
    for (const p of this.#pool) p.sim.model.dispose();
  }
}

export function createOpponents(id: ConditionId, ctx: ConditionContext): TrainingOpponents | null {
  const { config, pretrained } = ctx;
  const gamma = config.simulator.gamma;
  const owned: EngineModel[] = [];
  const dispose = () => owned.forEach((m) => m.dispose());
  // remote training simulators (simulator.remote) replace the pretrained networks they name
  const remote = config.simulator.remote;
  const fromRemote = (sims: RemoteSimulator[]): TrainingOpponents => ({
    simulatorFor: (step) => sims[step % sims.length],
    evaluationSimulators: () => sims,
    remoteStats: () => sims.map((s) => ({ ...s.stats })),
    dispose,
  });
  if (id === "single" && remote?.single) return fromRemote([remoteSimulator(ctx.bench, config, "remote simulator", remote.single)]);
  if (id === "ensemble" && remote?.ensemble) return fromRemote(remote.ensemble.map((r, k) => remoteSimulator(ctx.bench, config, `remote simulator ${k + 1}`, r)));
  if (id === "vs" && remote?.vs) return fromRemote([remoteSimulator(ctx.bench, config, "remote vs simulator", remote.vs)]);
  switch (id) {
    case "base":
      return null;
    case "single": {
      const sim = frozen(ctx, "aligned simulator", pretrained.reference.checkpoint, gamma, owned);
      return { simulatorFor: () => sim, evaluationSimulators: () => [sim], dispose };
    }
    case "ensemble": {
      // each member collapsed with its own family's γ (the single simulator's: simulator.gamma)
      const sims = pretrained.ensemble.map((e) => frozen(ctx, e.name, e.result.checkpoint, e.gamma ?? gamma, owned));
      return { simulatorFor: (step) => sims[step % sims.length], evaluationSimulators: () => sims, dispose };
    }
    case "vs": {
      const base = frozen(ctx, "aligned simulator", pretrained.reference.checkpoint, gamma, owned);
      const sim = new VerbalizedSampling(ctx.bench, base, config.vs);
      return { simulatorFor: () => sim, evaluationSimulators: () => [sim], dispose };
    }
    case "cotrain":
      return new CoTraining(ctx, false);
    case "population":
      return new CoTraining(ctx, true);
    default:
      id satisfies never;
      throw new Error(`unknown condition ${id as string}`);
  }
}
