// The LM lab's offline sentence embedder (all-MiniLM-L6-v2, int8 ONNX from PyPI wheels, laid out
// by scripts/offline-embedder.sh in public/models/) through the lm tier in Node: it is found, loads
// with remote downloads off and without one network request, and gives real sentence embeddings —
// paraphrases closer than unrelated sentences. Without the copy these tests are skipped, saying
// so, except where COLLAPSE_LAB_REQUIRE_EMBEDDER=1 (CI) makes that a failure.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "@huggingface/transformers";
import { TransformersEmbeddingModel, type LoadProgress } from "../../src/lm/backend";
import { DEFAULT_MODEL_IDS } from "../../src/lm/models";
import { OFFLINE_EMBEDDER_ID, isDefaultEmbedder } from "../../src/lm/offline-embedder";
import {
  REPO_MODELS_DIR,
  localEmbedderSource,
  nodeEmbedderSource,
} from "../../src/lm/node-embedder";

const src = localEmbedderSource();
if (!src) {
  if (process.env.COLLAPSE_LAB_REQUIRE_EMBEDDER === "1")
    throw new Error(
      `the offline embedder is not in ${REPO_MODELS_DIR} (COLLAPSE_LAB_REQUIRE_EMBEDDER=1): run bash scripts/offline-embedder.sh`,
    );
  console.warn(
    `the offline embedder is not in ${REPO_MODELS_DIR}: its tests are skipped (bash scripts/offline-embedder.sh installs it)`,
  );
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

describe("finding the offline embedder", () => {
  it("stands in for the hub's default only where its files are all there", () => {
    const empty = mkdtempSync(join(tmpdir(), "collapse-lab-no-embedder-"));
    try {
      expect(localEmbedderSource(empty)).toBeNull();
      expect(nodeEmbedderSource(empty)).toEqual({ id: DEFAULT_MODEL_IDS.embedder });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    expect(isDefaultEmbedder(DEFAULT_MODEL_IDS.embedder)).toBe(true);
    expect(isDefaultEmbedder("sentence-transformers/all-mpnet-base-v2")).toBe(false);
  });
});

describe.skipIf(!src)("the offline embedder (all-MiniLM-L6-v2, int8)", () => {
  let model: TransformersEmbeddingModel;
  const progress: LoadProgress[] = [];
  const fetched: string[] = [];
  const realFetch = globalThis.fetch;

  beforeAll(async () => {
    expect(nodeEmbedderSource()).toEqual(src);
    // any request to the network during the load is recorded and refused
    globalThis.fetch = (input: string | URL | Request) => {
      fetched.push(String(input instanceof Request ? input.url : input));
      return Promise.reject(new TypeError("fetch failed: offline in this test"));
    };
    try {
      model = await TransformersEmbeddingModel.load(src!, { onProgress: (p) => progress.push(p) });
    } finally {
      globalThis.fetch = realFetch;
    }
  }, 120_000); // a 23 MB model on a busy machine
  afterAll(() => model?.dispose());

  it("loads from the local folder with remote downloads off, and fetches nothing", () => {
    expect(fetched).toEqual([]);
    expect(env.allowRemoteModels).toBe(false);
    expect(model.info).toMatchObject({
      id: OFFLINE_EMBEDDER_ID,
      device: "cpu",
      contextLength: 512,
    });
    const files = progress.flatMap((p) => (p.kind === "file" ? [p.file] : []));
    expect(files).toContain("onnx/model_quantized.onnx");
    expect(files).toContain("tokenizer.json");
  });

  it("gives unit vectors in which paraphrases are closer than unrelated sentences", async () => {
    const [give, giveToo, train, no, noToo] = await model.embed([
      "I would be happy to donate five dollars to the children's charity.",
      "Sure, I'll give $5 to help the kids.",
      "The train to Berlin leaves at nine in the morning.",
      "No, I don't trust charities with my money.",
      "I'm not giving anything; these organisations waste donations.",
    ]);
    for (const v of [give, giveToo, train, no, noToo]) {
      expect(v.length).toBe(384);
      expect(dot(v, v)).toBeCloseTo(1, 4);
    }
    expect(dot(give, giveToo)).toBeGreaterThan(dot(give, train));
    expect(dot(no, noToo)).toBeGreaterThan(dot(no, train));
    expect(dot(give, giveToo)).toBeGreaterThan(0.5);
    expect(dot(give, train)).toBeLessThan(0.3);
  });
});
