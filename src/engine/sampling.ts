// Batched autoregressive sampling around any backend: the token loop stays in TypeScript
// (jax-js has no scan), each step is one jitted forward on fixed shapes, and the draw itself
// uses the seeded Rng on the host, so every backend samples identically given equal logits.
import type { Dist, EngineModel } from "./backend";
import type { Rng } from "./random";

export interface Draw {
  tokens: Int32Array; // [rows] the sampled token of each row
  logp: Float32Array; // [rows] its log-probability under the (tempered, scaled, masked) distribution
  entropy: Float32Array; // [rows] entropy of that distribution (nats)
}

/** Draws token pos[b] of every row b given the tokens before it; does not write it. */
export async function sampleNext(
  model: EngineModel,
  tokens: Int32Array,
  rows: number,
  pos: Int32Array,
  cls: Int32Array | undefined,
  rng: Rng,
  dist?: Dist,
): Promise<Draw> {
  const V = model.config.vocab;
  const lp = await model.nextLogprobs(tokens, rows, pos, cls, dist);
  return drawFromLogprobs(lp, rows, V, rng);
}

/** One categorical draw per row of a [rows, V] log-prob table, with its log-prob and the row's entropy. */
export function drawFromLogprobs(lp: Float32Array, rows: number, V: number, rng: Rng): Draw {
  const out: Draw = {
    tokens: new Int32Array(rows),
    logp: new Float32Array(rows),
    entropy: new Float32Array(rows),
  };
  for (let b = 0; b < rows; b++) {
    const v = rng.categoricalLog(lp, b * V, V);
    out.tokens[b] = v;
    out.logp[b] = lp[b * V + v];
    let h = 0;
    for (let i = b * V; i < (b + 1) * V; i++) {
      const p = Math.exp(lp[i]);
      if (p > 0) h -= p * lp[i];
    }
    out.entropy[b] = h;
  }
  return out;
}

export interface GenerateOptions {
  from: number; // first position to fill (≥ 1)
  to: number; // one past the last position to fill (≤ context)
  cls?: (t: number) => number; // allowed class of position t, default 0
  dist?: Dist;
}

/**
 * Fills positions [from, to) of every row in place, one token at a time.
 * Returns the log-prob [rows, T] of each generated token (0 elsewhere).
 */
export async function generate(
  model: EngineModel,
  tokens: Int32Array,
  rows: number,
  rng: Rng,
  opts: GenerateOptions,
): Promise<Float32Array> {
  const T = model.config.context;
  if (!(opts.from >= 1 && opts.to <= T && opts.from < opts.to))
    throw new Error(`generate: range [${opts.from}, ${opts.to}) must lie in [1, ${T}]`);
  const logp = new Float32Array(rows * T);
  for (let t = opts.from; t < opts.to; t++) {
    const pos = new Int32Array(rows).fill(t);
    const cls = opts.cls ? new Int32Array(rows).fill(opts.cls(t)) : undefined;
    const draw = await sampleNext(model, tokens, rows, pos, cls, rng, opts.dist);
    for (let b = 0; b < rows; b++) {
      tokens[b * T + t] = draw.tokens[b];
      logp[b * T + t] = draw.logp[b];
    }
  }
  return logp;
}
