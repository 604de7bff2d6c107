// Model config validation and checkpoint integrity checks.
import { describe, it, expect } from "vitest";
import { validateModelConfig, parameterCount, DEFAULT_MODEL } from "../../src/engine/config";
import {
  initCheckpoint,
  validateCheckpoint,
  cloneCheckpoint,
  transferables,
} from "../../src/engine/checkpoint";
import { TINY } from "./fixtures";

describe("model config", () => {
  it("accepts the default and counts its parameters", () => {
    expect(validateModelConfig(DEFAULT_MODEL)).toBe(DEFAULT_MODEL);
    // Counted by hand (V = 64, T = 32, d = 64, MLP 4d = 256): embeddings 64·64 + 32·64 = 6,144;
    // a block: LN 2·64, qkv 64·192 + 192, out 64·64 + 64, LN 2·64, MLP 64·256 + 256 + 256·64 + 64
    // = 49,984; final LN 2·64 and head 64·64 + 64 = 4,288. One block 60,416; two 110,400.
    expect(parameterCount(DEFAULT_MODEL)).toBe(60_416);
    expect(parameterCount({ ...DEFAULT_MODEL, layers: 2 })).toBe(110_400);
    // TINY (V = 11, T = 7, d = 8, MLP 16, two blocks): 88 + 56 + 2·(16 + 216 + 72 + 16 + 144 + 136) + 16 + 99 = 1,459
    expect(parameterCount(TINY)).toBe(1_459);
  });

  it.each([
    [{ vocab: 200 }, /model.vocab: 200 is outside \[2, 128\]/],
    [{ context: 65 }, /model.context/],
    [{ d: 30, heads: 4 }, /not a multiple of heads/],
    [{ layers: 1.5 }, /model.layers: expected an integer/],
    [{ prefixLen: 31, context: 32 }, /model.prefixLen/],
    [{ colour: 1 }, /model.colour: unknown key/],
  ])("rejects %j with an error naming the field", (patch, message) => {
    expect(() => validateModelConfig({ ...DEFAULT_MODEL, ...patch } as never)).toThrow(message);
  });
});

describe("checkpoints", () => {
  it("initialise reproducibly per seed with LN gains 1 and biases 0", () => {
    const a = initCheckpoint(TINY, 1);
    expect(initCheckpoint(TINY, 1)).toEqual(a);
    expect(initCheckpoint(TINY, 2).tensors[0].data).not.toEqual(a.tensors[0].data);
    const byName = Object.fromEntries(a.tensors.map((t) => [t.name, t.data]));
    expect(Array.from(byName["l0.ln1.g"]).every((x) => x === 1)).toBe(true);
    expect(Array.from(byName["head.b"]).every((x) => x === 0)).toBe(true);
  });

  it("reject bad files with clear errors", () => {
    const ck = initCheckpoint(TINY, 1);
    expect(() => validateCheckpoint({ ...ck, format: "x" } as never)).toThrow(/not a checkpoint/);
    expect(() => validateCheckpoint({ ...ck, tensors: ck.tensors.slice(1) })).toThrow(/tensors/);
    const wrong = cloneCheckpoint(ck);
    wrong.tensors[2].data = new Float32Array(3);
    expect(() => validateCheckpoint(wrong)).toThrow(/has 3 values/);
    const badOpt = { ...cloneCheckpoint(ck), optimizer: { step: 1, m: [], v: [] } };
    expect(() => validateCheckpoint(badOpt)).toThrow(/optimizer/);
  });

  it("clone deeply and list every buffer for transfer", () => {
    const ck = initCheckpoint(TINY, 1);
    const copy = cloneCheckpoint(ck);
    copy.tensors[0].data[0] = 42;
    expect(ck.tensors[0].data[0]).not.toBe(42);
    expect(transferables(ck)).toHaveLength(ck.tensors.length);
  });
});
