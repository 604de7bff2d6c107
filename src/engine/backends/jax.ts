// The jax-js backend (wasm in Node and browsers, WebGPU in browsers): the engine's fast path and
// the only module that imports jax-js. It computes exactly what backends/float64.ts defines,
// in float32, with every step jitted on fixed padded shapes [capacity, context] so each
// function compiles once per model shape.
//
// jax-js arrays are reference counted and every call consumes its array arguments; this file
// keeps that bookkeeping in one place: models own `params`, `m`, `v`, `table` and `causal`,
// and pass `.ref`s (or `tree.ref`) into the jitted functions, which consume them.
import {
  getWebGPUDevice,
  init,
  jit,
  lax,
  nn,
  numpy as np,
  tree,
  valueAndGrad,
  type Device,
} from "@jax-js/jax";
import { LN_EPS, MASK_BIAS, type ModelConfig, paramSpecs } from "../config";
import { type Checkpoint, CHECKPOINT_FORMAT, validateCheckpoint } from "../checkpoint";
import {
  adamBias,
  checkBatch,
  checkPositions,
  type Dist,
  type EngineBackend,
  type EngineModel,
  maskTable,
  type ModelOptions,
  type PolicyHyper,
  type StepHyper,
  type StepStats,
  type TokenBatch,
  type TrainBatch,
} from "../backend";
import {
  checkDecodeRequest,
  type DecodeRequest,
  type Decoder,
  type DecoderOptions,
  rowBucket,
  SlotTable,
  windowBucket,
} from "../decode";

export type JaxDevice = Extract<Device, "wasm" | "webgpu">;

type Params = np.Array[];
type Scalars = Record<string, np.Array>;

const initialised = new Map<JaxDevice, Promise<boolean>>();

/** Starts a jax-js device once; resolves false when it is not available here. */
export function initJaxDevice(device: JaxDevice): Promise<boolean> {
  let p = initialised.get(device);
  if (!p) {
    p = init(device).then((ok) => ok.includes(device));
    initialised.set(device, p);
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// The model as jax-js functions. Every parameter is consumed exactly once per forward pass.

function layerNorm(x: np.Array, g: np.Array, b: np.Array): np.Array {
  const mu = x.ref.mean(-1, { keepdims: true });
  const xc = x.sub(mu);
  const variance = np.square(xc.ref).mean(-1, { keepdims: true });
  return xc
    .div(np.sqrt(variance.add(LN_EPS)))
    .mul(g)
    .add(b);
}

const GELU_K = Math.sqrt(2 / Math.PI);
function geluTanh(x: np.Array): np.Array {
  // x·x·x, not power(x, 3): jax-js differentiates power through log(x), which is NaN at x ≤ 0
  const inner = x.ref.add(x.ref.mul(x.ref).mul(x.ref).mul(0.044715)).mul(GELU_K);
  return x.mul(np.tanh(inner).add(1)).mul(0.5);
}

/** Logits [B, T, V]; consumes params, tokens [B, T] int32 and causal [T, T] (additive bias). */
function forward(c: ModelConfig, P: Params, tokens: np.Array, causal: np.Array): np.Array {
  const B = tokens.shape[0];
  const T = c.context;
  const H = c.heads;
  const hd = c.d / H;
  let i = 0;
  const next = () => P[i++];
  // tok_emb[tok] as a one-hot matmul: the gradient of a gather is a scatter-add, which WebGPU
  // runs with float atomics in no fixed order (weights differed between identical runs).
  let x = np.matmul(nn.oneHot(tokens, c.vocab), next()).add(next()); // tok_emb[tok] + pos_emb
  for (let l = 0; l < c.layers; l++) {
    const h = layerNorm(x.ref, next(), next());
    const qkv = np.matmul(h, next()).add(next());
    const [q, k, v] = np.split(qkv, 3, -1);
    const qh = q.reshape([B, T, H, hd]).transpose([0, 2, 1, 3]);
    const kh = k.reshape([B, T, H, hd]).transpose([0, 2, 3, 1]);
    const vh = v.reshape([B, T, H, hd]).transpose([0, 2, 1, 3]);
    const scores = np
      .matmul(qh, kh)
      .mul(1 / Math.sqrt(hd))
      .add(l === c.layers - 1 ? causal : causal.ref);
    const att = np.matmul(nn.softmax(scores, -1), vh).transpose([0, 2, 1, 3]).reshape([B, T, c.d]);
    x = x.add(np.matmul(att, next()).add(next()));
    const h2 = layerNorm(x.ref, next(), next());
    const hidden = geluTanh(np.matmul(h2, next()).add(next()));
    x = x.add(np.matmul(hidden, next()).add(next()));
  }
  x = layerNorm(x, next(), next());
  return np.matmul(x, next()).add(next());
}

/** z = logits · mul, with disallowed tokens pushed to MASK_BIAS; allowed is 0/1. */
function maskedLogSoftmax(logits: np.Array, allowed: np.Array, mul: np.Array): np.Array {
  return nn.logSoftmax(logits.mul(mul).add(allowed.sub(1).mul(-MASK_BIAS)), -1);
}

interface DecodeInputs {
  // Present when a call computes fewer rows than the capacity (else row b is slot b):
  slots?: np.Array; // [B] int32, the cache slot each working row reads (padding rows: any slot)
  back?: np.Array; // [capacity] int32, where each slot's new cache row comes from: working row b, or B + itself (unchanged)
  tokens: np.Array; // [B, W] int32, the window of new tokens of every working row (padding anywhere)
  write: np.Array; // [B, W, T] one-hot position of each window token (all zeros: padding)
  keep: np.Array; // [B, T] 1 where the cache is not written this call
  bias: np.Array; // [B, W, T] 0 where a window token may attend, MASK_BIAS elsewhere (causal)
  last: np.Array; // [B, W] one-hot: the window token whose logits are returned
  cls: np.Array; // [B] int32, allowed class of the predicted token
  mul: np.Array; // scalar logitScale / temperature
}

/**
 * One incremental step (decode.ts): runs a window of W tokens per working row through the model,
 * writing their keys and values into the caches K, Vc [capacity, H, T, hd] per layer, and returns
 * the masked log-softmax [B, V] at each row's `last` token with the new caches. With `slots`, only
 * the B rows a call asks for are gathered, computed and written back (B a bucket of the request's
 * row count), so the last turns of a batch, where most dialogues have ended, cost what their few
 * live rows cost; without, every slot is a row. Consumes every argument.
 */
function decodeStep(
  c: ModelConfig,
  P: Params,
  K: Params,
  Vc: Params,
  inp: DecodeInputs,
  table: np.Array,
): [np.Array, Params, Params] {
  const [B, W] = inp.tokens.shape;
  const T = c.context;
  const H = c.heads;
  const hd = c.d / H;
  let i = 0;
  const next = () => P[i++];
  let x = np.matmul(nn.oneHot(inp.tokens, c.vocab), next()).add(np.matmul(inp.write.ref, next())); // tok_emb + pos_emb
  const scatter = inp.write.transpose([0, 2, 1]).reshape([B, 1, T, W]); // window → cache positions
  const keep = inp.keep.reshape([B, 1, T, 1]);
  const bias = inp.bias.reshape([B, 1, W, T]);
  const newK: Params = [];
  const newV: Params = [];
  for (let l = 0; l < c.layers; l++) {
    const h = layerNorm(x.ref, next(), next());
    const qkv = np.matmul(h, next()).add(next());
    const [q, k, v] = np.split(qkv, 3, -1);
    const heads = (a: np.Array) => a.reshape([B, W, H, hd]).transpose([0, 2, 1, 3]); // [B, H, W, hd]
    const rows = (cache: np.Array) => (inp.slots ? np.take(cache.ref, inp.slots.ref, 0) : cache);
    const Kl = rows(K[l])
      .mul(keep.ref)
      .add(np.matmul(scatter.ref, heads(k)));
    const Vl = rows(Vc[l])
      .mul(keep.ref)
      .add(np.matmul(scatter.ref, heads(v)));
    const scores = np
      .matmul(heads(q), Kl.ref.transpose([0, 1, 3, 2]))
      .mul(1 / Math.sqrt(hd))
      .add(bias.ref);
    const att = np
      .matmul(nn.softmax(scores, -1), Vl.ref)
      .transpose([0, 2, 1, 3])
      .reshape([B, W, c.d]);
    const writeBack = (computed: np.Array, cache: np.Array) =>
      inp.back ? np.take(np.concatenate([computed, cache], 0), inp.back.ref, 0) : computed;
    newK.push(writeBack(Kl, K[l]));
    newV.push(writeBack(Vl, Vc[l]));
    x = x.add(np.matmul(att, next()).add(next()));
    const h2 = layerNorm(x.ref, next(), next());
    const hidden = geluTanh(np.matmul(h2, next()).add(next()));
    x = x.add(np.matmul(hidden, next()).add(next()));
  }
  scatter.dispose();
  keep.dispose();
  bias.dispose();
  inp.slots?.dispose();
  inp.back?.dispose();
  x = layerNorm(x, next(), next());
  const logits = np.matmul(x, next()).add(next()); // [B, W, V]
  const at = logits.mul(inp.last.reshape([B, W, 1])).sum(1);
  return [maskedLogSoftmax(at, np.take(table, inp.cls, 0), inp.mul), newK, newV];
}

interface TargetInputs {
  tokens: np.Array; // [B, T] int32, the input sequence
  targets: np.Array; // [B, T] int32, target[b, t] = token t + 1 (shifted on the host)
  cls: np.Array; // [B, T] int32, allowed class of the target
  mul: np.Array; // scalar logitScale / temperature
}

/** Per-position log-softmax [B, T, V] and target log-prob [B, T]. */
function targetLogprobs(
  c: ModelConfig,
  P: Params,
  inp: TargetInputs,
  table: np.Array,
  causal: np.Array,
): [np.Array, np.Array] {
  const logits = forward(c, P, inp.tokens, causal);
  const allowed = np.take(table, inp.cls, 0);
  const lp = maskedLogSoftmax(logits, allowed, inp.mul);
  const logp = lp.ref.mul(nn.oneHot(inp.targets, c.vocab)).sum(-1);
  return [lp, logp];
}

interface LossInputs extends TargetInputs {
  mask: np.Array; // [B, T]
  adv: np.Array; // [B]
  old: np.Array; // [B, T]
  refLogp: np.Array; // [B, T]
  useOld: np.Array; // scalar 0/1
  useRef: np.Array; // scalar 0/1
  epsLow: np.Array;
  epsHigh: np.Array;
  klCoef: np.Array;
  refDist: np.Array; // [B, T, V] the reference's probabilities for target t (zeros: no forward KL)
  fwdCoef: np.Array; // scalar β_f
}

/** The objective of backend.ts; aux = [nll, entropy, kl, clipFrac, tokens, forwardKl]. */
function objective(
  c: ModelConfig,
  P: Params,
  inp: LossInputs,
  table: np.Array,
  causal: np.Array,
): [np.Array, np.Array] {
  const [lp, logp] = targetLogprobs(c, P, inp, table, causal);
  const B = inp.mask.shape[0];
  const mask = inp.mask;
  const tokens = mask.ref.sum();
  const denom = np.maximum(tokens.ref, 1);
  const frozen = lax.stopGradient(logp.ref);
  const useOld = inp.useOld;
  const old = inp.old.mul(useOld.ref).add(frozen.ref.mul(np.subtract(1, useOld)));
  const useRef = inp.useRef;
  const ref = inp.refLogp.mul(useRef.ref).add(frozen.mul(np.subtract(1, useRef)));
  const ratio = np.exp(logp.ref.sub(old));
  const A = inp.adv.reshape([B, 1]);
  const unclipped = ratio.ref.mul(A.ref);
  const clipped = np.clip(ratio, np.subtract(1, inp.epsLow), np.add(1, inp.epsHigh)).mul(A);
  const clipHit = np.less(clipped.ref, unclipped.ref).astype(np.float32);
  const pg = np.minimum(unclipped, clipped).neg();
  const delta = ref.sub(logp.ref);
  const kl = np.exp(delta.ref).sub(delta).sub(1);
  // exact forward KL(q ‖ p) over the vocabulary; q = 0 at disallowed tokens, whose log p is finite
  const q = inp.refDist;
  const fwd = q.ref.mul(np.log(np.maximum(q, 1e-30)).sub(lp.ref)).sum(-1);
  const term = pg.add(kl.ref.mul(inp.klCoef)).add(fwd.ref.mul(inp.fwdCoef));
  const mean = (a: np.Array) => a.mul(mask.ref).sum().div(denom.ref);
  const loss = mean(term);
  const entropy = lax.stopGradient(np.exp(lp.ref).mul(lp).sum(-1).neg());
  const aux = np.stack([
    mean(lax.stopGradient(logp).neg()),
    mean(entropy),
    mean(lax.stopGradient(kl)),
    mean(clipHit),
    tokens,
    mean(lax.stopGradient(fwd)),
  ]);
  mask.dispose();
  denom.dispose();
  return [loss, aux];
}

interface Compiled {
  step: (
    P: Params,
    m: Params,
    v: Params,
    inp: LossInputs,
    h: Scalars,
    table: np.Array,
    causal: np.Array,
  ) => [Params, Params, Params, np.Array];
  next: (
    P: Params,
    tokens: np.Array,
    prev: np.Array,
    cls: np.Array,
    mul: np.Array,
    table: np.Array,
    causal: np.Array,
  ) => np.Array;
  logprobs: (P: Params, inp: TargetInputs, table: np.Array, causal: np.Array) => np.Array;
  dists: (P: Params, inp: TargetInputs, table: np.Array, causal: np.Array) => np.Array;
  grads: () => (
    P: Params,
    inp: LossInputs,
    table: np.Array,
    causal: np.Array,
  ) => [np.Array, np.Array, Params];
  decode: (
    P: Params,
    K: Params,
    Vc: Params,
    inp: DecodeInputs,
    table: np.Array,
  ) => [np.Array, Params, Params];
  decodeRows: (
    P: Params,
    K: Params,
    Vc: Params,
    inp: DecodeInputs,
    table: np.Array,
  ) => [np.Array, Params, Params];
  dispose(): void;
}

function compile(c: ModelConfig): Compiled {
  const decay = paramSpecs(c).map((s) => s.decay);
  const lossAndGrad = valueAndGrad(
    (P: Params, inp: LossInputs, table: np.Array, causal: np.Array) =>
      objective(c, P, inp, table, causal),
    { hasAux: true },
  );

  const step = jit(
    (
      P: Params,
      m: Params,
      v: Params,
      inp: LossInputs,
      h: Scalars,
      table: np.Array,
      causal: np.Array,
    ) => {
      const [[loss, aux], grads] = lossAndGrad(tree.ref(P), inp, table, causal) as [
        [np.Array, np.Array],
        Params,
      ];
      const sq = grads.map((g) => np.square(g.ref).sum());
      const norm = np.sqrt(sq.reduce((a, b) => a.add(b)));
      const scale = np.minimum(1, h.clipNorm.ref.div(norm.ref.add(1e-6)));
      const newP: Params = [];
      const newM: Params = [];
      const newV: Params = [];
      grads.forEach((g0, i) => {
        const g = g0.mul(scale.ref);
        const mi = m[i].mul(h.beta1.ref).add(g.ref.mul(np.subtract(1, h.beta1.ref)));
        const vi = v[i].mul(h.beta2.ref).add(np.square(g).mul(np.subtract(1, h.beta2.ref)));
        let update = mi.ref.mul(h.bc1.ref).div(np.sqrt(vi.ref.mul(h.bc2.ref)).add(h.eps.ref));
        if (decay[i]) update = update.add(P[i].ref.mul(h.weightDecay.ref));
        newP.push(P[i].sub(update.mul(h.lr.ref)));
        newM.push(mi);
        newV.push(vi);
      });
      scale.dispose();
      for (const s of Object.values(h)) s.dispose();
      const stats = np.concatenate([np.stack([loss, norm]), aux]);
      return [newP, newM, newV, stats];
    },
  );

  const next = jit(
    (
      P: Params,
      tokens: np.Array,
      prev: np.Array,
      cls: np.Array,
      mul: np.Array,
      table: np.Array,
      causal: np.Array,
    ) => {
      const logits = forward(c, P, tokens, causal); // [B, T, V]
      const at = logits.mul(nn.oneHot(prev, c.context).reshape([-1, c.context, 1])).sum(1); // logits at pos − 1
      return maskedLogSoftmax(at, np.take(table, cls, 0), mul);
    },
  );

  const logprobs = jit((P: Params, inp: TargetInputs, table: np.Array, causal: np.Array) => {
    const [lp, logp] = targetLogprobs(c, P, inp, table, causal);
    lp.dispose();
    return logp;
  });

  const dists = jit((P: Params, inp: TargetInputs, table: np.Array, causal: np.Array) => {
    const [lp, logp] = targetLogprobs(c, P, inp, table, causal);
    logp.dispose();
    return np.exp(lp);
  });

  const decode = jit((P: Params, K: Params, Vc: Params, inp: DecodeInputs, table: np.Array) =>
    decodeStep(c, P, K, Vc, inp, table),
  );
  const decodeRows = jit((P: Params, K: Params, Vc: Params, inp: DecodeInputs, table: np.Array) =>
    decodeStep(c, P, K, Vc, inp, table),
  );

  // Compiled on first use only: training never needs it.
  let grads: ReturnType<typeof jit> | undefined;
  const gradsFn = () => {
    grads ??= jit((P: Params, inp: LossInputs, table: np.Array, causal: np.Array) => {
      const [[loss, aux], g] = lossAndGrad(P, inp, table, causal) as [[np.Array, np.Array], Params];
      return [loss, aux, g];
    });
    return grads as unknown as ReturnType<Compiled["grads"]>;
  };

  return {
    step: step as unknown as Compiled["step"],
    grads: gradsFn,
    next: next as unknown as Compiled["next"],
    logprobs: logprobs as unknown as Compiled["logprobs"],
    dists: dists as unknown as Compiled["dists"],
    decode: decode as unknown as Compiled["decode"],
    decodeRows: decodeRows as unknown as Compiled["decodeRows"],
    dispose() {
      decode.dispose();
      decodeRows.dispose();
      step.dispose();
      next.dispose();
      logprobs.dispose();
      dists.dispose();
      grads?.dispose();
    },
  };
}

// ---------------------------------------------------------------------------------------------

/** Pads rows to capacity and shifts targets so that position t holds token t + 1 (each entry `width` wide). */
function shiftTargets<A extends Int32Array | Float32Array>(
  src: A,
  rows: number,
  cap: number,
  T: number,
  width = 1,
): A {
  const out = new (src.constructor as { new (n: number): A })(cap * T * width);
  for (let b = 0; b < rows; b++)
    out.set(src.subarray((b * T + 1) * width, (b + 1) * T * width), b * T * width);
  return out;
}

function padRows<A extends Int32Array | Float32Array>(
  src: A,
  rows: number,
  cap: number,
  width: number,
): A {
  if (rows === cap) return src;
  const out = new (src.constructor as { new (n: number): A })(cap * width);
  out.set(src.subarray(0, rows * width));
  return out;
}

export class JaxBackend implements EngineBackend {
  readonly name: JaxDevice;
  readonly #compiled = new Map<string, Compiled>();

  private constructor(device: JaxDevice) {
    this.name = device;
  }

  /** The GPUDevice jax-js runs on (webgpu only), for callers that watch it for loss. */
  gpuDevice(): GPUDevice | undefined {
    return this.name === "webgpu" ? getWebGPUDevice() : undefined;
  }

  /** Starts the device; throws when jax-js cannot run it here. */
  static async create(device: JaxDevice): Promise<JaxBackend> {
    if (!(await initJaxDevice(device)))
      throw new Error(`jax-js could not start the ${device} backend here`);
    return new JaxBackend(device);
  }

  /** Jitted functions are shared by all models of one config (jit caches per input shape). */
  compiled(c: ModelConfig): Compiled {
    const key = JSON.stringify(c);
    let fns = this.#compiled.get(key);
    if (!fns) {
      fns = compile(c);
      this.#compiled.set(key, fns);
    }
    return fns;
  }

  createModel(ck: Checkpoint, opts: ModelOptions): EngineModel {
    return new JaxModel(this, ck, opts);
  }

  dispose(): void {
    for (const fns of this.#compiled.values()) fns.dispose();
    this.#compiled.clear();
  }
}

class JaxModel implements EngineModel {
  readonly backend: JaxDevice;
  readonly config: ModelConfig;
  readonly capacity: number;
  readonly #fns: Compiled;
  readonly #device: JaxDevice;
  readonly #classes: number;
  #table: np.Array;
  #causal: np.Array;
  #params: Params = [];
  #m: Params = [];
  #v: Params = [];
  #step = 0;
  #version = 0; // bumped when the weights change, so decoders drop their caches
  readonly #decoders = new Set<JaxDecoder>();
  #disposed = false;

  constructor(owner: JaxBackend, ck: Checkpoint, opts: ModelOptions) {
    validateCheckpoint(ck);
    if (!Number.isInteger(opts.capacity) || opts.capacity < 1)
      throw new Error(`capacity must be a positive integer, got ${opts.capacity}`);
    this.backend = owner.name;
    this.#device = owner.name;
    this.config = { ...ck.config };
    this.capacity = opts.capacity;
    this.#fns = owner.compiled(this.config);
    const { classes, table } = maskTable(this.config, opts.masks);
    this.#classes = classes;
    this.#table = this.#f32(table, [classes, this.config.vocab]);
    const T = this.config.context;
    const causal = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) causal[i * T + j] = MASK_BIAS;
    this.#causal = this.#f32(causal, [T, T]);
    this.load(ck);
  }

  #f32(data: Float32Array, shape: number[]): np.Array {
    return np.array(data, { dtype: np.float32, device: this.#device, shape });
  }
  #i32(data: Int32Array, shape: number[]): np.Array {
    return np.array(data, { dtype: np.int32, device: this.#device, shape });
  }
  #scalar(x: number): np.Array {
    return np.array(x, { dtype: np.float32, device: this.#device });
  }
  #alive(): void {
    if (this.#disposed) throw new Error("this model was disposed");
  }

  #targetInputs(b: TokenBatch, dist: Dist | undefined): TargetInputs {
    const T = this.config.context;
    const cap = this.capacity;
    const tokens = padRows(b.tokens, b.rows, cap, T);
    const cls = b.cls ?? new Int32Array(b.rows * T);
    return {
      tokens: this.#i32(tokens, [cap, T]),
      targets: this.#i32(shiftTargets(b.tokens, b.rows, cap, T), [cap, T]),
      cls: this.#i32(shiftTargets(cls, b.rows, cap, T), [cap, T]),
      mul: this.#scalar((dist?.logitScale ?? 1) / (dist?.temperature ?? 1)),
    };
  }

  async nextLogprobs(
    tokens: Int32Array,
    rows: number,
    pos: Int32Array,
    cls: Int32Array | undefined,
    dist?: Dist,
  ): Promise<Float32Array> {
    this.#alive();
    const { context: T, vocab: V } = this.config;
    checkBatch(this, { rows, tokens }, this.#classes, "nextLogprobs");
    checkPositions(this, rows, pos, cls, this.#classes);
    const cap = this.capacity;
    const prev = new Int32Array(cap);
    for (let b = 0; b < rows; b++) prev[b] = pos[b] - 1;
    const out = this.#fns.next(
      tree.ref(this.#params),
      this.#i32(padRows(tokens, rows, cap, T), [cap, T]),
      this.#i32(prev, [cap]),
      this.#i32(padRows(cls ?? new Int32Array(rows), rows, cap, 1), [cap]),
      this.#scalar((dist?.logitScale ?? 1) / (dist?.temperature ?? 1)),
      this.#table.ref,
      this.#causal.ref,
    );
    const data = (await out.data()) as Float32Array;
    return data.slice(0, rows * V);
  }

  decoder(opts: DecoderOptions = {}): Decoder {
    this.#alive();
    const dec = new JaxDecoder({
      allRows: opts.allRows ?? false,
      config: this.config,
      capacity: this.capacity,
      classes: this.#classes,
      device: this.#device,
      fns: this.#fns,
      params: () => {
        this.#alive();
        return tree.ref(this.#params);
      },
      table: () => this.#table.ref,
      version: () => this.#version,
      forget: () => this.#decoders.delete(dec),
    });
    this.#decoders.add(dec);
    return dec;
  }

  async tokenLogprobs(batch: TokenBatch, dist?: Dist): Promise<Float32Array> {
    this.#alive();
    checkBatch(this, batch, this.#classes, "tokenLogprobs");
    const T = this.config.context;
    const out = this.#fns.logprobs(
      tree.ref(this.#params),
      this.#targetInputs(batch, dist),
      this.#table.ref,
      this.#causal.ref,
    );
    const shifted = (await out.data()) as Float32Array;
    const result = new Float32Array(batch.rows * T);
    for (let b = 0; b < batch.rows; b++)
      result.set(shifted.subarray(b * T, b * T + T - 1), b * T + 1);
    return result;
  }

  async tokenDistributions(batch: TokenBatch, dist?: Dist): Promise<Float32Array> {
    this.#alive();
    checkBatch(this, batch, this.#classes, "tokenDistributions");
    const { context: T, vocab: V } = this.config;
    const out = this.#fns.dists(
      tree.ref(this.#params),
      this.#targetInputs(batch, dist),
      this.#table.ref,
      this.#causal.ref,
    );
    const shifted = (await out.data()) as Float32Array;
    const result = new Float32Array(batch.rows * T * V);
    for (let b = 0; b < batch.rows; b++)
      result.set(shifted.subarray(b * T * V, (b * T + T - 1) * V), (b * T + 1) * V);
    return result;
  }

  #lossInputs(batch: TrainBatch, h: PolicyHyper): LossInputs {
    const { context: T, vocab: V } = this.config;
    const cap = this.capacity;
    const rows = batch.rows;
    const zeros = new Float32Array(rows * T);
    return {
      ...this.#targetInputs(batch, { temperature: h.temperature }),
      mask: this.#f32(shiftTargets(batch.mask, rows, cap, T), [cap, T]),
      adv: this.#f32(padRows(batch.advantages ?? new Float32Array(rows).fill(1), rows, cap, 1), [
        cap,
      ]),
      old: this.#f32(shiftTargets(batch.oldLogp ?? zeros, rows, cap, T), [cap, T]),
      refLogp: this.#f32(shiftTargets(batch.refLogp ?? zeros, rows, cap, T), [cap, T]),
      useOld: this.#scalar(batch.oldLogp ? 1 : 0),
      useRef: this.#scalar(batch.refLogp ? 1 : 0),
      epsLow: this.#scalar(h.epsLow),
      epsHigh: this.#scalar(h.epsHigh),
      klCoef: this.#scalar(h.klCoef),
      refDist: this.#f32(
        shiftTargets(batch.refDist ?? new Float32Array(rows * T * V), rows, cap, T, V),
        [cap, T, V],
      ),
      fwdCoef: this.#scalar(batch.refDist ? (h.forwardKlCoef ?? 0) : 0),
    };
  }

  async gradients(
    batch: TrainBatch,
    h: PolicyHyper,
  ): Promise<{ stats: Omit<StepStats, "gradNorm">; grads: Float32Array[] }> {
    this.#alive();
    checkBatch(this, batch, this.#classes, "gradients");
    const [loss, aux, grads] = this.#fns.grads()(
      tree.ref(this.#params),
      this.#lossInputs(batch, h),
      this.#table.ref,
      this.#causal.ref,
    );
    const [l, a, ...g] = await Promise.all([
      loss.data(),
      aux.data(),
      ...grads.map((x) => x.data()),
    ]);
    const s = a as Float32Array;
    return {
      stats: {
        loss: (l as Float32Array)[0],
        nll: s[0],
        entropy: s[1],
        kl: s[2],
        clipFrac: s[3],
        tokens: s[4],
        forwardKl: s[5],
      },
      grads: g.map((x: unknown) => (x as Float32Array).slice()),
    };
  }

  async trainStep(batch: TrainBatch, h: StepHyper): Promise<StepStats> {
    this.#alive();
    checkBatch(this, batch, this.#classes, "trainStep");
    const inp = this.#lossInputs(batch, h);
    this.#step += 1;
    const { bc1, bc2 } = adamBias(h, this.#step);
    const hs: Scalars = {
      lr: this.#scalar(h.lr),
      beta1: this.#scalar(h.beta1),
      beta2: this.#scalar(h.beta2),
      eps: this.#scalar(h.eps),
      weightDecay: this.#scalar(h.weightDecay),
      clipNorm: this.#scalar(Number.isFinite(h.clipNorm) ? h.clipNorm : 3e38),
      bc1: this.#scalar(bc1),
      bc2: this.#scalar(bc2),
    };
    const [P, m, v, stats] = this.#fns.step(
      this.#params,
      this.#m,
      this.#v,
      inp,
      hs,
      this.#table.ref,
      this.#causal.ref,
    );
    this.#params = P;
    this.#m = m;
    this.#v = v;
    this.#version += 1;
    const s = (await stats.data()) as Float32Array;
    return {
      loss: s[0],
      gradNorm: s[1],
      nll: s[2],
      entropy: s[3],
      kl: s[4],
      clipFrac: s[5],
      tokens: s[6],
      forwardKl: s[7],
    };
  }

  async checkpoint(): Promise<Checkpoint> {
    this.#alive();
    const specs = paramSpecs(this.config);
    const read = (xs: Params) =>
      Promise.all(xs.map(async (a) => ((await a.ref.data()) as Float32Array).slice()));
    const [params, m, v] = await Promise.all([read(this.#params), read(this.#m), read(this.#v)]);
    return {
      format: CHECKPOINT_FORMAT,
      config: { ...this.config },
      tensors: specs.map((s, i) => ({ name: s.name, shape: [...s.shape], data: params[i] })),
      optimizer: { step: this.#step, m, v },
    };
  }

  load(ck: Checkpoint): void {
    this.#alive();
    validateCheckpoint(ck);
    if (JSON.stringify(ck.config) !== JSON.stringify(this.config))
      throw new Error("checkpoint config differs from this model's config");
    this.#release();
    this.#version += 1;
    this.#params = ck.tensors.map((t) => this.#f32(t.data, t.shape));
    const o = ck.optimizer;
    this.#m = ck.tensors.map((t, i) =>
      this.#f32(o ? o.m[i] : new Float32Array(t.data.length), t.shape),
    );
    this.#v = ck.tensors.map((t, i) =>
      this.#f32(o ? o.v[i] : new Float32Array(t.data.length), t.shape),
    );
    this.#step = o?.step ?? 0;
  }

  #release(): void {
    for (const a of [...this.#params, ...this.#m, ...this.#v]) a.dispose();
    this.#params = this.#m = this.#v = [];
  }

  dispose(): void {
    if (this.#disposed) return;
    for (const d of [...this.#decoders]) d.dispose();
    this.#release();
    this.#table.dispose();
    this.#causal.dispose();
    this.#disposed = true;
  }
}

interface DecodeSource {
  allRows: boolean; // every slot is a row in every call (no row buckets)
  config: ModelConfig;
  capacity: number;
  classes: number;
  device: JaxDevice;
  fns: Compiled;
  params(): Params; // references the caller consumes
  table(): np.Array;
  version(): number;
  forget(): void; // called on dispose
}

/** Incremental decoding on jax-js: key/value caches [capacity, heads, T, hd] per layer, on the device. */
class JaxDecoder implements Decoder {
  readonly #src: DecodeSource;
  readonly #slots: SlotTable;
  #keys: Params;
  #values: Params;
  #busy: Promise<unknown> = Promise.resolve(); // calls run one at a time: each consumes the caches

  constructor(src: DecodeSource) {
    this.#src = src;
    const { context: T, heads: H, d, layers } = src.config;
    this.#slots = new SlotTable(src.capacity, T);
    const zeros = () =>
      np.zeros([src.capacity, H, T, d / H], { dtype: np.float32, device: src.device });
    this.#keys = Array.from({ length: layers }, zeros);
    this.#values = Array.from({ length: layers }, zeros);
  }

  get positionsFed(): number {
    return this.#slots.positionsFed;
  }

  next(req: DecodeRequest, dist?: Dist): Promise<Float32Array> {
    const run = this.#busy.then(() => this.#next(req, dist));
    this.#busy = run.catch(() => undefined);
    return run;
  }

  async #next(req: DecodeRequest, dist?: Dist): Promise<Float32Array> {
    const src = this.#src;
    if (this.#keys.length === 0) throw new Error("decoder used after dispose()");
    checkDecodeRequest(src.config, src.capacity, src.classes, req);
    const { context: T, vocab: V } = src.config;
    const cap = src.capacity;
    const plan = this.#slots.plan(req, src.version());
    const W = windowBucket(plan.width, T);
    const rows = req.slots.length;
    // a quarter of the capacity or fewer: gather those slots into B working rows; else row b is
    // slot b (gathering and writing back the caches costs more than it saves on a fuller batch)
    const bucket = src.allRows ? cap : rowBucket(rows, cap);
    const gathered = bucket <= cap / 4;
    const B = gathered ? bucket : cap;
    const slots = new Int32Array(B); // padding rows read slot 0 and are never written back
    const back = Int32Array.from({ length: cap }, (_, s) => B + s);
    const tokens = new Int32Array(B * W);
    const write = new Float32Array(B * W * T);
    const keep = new Float32Array(B * T).fill(1);
    const bias = new Float32Array(B * W * T);
    const last = new Float32Array(B * W);
    const cls = new Int32Array(B);
    const rowOf = (r: number) => (gathered ? r : req.slots[r]);
    req.slots.forEach((s, r) => {
      const b = rowOf(r);
      slots[b] = s;
      back[s] = b;
      const from = plan.start[r];
      const to = req.pos[r];
      for (let t = from; t < to; t++) {
        const w = t - from;
        tokens[b * W + w] = req.tokens[r * T + t];
        write[(b * W + w) * T + t] = 1;
        keep[b * T + t] = 0;
        for (let j = t + 1; j < T; j++) bias[(b * W + w) * T + j] = MASK_BIAS;
      }
      last[b * W + (to - 1 - from)] = 1;
      cls[b] = req.cls ? req.cls[r] : 0;
    });
    const f32 = (data: Float32Array, shape: number[]) =>
      np.array(data, { dtype: np.float32, device: src.device, shape });
    const i32 = (data: Int32Array, shape: number[]) =>
      np.array(data, { dtype: np.int32, device: src.device, shape });
    const inputs: DecodeInputs = {
      ...(gathered ? { slots: i32(slots, [B]), back: i32(back, [cap]) } : {}),
      tokens: i32(tokens, [B, W]),
      write: f32(write, [B, W, T]),
      keep: f32(keep, [B, T]),
      bias: f32(bias, [B, W, T]),
      last: f32(last, [B, W]),
      cls: i32(cls, [B]),
      mul: np.array((dist?.logitScale ?? 1) / (dist?.temperature ?? 1), {
        dtype: np.float32,
        device: src.device,
      }),
    };
    const [logp, K, Vc] = (gathered ? src.fns.decodeRows : src.fns.decode)(
      src.params(),
      this.#keys,
      this.#values,
      inputs,
      src.table(),
    );
    this.#keys = K;
    this.#values = Vc;
    const data = (await logp.data()) as Float32Array;
    const out = new Float32Array(rows * V);
    for (let r = 0; r < rows; r++) out.set(data.subarray(rowOf(r) * V, (rowOf(r) + 1) * V), r * V);
    return out;
  }

  dispose(): void {
    for (const a of [...this.#keys, ...this.#values]) a.dispose();
    this.#keys = this.#values = [];
    this.#src.forget();
  }
}
