// Incremental decoding, the host side shared by every backend. A Decoder keeps, for each of a
// model's `capacity` slots, the keys and values of every layer at the positions it has been fed,
// so the next token's distribution costs only the positions it has not seen (one agent act and
// one user reply per turn) instead of a full forward over [capacity, context].
//
// The decoder compares each request row's tokens with what its slot was fed and re-feeds from the
// first position that differs, so a wrong guess about which slot holds which sequence costs time,
// never correctness. Keys and values at a position depend only on the tokens up to it, and the
// causal mask hides positions past the query, so stale entries beyond a row's prefix are harmless.
// Training or loading the model makes every slot stale (the backends bump a version).
import type { ModelConfig } from "./config";

/** How log-probs are read from the logits: softmax(logitScale · logits / temperature). */
export interface Dist {
  temperature?: number; // default 1
  logitScale?: number; // γ, default 1
}

export interface DecodeRequest {
  slots: Int32Array; // [rows] the slot each row lives in, distinct, in [0, capacity)
  tokens: Int32Array; // [rows, T] each row's sequence; positions < pos[r] are read
  pos: Int32Array; // [rows] the position whose token is to be predicted, in [1, T)
  cls?: Int32Array; // [rows] allowed class of that token; default 0
}

export interface DecoderOptions {
  /** Compute every slot in every call, as before row buckets (benchmarks compare the two); default false. */
  allRows?: boolean;
}

export interface Decoder {
  /** Log-probs [rows, vocab] of token pos[r] of each row given the tokens before it; equal to `nextLogprobs`. */
  next(req: DecodeRequest, dist?: Dist): Promise<Float32Array>;
  /** Positions computed so far (a full forward computes rows · T), for benchmarks. */
  readonly positionsFed: number;
  dispose(): void;
}

/** What one call feeds: the window [start[r], pos[r]) of every request row. */
export interface FeedPlan {
  start: Int32Array; // [rows]
  width: number; // max over rows of pos − start
}

/** Which positions each slot holds, and what it was fed there. */
export class SlotTable {
  readonly #T: number;
  readonly #tokens: Int32Array; // [capacity, T] the tokens each slot was fed
  readonly #valid: Int32Array; // [capacity] leading positions with valid keys and values
  #version = -1;
  positionsFed = 0;

  constructor(
    readonly capacity: number,
    T: number,
  ) {
    this.#T = T;
    this.#tokens = new Int32Array(capacity * T);
    this.#valid = new Int32Array(capacity);
  }

  /** Plans a call: each row's window starts at its first position that differs from its slot's (at most pos − 1). */
  plan(req: DecodeRequest, version: number): FeedPlan {
    const T = this.#T;
    if (version !== this.#version) {
      this.#valid.fill(0); // the weights changed: nothing cached is valid
      this.#version = version;
    }
    const rows = req.slots.length;
    const start = new Int32Array(rows);
    let width = 0;
    for (let r = 0; r < rows; r++) {
      const s = req.slots[r];
      const p = req.pos[r];
      let t = 0;
      const known = Math.min(this.#valid[s], p - 1);
      while (t < known && this.#tokens[s * T + t] === req.tokens[r * T + t]) t++;
      start[r] = t;
      width = Math.max(width, p - t);
      this.#tokens.set(req.tokens.subarray(r * T + t, r * T + p), s * T + t);
      this.#valid[s] = p;
      this.positionsFed += p - t;
    }
    return { start, width };
  }
}

/** Input checks shared by the backends' decoders. */
export function checkDecodeRequest(
  config: ModelConfig,
  capacity: number,
  classes: number,
  req: DecodeRequest,
): void {
  const { context: T, vocab: V } = config;
  const rows = req.slots.length;
  if (rows < 1 || rows > capacity)
    throw new Error(`decode: ${rows} rows, expected 1 … ${capacity}`);
  if (req.tokens.length !== rows * T)
    throw new Error(
      `decode: tokens has ${req.tokens.length} entries, expected rows·T = ${rows * T}`,
    );
  if (req.pos.length !== rows)
    throw new Error(`decode: pos has ${req.pos.length} entries, expected ${rows}`);
  if (req.cls && req.cls.length !== rows)
    throw new Error(`decode: cls has ${req.cls.length} entries, expected ${rows}`);
  const used = new Set<number>();
  for (let r = 0; r < rows; r++) {
    const s = req.slots[r];
    if (!(Number.isInteger(s) && s >= 0 && s < capacity))
      throw new Error(`decode: slot ${s} outside [0, ${capacity})`);
    if (used.has(s)) throw new Error(`decode: slot ${s} appears twice`);
    used.add(s);
    const p = req.pos[r];
    if (!(p >= 1 && p < T)) throw new Error(`decode: position ${p} outside [1, ${T})`);
    if (req.cls && !(req.cls[r] >= 0 && req.cls[r] < classes))
      throw new Error(`decode: class ${req.cls[r]} outside [0, ${classes})`);
    for (let t = 0; t < p; t++) {
      const tok = req.tokens[r * T + t];
      if (!(tok >= 0 && tok < V))
        throw new Error(`decode: token ${tok} at row ${r}, position ${t} outside vocab [0, ${V})`);
    }
  }
}

/** The smallest power of two ≥ width, at most T: each backend compiles one step per bucket. */
export function windowBucket(width: number, T: number): number {
  let w = 1;
  while (w < width) w *= 2;
  return Math.min(w, T);
}

/**
 * The rows one call computes: the smallest power of two ≥ rows, at least 8 and at most the
 * capacity (each bucket is one more compiled shape, so the small ones share one).
 */
export function rowBucket(rows: number, capacity: number): number {
  let b = 8;
  while (b < rows) b *= 2;
  return Math.min(b, capacity);
}
