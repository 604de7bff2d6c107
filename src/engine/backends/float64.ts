// The float64 reference backend: the pre-LN GPT of config.ts, the policy objective of
// backend.ts with a hand-written backward pass, and AdamW, in plain TypeScript loops.
// It is the readable definition of what the fast jax-js backend must compute and the oracle
// its tests compare against; it favours clarity over speed (tinygrad's reference-first rule).
import { type ModelConfig, LN_EPS, MASK_BIAS, paramSpecs, size } from "../config";
import { type Checkpoint, CHECKPOINT_FORMAT, validateCheckpoint } from "../checkpoint";
import {
  type BackendName,
  type Dist,
  type EngineBackend,
  type EngineModel,
  type ModelOptions,
  type PolicyHyper,
  type StepHyper,
  type StepStats,
  type TokenBatch,
  type TrainBatch,
  adamBias,
  checkBatch,
  checkPositions,
  maskTable,
} from "../backend";
import { checkDecodeRequest, type DecodeRequest, type Decoder, SlotTable } from "../decode";

/** What the objective reports; trainStep adds the gradient norm. */
export type ObjectiveStats = Omit<StepStats, "gradNorm">;

// ---------------------------------------------------------------------------------------------
// Parameters by name

interface Block {
  ln1g: Float64Array;
  ln1b: Float64Array;
  wqkv: Float64Array; // [d, 3d]: q | k | v
  bqkv: Float64Array;
  wo: Float64Array; // [d, d]
  bo: Float64Array;
  ln2g: Float64Array;
  ln2b: Float64Array;
  w1: Float64Array; // [d, m]
  b1: Float64Array;
  w2: Float64Array; // [m, d]
  b2: Float64Array;
}

interface Weights {
  tokEmb: Float64Array; // [V, d]
  posEmb: Float64Array; // [T, d]
  blocks: Block[];
  lnfG: Float64Array;
  lnfB: Float64Array;
  headW: Float64Array; // [d, V]
  headB: Float64Array;
}

/** Names the flat arrays (parameters or their gradients) in `paramSpecs` order. */
function unpack(config: ModelConfig, arrays: Float64Array[]): Weights {
  const specs = paramSpecs(config);
  if (arrays.length !== specs.length)
    throw new Error(`expected ${specs.length} parameter tensors, got ${arrays.length}`);
  specs.forEach((s, i) => {
    if (arrays[i].length !== size(s.shape))
      throw new Error(
        `parameter ${s.name} has ${arrays[i].length} values, expected ${size(s.shape)}`,
      );
  });
  let i = 0;
  const next = () => arrays[i++];
  const tokEmb = next();
  const posEmb = next();
  const blocks: Block[] = [];
  for (let l = 0; l < config.layers; l++) {
    blocks.push({
      ln1g: next(),
      ln1b: next(),
      wqkv: next(),
      bqkv: next(),
      wo: next(),
      bo: next(),
      ln2g: next(),
      ln2b: next(),
      w1: next(),
      b1: next(),
      w2: next(),
      b2: next(),
    });
  }
  return { tokEmb, posEmb, blocks, lnfG: next(), lnfB: next(), headW: next(), headB: next() };
}

// ---------------------------------------------------------------------------------------------
// Layers, each with its backward pass. Activations are [n, width] row-major.

/** y = x·w + b for x [n, din], w [din, dout]. */
function linear(
  x: Float64Array,
  n: number,
  din: number,
  w: Float64Array,
  b: Float64Array,
  dout: number,
): Float64Array {
  const y = new Float64Array(n * dout);
  for (let r = 0; r < n; r++) {
    const yo = r * dout;
    y.set(b, yo);
    for (let i = 0; i < din; i++) {
      const xi = x[r * din + i];
      const wo = i * dout;
      for (let o = 0; o < dout; o++) y[yo + o] += xi * w[wo + o];
    }
  }
  return y;
}

/** Adds ∂L/∂w and ∂L/∂b into dw, db and returns ∂L/∂x, given dy = ∂L/∂y. */
function linearBackward(
  x: Float64Array,
  dy: Float64Array,
  n: number,
  din: number,
  w: Float64Array,
  dout: number,
  dw: Float64Array,
  db: Float64Array,
): Float64Array {
  const dx = new Float64Array(n * din);
  for (let r = 0; r < n; r++) {
    const yo = r * dout;
    for (let o = 0; o < dout; o++) db[o] += dy[yo + o];
    for (let i = 0; i < din; i++) {
      const xi = x[r * din + i];
      const wo = i * dout;
      let acc = 0;
      for (let o = 0; o < dout; o++) {
        acc += dy[yo + o] * w[wo + o];
        dw[wo + o] += xi * dy[yo + o];
      }
      dx[r * din + i] = acc;
    }
  }
  return dx;
}

interface LnCache {
  out: Float64Array;
  xhat: Float64Array; // normalised input, before gain and bias
  rstd: Float64Array; // 1 / sqrt(biased var + eps), per row
}

function layerNorm(
  x: Float64Array,
  n: number,
  d: number,
  g: Float64Array,
  b: Float64Array,
): LnCache {
  const out = new Float64Array(n * d);
  const xhat = new Float64Array(n * d);
  const rstd = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    const o = r * d;
    let mean = 0;
    for (let i = 0; i < d; i++) mean += x[o + i];
    mean /= d;
    let v = 0;
    for (let i = 0; i < d; i++) v += (x[o + i] - mean) ** 2;
    rstd[r] = 1 / Math.sqrt(v / d + LN_EPS);
    for (let i = 0; i < d; i++) {
      xhat[o + i] = (x[o + i] - mean) * rstd[r];
      out[o + i] = xhat[o + i] * g[i] + b[i];
    }
  }
  return { out, xhat, rstd };
}

/** Adds ∂L/∂x into dx (the residual stream's gradient) and ∂L/∂g, ∂L/∂b into dg, db. */
function layerNormBackward(
  c: LnCache,
  dy: Float64Array,
  n: number,
  d: number,
  g: Float64Array,
  dx: Float64Array,
  dg: Float64Array,
  db: Float64Array,
): void {
  const dxhat = new Float64Array(d);
  for (let r = 0; r < n; r++) {
    const o = r * d;
    let meanD = 0; // mean of ∂L/∂x̂
    let meanDX = 0; // mean of ∂L/∂x̂ · x̂
    for (let i = 0; i < d; i++) {
      dg[i] += dy[o + i] * c.xhat[o + i];
      db[i] += dy[o + i];
      dxhat[i] = dy[o + i] * g[i];
      meanD += dxhat[i];
      meanDX += dxhat[i] * c.xhat[o + i];
    }
    meanD /= d;
    meanDX /= d;
    for (let i = 0; i < d; i++)
      dx[o + i] += c.rstd[r] * (dxhat[i] - meanD - c.xhat[o + i] * meanDX);
  }
}

const GELU_C = Math.sqrt(2 / Math.PI);

/** GELU, tanh approximation (Hendrycks & Gimpel 2016; GPT-2). */
function gelu(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x * x * x)));
}

function geluGrad(x: number): number {
  const t = Math.tanh(GELU_C * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x);
}

/**
 * Causal multi-head self-attention on qkv [rows·T, 3d]; returns the concatenated head outputs
 * [rows·T, d] and the attention probabilities [rows, heads, T, T] (0 above the diagonal).
 */
function attention(
  qkv: Float64Array,
  rows: number,
  T: number,
  d: number,
  heads: number,
): { out: Float64Array; probs: Float64Array } {
  const hd = d / heads;
  const scale = 1 / Math.sqrt(hd);
  const w = 3 * d;
  const out = new Float64Array(rows * T * d);
  const probs = new Float64Array(rows * heads * T * T);
  for (let b = 0; b < rows; b++) {
    for (let h = 0; h < heads; h++) {
      const qc = h * hd; // this head's columns of q, k, v
      const kc = d + h * hd;
      const vc = 2 * d + h * hd;
      for (let i = 0; i < T; i++) {
        const qo = (b * T + i) * w + qc;
        const po = ((b * heads + h) * T + i) * T;
        let max = -Infinity;
        for (let j = 0; j <= i; j++) {
          // position i sees j ≤ i only
          const ko = (b * T + j) * w + kc;
          let s = 0;
          for (let c = 0; c < hd; c++) s += qkv[qo + c] * qkv[ko + c];
          probs[po + j] = s * scale;
          max = Math.max(max, probs[po + j]);
        }
        let sum = 0;
        for (let j = 0; j <= i; j++) {
          probs[po + j] = Math.exp(probs[po + j] - max);
          sum += probs[po + j];
        }
        const oo = (b * T + i) * d + h * hd;
        for (let j = 0; j <= i; j++) {
          probs[po + j] /= sum;
          const vo = (b * T + j) * w + vc;
          for (let c = 0; c < hd; c++) out[oo + c] += probs[po + j] * qkv[vo + c];
        }
      }
    }
  }
  return { out, probs };
}

/** ∂L/∂qkv from ∂L/∂out of `attention`. */
function attentionBackward(
  qkv: Float64Array,
  probs: Float64Array,
  dout: Float64Array,
  rows: number,
  T: number,
  d: number,
  heads: number,
): Float64Array {
  const hd = d / heads;
  const scale = 1 / Math.sqrt(hd);
  const w = 3 * d;
  const dqkv = new Float64Array(rows * T * w);
  const dp = new Float64Array(T);
  for (let b = 0; b < rows; b++) {
    for (let h = 0; h < heads; h++) {
      const qc = h * hd;
      const kc = d + h * hd;
      const vc = 2 * d + h * hd;
      for (let i = 0; i < T; i++) {
        const qo = (b * T + i) * w + qc;
        const po = ((b * heads + h) * T + i) * T;
        const oo = (b * T + i) * d + h * hd;
        // out_i = Σ_j P_ij v_j
        let dot = 0; // Σ_j P_ij ∂L/∂P_ij, for the softmax backward
        for (let j = 0; j <= i; j++) {
          const vo = (b * T + j) * w + vc;
          let s = 0;
          for (let c = 0; c < hd; c++) {
            s += dout[oo + c] * qkv[vo + c];
            dqkv[vo + c] += probs[po + j] * dout[oo + c];
          }
          dp[j] = s;
          dot += probs[po + j] * s;
        }
        // P_i = softmax(scale · q_i·k_j)
        for (let j = 0; j <= i; j++) {
          const ds = probs[po + j] * (dp[j] - dot) * scale;
          const ko = (b * T + j) * w + kc;
          for (let c = 0; c < hd; c++) {
            dqkv[qo + c] += ds * qkv[ko + c];
            dqkv[ko + c] += ds * qkv[qo + c];
          }
        }
      }
    }
  }
  return dqkv;
}

// ---------------------------------------------------------------------------------------------
// The transformer

interface BlockCache {
  ln1: LnCache;
  qkv: Float64Array;
  probs: Float64Array;
  att: Float64Array; // concatenated head outputs, input of w_o
  ln2: LnCache;
  pre: Float64Array; // MLP hidden before GELU
  act: Float64Array; // after GELU, input of w2
}

interface ForwardCache {
  blocks: BlockCache[];
  lnf: LnCache;
  logits: Float64Array; // [rows, T, V]
}

function checkTokens(config: ModelConfig, tokens: Int32Array, rows: number): void {
  const { context: T, vocab: V } = config;
  if (!Number.isInteger(rows) || rows < 1)
    throw new Error(`rows ${rows} must be a positive integer`);
  if (tokens.length !== rows * T)
    throw new Error(`tokens has ${tokens.length} entries, expected rows·T = ${rows * T}`);
  for (let i = 0; i < tokens.length; i++) {
    if (!(tokens[i] >= 0 && tokens[i] < V))
      throw new Error(`token ${tokens[i]} at ${i} outside vocab [0, ${V})`);
  }
}

function forward(config: ModelConfig, W: Weights, tokens: Int32Array, rows: number): ForwardCache {
  checkTokens(config, tokens, rows);
  const { context: T, vocab: V, d, heads } = config;
  const m = config.mlpRatio * d;
  const n = rows * T;
  const x = new Float64Array(n * d); // the residual stream
  for (let r = 0; r < n; r++) {
    const tok = tokens[r];
    const t = r % T;
    for (let i = 0; i < d; i++) x[r * d + i] = W.tokEmb[tok * d + i] + W.posEmb[t * d + i];
  }
  const blocks: BlockCache[] = [];
  for (const B of W.blocks) {
    const ln1 = layerNorm(x, n, d, B.ln1g, B.ln1b);
    const qkv = linear(ln1.out, n, d, B.wqkv, B.bqkv, 3 * d);
    const { out: att, probs } = attention(qkv, rows, T, d, heads);
    const proj = linear(att, n, d, B.wo, B.bo, d);
    for (let i = 0; i < x.length; i++) x[i] += proj[i];
    const ln2 = layerNorm(x, n, d, B.ln2g, B.ln2b);
    const pre = linear(ln2.out, n, d, B.w1, B.b1, m);
    const act = pre.map(gelu);
    const mlp = linear(act, n, m, B.w2, B.b2, d);
    for (let i = 0; i < x.length; i++) x[i] += mlp[i];
    blocks.push({ ln1, qkv, probs, att, ln2, pre, act });
  }
  const lnf = layerNorm(x, n, d, W.lnfG, W.lnfB);
  const logits = linear(lnf.out, n, d, W.headW, W.headB, V);
  return { blocks, lnf, logits };
}

/** Parameter gradients from ∂L/∂logits, walking `forward` backwards. */
function backward(
  config: ModelConfig,
  W: Weights,
  G: Weights,
  cache: ForwardCache,
  tokens: Int32Array,
  rows: number,
  dlogits: Float64Array,
): void {
  const { context: T, vocab: V, d, heads } = config;
  const m = config.mlpRatio * d;
  const n = rows * T;
  const dx = new Float64Array(n * d); // ∂L/∂(residual stream)
  const dlnf = linearBackward(cache.lnf.out, dlogits, n, d, W.headW, V, G.headW, G.headB);
  layerNormBackward(cache.lnf, dlnf, n, d, W.lnfG, dx, G.lnfG, G.lnfB);
  for (let l = config.layers - 1; l >= 0; l--) {
    const B = W.blocks[l];
    const GB = G.blocks[l];
    const c = cache.blocks[l];
    // x += w2·gelu(LN2(x)·w1 + b1) + b2: dx passes through unchanged and into the branch
    const dact = linearBackward(c.act, dx, n, m, B.w2, d, GB.w2, GB.b2);
    const dpre = dact.map((g, i) => g * geluGrad(c.pre[i]));
    const dln2 = linearBackward(c.ln2.out, dpre, n, d, B.w1, m, GB.w1, GB.b1);
    layerNormBackward(c.ln2, dln2, n, d, B.ln2g, dx, GB.ln2g, GB.ln2b);
    // x += attn(LN1(x))
    const datt = linearBackward(c.att, dx, n, d, B.wo, d, GB.wo, GB.bo);
    const dqkv = attentionBackward(c.qkv, c.probs, datt, rows, T, d, heads);
    const dln1 = linearBackward(c.ln1.out, dqkv, n, d, B.wqkv, 3 * d, GB.wqkv, GB.bqkv);
    layerNormBackward(c.ln1, dln1, n, d, B.ln1g, dx, GB.ln1g, GB.ln1b);
  }
  for (let r = 0; r < n; r++) {
    const tok = tokens[r];
    const t = r % T;
    for (let i = 0; i < d; i++) {
      G.tokEmb[tok * d + i] += dx[r * d + i];
      G.posEmb[t * d + i] += dx[r * d + i];
    }
  }
}

/** Logits [rows, T, V] of the pre-LN GPT for params in `paramSpecs(config)` order. */
export function referenceForward(
  config: ModelConfig,
  params: Float64Array[],
  tokens: Int32Array,
  rows: number,
): Float64Array {
  return forward(config, unpack(config, params), tokens, rows).logits;
}

// ---------------------------------------------------------------------------------------------
// Distributions and the policy objective

/**
 * Log-probs of the distribution at one position into `out` [V]: log_softmax(z) with
 * z = logits · scale + MASK_BIAS on tokens the class forbids (scale = logitScale / temperature).
 * The bias is added, not −∞, exactly as the fast backend does.
 */
function maskedLogSoftmax(
  logits: Float64Array,
  offset: number,
  V: number,
  scale: number,
  table: Float32Array,
  cls: number,
  out: Float64Array,
): void {
  let max = -Infinity;
  for (let v = 0; v < V; v++) {
    let z = logits[offset + v] * scale;
    if (table[cls * V + v] === 0) z += MASK_BIAS;
    out[v] = z;
    max = Math.max(max, z);
  }
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp(out[v] - max);
  const lse = max + Math.log(sum);
  for (let v = 0; v < V; v++) out[v] -= lse;
}

function distScale(dist: Dist | undefined): number {
  const temperature = dist?.temperature ?? 1;
  const logitScale = dist?.logitScale ?? 1;
  if (!(temperature > 0 && Number.isFinite(temperature)))
    throw new Error(`temperature ${temperature} must be positive and finite`);
  if (!(logitScale > 0 && Number.isFinite(logitScale)))
    throw new Error(`logitScale ${logitScale} must be positive and finite`);
  return logitScale / temperature;
}

/**
 * The objective of backend.ts on given logits, and ∂loss/∂logits when `dlogits` is passed.
 * Token t ≥ 1 with mask ≠ 0 is scored by the distribution at t − 1; token 0 is never a target.
 */
function policyObjective(
  config: ModelConfig,
  logits: Float64Array,
  table: Float32Array,
  batch: TrainBatch,
  hyper: PolicyHyper,
  logitScale: number,
  dlogits?: Float64Array,
): ObjectiveStats {
  const { context: T, vocab: V } = config;
  const { mask, cls, advantages, oldLogp, refLogp, refDist } = batch;
  const fwdCoef = refDist ? (hyper.forwardKlCoef ?? 0) : 0;
  const scale = distScale({ temperature: hyper.temperature, logitScale });
  const lo = 1 - hyper.epsLow;
  const hi = 1 + hyper.epsHigh;

  let tokens = 0;
  for (let b = 0; b < batch.rows; b++) for (let t = 1; t < T; t++) tokens += mask[b * T + t];
  const denom = Math.max(tokens, 1);

  let loss = 0,
    nll = 0,
    entropy = 0,
    kl = 0,
    fkl = 0,
    clipped = 0;
  const logp = new Float64Array(V);
  for (let b = 0; b < batch.rows; b++) {
    const A = advantages ? advantages[b] : 1;
    for (let t = 1; t < T; t++) {
      const i = b * T + t;
      const w = mask[i];
      if (w === 0) continue;
      const at = (i - 1) * V; // logits at t − 1 predict token t
      maskedLogSoftmax(logits, at, V, scale, table, cls ? cls[i] : 0, logp);
      const tok = batch.tokens[i];
      const lp = logp[tok];
      let H = 0;
      for (let v = 0; v < V; v++) {
        const p = Math.exp(logp[v]);
        if (p > 0) H -= p * logp[v];
      }
      // clipped surrogate (PPO; clip-higher as DAPO); old = logp makes r ≡ 1 with ∂r/∂logp = 1
      const old = oldLogp ? oldLogp[i] : lp;
      const r = Math.exp(lp - old);
      const rc = Math.min(Math.max(r, lo), hi);
      const useRatio = r * A <= rc * A; // the min picks r·A (ties go to r·A: same value, live gradient)
      const surrogate = useRatio ? r * A : rc * A;
      // low-variance KL estimate k3 = e^(ref − logp) − (ref − logp) − 1 (Schulman 2020)
      const delta = (refLogp ? refLogp[i] : lp) - lp;
      const k3 = Math.exp(delta) - delta - 1;
      // exact forward KL(q ‖ p) from the reference's whole distribution q at this position
      let fwd = 0,
        qSum = 0;
      if (refDist) {
        for (let v = 0; v < V; v++) {
          const q = refDist[i * V + v];
          if (q > 0) fwd += q * (Math.log(q) - logp[v]);
          qSum += q;
        }
      }

      loss += w * (-surrogate + hyper.klCoef * k3 + fwdCoef * fwd);
      nll -= w * lp;
      entropy += w * H;
      kl += w * k3;
      fkl += w * fwd;
      if (!useRatio && r !== rc) clipped += w;

      if (dlogits) {
        // ∂term/∂logp, then ∂logp/∂z_v = [v = tok] − p_v and ∂z/∂logits = scale
        const dlp = ((useRatio ? -A * r : 0) + hyper.klCoef * (1 - Math.exp(delta))) * (w / denom);
        for (let v = 0; v < V; v++) {
          const onehot = v === tok ? 1 : 0;
          dlogits[at + v] += dlp * (onehot - Math.exp(logp[v])) * scale;
        }
        // ∂/∂z_u of −Σ_v q_v log p_v is p_u Σq − q_u
        if (fwdCoef !== 0)
          for (let v = 0; v < V; v++)
            dlogits[at + v] +=
              fwdCoef * (Math.exp(logp[v]) * qSum - refDist![i * V + v]) * scale * (w / denom);
      }
    }
  }
  return {
    loss: loss / denom,
    nll: nll / denom,
    entropy: entropy / denom,
    kl: kl / denom,
    forwardKl: fkl / denom,
    clipFrac: clipped / denom,
    tokens,
  };
}

function checkObjectiveInputs(config: ModelConfig, table: Float32Array, batch: TrainBatch): void {
  const V = config.vocab;
  if (table.length === 0 || table.length % V !== 0)
    throw new Error(`mask table has ${table.length} entries, not a multiple of vocab ${V}`);
  if (!batch.mask) throw new Error("train batch has no mask");
  checkBatch({ config, capacity: batch.rows }, batch, table.length / V, "train batch");
}

/** The training objective of backend.ts (value only) at the given parameters. */
export function referenceObjective(
  config: ModelConfig,
  params: Float64Array[],
  table: Float32Array,
  batch: TrainBatch,
  hyper: PolicyHyper,
  dist?: { logitScale?: number },
): ObjectiveStats {
  checkObjectiveInputs(config, table, batch);
  const logits = referenceForward(config, params, batch.tokens, batch.rows);
  return policyObjective(config, logits, table, batch, hyper, dist?.logitScale ?? 1);
}

/** The objective and its analytic gradients, one array per parameter in `paramSpecs` order. */
export function referenceGradients(
  config: ModelConfig,
  params: Float64Array[],
  table: Float32Array,
  batch: TrainBatch,
  hyper: PolicyHyper,
  dist?: { logitScale?: number },
): { stats: ObjectiveStats; grads: Float64Array[] } {
  checkObjectiveInputs(config, table, batch);
  const W = unpack(config, params);
  const cache = forward(config, W, batch.tokens, batch.rows);
  const dlogits = new Float64Array(cache.logits.length);
  const stats = policyObjective(
    config,
    cache.logits,
    table,
    batch,
    hyper,
    dist?.logitScale ?? 1,
    dlogits,
  );
  const grads = params.map((p) => new Float64Array(p.length));
  backward(config, W, unpack(config, grads), cache, batch.tokens, batch.rows, dlogits);
  return { stats, grads };
}

// ---------------------------------------------------------------------------------------------
// Incremental decoding (decode.ts): float64 key/value caches, one position at a time

interface DecodeSource {
  config: ModelConfig;
  capacity: number;
  classes: number;
  table: Float32Array;
  params(): Float64Array[];
  version(): number; // bumped whenever the weights change
}

class ReferenceDecoder implements Decoder {
  readonly #src: DecodeSource;
  readonly #slots: SlotTable;
  #keys: Float64Array[]; // per layer [capacity, T, d]
  #values: Float64Array[];

  constructor(src: DecodeSource) {
    this.#src = src;
    const { context: T, d, layers } = src.config;
    this.#slots = new SlotTable(src.capacity, T);
    this.#keys = Array.from({ length: layers }, () => new Float64Array(src.capacity * T * d));
    this.#values = Array.from({ length: layers }, () => new Float64Array(src.capacity * T * d));
  }

  get positionsFed(): number {
    return this.#slots.positionsFed;
  }

  async next(req: DecodeRequest, dist?: Dist): Promise<Float32Array> {
    const src = this.#src;
    if (this.#keys.length !== src.config.layers) throw new Error("decoder used after dispose()");
    checkDecodeRequest(src.config, src.capacity, src.classes, req);
    const { context: T, vocab: V } = src.config;
    const scale = distScale(dist);
    const W = unpack(src.config, src.params());
    const plan = this.#slots.plan(req, src.version());
    const out = new Float32Array(req.slots.length * V);
    const logp = new Float64Array(V);
    req.slots.forEach((slot, r) => {
      const logits = this.#feed(
        W,
        slot,
        req.tokens.subarray(r * T, (r + 1) * T),
        plan.start[r],
        req.pos[r],
      );
      maskedLogSoftmax(logits, 0, V, scale, src.table, req.cls ? req.cls[r] : 0, logp);
      out.set(logp, r * V);
    });
    return out;
  }

  /** Runs positions [from, to) of one slot through the model, caching their keys and values; logits [V] at to − 1. */
  #feed(W: Weights, slot: number, tokens: Int32Array, from: number, to: number): Float64Array {
    const { context: T, vocab: V, d, heads } = this.#src.config;
    const m = this.#src.config.mlpRatio * d;
    const hd = d / heads;
    const n = to - from;
    const x = new Float64Array(n * d);
    for (let i = 0; i < n; i++) {
      const t = from + i;
      for (let c = 0; c < d; c++) x[i * d + c] = W.tokEmb[tokens[t] * d + c] + W.posEmb[t * d + c];
    }
    W.blocks.forEach((B, l) => {
      const qkv = linear(layerNorm(x, n, d, B.ln1g, B.ln1b).out, n, d, B.wqkv, B.bqkv, 3 * d);
      const K = this.#keys[l];
      const Vc = this.#values[l];
      const base = slot * T * d;
      for (let i = 0; i < n; i++) {
        K.set(qkv.subarray(i * 3 * d + d, i * 3 * d + 2 * d), base + (from + i) * d);
        Vc.set(qkv.subarray(i * 3 * d + 2 * d, (i + 1) * 3 * d), base + (from + i) * d);
      }
      const att = new Float64Array(n * d);
      const scores = new Float64Array(T);
      for (let i = 0; i < n; i++) {
        const t = from + i; // this query sees keys 0 … t
        for (let h = 0; h < heads; h++) {
          let max = -Infinity;
          for (let j = 0; j <= t; j++) {
            let s = 0;
            for (let c = 0; c < hd; c++)
              s += qkv[i * 3 * d + h * hd + c] * K[base + j * d + h * hd + c];
            scores[j] = s / Math.sqrt(hd);
            max = Math.max(max, scores[j]);
          }
          let sum = 0;
          for (let j = 0; j <= t; j++) sum += scores[j] = Math.exp(scores[j] - max);
          for (let j = 0; j <= t; j++) {
            for (let c = 0; c < hd; c++)
              att[i * d + h * hd + c] += (scores[j] / sum) * Vc[base + j * d + h * hd + c];
          }
        }
      }
      const proj = linear(att, n, d, B.wo, B.bo, d);
      for (let i = 0; i < x.length; i++) x[i] += proj[i];
      const hidden = linear(layerNorm(x, n, d, B.ln2g, B.ln2b).out, n, d, B.w1, B.b1, m).map(gelu);
      const mlp = linear(hidden, n, m, B.w2, B.b2, d);
      for (let i = 0; i < x.length; i++) x[i] += mlp[i];
    });
    const last = layerNorm(x.subarray((n - 1) * d), 1, d, W.lnfG, W.lnfB).out;
    return linear(last, 1, d, W.headW, W.headB, V);
  }

  dispose(): void {
    this.#keys = this.#values = [];
  }
}

// ---------------------------------------------------------------------------------------------
// The backend

class ReferenceModel implements EngineModel {
  readonly backend: BackendName = "float64";
  readonly config: ModelConfig;
  readonly capacity: number;
  readonly #table: Float32Array;
  readonly #classes: number;
  #params: Float64Array[] = [];
  #m: Float64Array[] = []; // Adam first moments
  #v: Float64Array[] = []; // Adam second moments
  #step = 0;
  #version = 0; // bumped when the weights change, so decoders drop their caches
  #disposed = false;

  constructor(ck: Checkpoint, opts: ModelOptions) {
    validateCheckpoint(ck);
    if (!Number.isInteger(opts.capacity) || opts.capacity < 1)
      throw new Error(`capacity ${opts.capacity} must be a positive integer`);
    this.config = { ...ck.config };
    this.capacity = opts.capacity;
    const { classes, table } = maskTable(this.config, opts.masks);
    this.#classes = classes;
    this.#table = table;
    this.load(ck);
  }

  async nextLogprobs(
    tokens: Int32Array,
    rows: number,
    pos: Int32Array,
    cls: Int32Array | undefined,
    dist?: Dist,
  ): Promise<Float32Array> {
    this.#live();
    checkBatch(this, { rows, tokens }, this.#classes, "nextLogprobs");
    checkPositions(this, rows, pos, cls, this.#classes);
    const { context: T, vocab: V } = this.config;
    const scale = distScale(dist);
    const logits = referenceForward(this.config, this.#params, tokens, rows);
    const out = new Float32Array(rows * V);
    const logp = new Float64Array(V);
    for (let b = 0; b < rows; b++) {
      maskedLogSoftmax(
        logits,
        (b * T + pos[b] - 1) * V,
        V,
        scale,
        this.#table,
        cls ? cls[b] : 0,
        logp,
      );
      out.set(logp, b * V);
    }
    return out;
  }

  decoder(): Decoder {
    this.#live();
    return new ReferenceDecoder({
      config: this.config,
      capacity: this.capacity,
      classes: this.#classes,
      table: this.#table,
      params: () => {
        this.#live();
        return this.#params;
      },
      version: () => this.#version,
    });
  }

  /** Calls `visit(i, logp)` with the distribution of token i = b·T + t for every t ≥ 1 of every row. */
  #eachPosition(
    batch: TokenBatch,
    dist: Dist | undefined,
    visit: (i: number, logp: Float64Array) => void,
  ): void {
    const { context: T, vocab: V } = this.config;
    const scale = distScale(dist);
    const logits = referenceForward(this.config, this.#params, batch.tokens, batch.rows);
    const logp = new Float64Array(V);
    for (let b = 0; b < batch.rows; b++) {
      for (let t = 1; t < T; t++) {
        const i = b * T + t;
        maskedLogSoftmax(
          logits,
          (i - 1) * V,
          V,
          scale,
          this.#table,
          batch.cls ? batch.cls[i] : 0,
          logp,
        );
        visit(i, logp);
      }
    }
  }

  async tokenLogprobs(batch: TokenBatch, dist?: Dist): Promise<Float32Array> {
    this.#live();
    checkBatch(this, batch, this.#classes, "tokenLogprobs");
    const out = new Float32Array(batch.rows * this.config.context); // t = 0 stays 0
    this.#eachPosition(batch, dist, (i, logp) => (out[i] = logp[batch.tokens[i]]));
    return out;
  }

  async tokenDistributions(batch: TokenBatch, dist?: Dist): Promise<Float32Array> {
    this.#live();
    checkBatch(this, batch, this.#classes, "tokenDistributions");
    const V = this.config.vocab;
    const out = new Float32Array(batch.rows * this.config.context * V); // t = 0 stays 0
    this.#eachPosition(batch, dist, (i, logp) => {
      for (let v = 0; v < V; v++) out[i * V + v] = Math.exp(logp[v]);
    });
    return out;
  }

  async gradients(
    batch: TrainBatch,
    hyper: PolicyHyper,
  ): Promise<{ stats: ObjectiveStats; grads: Float32Array[] }> {
    this.#live();
    checkBatch(this, batch, this.#classes, "gradients");
    const { stats, grads } = referenceGradients(
      this.config,
      this.#params,
      this.#table,
      batch,
      hyper,
    );
    return { stats, grads: grads.map((g) => Float32Array.from(g)) };
  }

  async trainStep(batch: TrainBatch, hyper: StepHyper): Promise<StepStats> {
    this.#live();
    checkBatch(this, batch, this.#classes, "trainStep");
    const { stats, grads } = referenceGradients(
      this.config,
      this.#params,
      this.#table,
      batch,
      hyper,
    );

    let sq = 0;
    for (const g of grads) for (let i = 0; i < g.length; i++) sq += g[i] * g[i];
    const gradNorm = Math.sqrt(sq);
    const clip = Math.min(1, hyper.clipNorm / (gradNorm + 1e-6));

    // AdamW (Loshchilov & Hutter 2019): decay decoupled from the moments, matrices only
    this.#step += 1;
    this.#version += 1;
    const { bc1, bc2 } = adamBias(hyper, this.#step);
    paramSpecs(this.config).forEach((spec, k) => {
      const p = this.#params[k],
        g = grads[k],
        m = this.#m[k],
        v = this.#v[k];
      const decay = spec.decay ? hyper.weightDecay : 0;
      for (let i = 0; i < p.length; i++) {
        const gi = g[i] * clip;
        m[i] = hyper.beta1 * m[i] + (1 - hyper.beta1) * gi;
        v[i] = hyper.beta2 * v[i] + (1 - hyper.beta2) * gi * gi;
        p[i] -= hyper.lr * ((m[i] * bc1) / (Math.sqrt(v[i] * bc2) + hyper.eps) + decay * p[i]);
      }
    });
    return { ...stats, gradNorm };
  }

  async checkpoint(): Promise<Checkpoint> {
    this.#live();
    const specs = paramSpecs(this.config);
    return {
      format: CHECKPOINT_FORMAT,
      config: { ...this.config },
      tensors: specs.map((s, k) => ({
        name: s.name,
        shape: [...s.shape],
        data: Float32Array.from(this.#params[k]),
      })),
      optimizer: {
        step: this.#step,
        m: this.#m.map((a) => Float32Array.from(a)),
        v: this.#v.map((a) => Float32Array.from(a)),
      },
    };
  }

  load(ck: Checkpoint): void {
    this.#live();
    validateCheckpoint(ck);
    this.#version += 1;
    for (const key of Object.keys(this.config) as (keyof ModelConfig)[]) {
      if (ck.config[key] !== this.config[key])
        throw new Error(
          `checkpoint config.${key} is ${ck.config[key]}, this model has ${this.config[key]}`,
        );
    }
    this.#params = ck.tensors.map((t) => Float64Array.from(t.data));
    const o = ck.optimizer;
    if (o) {
      o.m.forEach((a, k) => {
        if (a.length !== this.#params[k].length || o.v[k].length !== a.length)
          throw new Error(
            `checkpoint optimizer state for ${ck.tensors[k].name} has the wrong size`,
          );
      });
      this.#step = o.step;
      this.#m = o.m.map((a) => Float64Array.from(a));
      this.#v = o.v.map((a) => Float64Array.from(a));
    } else {
      this.#step = 0;
      this.#m = this.#params.map((p) => new Float64Array(p.length));
      this.#v = this.#params.map((p) => new Float64Array(p.length));
    }
  }

  dispose(): void {
    this.#disposed = true;
    this.#params = this.#m = this.#v = [];
  }

  #live(): void {
    if (this.#disposed) throw new Error("float64 model used after dispose()");
  }
}

/** Plain-TypeScript float64 backend; always available, slow, exact enough to test against. */
export class Float64Backend implements EngineBackend {
  readonly name: BackendName = "float64";

  createModel(ck: Checkpoint, opts: ModelOptions): EngineModel {
    return new ReferenceModel(ck, opts);
  }
}
