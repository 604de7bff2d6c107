// The lm tier's default models by role, as plain ids: the app shows and presets them without
// loading backend.ts, and transformers.js with it, which lives in the LM worker only (this module
// imports backend.ts for its type alone, which the build erases). Typed as backend.ts's own
// DEFAULT_MODELS, so the type checker fails if the two tables ever differ; test/lm/models.test.ts
// compares the values too.
import type { DEFAULT_MODELS } from "./backend";

export const DEFAULT_MODEL_IDS: typeof DEFAULT_MODELS = {
  base: "HuggingFaceTB/SmolLM2-135M",
  instruct: "HuggingFaceTB/SmolLM2-135M-Instruct",
  embedder: "Xenova/all-MiniLM-L6-v2",
};
