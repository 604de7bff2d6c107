// The LM lab's sentence embedder in Node: the offline copy in the repository's public/models/
// (scripts/offline-embedder.sh) when it is there, else the hub's default. Node only (reads the disk).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModelSource } from "./backend";
import { DEFAULT_MODEL_IDS } from "./models";
import { MODELS_FOLDER, OFFLINE_EMBEDDER_ID, offlineEmbedderSource } from "./offline-embedder";

/** The repository's models folder, which the app serves as models/. */
export const REPO_MODELS_DIR = fileURLToPath(
  new URL(`../../public/${MODELS_FOLDER}`, import.meta.url),
);

/** The files transformers.js needs from the copy (config, tokenizer, int8 weights). */
const FILES = [
  "config.json",
  "tokenizer.json",
  "tokenizer_config.json",
  "onnx/model_quantized.onnx",
];

/** The offline copy under `dir` when every file it needs is there, else null. */
export function localEmbedderSource(dir: string = REPO_MODELS_DIR): ModelSource | null {
  const folder = join(dir, OFFLINE_EMBEDDER_ID);
  return FILES.every((f) => existsSync(join(folder, f))) ? offlineEmbedderSource(dir) : null;
}

/** The embedder to load: the offline copy when present, else the hub's default (a download). */
export function nodeEmbedderSource(dir: string = REPO_MODELS_DIR): ModelSource {
  return localEmbedderSource(dir) ?? { id: DEFAULT_MODEL_IDS.embedder };
}
