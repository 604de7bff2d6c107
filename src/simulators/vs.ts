// Verbalized Sampling in the toy (docs/architecture.md#conditions; Zhang et al. 2025, arXiv 2510.01171). Asked for
// k candidate replies with probabilities, the aligned simulator verbalizes a distribution
//   q_φ ∝ π_ref^(1 + (γ − 1)(1 − φ))
// (fidelity φ = 1: the reference — the mode of a distribution-level prompt is close to π_ref;
// φ = 0: the collapsed π_ref^γ). It lists k distinct utterances, each expressing an act drawn
// i.i.d. from q_φ, so several candidates can share an act; an act's verbalized probability is
// shared among its paraphrases. `random` picks a candidate uniformly (SCOPE's main setting) and
// reproduces q_φ exactly in expectation; `prob` picks by verbalized probability, which is
// q_φ(a)/Σ_{a'∈listed} q_φ(a') — q_φ up to a finite-k bias that vanishes as k grows.
// φ is a modelling assumption; the lm tier measures VS on real LMs instead.
import type { Benchmark, Dialogue, Persona } from "../benchmarks/types";
import type { Rng } from "../engine/random";
import type { NeuralSimulator } from "./neural";
import { cardPersonas, type UserSimulator } from "./simulator";

export type VsSelection = "random" | "prob";

export interface VsOptions {
  k: number; // candidates per reply
  selection: VsSelection;
  fidelity: number; // φ in [0, 1]
}

export interface VsCandidate {
  act: number;
  probability: number; // verbalized: q_φ(act) / (number of candidates expressing act)
}

/** The verbalized exponent: 1 + (γ − 1)(1 − φ). */
export const vsExponent = (gamma: number, fidelity: number) => 1 + (gamma - 1) * (1 - fidelity);

/** k candidates with acts i.i.d. from q (a probability row), probabilities shared among paraphrases. */
export function verbalize(q: ArrayLike<number>, k: number, rng: Rng): VsCandidate[] {
  const acts = Array.from({ length: k }, () => rng.categorical(q));
  const count = new Map<number, number>();
  for (const a of acts) count.set(a, (count.get(a) ?? 0) + 1);
  return acts.map((act) => ({ act, probability: q[act] / count.get(act)! }));
}

export function select(candidates: VsCandidate[], selection: VsSelection, rng: Rng): number {
  if (selection === "random") return candidates[rng.int(candidates.length)].act;
  return candidates[rng.categorical(candidates.map((c) => c.probability))].act;
}

export class VerbalizedSampling implements UserSimulator {
  readonly name: string;

  /** @param base the aligned simulator: its network is π_ref, its `gamma` the alignment γ */
  constructor(
    readonly bench: Benchmark,
    readonly base: NeuralSimulator,
    readonly opts: VsOptions,
  ) {
    if (!(opts.k >= 1 && Number.isInteger(opts.k)))
      throw new Error(`vs.k must be a positive integer, got ${opts.k}`);
    if (!(opts.fidelity >= 0 && opts.fidelity <= 1))
      throw new Error(`vs.fidelity must lie in [0, 1], got ${opts.fidelity}`);
    this.name = `vs(k=${opts.k}, ${opts.selection}, φ=${opts.fidelity})`;
  }

  personas(n: number, rng: Rng): Persona[] {
    return cardPersonas(this.bench, n, rng);
  }

  /** q_φ: what the simulator verbalizes (and, with `random`, what it samples in expectation). */
  distribution(dialogues: Dialogue[]): Promise<Float64Array> {
    return this.base.distribution(
      dialogues,
      undefined,
      vsExponent(this.base.gamma, this.opts.fidelity),
    );
  }

  async reply(dialogues: Dialogue[], _personas: Persona[], rng: Rng): Promise<Int32Array> {
    const V = this.bench.acts.length;
    const q = await this.distribution(dialogues);
    return Int32Array.from(dialogues, (_, b) =>
      select(verbalize(q.subarray(b * V, (b + 1) * V), this.opts.k, rng), this.opts.selection, rng),
    );
  }
}
