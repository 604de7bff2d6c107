// The toy-model export round-trips: an engine checkpoint written as ONNX (Hugging Face layout)
// and run by onnxruntime-web (wasm, in Node; the copy transformers.js resolves) gives the float64 reference backend's logits within
// 1e-4: full sequences, token by token through the KV cache, and left-padded rows. Loaded by
// transformers.js from disk, its greedy continuation equals the reference's.
import { describe, it, expect, beforeAll, onTestFinished } from "vitest";
import { join } from "node:path";
import { AutoModelForCausalLM, Tensor, env } from "@huggingface/transformers";
import { exportCheckpoint } from "../../src/lm/onnx-export";
import { referenceForward } from "../../src/engine/backends/float64";
import type { ModelConfig } from "../../src/engine/config";
import type { Checkpoint } from "../../src/engine/checkpoint";
import { Rng } from "../../src/engine/random";
import { writeHfFolder } from "../../src/lm/tiny/write-files";
import { CONFIGS, randomCheckpoint, toParams } from "../engine/fixtures";
import { MODELS_DIR } from "./fixtures";
import { requireTransformersOrt } from "../../scripts/transformers-ort.mjs";
import type { InferenceSession, Tensor as OrtTensor } from "onnxruntime-common";

const ort = requireTransformersOrt();

const CASES: [string, ModelConfig][] = [
  ...CONFIGS,
  [
    "prefix + 4 heads",
    { vocab: 20, context: 12, d: 16, heads: 4, layers: 1, mlpRatio: 4, prefixLen: 3 },
  ],
];

beforeAll(() => {
  ort.env.wasm.numThreads = 1; // no worker threads in the test process
});

type Feeds = Record<string, OrtTensor>;
const i64 = (xs: number[], dims: number[]) =>
  new ort.Tensor("int64", BigInt64Array.from(xs, BigInt), dims);

function emptyPast(config: ModelConfig, rows: number): Feeds {
  const feeds: Feeds = {};
  const hd = config.d / config.heads;
  for (let l = 0; l < config.layers; l++)
    for (const kv of ["key", "value"])
      feeds[`past_key_values.${l}.${kv}`] = new ort.Tensor("float32", new Float32Array(0), [
        rows,
        config.heads,
        0,
        hd,
      ]);
  return feeds;
}

function maxDiff(got: ArrayLike<number>, want: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < want.length; i++) m = Math.max(m, Math.abs(got[i] - want[i]));
  return m;
}

async function session(ck: Checkpoint): Promise<InferenceSession> {
  return ort.InferenceSession.create(exportCheckpoint(ck)["onnx/model.onnx"] as Uint8Array, {
    executionProviders: ["wasm"],
  });
}

function randomRows(config: ModelConfig, rows: number, seed: number): number[] {
  const rng = Rng.seed(seed);
  return Array.from({ length: rows * config.context }, () => rng.int(config.vocab));
}

describe.each(CASES)("engine export (%s) under onnxruntime-web", (_, config) => {
  const ck = randomCheckpoint(config, 5);
  const T = config.context;
  const V = config.vocab;

  it("full-sequence logits equal the reference backend within 1e-4", async () => {
    const rows = 3;
    const tokens = randomRows(config, rows, 1);
    const s = await session(ck);
    const out = await s.run({
      input_ids: i64(tokens, [rows, T]),
      attention_mask: i64(new Array(rows * T).fill(1), [rows, T]),
      position_ids: i64(
        Array.from({ length: rows * T }, (_, i) => i % T),
        [rows, T],
      ),
      ...emptyPast(config, rows),
    });
    const want = referenceForward(config, toParams(ck), Int32Array.from(tokens), rows);
    expect(out.logits.dims).toEqual([rows, T, V]);
    expect(maxDiff(out.logits.data as Float32Array, want)).toBeLessThan(1e-4);
    expect(out["present.0.key"].dims).toEqual([rows, config.heads, T, config.d / config.heads]);
  });

  it("token-by-token decoding through the KV cache gives the same logits", async () => {
    const tokens = randomRows(config, 1, 2);
    const want = referenceForward(config, toParams(ck), Int32Array.from(tokens), 1);
    const s = await session(ck);
    let past = emptyPast(config, 1);
    const split = 4; // a 4-token prefill, then one token at a time
    for (let t = 0; t < T;) {
      const n = t === 0 ? split : 1;
      const out = await s.run({
        input_ids: i64(tokens.slice(t, t + n), [1, n]),
        attention_mask: i64(new Array(t + n).fill(1), [1, t + n]),
        position_ids: i64(
          Array.from({ length: n }, (_, i) => t + i),
          [1, n],
        ),
        ...past,
      });
      expect(
        maxDiff(out.logits.data as Float32Array, want.subarray(t * V, (t + n) * V)),
      ).toBeLessThan(1e-4);
      past = {};
      for (let l = 0; l < config.layers; l++)
        for (const kv of ["key", "value"])
          past[`past_key_values.${l}.${kv}`] = out[`present.${l}.${kv}`];
      t += n;
    }
  });

  it("a left-padded row gives the unpadded row's logits on its real tokens", async () => {
    const pad = 3;
    const real = randomRows(config, 1, 3).slice(0, T - pad);
    const s = await session(ck);
    const out = await s.run({
      input_ids: i64([...new Array(pad).fill(0), ...real], [1, T]),
      attention_mask: i64([...new Array(pad).fill(0), ...new Array(T - pad).fill(1)], [1, T]),
      position_ids: i64([...new Array(pad).fill(1), ...real.map((_, i) => i)], [1, T]), // transformers.js's convention
      ...emptyPast(config, 1),
    });
    const padded = new Int32Array(T);
    padded.set(real);
    const want = referenceForward(config, toParams(ck), padded, 1).subarray(0, (T - pad) * V);
    const got = (out.logits.data as Float32Array).subarray(pad * V);
    expect(Array.from(got).every(Number.isFinite)).toBe(true);
    expect(maxDiff(got, want)).toBeLessThan(1e-4);
  });

  it("writes Hugging Face layout with the engine config alongside", () => {
    const files = exportCheckpoint(ck, { eosTokenId: 1 });
    expect(Object.keys(files).sort()).toEqual([
      "config.json",
      "generation_config.json",
      "onnx/model.onnx",
    ]);
    const cfg = JSON.parse(files["config.json"] as string);
    expect(cfg).toMatchObject({
      model_type: "gpt2",
      vocab_size: V,
      n_positions: T,
      n_embd: config.d,
      n_layer: config.layers,
      n_head: config.heads,
      eos_token_id: 1,
    });
    expect(cfg["collapse-lab"].config).toEqual(config);
  });
});

describe("engine export under transformers.js", () => {
  it("greedy generation from input ids equals the reference's argmax decoding", async () => {
    const config = CONFIGS[0][1];
    const ck = randomCheckpoint(config, 9);
    await writeHfFolder(join(MODELS_DIR, "engine-export"), exportCheckpoint(ck));
    const saved = { allowRemoteModels: env.allowRemoteModels, localModelPath: env.localModelPath }; // transformers.js's env is global
    env.allowRemoteModels = false;
    env.localModelPath = MODELS_DIR + "/";
    onTestFinished(() => void Object.assign(env, saved));
    const model = await AutoModelForCausalLM.from_pretrained("engine-export");
    try {
      const prompt = [3, 1, 4];
      const out = (await model.generate({
        inputs: new Tensor("int64", BigInt64Array.from(prompt, BigInt), [1, prompt.length]),
        max_new_tokens: config.context - prompt.length,
        do_sample: false,
      } as never)) as Tensor;
      const got = Array.from(out.data as BigInt64Array, Number);
      // reference: argmax of the float64 logits, one token at a time
      const seq = [...prompt];
      let margin = Infinity;
      while (seq.length < config.context) {
        const tokens = new Int32Array(config.context);
        tokens.set(seq);
        const row = referenceForward(config, toParams(ck), tokens, 1).subarray(
          (seq.length - 1) * config.vocab,
          seq.length * config.vocab,
        );
        const sorted = Array.from(row).sort((a, b) => b - a);
        margin = Math.min(margin, sorted[0] - sorted[1]);
        seq.push(row.indexOf(sorted[0]));
      }
      expect(margin).toBeGreaterThan(1e-4);
      expect(got).toEqual(seq);
    } finally {
      await model.dispose();
    }
  });
});
