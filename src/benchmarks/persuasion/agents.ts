// The behaviour persuader of the pretraining corpus: P4G's strategy frequencies, no adaptation,
// with a style of its own per corpus persuader. The reference persuaders whose success is drawn on
// the figures are ceilings.ts'.
import type { Rng } from "../../engine/random";
import type { Dialogue } from "../types";
import { p4gStats, type P4GStrategy } from "./p4g-stats";
import { ASK, GREETING, STRATEGIES, STRATEGY_ACTS } from "./world";

const STRATEGY_FREQ = STRATEGIES.map(
  ([, label]) => p4gStats.strategies.frequencies[label as P4GStrategy],
);
const ASK_HAZARD = [0, 0.08, 0.15, 0.3]; // P(ask now) at exchanges 1 … 4, if not asked yet; exchange 5 never asks

export function behaviourAgent(
  d: Dialogue,
  rng: Rng,
  style: ArrayLike<number> = STRATEGY_FREQ,
): number {
  const exchange = d.acts.length / 2; // 0-based
  if (exchange === 0) return rng.uniform() < 0.7 ? GREETING : STRATEGY_ACTS[rng.categorical(style)];
  if (exchange < ASK_HAZARD.length && rng.uniform() < ASK_HAZARD[exchange]) return ASK;
  return STRATEGY_ACTS[rng.categorical(style)];
}

/**
 * Real persuaders have styles: each favours a few strategies and repeats them. A corpus
 * persuader's strategy probabilities are drawn from Dirichlet(α · P4G frequencies), so the corpus
 * keeps P4G's strategy frequencies on average while covering dialogues that lean on one strategy
 * (what an RL policy does). α = 0 turns styles off (every persuader uses P4G's frequencies).
 */
export function persuaderStyle(rng: Rng, concentration: number): Float64Array {
  if (concentration === 0) return Float64Array.from(STRATEGY_FREQ);
  const g = Float64Array.from(STRATEGY_FREQ, (f) => gammaVariate(rng, concentration * f));
  const total = g.reduce((a, b) => a + b, 0);
  return total > 0 ? g.map((x) => x / total) : Float64Array.from(STRATEGY_FREQ);
}

/** Gamma(shape, 1) by Marsaglia and Tsang (2000); shape < 1 through Gamma(shape + 1) · U^(1/shape). */
function gammaVariate(rng: Rng, shape: number): number {
  if (shape < 1) return gammaVariate(rng, shape + 1) * Math.pow(1 - rng.uniform(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = rng.normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - rng.uniform();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

/** Persuader styles in the default corpus: α of the Dirichlet around P4G's frequencies (see persuaderStyle). */
export const DEFAULT_STYLE_CONCENTRATION = 1;
