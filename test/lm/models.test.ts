// The light table of default model ids (src/lm/models.ts, what the app presets without loading
// transformers.js) is the backend's own DEFAULT_MODELS, id for id.
import { describe, expect, it } from "vitest";
import { DEFAULT_MODELS } from "../../src/lm/backend";
import { DEFAULT_MODEL_IDS } from "../../src/lm/models";

describe("the default model ids", () => {
  it("equal the backend's DEFAULT_MODELS, role for role", () => {
    expect(DEFAULT_MODEL_IDS).toEqual(DEFAULT_MODELS);
    expect(Object.keys(DEFAULT_MODEL_IDS).sort()).toEqual(["base", "embedder", "instruct"]);
  });
});
