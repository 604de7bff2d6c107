// Model configuration and the parameter layout of the small causal transformer.
// One class of model serves every role (policy, reference simulator, aligned simulator):
// roles differ only in the loss masks they learn from and the prefix tokens they see.

export interface ModelConfig {
  vocab: number; // token vocabulary size, ≤ 128 (dialogue acts + specials + card tokens)
  context: number; // sequence length T the model is compiled for, ≤ 64 (padded)
  d: number; // residual width, 16–128, a multiple of `heads`
  layers: number; // transformer blocks, 1–2
  heads: number; // attention heads per block
  mlpRatio: number; // MLP hidden width = mlpRatio · d
  prefixLen: number; // leading positions reserved for prefix tokens (persona card); never targets
}

export const DEFAULT_MODEL: ModelConfig = {
  vocab: 64,
  context: 32,
  d: 64,
  layers: 1,
  heads: 4,
  mlpRatio: 4,
  prefixLen: 0,
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const LIMITS: Record<keyof ModelConfig, [number, number]> = {
  vocab: [2, 128],
  context: [2, 64],
  d: [8, 128],
  layers: [1, 4],
  heads: [1, 16],
  mlpRatio: [1, 8],
  prefixLen: [0, 32],
};

/** Checks a model config and returns it; throws ConfigError naming the bad field. */
export function validateModelConfig(c: ModelConfig): ModelConfig {
  for (const key of Object.keys(c)) {
    if (!(key in LIMITS)) throw new ConfigError(`model.${key}: unknown key`);
  }
  for (const [key, [lo, hi]] of Object.entries(LIMITS) as [keyof ModelConfig, [number, number]][]) {
    const v = c[key];
    if (typeof v !== "number" || !Number.isInteger(v))
      throw new ConfigError(`model.${key}: expected an integer, got ${JSON.stringify(v)}`);
    if (v < lo || v > hi) throw new ConfigError(`model.${key}: ${v} is outside [${lo}, ${hi}]`);
  }
  if (c.d % c.heads !== 0)
    throw new ConfigError(`model.d: ${c.d} is not a multiple of heads (${c.heads})`);
  if (c.prefixLen >= c.context - 1)
    throw new ConfigError(`model.prefixLen: ${c.prefixLen} leaves no room in context ${c.context}`);
  return c;
}

export type InitKind = "normal" | "zeros" | "ones";

export interface ParamSpec {
  name: string;
  shape: number[];
  init: InitKind;
  decay: boolean; // AdamW weight decay applies to matrices only
}

/**
 * The parameter layout, in a fixed order every backend and checkpoint shares.
 * Pre-LN GPT block (Radford et al. 2019; minGPT):
 *   x = tok_emb[tok] + pos_emb[t]
 *   x = x + attn(LN1(x)),  attn: qkv = h·w_qkv + b_qkv (q | k | v along the last axis,
 *       head i owns columns i·hd … (i+1)·hd − 1 of each), causal softmax(q kᵀ/√hd) v, ·w_o + b_o
 *   x = x + gelu_tanh(LN2(x)·w1 + b1)·w2 + b2
 *   logits = LNf(x)·head_w + head_b
 * LN: (x − mean) / sqrt(biased var + 1e-5) · g + b.
 */
export function paramSpecs(c: ModelConfig): ParamSpec[] {
  const { vocab: V, context: T, d } = c;
  const m = c.mlpRatio * d;
  const specs: ParamSpec[] = [
    { name: "tok_emb", shape: [V, d], init: "normal", decay: true },
    { name: "pos_emb", shape: [T, d], init: "normal", decay: true },
  ];
  for (let l = 0; l < c.layers; l++) {
    const p = `l${l}.`;
    specs.push(
      { name: p + "ln1.g", shape: [d], init: "ones", decay: false },
      { name: p + "ln1.b", shape: [d], init: "zeros", decay: false },
      { name: p + "attn.w_qkv", shape: [d, 3 * d], init: "normal", decay: true },
      { name: p + "attn.b_qkv", shape: [3 * d], init: "zeros", decay: false },
      { name: p + "attn.w_o", shape: [d, d], init: "normal", decay: true },
      { name: p + "attn.b_o", shape: [d], init: "zeros", decay: false },
      { name: p + "ln2.g", shape: [d], init: "ones", decay: false },
      { name: p + "ln2.b", shape: [d], init: "zeros", decay: false },
      { name: p + "mlp.w1", shape: [d, m], init: "normal", decay: true },
      { name: p + "mlp.b1", shape: [m], init: "zeros", decay: false },
      { name: p + "mlp.w2", shape: [m, d], init: "normal", decay: true },
      { name: p + "mlp.b2", shape: [d], init: "zeros", decay: false },
    );
  }
  specs.push(
    { name: "lnf.g", shape: [d], init: "ones", decay: false },
    { name: "lnf.b", shape: [d], init: "zeros", decay: false },
    { name: "head.w", shape: [d, V], init: "normal", decay: true },
    { name: "head.b", shape: [V], init: "zeros", decay: false },
  );
  return specs;
}

export const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

export function parameterCount(c: ModelConfig): number {
  return paramSpecs(c).reduce((n, s) => n + size(s.shape), 0);
}

export const LN_EPS = 1e-5;
/** Additive bias for disallowed tokens and future positions; finite so 0 · bias stays 0. */
export const MASK_BIAS = -1e9;
