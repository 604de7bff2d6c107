// The engine's one backend interface. A backend turns a Checkpoint into an EngineModel that
// computes next-token distributions, per-token log-probs and optimizer steps on fixed padded
// shapes [capacity, context]. Implementations: backends/jax.ts (jax-js on wasm or WebGPU, the
// only importer of jax-js) and backends/float64.ts (plain TypeScript float64, the test oracle).
//
// Conventions shared by every backend:
// * tokens are [rows, T] row-major; the distribution of token t comes from the logits at t − 1,
//   so token 0 is never predicted;
// * cls[b, t] picks the row of the model's allowed-token table that token t is drawn from
//   (class 0 allows every token unless the table says otherwise);
// * a distribution is softmax(logits · logitScale / temperature) restricted to allowed tokens
//   (logitScale γ > 1 gives the aligned, sharpened simulator π_ref^γ);
// * trainStep minimises the mask-weighted token-level mean (Σ mask·term / max(Σ mask, 1), as
//   DAPO / SCOPE; the mask at t = 0 is ignored since token 0 is never predicted) of
//     −min(r·A, clip(r, 1 − ε_low, 1 + ε_high)·A) + β·(e^(ref − logp) − (ref − logp) − 1)
//       + β_f · Σ_v q_v (log q_v − log p_v)
//   with r = e^(logp − old); A = 1 and old = logp (r ≡ 1) give maximum likelihood, and without
//   refLogp the KL term is 0. The last term is the exact forward KL(q ‖ p) from a frozen
//   reference's whole distribution q at that position (refDist), 0 without it. Then a
//   global-norm clip and an AdamW update.
import type { ModelConfig } from "./config";
import type { Checkpoint } from "./checkpoint";
import type { Decoder, DecoderOptions, Dist } from "./decode";
export type { Dist } from "./decode";

export type BackendName = "wasm" | "webgpu" | "float64";

export interface ModelOptions {
  /** Batch rows the model is compiled for; calls may pass fewer rows (they are padded). */
  capacity: number;
  /** Allowed-token classes, each a 0/1 row of length vocab; default: one class allowing all. */
  masks?: ArrayLike<number>[];
}

export interface TokenBatch {
  rows: number; // real rows, ≤ capacity
  tokens: Int32Array; // [rows, T]
  cls?: Int32Array; // [rows, T] allowed class of each token; default 0
}

export interface TrainBatch extends TokenBatch {
  mask: Float32Array; // [rows, T] 1 where token t is learned
  advantages?: Float32Array; // [rows]; absent: maximum likelihood (A = 1)
  oldLogp?: Float32Array; // [rows, T] log-probs at sampling time; absent: r ≡ 1
  refLogp?: Float32Array; // [rows, T] log-probs under the frozen reference; absent: no KL
  refDist?: Float32Array; // [rows, T, V] the frozen reference's probabilities for token t; absent: no forward KL
}

export interface OptimHyper {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number; // decoupled (AdamW), matrices and embeddings only
  clipNorm: number; // global gradient norm clip; Infinity disables
}

export interface PolicyHyper {
  epsLow: number; // ratio clip below, 1 − ε_low
  epsHigh: number; // ratio clip above, 1 + ε_high (clip-higher, DAPO)
  klCoef: number; // β of the low-variance KL to the reference
  forwardKlCoef?: number; // β_f of the exact forward KL from the reference's distribution (refDist); default 0
  temperature: number; // the sampling temperature the log-probs are taken at
}

export type StepHyper = OptimHyper & PolicyHyper;

export const DEFAULT_OPTIM: OptimHyper = {
  lr: 3e-3,
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  weightDecay: 0.01,
  clipNorm: 1,
};
export const DEFAULT_POLICY: PolicyHyper = {
  epsLow: 0.2,
  epsHigh: 0.28,
  klCoef: 0,
  temperature: 1,
}; // SCOPE's clip 0.2 / 0.28

export interface StepStats {
  loss: number; // the objective above (before the update)
  nll: number; // mean −logp over masked tokens
  entropy: number; // mean entropy of the (tempered, masked) distribution over masked tokens
  kl: number; // mean low-variance KL estimate over masked tokens (0 without refLogp)
  forwardKl: number; // mean exact KL(reference ‖ model) over masked tokens (0 without refDist)
  clipFrac: number; // fraction of masked tokens whose ratio was clipped
  gradNorm: number; // global gradient norm before clipping
  tokens: number; // masked tokens in the batch
}

export interface EngineModel {
  readonly backend: BackendName;
  readonly config: ModelConfig;
  readonly capacity: number;
  /** Log-probs [rows, vocab] of token pos[b] in each row, given tokens before it. */
  nextLogprobs(
    tokens: Int32Array,
    rows: number,
    pos: Int32Array,
    cls: Int32Array | undefined,
    dist?: Dist,
  ): Promise<Float32Array>;
  /**
   * An incremental decoding session over this model's `capacity` slots (decode.ts): the same
   * log-probs as `nextLogprobs`, computing only positions a slot has not been fed. Training or
   * loading the model invalidates what it cached; disposing the model disposes it.
   */
  decoder(opts?: DecoderOptions): Decoder;
  /** Log-prob [rows, T] of every token given the ones before it (0 at t = 0). */
  tokenLogprobs(batch: TokenBatch, dist?: Dist): Promise<Float32Array>;
  /** Probabilities [rows, T, V] of every allowed token at every position t given the tokens before it (0 at t = 0). */
  tokenDistributions(batch: TokenBatch, dist?: Dist): Promise<Float32Array>;
  /** The objective and its gradient (spec order), without an update; for checks and tools. */
  gradients(
    batch: TrainBatch,
    hyper: PolicyHyper,
  ): Promise<{ stats: Omit<StepStats, "gradNorm">; grads: Float32Array[] }>;
  /** One optimizer step on the objective above; returns stats measured before the update. */
  trainStep(batch: TrainBatch, hyper: StepHyper): Promise<StepStats>;
  /** Parameters (and Adam state) as fresh buffers the caller owns. */
  checkpoint(): Promise<Checkpoint>;
  /** Replace the parameters; Adam state is taken from the checkpoint or reset. */
  load(ck: Checkpoint): void;
  dispose(): void;
}

export interface EngineBackend {
  readonly name: BackendName;
  createModel(ck: Checkpoint, opts: ModelOptions): EngineModel;
}

/** The allowed-token table as a dense [classes, vocab] 0/1 array, with input checks. */
export function maskTable(
  config: ModelConfig,
  masks: ArrayLike<number>[] | undefined,
): { classes: number; table: Float32Array } {
  const V = config.vocab;
  const rows = masks && masks.length > 0 ? masks : [new Array<number>(V).fill(1)];
  const table = new Float32Array(rows.length * V);
  rows.forEach((row, c) => {
    if (row.length !== V)
      throw new Error(`mask class ${c} has length ${row.length}, vocab is ${V}`);
    let any = false;
    for (let v = 0; v < V; v++) {
      table[c * V + v] = row[v] ? 1 : 0;
      any ||= !!row[v];
    }
    if (!any) throw new Error(`mask class ${c} allows no token`);
  });
  return { classes: rows.length, table };
}

/** Checks a batch against a model's shapes before any backend touches it. */
export function checkBatch(
  model: { config: ModelConfig; capacity: number },
  b: TokenBatch,
  classes: number,
  what = "batch",
): void {
  const { context: T, vocab: V } = model.config;
  if (!Number.isInteger(b.rows) || b.rows < 1 || b.rows > model.capacity)
    throw new Error(`${what}: rows ${b.rows} not in [1, ${model.capacity}]`);
  if (b.tokens.length !== b.rows * T)
    throw new Error(
      `${what}: tokens has ${b.tokens.length} entries, expected rows·T = ${b.rows * T}`,
    );
  for (let i = 0; i < b.tokens.length; i++) {
    const t = b.tokens[i];
    if (!(t >= 0 && t < V)) throw new Error(`${what}: token ${t} at ${i} outside vocab [0, ${V})`);
  }
  if (b.cls) {
    if (b.cls.length !== b.rows * T)
      throw new Error(`${what}: cls has ${b.cls.length} entries, expected ${b.rows * T}`);
    for (let i = 0; i < b.cls.length; i++)
      if (!(b.cls[i] >= 0 && b.cls[i] < classes))
        throw new Error(`${what}: class ${b.cls[i]} at ${i} outside [0, ${classes})`);
  }
  const tb = b as Partial<TrainBatch>;
  if (tb.mask && tb.mask.length !== b.rows * T)
    throw new Error(`${what}: mask has ${tb.mask.length} entries, expected ${b.rows * T}`);
  if (tb.advantages && tb.advantages.length !== b.rows)
    throw new Error(`${what}: advantages has ${tb.advantages.length} entries, expected ${b.rows}`);
  if (tb.oldLogp && tb.oldLogp.length !== b.rows * T)
    throw new Error(`${what}: oldLogp has ${tb.oldLogp.length} entries, expected ${b.rows * T}`);
  if (tb.refLogp && tb.refLogp.length !== b.rows * T)
    throw new Error(`${what}: refLogp has ${tb.refLogp.length} entries, expected ${b.rows * T}`);
  if (tb.refDist && tb.refDist.length !== b.rows * T * V)
    throw new Error(
      `${what}: refDist has ${tb.refDist.length} entries, expected rows·T·V = ${b.rows * T * V}`,
    );
}

export function checkPositions(
  model: { config: ModelConfig },
  rows: number,
  pos: Int32Array,
  cls: Int32Array | undefined,
  classes: number,
): void {
  const T = model.config.context;
  if (pos.length !== rows) throw new Error(`pos has ${pos.length} entries, expected ${rows}`);
  for (const p of pos) if (!(p >= 1 && p < T)) throw new Error(`position ${p} outside [1, ${T})`);
  if (cls) {
    if (cls.length !== rows) throw new Error(`cls has ${cls.length} entries, expected ${rows}`);
    for (const c of cls)
      if (!(c >= 0 && c < classes)) throw new Error(`class ${c} outside [0, ${classes})`);
  }
}

/** Adam bias corrections for step t (1-based). */
export function adamBias(h: OptimHyper, t: number): { bc1: number; bc2: number } {
  return { bc1: 1 / (1 - Math.pow(h.beta1, t)), bc2: 1 / (1 - Math.pow(h.beta2, t)) };
}
