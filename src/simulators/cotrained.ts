// The co-trained simulator (SCOPE's `cotrain`) and its FIFO pool of frozen snapshots
// (`population`): a trainable NeuralSimulator, initialised from the collapsed reference, updated by
// GRPO after every policy step on the dialogues it played, anchored to the reference by a KL term.
import type { Benchmark, Dialogue, Persona } from "../benchmarks/types";
import { encode } from "../benchmarks/encode";
import {
  DEFAULT_OPTIM,
  type EngineBackend,
  type EngineModel,
  type ModelOptions,
} from "../engine/backend";
import { cloneCheckpoint, type Checkpoint } from "../engine/checkpoint";
import { groupAdvantages, grpoUpdate, type GrpoHyper } from "../engine/grpo";
import type { Rng } from "../engine/random";
import { bakeGamma, NeuralSimulator } from "./neural";
import { RoutedSimulator } from "./routed";
import type { UserSimulator } from "./simulator";

export type CoTrainReward = "adversarial" | "cooperative" | "curriculum";

export interface CoTrainingOptions {
  backend: EngineBackend;
  bench: Benchmark;
  opts: ModelOptions;
  reference: Checkpoint; // π_ref: the co-trained simulator starts at reference^γ; the KL anchors it to reference
  gamma: number;
  rl: { groupSize: number; epsLow: number; epsHigh: number };
  cotrain: { reward: CoTrainReward; lr: number; klCoef: number; anchor: "reverse" | "forward" };
  /** The snapshot pool (`population`); without it, only the current simulator plays. */
  pool?: {
    size: number;
    snapshotEvery: number;
    selection: "random" | "latest";
    draw: "batch" | "episode";
  };
}

/** What co-training reads of a played batch: the dialogues and who played each persona. */
export interface PlayedBatch {
  dialogues: Dialogue[];
  personas: Persona[];
}

/**
 * The co-trained simulator's reward per row from the agent's rewards (rows g·G … g·G+G−1 are one
 * start state's group). Curriculum: exp(−(Var − 0.25)² / 0.02) of the group's reward variance,
 * the same for every row of the group; acts are masked to the allowed class, so no row is invalid
 * and SCOPE's invalid-act penalty never applies here.
 */
export function simulatorRewards(
  kind: CoTrainReward,
  rewards: Float64Array,
  G: number,
): Float64Array {
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
export class CoTraining {
  readonly #o: CoTrainingOptions;
  readonly #owned: EngineModel[] = [];
  readonly #sim: NeuralSimulator; // trainable, initialised from the aligned simulator
  readonly #anchor: EngineModel; // the reference simulator π_ref: the realism anchor
  readonly #pool: { ck: Checkpoint; sim: NeuralSimulator }[] = [];
  #snapshots = 0; // snapshots taken so far (names stay unique after eviction)
  #current = 0; // this batch's simulator: index into [current, ...pool]; −1: drawn per episode

  constructor(o: CoTrainingOptions) {
    this.#o = o;
    const model = o.backend.createModel(bakeGamma(o.reference, o.gamma), o.opts);
    this.#owned.push(model);
    this.#sim = new NeuralSimulator("co-trained simulator", o.bench, model, 1, false);
    this.#anchor = o.backend.createModel(o.reference, o.opts);
    this.#owned.push(this.#anchor);
  }

  #members(): UserSimulator[] {
    return [this.#sim, ...this.#pool.map((p) => p.sim)];
  }

  simulatorFor(_step: number, rng: Rng): UserSimulator {
    const members = this.#members();
    const pool = this.#o.pool;
    if (!pool || pool.selection === "latest" || members.length === 1) {
      this.#current = 0;
      return this.#sim;
    }
    if (pool.draw === "batch") {
      this.#current = rng.int(members.length);
      return members[this.#current];
    }
    // per episode: each start state (a group of G rollouts) is played by its own draw
    this.#current = -1;
    return new RoutedSimulator(members);
  }

  async afterStep(
    step: number,
    played: PlayedBatch,
    rewards: Float64Array,
    playOwn?: (sim: UserSimulator) => Promise<{ played: PlayedBatch; rewards: Float64Array }>,
  ) {
    const { rl, cotrain, bench } = this.#o;
    const G = rl.groupSize;
    // which rows the current (trainable) simulator played
    let mine = played.personas.map((p) =>
      this.#current < 0 ? p.member === 0 : this.#current === 0,
    );
    // As in cotrain, the simulator is updated every step on a full batch: when a snapshot played
    // (part of) this one, it plays its own against the current policy.
    if (playOwn && !mine.every(Boolean)) {
      ({ played, rewards } = await playOwn(this.#sim));
      mine = played.personas.map(() => true);
    }
    const n = played.dialogues.length;
    let out = {};
    if (mine.some(Boolean)) {
      const simRewards = simulatorRewards(cotrain.reward, rewards, G);
      const adv = new Float32Array(n);
      if (cotrain.reward === "curriculum") {
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
      const batch = encode(bench, played.dialogues, "simulator");
      batch.mask = batch.mask.map((m, i) => (mine[Math.floor(i / bench.context)] ? m : 0));
      const hyper: GrpoHyper = {
        ...DEFAULT_OPTIM,
        lr: cotrain.lr,
        epsLow: rl.epsLow,
        epsHigh: rl.epsHigh,
        klCoef: cotrain.anchor === "reverse" ? cotrain.klCoef : 0,
        forwardKlCoef: cotrain.anchor === "forward" ? cotrain.klCoef : 0,
        temperature: 1,
        groupSize: G,
        updatesPerBatch: 1,
        scaleByStd: true,
      };
      const s = await grpoUpdate(this.#sim.model, this.#anchor, batch, simRewards, hyper, adv);
      out = { simReward: s.rewardMean, simKl: cotrain.anchor === "forward" ? s.forwardKl : s.kl };
    }
    if (this.#o.pool && step % this.#o.pool.snapshotEvery === 0)
      await this.#snapshot(this.#o.pool.size);
    return out;
  }

  async #snapshot(size: number): Promise<void> {
    const { backend, bench, opts } = this.#o;
    const ck = cloneCheckpoint(await this.#sim.model.checkpoint(), { withOptimizer: false });
    const model = backend.createModel(ck, opts);
    this.#pool.push({
      ck,
      sim: new NeuralSimulator(`snapshot ${++this.#snapshots}`, bench, model, 1, true),
    });
    while (this.#pool.length > size) this.#pool.shift()!.sim.model.dispose(); // FIFO
  }

  /** Pool contents (oldest first), for tests and reports. */
  poolSize(): number {
    return this.#pool.length;
  }

  evaluationSimulators(): UserSimulator[] {
    return this.#o.pool ? this.#members() : [this.#sim];
  }

  dispose(): void {
    for (const m of this.#owned) m.dispose();
    for (const p of this.#pool) p.sim.model.dispose();
  }
}
