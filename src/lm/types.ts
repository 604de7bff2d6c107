// The contract between the lm tier's model backend (the only module that imports
// transformers.js, running in a worker) and everything that uses real LMs: prompts, the VS
// parser, diversity measures, γ of a real LM and the LM simulator in the toy games. Code on this
// side of the contract is plain TypeScript and is tested with fake scorers.
import type { JsonSchemaFormat } from "./vs-schema";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** A prompt: chat messages (rendered with the model's chat template) or raw text (base models). */
export type LmPrompt = { chat: ChatMessage[] } | { text: string };

/** A stable key for a prompt (for caching scores). */
export function promptKey(p: LmPrompt): string {
  return "text" in p ? `t:${p.text}` : `c:${JSON.stringify(p.chat)}`;
}

export interface GenerateOptions {
  maxNewTokens?: number;
  /** 0 or absent = greedy. */
  temperature?: number;
  topP?: number;
  /** Number of independent samples. */
  n?: number;
  seed?: number;
  /** Constrain each reply to JSON valid under this schema; only for a model whose `constrainsJson` is true. */
  jsonSchema?: JsonSchemaFormat;
}

export interface Generation {
  text: string;
  /** Sum of token log-probabilities of the generated tokens under the generating model (natural log). */
  logprob?: number;
  tokens: number;
}

/** Log-likelihood of a continuation given a prompt, summed over its tokens. */
export interface ContinuationScore {
  logprob: number;
  tokens: number;
}

/** What a loaded causal LM can do. Implemented by the transformers.js backend and by test fakes. */
export interface LanguageModel {
  readonly id: string;
  /** Whether `generate` honours `jsonSchema` (a server whose probe found response_format json_schema). */
  readonly constrainsJson?: boolean;
  generate(prompt: LmPrompt, opts?: GenerateOptions): Promise<Generation[]>;
  /** Exact log p(continuation | prompt) for each continuation (one batched pass where possible). */
  score(prompt: LmPrompt, continuations: string[]): Promise<ContinuationScore[]>;
}

/** A sentence-embedding model (mean-pooled, L2-normalised vectors). */
export interface EmbeddingModel {
  readonly id: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}
