// Export of the engine's pre-LN GPT (src/engine/config.ts) as an ONNX graph in Hugging Face
// layout, so a trained toy model runs under onnxruntime-web and transformers.js. The same
// writer builds the tiny test LM (src/lm/tiny/gpt2.ts): one graph, two uses.
//
// The graph has the KV-cache interface transformers.js drives for `model_type: "gpt2"`:
//   inputs  input_ids, attention_mask, position_ids [batch, seq] int64,
//           past_key_values.N.key / .value [batch, heads, past_seq, head_dim]
//   outputs logits [batch, seq, vocab], present.N.key / .value [batch, heads, past_seq + seq, head_dim]
// transformers.js feeds only the newest token after the first step, so a cache-less graph would
// generate wrong text. A full-sequence forward is the same graph with an empty past (past_seq = 0).
// The math is exactly backends/float64.ts's forward: learned positions, pre-LN blocks with LN eps 1e-5,
// fused qkv (q | k | v columns, head i owning columns i·hd…), causal softmax(q·kᵀ/√hd), tanh GELU,
// final LN and an untied head with bias. Padding: attention_mask zeros hide keys; query rows that
// see no key (left padding) get a uniform softmax instead of NaN because masking adds −1e9.
import { type Checkpoint, validateCheckpoint } from "../engine/checkpoint";
import { type ModelConfig, LN_EPS, paramSpecs } from "../engine/config";
import { OnnxGraph, float } from "./onnx-graph";

/** A Hugging Face model folder in memory: relative path → text (JSON) or bytes. */
export type HfFiles = Record<string, string | Uint8Array>;

/** The shape of a GPT in the engine's layout; unlike ModelConfig it allows real vocabularies. */
export type GptDims = Omit<ModelConfig, "prefixLen">;

const MASKED = -1e9; // additive bias on hidden keys; finite so a fully hidden row stays finite
const GELU_C = Math.sqrt(2 / Math.PI);

/** The GPT forward with KV cache as an ONNX model; `params` in `paramSpecs` order and names. */
export function gptOnnx(
  dims: GptDims,
  params: Float32Array[],
  name = "collapse-lab-gpt",
): Uint8Array {
  const specs = paramSpecs({ ...dims, prefixLen: 0 });
  if (params.length !== specs.length)
    throw new Error(`expected ${specs.length} parameter tensors, got ${params.length}`);
  const { vocab: V, d, heads: H, layers: L } = dims;
  if (d % H !== 0) throw new Error(`d ${d} is not a multiple of heads ${H}`);
  const hd = d / H;
  const g = new OnnxGraph(name);
  const w: Record<string, string> = {};
  specs.forEach((s, i) => (w[s.name] = g.weight(s.name, params[i], s.shape)));

  const ids = g.input("input_ids", "int64", ["batch_size", "sequence_length"]);
  const mask = g.input("attention_mask", "int64", ["batch_size", "total_sequence_length"]);
  const pos = g.input("position_ids", "int64", ["batch_size", "sequence_length"]);
  const past: { key: string; value: string }[] = [];
  for (let l = 0; l < L; l++) {
    const pdims = ["batch_size", H, "past_sequence_length", hd];
    past.push({
      key: g.input(`past_key_values.${l}.key`, "float32", pdims),
      value: g.input(`past_key_values.${l}.value`, "float32", pdims),
    });
  }

  // Attention bias [batch, 1, seq, total]: 0 where query i (absolute position past + i) may see key j
  const zero = g.constInt(0);
  const one = g.constInt(1);
  const seqLen = g.op("Squeeze", [g.op("Shape", [ids], { start: 1, end: 2 }), g.constInt([0])]);
  const pastLen = g.op("Squeeze", [
    g.op("Shape", [past[0].key], { start: 2, end: 3 }),
    g.constInt([0]),
  ]);
  const total = g.op("Add", [pastLen, seqLen]);
  const qpos = g.op("Unsqueeze", [g.op("Range", [pastLen, total, one]), g.constInt([1])]); // [seq, 1]
  const kpos = g.op("Unsqueeze", [g.op("Range", [zero, total, one]), g.constInt([0])]); // [1, total]
  const causal = g.op("LessOrEqual", [kpos, qpos]); // [seq, total]
  const keyOk = g.op("Cast", [g.op("Unsqueeze", [mask, g.constInt([1, 2])])], { to: 9 }); // bool [batch, 1, 1, total]
  const bias = g.op("Where", [g.op("And", [causal, keyOk]), g.constFloat(0), g.constFloat(MASKED)]);

  const layerNorm = (x: string, gain: string, shift: string) =>
    g.op("LayerNormalization", [x, gain, shift], { axis: -1, epsilon: float(LN_EPS) });
  const linear = (x: string, weight: string, b: string) =>
    g.op("Add", [g.op("MatMul", [x, weight]), b]);
  const splitHeads = (x: string) =>
    g.op("Transpose", [g.op("Reshape", [x, g.constInt([0, 0, H, hd])])], { perm: [0, 2, 1, 3] });
  const gelu = (u: string) => {
    // 0.5·u·(1 + tanh(√(2/π)·(u + 0.044715·u³))), as backends/float64.ts (GPT-2's gelu_new)
    const u3 = g.op("Mul", [g.op("Mul", [u, u]), u]);
    const inner = g.op("Mul", [
      g.op("Add", [u, g.op("Mul", [u3, g.constFloat(0.044715)])]),
      g.constFloat(GELU_C),
    ]);
    return g.op("Mul", [
      g.op("Mul", [u, g.constFloat(0.5)]),
      g.op("Add", [g.op("Tanh", [inner]), g.constFloat(1)]),
    ]);
  };

  let x = g.op("Add", [
    g.op("Gather", [w["tok_emb"], ids], { axis: 0 }),
    g.op("Gather", [w["pos_emb"], pos], { axis: 0 }),
  ]);
  const scale = g.constFloat(1 / Math.sqrt(hd));
  for (let l = 0; l < L; l++) {
    const p = `l${l}.`;
    const qkv = linear(
      layerNorm(x, w[p + "ln1.g"], w[p + "ln1.b"]),
      w[p + "attn.w_qkv"],
      w[p + "attn.b_qkv"],
    );
    const [q, k, v] = g.opN("Split", [qkv, g.constInt([d, d, d])], 3, { axis: -1 });
    const keys = g.op("Concat", [past[l].key, splitHeads(k)], { axis: 2 }, `present.${l}.key`);
    const values = g.op(
      "Concat",
      [past[l].value, splitHeads(v)],
      { axis: 2 },
      `present.${l}.value`,
    );
    const scores = g.op("Add", [
      g.op("Mul", [
        g.op("MatMul", [splitHeads(q), g.op("Transpose", [keys], { perm: [0, 1, 3, 2] })]),
        scale,
      ]),
      bias,
    ]);
    const att = g.op("MatMul", [g.op("Softmax", [scores], { axis: -1 }), values]); // [batch, H, seq, hd]
    const merged = g.op("Reshape", [
      g.op("Transpose", [att], { perm: [0, 2, 1, 3] }),
      g.constInt([0, 0, d]),
    ]);
    x = g.op("Add", [x, linear(merged, w[p + "attn.w_o"], w[p + "attn.b_o"])]);
    const hidden = gelu(
      linear(layerNorm(x, w[p + "ln2.g"], w[p + "ln2.b"]), w[p + "mlp.w1"], w[p + "mlp.b1"]),
    );
    x = g.op("Add", [x, linear(hidden, w[p + "mlp.w2"], w[p + "mlp.b2"])]);
  }
  const logits = linear(layerNorm(x, w["lnf.g"], w["lnf.b"]), w["head.w"], w["head.b"]);
  g.output(logits, "logits", "float32", ["batch_size", "sequence_length", V]);
  for (let l = 0; l < L; l++) {
    const pdims = ["batch_size", H, "total_sequence_length", hd];
    g.output(`present.${l}.key`, `present.${l}.key`, "float32", pdims);
    g.output(`present.${l}.value`, `present.${l}.value`, "float32", pdims);
  }
  return g.encode();
}

export interface GptConfigJsonOptions {
  bosTokenId?: number;
  eosTokenId?: number;
  /** Extra fields saved under "collapse-lab" (e.g. the engine config, the run that trained it). */
  provenance?: Record<string, unknown>;
}

/** config.json for transformers.js: GPT-2 field names; fp32 weights in onnx/model.onnx. */
export function gptConfigJson(
  dims: GptDims,
  opts: GptConfigJsonOptions = {},
): Record<string, unknown> {
  return {
    architectures: ["GPT2LMHeadModel"],
    model_type: "gpt2",
    vocab_size: dims.vocab,
    n_positions: dims.context,
    n_ctx: dims.context,
    n_embd: dims.d,
    n_layer: dims.layers,
    n_head: dims.heads,
    n_inner: dims.mlpRatio * dims.d,
    activation_function: "gelu_new",
    layer_norm_epsilon: LN_EPS,
    tie_word_embeddings: false,
    use_cache: true,
    ...(opts.bosTokenId !== undefined ? { bos_token_id: opts.bosTokenId } : {}),
    ...(opts.eosTokenId !== undefined ? { eos_token_id: opts.eosTokenId } : {}),
    "transformers.js_config": { dtype: "fp32" },
    ...(opts.provenance ? { "collapse-lab": opts.provenance } : {}),
  };
}

const json = (x: unknown) => JSON.stringify(x, null, 2) + "\n";

/**
 * A trained engine model as a Hugging Face folder: config.json (with the engine config saved
 * under "collapse-lab"), generation_config.json and onnx/model.onnx. There is no tokenizer: the
 * engine's tokens are dialogue-act ids, so callers feed ids (input_ids tensors) directly.
 */
export function exportCheckpoint(
  ck: Checkpoint,
  opts: Omit<GptConfigJsonOptions, "provenance"> & { provenance?: Record<string, unknown> } = {},
): HfFiles {
  validateCheckpoint(ck);
  const { prefixLen, ...dims } = ck.config;
  const provenance = { format: ck.format, config: ck.config, ...opts.provenance };
  return {
    "config.json": json(gptConfigJson(dims, { ...opts, provenance })),
    "generation_config.json": json({
      ...(opts.bosTokenId !== undefined ? { bos_token_id: opts.bosTokenId } : {}),
      ...(opts.eosTokenId !== undefined ? { eos_token_id: opts.eosTokenId } : {}),
      // the engine reserves the first prefixLen positions for the card; generation starts after
      ...(prefixLen > 0 ? { "collapse-lab_prefix_len": prefixLen } : {}),
    }),
    "onnx/model.onnx": gptOnnx(
      dims,
      ck.tensors.map((t) => t.data),
      "collapse-lab-engine",
    ),
  };
}
