// The tiny test embedder: a 2-layer BERT (Devlin et al. 2019; post-LN encoder, erf GELU, token
// type embeddings) with seeded random weights and a lower-casing WordPiece tokenizer, in Hugging
// Face layout (model_type "bert": input_ids, attention_mask, token_type_ids → last_hidden_state)
// so the feature-extraction pipeline runs it. Plus its plain float64 reference: tokenizer,
// forward, mean pooling and L2 normalisation, what all-MiniLM-L6-v2 through the pipeline computes.
import { Rng } from "../../engine/random";
import type { HfFiles } from "../onnx-export";
import { OnnxGraph, float } from "../onnx-graph";

export interface TinyBertDims {
  vocab: number;
  d: number;
  heads: number;
  layers: number;
  intermediate: number;
  maxPositions: number;
  typeVocab: number;
}

export interface TinyBert {
  dims: TinyBertDims;
  vocab: string[]; // id → token
  weights: Map<string, Float32Array>;
  files: HfFiles;
}

const SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const WORDS = [
  "the",
  "and",
  "to",
  "of",
  "you",
  "is",
  "that",
  "in",
  "it",
  "for",
  "would",
  "like",
  "not",
  "can",
  "help",
  "donate",
  "money",
  "children",
  "save",
  "yes",
  "no",
  "maybe",
  "think",
  "sure",
  "dollars",
];
const SUFFIXES = ["s", "ing", "ed", "ly", "er"];
const LN_EPS_BERT = 1e-12;
const MASKED = -1e9;

function wordPieceVocab(): string[] {
  const letters = "abcdefghijklmnopqrstuvwxyz0123456789".split("");
  const punct = ".,!?'\"$%-:;()".split("");
  return [
    ...SPECIALS,
    ...letters,
    ...punct,
    ...letters.map((c) => "##" + c),
    ...WORDS,
    ...SUFFIXES.map((s) => "##" + s),
  ];
}

function tokenizerJson(vocab: string[]): Record<string, unknown> {
  const id = (t: string) => vocab.indexOf(t);
  const special = (t: string) => ({ id: t, ids: [id(t)], tokens: [t] });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((content) => ({
      id: id(content),
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
        { Sequence: { id: "B", type_id: 1 } },
        { SpecialToken: { id: "[SEP]", type_id: 1 } },
      ],
      special_tokens: { "[CLS]": special("[CLS]"), "[SEP]": special("[SEP]") },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
    },
  };
}

/** Weight names and shapes, in the order they are drawn from the seed. */
function weightShapes(m: TinyBertDims): [string, number[]][] {
  const { vocab: V, d, intermediate: I } = m;
  const shapes: [string, number[]][] = [
    ["word_emb", [V, d]],
    ["pos_emb", [m.maxPositions, d]],
    ["type_emb", [m.typeVocab, d]],
    ["emb_ln.g", [d]],
    ["emb_ln.b", [d]],
  ];
  for (let l = 0; l < m.layers; l++) {
    const p = `l${l}.`;
    shapes.push(
      [p + "wq", [d, d]],
      [p + "bq", [d]],
      [p + "wk", [d, d]],
      [p + "bk", [d]],
      [p + "wv", [d, d]],
      [p + "bv", [d]],
      [p + "wo", [d, d]],
      [p + "bo", [d]],
      [p + "ln1.g", [d]],
      [p + "ln1.b", [d]],
      [p + "w1", [d, I]],
      [p + "b1", [I]],
      [p + "w2", [I, d]],
      [p + "b2", [d]],
      [p + "ln2.g", [d]],
      [p + "ln2.b", [d]],
    );
  }
  return shapes;
}

function bertOnnx(m: TinyBertDims, W: Map<string, Float32Array>): Uint8Array {
  const { d, heads: H } = m;
  const hd = d / H;
  const g = new OnnxGraph("tiny-bert");
  const w: Record<string, string> = {};
  for (const [name, shape] of weightShapes(m)) w[name] = g.weight(name, W.get(name)!, shape);
  const dims = ["batch_size", "sequence_length"];
  const ids = g.input("input_ids", "int64", dims);
  const mask = g.input("attention_mask", "int64", dims);
  const types = g.input("token_type_ids", "int64", dims);

  const seqLen = g.op("Squeeze", [g.op("Shape", [ids], { start: 1, end: 2 }), g.constInt([0])]);
  const positions = g.op("Range", [g.constInt(0), seqLen, g.constInt(1)]);
  const keyOk = g.op("Cast", [g.op("Unsqueeze", [mask, g.constInt([1, 2])])], { to: 9 }); // [batch, 1, 1, seq]
  const bias = g.op("Where", [keyOk, g.constFloat(0), g.constFloat(MASKED)]);

  const layerNorm = (x: string, p: string) =>
    g.op("LayerNormalization", [x, w[p + ".g"], w[p + ".b"]], {
      axis: -1,
      epsilon: float(LN_EPS_BERT),
    });
  const linear = (x: string, weight: string, b: string) =>
    g.op("Add", [g.op("MatMul", [x, w[weight]]), w[b]]);
  const splitHeads = (x: string) =>
    g.op("Transpose", [g.op("Reshape", [x, g.constInt([0, 0, H, hd])])], { perm: [0, 2, 1, 3] });
  const gelu = (u: string) =>
    g.op("Mul", [
      g.op("Mul", [u, g.constFloat(0.5)]),
      g.op("Add", [g.op("Erf", [g.op("Mul", [u, g.constFloat(Math.SQRT1_2)])]), g.constFloat(1)]),
    ]);

  const emb = g.op("Add", [
    g.op("Add", [
      g.op("Gather", [w["word_emb"], ids], { axis: 0 }),
      g.op("Gather", [w["pos_emb"], positions], { axis: 0 }),
    ]),
    g.op("Gather", [w["type_emb"], types], { axis: 0 }),
  ]);
  let x = layerNorm(emb, "emb_ln");
  const scale = g.constFloat(1 / Math.sqrt(hd));
  for (let l = 0; l < m.layers; l++) {
    const p = `l${l}.`;
    const q = splitHeads(linear(x, p + "wq", p + "bq"));
    const k = splitHeads(linear(x, p + "wk", p + "bk"));
    const v = splitHeads(linear(x, p + "wv", p + "bv"));
    const scores = g.op("Add", [
      g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], { perm: [0, 1, 3, 2] })]), scale]),
      bias,
    ]);
    const att = g.op("MatMul", [g.op("Softmax", [scores], { axis: -1 }), v]);
    const merged = g.op("Reshape", [
      g.op("Transpose", [att], { perm: [0, 2, 1, 3] }),
      g.constInt([0, 0, d]),
    ]);
    x = layerNorm(g.op("Add", [x, linear(merged, p + "wo", p + "bo")]), p + "ln1");
    x = layerNorm(
      g.op("Add", [x, linear(gelu(linear(x, p + "w1", p + "b1")), p + "w2", p + "b2")]),
      p + "ln2",
    );
  }
  g.output(x, "last_hidden_state", "float32", ["batch_size", "sequence_length", d]);
  return g.encode();
}

const json = (x: unknown) => JSON.stringify(x, null, 2) + "\n";

export function makeTinyBert({ seed = 2 } = {}): TinyBert {
  const vocab = wordPieceVocab();
  const dims: TinyBertDims = {
    vocab: vocab.length,
    d: 32,
    heads: 2,
    layers: 2,
    intermediate: 64,
    maxPositions: 64,
    typeVocab: 2,
  };
  const rng = Rng.seed(seed);
  const weights = new Map<string, Float32Array>();
  for (const [name, shape] of weightShapes(dims)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const gain = name.endsWith(".g"); // LayerNorm gains around 1; other vectors are biases
    for (let i = 0; i < data.length; i++)
      data[i] = gain ? 1 + 0.1 * rng.normal() : (shape.length === 1 ? 0.05 : 0.3) * rng.normal();
    weights.set(name, data);
  }
  const files: HfFiles = {
    "config.json": json({
      architectures: ["BertModel"],
      model_type: "bert",
      vocab_size: dims.vocab,
      hidden_size: dims.d,
      num_attention_heads: dims.heads,
      num_hidden_layers: dims.layers,
      intermediate_size: dims.intermediate,
      max_position_embeddings: dims.maxPositions,
      type_vocab_size: dims.typeVocab,
      hidden_act: "gelu",
      layer_norm_eps: LN_EPS_BERT,
      pad_token_id: 0,
      "transformers.js_config": { dtype: "fp32" },
      "collapse-lab": { tiny: "bert", seed },
    }),
    "tokenizer.json": json(tokenizerJson(vocab)),
    "tokenizer_config.json": json({
      tokenizer_class: "BertTokenizer",
      do_lower_case: true,
      model_max_length: dims.maxPositions,
      cls_token: "[CLS]",
      sep_token: "[SEP]",
      pad_token: "[PAD]",
      unk_token: "[UNK]",
      mask_token: "[MASK]",
      clean_up_tokenization_spaces: true,
    }),
    "onnx/model.onnx": bertOnnx(dims, weights),
  };
  return { dims, vocab, weights, files };
}

// ---------------------------------------------------------------------------------------------
// Reference

/** As Hugging Face tokenizers' BERT pre-tokenizer: ASCII punctuation or Unicode category P. */
const isPunct = (c: string) => /[!-/:-@[-`{-~]/.test(c) || /\p{P}/u.test(c);

/** BERT's basic tokenizer (lower case, strip accents, split on spaces and punctuation) + WordPiece. */
export function referenceWordPiece(vocab: string[], text: string): number[] {
  const ids = new Map(vocab.map((t, i) => [t, i]));
  const clean = text
    .toLowerCase()
    .normalize("NFD")
    .replace(/\p{Mn}/gu, "");
  const words: string[] = [];
  for (const chunk of clean.split(/\s+/).filter(Boolean)) {
    let cur = "";
    for (const c of chunk) {
      if (isPunct(c)) {
        if (cur) words.push(cur);
        words.push(c);
        cur = "";
      } else cur += c;
    }
    if (cur) words.push(cur);
  }
  const out = [ids.get("[CLS]")!];
  for (const word of words) {
    const pieces: number[] = [];
    let start = 0;
    while (start < word.length) {
      let end = word.length;
      let found = -1;
      for (; end > start; end--) {
        const piece = (start > 0 ? "##" : "") + word.slice(start, end);
        if (ids.has(piece)) {
          found = ids.get(piece)!;
          break;
        }
      }
      if (found < 0) {
        pieces.length = 0;
        pieces.push(ids.get("[UNK]")!);
        break;
      }
      pieces.push(found);
      start = end;
    }
    out.push(...pieces);
  }
  out.push(ids.get("[SEP]")!);
  return out;
}

/** erf from Numerical Recipes' erfc (Chebyshev fit, fractional error < 1.2e-7 everywhere). */
function erf(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t *
                              (-1.13520398 +
                                t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 1 - r : r - 1;
}

/** Mean-pooled (over real tokens), L2-normalised sentence embedding, in float64. */
export function referenceEmbedding(model: TinyBert, ids: number[]): Float64Array {
  const { d, heads: H, layers, intermediate: I } = model.dims;
  const hd = d / H;
  const S = ids.length;
  const W = (n: string) => model.weights.get(n)!;
  const layerNorm = (x: Float64Array, p: string) => {
    const gain = W(p + ".g"),
      b = W(p + ".b");
    const out = new Float64Array(x.length);
    for (let r = 0; r < S; r++) {
      const row = x.subarray(r * d, (r + 1) * d);
      const mean = row.reduce((a, v) => a + v, 0) / d;
      const v = row.reduce((a, u) => a + (u - mean) ** 2, 0) / d;
      const rstd = 1 / Math.sqrt(v + LN_EPS_BERT);
      for (let i = 0; i < d; i++) out[r * d + i] = (row[i] - mean) * rstd * gain[i] + b[i];
    }
    return out;
  };
  const linear = (x: Float64Array, din: number, wn: string, bn: string, dout: number) => {
    const w = W(wn),
      b = W(bn);
    const y = new Float64Array(S * dout);
    for (let r = 0; r < S; r++)
      for (let o = 0; o < dout; o++) {
        let acc = b[o];
        for (let i = 0; i < din; i++) acc += x[r * din + i] * w[i * dout + o];
        y[r * dout + o] = acc;
      }
    return y;
  };
  const emb = new Float64Array(S * d);
  const we = W("word_emb"),
    pe = W("pos_emb"),
    te = W("type_emb");
  for (let r = 0; r < S; r++)
    for (let i = 0; i < d; i++) emb[r * d + i] = we[ids[r] * d + i] + pe[r * d + i] + te[i];
  let x = layerNorm(emb, "emb_ln");
  for (let l = 0; l < layers; l++) {
    const p = `l${l}.`;
    const q = linear(x, d, p + "wq", p + "bq", d),
      k = linear(x, d, p + "wk", p + "bk", d),
      v = linear(x, d, p + "wv", p + "bv", d);
    const ctx = new Float64Array(S * d);
    for (let h = 0; h < H; h++)
      for (let i = 0; i < S; i++) {
        const s = new Float64Array(S);
        for (let j = 0; j < S; j++) {
          let dot = 0;
          for (let c = 0; c < hd; c++) dot += q[i * d + h * hd + c] * k[j * d + h * hd + c];
          s[j] = dot / Math.sqrt(hd);
        }
        const max = Math.max(...s);
        let sum = 0;
        for (let j = 0; j < S; j++) sum += s[j] = Math.exp(s[j] - max);
        for (let j = 0; j < S; j++)
          for (let c = 0; c < hd; c++)
            ctx[i * d + h * hd + c] += (s[j] / sum) * v[j * d + h * hd + c];
      }
    const att = linear(ctx, d, p + "wo", p + "bo", d);
    x = layerNorm(
      x.map((u, i) => u + att[i]),
      p + "ln1",
    );
    const hidden = linear(x, d, p + "w1", p + "b1", I).map(
      (u) => 0.5 * u * (1 + erf(u * Math.SQRT1_2)),
    );
    const out = linear(hidden, I, p + "w2", p + "b2", d);
    x = layerNorm(
      x.map((u, i) => u + out[i]),
      p + "ln2",
    );
  }
  const pooled = new Float64Array(d);
  for (let r = 0; r < S; r++) for (let i = 0; i < d; i++) pooled[i] += x[r * d + i] / S;
  const norm = Math.sqrt(pooled.reduce((a, u) => a + u * u, 0));
  return pooled.map((u) => u / norm);
}
