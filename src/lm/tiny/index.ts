// The project's own tiny models for offline tests and demos, by folder name. Deterministic:
// the same seed gives byte-identical files, so they are generated where needed, never committed.
import type { HfFiles } from "../onnx-export";
import { makeTinyGpt2 } from "./gpt2";
import { makeTinyBert } from "./bert";

export { makeTinyGpt2, TinyGpt2Reference, type TinyGpt2 } from "./gpt2";
export { makeTinyBert, referenceEmbedding, referenceWordPiece, type TinyBert } from "./bert";

export const TINY_LM = "tiny-gpt2";
export const TINY_EMBEDDER = "tiny-bert";

/** Every tiny model's files, keyed by folder name. */
export function tinyModelFiles(): Record<string, HfFiles> {
  return { [TINY_LM]: makeTinyGpt2().files, [TINY_EMBEDDER]: makeTinyBert().files };
}
