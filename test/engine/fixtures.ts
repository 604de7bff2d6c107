// Shared fixtures for the engine tests: tiny configs, parameters away from init, random
// batches that exercise every branch of the objective, finite differences.
import { type ModelConfig, paramSpecs } from "../../src/engine/config";
import { type Checkpoint, initCheckpoint } from "../../src/engine/checkpoint";
import type { PolicyHyper, TrainBatch } from "../../src/engine/backend";
import { Rng } from "../../src/engine/random";
import { Float64Backend } from "../../src/engine/backends/float64";

export const TINY: ModelConfig = {
  vocab: 11,
  context: 7,
  d: 8,
  heads: 2,
  layers: 2,
  mlpRatio: 2,
  prefixLen: 0,
};
export const CONFIGS: [string, ModelConfig][] = [
  ["2 layers", TINY],
  ["1 layer", { ...TINY, layers: 1 }],
];
export const ROWS = 3;
export const FORBIDDEN = [2, 5, 7]; // tokens class 1 does not allow
export const MASKS = [
  new Array<number>(11).fill(1),
  Array.from({ length: 11 }, (_, v) => (FORBIDDEN.includes(v) ? 0 : 1)),
];
export const DIST = { temperature: 0.7, logitScale: 1.3 };
export const POLICY: PolicyHyper = {
  epsLow: 0.2,
  epsHigh: 0.28,
  klCoef: 0.1,
  forwardKlCoef: 0.3,
  temperature: DIST.temperature,
};
export const MLE: PolicyHyper = { epsLow: 0.2, epsHigh: 0.28, klCoef: 0, temperature: 1 };

/** Parameters well away from init (LN gains ≠ 1, biases ≠ 0) so every path carries gradient. */
export function randomCheckpoint(config: ModelConfig, seed: number): Checkpoint {
  const ck = initCheckpoint(config, seed);
  const rng = Rng.seed(seed + 1);
  paramSpecs(config).forEach((s, k) => {
    const data = ck.tensors[k].data;
    const base = s.init === "ones" ? 1 : 0;
    const std = s.init === "normal" ? 0.4 : 0.2;
    for (let i = 0; i < data.length; i++) data[i] = base + std * rng.normal();
  });
  return ck;
}

export const toParams = (ck: Checkpoint) => ck.tensors.map((t) => Float64Array.from(t.data));

/** Tokens and classes [rows, T]: a class-1 token is always one class 1 allows. */
export function randomTokens(
  config: ModelConfig,
  rng: Rng,
  rows = ROWS,
): { tokens: Int32Array; cls: Int32Array } {
  const n = rows * config.context;
  const tokens = new Int32Array(n);
  const cls = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    cls[i] = rng.int(2);
    do tokens[i] = rng.int(config.vocab);
    while (cls[i] === 1 && FORBIDDEN.includes(tokens[i]));
  }
  return { tokens, cls };
}

export function randomMask(n: number, rng: Rng): Float32Array {
  const choices = [0, 0.25, 0.5, 1, 1];
  return Float32Array.from({ length: n }, () => choices[rng.int(choices.length)]);
}

/** A PPO batch whose ratios fall inside and outside [1 − ε_low, 1 + ε_high], never near a kink. */
export async function policyBatch(
  config: ModelConfig,
  ck: Checkpoint,
  seed: number,
): Promise<TrainBatch> {
  const rng = Rng.seed(seed);
  const { tokens, cls } = randomTokens(config, rng);
  const model = new Float64Backend().createModel(ck, { capacity: ROWS, masks: MASKS });
  const logp = await model.tokenLogprobs({ rows: ROWS, tokens, cls }, DIST);
  const ratioRanges = [
    [0.5, 0.75],
    [0.85, 1.2],
    [1.35, 1.8],
  ]; // below, inside, above the clip
  const oldLogp = logp.map((lp) => {
    const [lo, hi] = ratioRanges[rng.int(3)];
    return lp - Math.log(lo + (hi - lo) * rng.uniform());
  });
  const refLogp = logp.map((lp) => lp + 0.5 * rng.normal());
  // another network's whole distributions: a valid q over the allowed tokens at every position
  const other = new Float64Backend().createModel(randomCheckpoint(config, seed + 7), {
    capacity: ROWS,
    masks: MASKS,
  });
  const refDist = await other.tokenDistributions({ rows: ROWS, tokens, cls }, DIST);
  const advantages = Float32Array.from([1.3, -0.7, 0.4]);
  return {
    rows: ROWS,
    tokens,
    cls,
    mask: randomMask(tokens.length, rng),
    advantages,
    oldLogp,
    refLogp,
    refDist,
  };
}

/** Central differences of f with respect to every entry of every parameter tensor. */
export function finiteDifferences(
  params: Float64Array[],
  f: () => number,
  h = 1e-6,
): Float64Array[] {
  return params.map((p) => {
    const g = new Float64Array(p.length);
    for (let i = 0; i < p.length; i++) {
      const x = p[i];
      p[i] = x + h;
      const up = f();
      p[i] = x - h;
      const down = f();
      p[i] = x;
      g[i] = (up - down) / (2 * h);
    }
    return g;
  });
}

export const norm = (a: ArrayLike<number>) =>
  Math.sqrt(Array.from(a).reduce((s, x) => s + x * x, 0));

/** ‖g − g_fd‖ / ‖g_fd‖ per tensor, by name. */
export function relativeErrors(
  config: ModelConfig,
  grads: Float64Array[],
  fd: Float64Array[],
): Record<string, number> {
  const out: Record<string, number> = {};
  paramSpecs(config).forEach((s, k) => {
    const diff = grads[k].map((g, i) => g - fd[k][i]);
    out[s.name] = norm(diff) / Math.max(norm(fd[k]), 1e-12);
  });
  return out;
}
