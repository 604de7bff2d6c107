// The tiny test LM: a 2-layer GPT with seeded random weights, a byte-level BPE tokenizer with a
// ChatML chat template, in Hugging Face layout (model_type "gpt2", KV-cache graph). Its plain
// reference is the engine's float64 forward (src/engine/backends/float64.ts): the graph is the
// engine's architecture, written by onnx-export.ts. No npm package ships a usable tiny LM.
import { paramSpecs, size, type ModelConfig } from "../../engine/config";
import { Rng } from "../../engine/random";
import { referenceForward } from "../../engine/backends/float64";
import { type GptDims, type HfFiles, gptConfigJson, gptOnnx } from "../onnx-export";
import { ReferenceBpe, bpeTokenizerJson, buildBpe, type BpeTokenizerSpec } from "./bpe";

export const EOT = "<|endoftext|>";
export const IM_START = "<|im_start|>";
export const IM_END = "<|im_end|>";

/** ChatML, as SmolLM2-Instruct uses (without its default system prompt). */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

export interface TinyGpt2Options {
  seed?: number;
  d?: number;
  layers?: number;
  heads?: number;
  context?: number;
  /** Include the ChatML chat template in tokenizer_config.json (default true). */
  chatTemplate?: boolean;
}

export interface TinyGpt2 {
  dims: GptDims;
  params: Float32Array[]; // paramSpecs order
  tokenizer: BpeTokenizerSpec;
  eosTokenId: number;
  /** Ids that end generation (generation_config.json): <|endoftext|> and <|im_end|>. */
  eosTokenIds: number[];
  files: HfFiles;
}

const json = (x: unknown) => JSON.stringify(x, null, 2) + "\n";

export function makeTinyGpt2(opts: TinyGpt2Options = {}): TinyGpt2 {
  const seed = opts.seed ?? 1;
  const tokenizer = buildBpe([EOT, IM_START, IM_END]);
  const dims: GptDims = {
    vocab: tokenizer.vocab.size,
    context: opts.context ?? 128,
    d: opts.d ?? 32,
    layers: opts.layers ?? 2,
    heads: opts.heads ?? 4,
    mlpRatio: 4,
  };
  const eot = tokenizer.vocab.get(EOT)!;
  const rng = Rng.seed(seed);
  // Scales well above GPT-2's 0.02 init so that next-token distributions are peaked: greedy
  // decoding then never hinges on float32-vs-float64 rounding of two nearly equal logits.
  const std: Record<string, number> = { tok_emb: 1, pos_emb: 0.3, "head.w": 1 };
  const params = paramSpecs({ ...dims, prefixLen: 0 }).map((s) => {
    const data = new Float32Array(size(s.shape));
    const leaf = s.name.replace(/^l\d+\./, "");
    if (s.init === "ones") for (let i = 0; i < data.length; i++) data[i] = 1 + 0.1 * rng.normal();
    else if (s.init === "zeros")
      for (let i = 0; i < data.length; i++) data[i] = 0.05 * rng.normal();
    else for (let i = 0; i < data.length; i++) data[i] = (std[leaf] ?? 0.3) * rng.normal();
    return data;
  });
  // special tokens are unlikely, so greedy text runs to max_new_tokens rather than stopping at once
  const headB = params[params.length - 1];
  for (const s of tokenizer.specials) headB[tokenizer.vocab.get(s)!] -= 4;

  const tokenizerConfig: Record<string, unknown> = {
    tokenizer_class: "GPT2Tokenizer",
    bos_token: EOT,
    eos_token: EOT,
    unk_token: EOT,
    pad_token: EOT,
    model_max_length: dims.context,
    add_prefix_space: false,
    clean_up_tokenization_spaces: false,
  };
  if (opts.chatTemplate ?? true) tokenizerConfig.chat_template = CHATML_TEMPLATE;
  const eos = [eot, tokenizer.vocab.get(IM_END)!];
  const files: HfFiles = {
    "config.json": json(
      gptConfigJson(dims, { bosTokenId: eot, eosTokenId: eot, provenance: { tiny: "gpt2", seed } }),
    ),
    "generation_config.json": json({ bos_token_id: eot, eos_token_id: eos, pad_token_id: eot }),
    "tokenizer.json": json(bpeTokenizerJson(tokenizer)),
    "tokenizer_config.json": json(tokenizerConfig),
    "onnx/model.onnx": gptOnnx(dims, params, "tiny-gpt2"),
  };
  return { dims, params, tokenizer, eosTokenId: eot, eosTokenIds: eos, files };
}

/** The tiny LM's plain float64 forward and greedy decoding, for tests. */
export class TinyGpt2Reference {
  readonly bpe: ReferenceBpe;
  readonly #config: ModelConfig;
  readonly #params: Float64Array[];

  constructor(readonly model: TinyGpt2) {
    this.bpe = new ReferenceBpe(model.tokenizer);
    this.#config = { ...model.dims, prefixLen: 0 };
    this.#params = model.params.map((p) => Float64Array.from(p));
  }

  /** Logits [ids.length, vocab] (float64). */
  logits(ids: number[]): Float64Array {
    const { context: T, vocab: V } = this.#config;
    if (ids.length > T) throw new Error(`${ids.length} tokens exceed the context ${T}`);
    const tokens = new Int32Array(T);
    tokens.set(ids);
    return referenceForward(this.#config, this.#params, tokens, 1).subarray(0, ids.length * V);
  }

  /** log p(ids[t] | ids[<t]) for t = from … end, summed. */
  logprob(ids: number[], from: number): number {
    const V = this.#config.vocab;
    const logits = this.logits(ids);
    let sum = 0;
    for (let t = Math.max(from, 1); t < ids.length; t++) {
      const row = logits.subarray((t - 1) * V, t * V);
      const max = row.reduce((a, b) => Math.max(a, b), -Infinity);
      const lse = max + Math.log(row.reduce((s, z) => s + Math.exp(z - max), 0));
      sum += row[ids[t]] - lse;
    }
    return sum;
  }

  /** Greedy continuation (stops at an EOS id); `margin` is the smallest top-1 − top-2 logit gap. */
  greedy(
    ids: number[],
    maxNewTokens: number,
    eos: number[] = this.model.eosTokenIds,
  ): { ids: number[]; margin: number } {
    const V = this.#config.vocab;
    const seq = [...ids];
    const out: number[] = [];
    let margin = Infinity;
    for (let step = 0; step < maxNewTokens; step++) {
      const logits = this.logits(seq);
      const row = logits.subarray((seq.length - 1) * V, seq.length * V);
      let best = 0;
      for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
      let second = -Infinity;
      for (let v = 0; v < V; v++) if (v !== best) second = Math.max(second, row[v]);
      margin = Math.min(margin, row[best] - second);
      out.push(best);
      seq.push(best);
      if (eos.includes(best)) break;
    }
    return { ids: out, margin };
  }
}
