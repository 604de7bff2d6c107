// The LM lab's sentence embedder as it ships offline: all-MiniLM-L6-v2 with int8 weights, laid out
// in Hugging Face layout by scripts/offline-embedder.sh under the app's models/ folder
// (public/models/all-MiniLM-L6-v2/), and loaded from there with remote downloads off. It stands in
// for the hub's Xenova/all-MiniLM-L6-v2 (the same model, int8 too on wasm) wherever that default is
// asked for and the copy is there: in Node (node-embedder.ts) and in the app (lib/lm-host.ts).
// Plain data only: the page imports this module without transformers.js.
import type { ModelSource } from "./backend";
import { DEFAULT_MODEL_IDS } from "./models";

/** The copy's folder name under the models folder, and the id a loaded copy reports. */
export const OFFLINE_EMBEDDER_ID = "all-MiniLM-L6-v2";

/** The folder beside the app that holds local models (Vite serves public/ at the app's base). */
export const MODELS_FOLDER = "models/";

/** The offline copy under `root`: a folder (Node) or a URL path (browser, "/app/models/") holding all-MiniLM-L6-v2/. */
export function offlineEmbedderSource(root: string): ModelSource {
  // the copy holds the int8 weights only (onnx/model_quantized.onnx), whichever the device
  return { id: OFFLINE_EMBEDDER_ID, localModelPath: root, allowRemote: false, dtype: "q8" };
}

/** Whether an embedder id asks for the model the offline copy stands in for. */
export function isDefaultEmbedder(id: string): boolean {
  const t = id.trim();
  return t === DEFAULT_MODEL_IDS.embedder || t === OFFLINE_EMBEDDER_ID;
}
