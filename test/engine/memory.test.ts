// Memory over 1,000 training steps of the jax-js wasm engine. jax-js keeps tensors in one
// WebAssembly.Memory that only grows (its allocator reuses freed blocks), so a leaked array per
// step shows up as steady growth of that memory; the JS heap is measured after a full GC.
import { describe, it, expect } from "vitest";
import { initCheckpoint } from "../../src/engine/checkpoint";
import { DEFAULT_OPTIM, type TrainBatch } from "../../src/engine/backend";
import { Rng } from "../../src/engine/random";
import { POLICY } from "./fixtures";

// Record every wasm memory created from here on (jax-js creates its own when the backend starts).
const memories: WebAssembly.Memory[] = [];
const NativeMemory = WebAssembly.Memory;
class RecordedMemory extends NativeMemory {
  constructor(desc: WebAssembly.MemoryDescriptor) {
    super(desc);
    memories.push(this);
  }
}

describe("jax-js wasm memory", () => {
  it("stays flat over 1,000 training steps", async () => {
    (WebAssembly as { Memory: typeof WebAssembly.Memory }).Memory = RecordedMemory;
    const { JaxBackend } = await import("../../src/engine/backends/jax");
    const jax = await JaxBackend.create("wasm");
    (WebAssembly as { Memory: typeof WebAssembly.Memory }).Memory = NativeMemory;
    expect(memories.length, "jax-js created its wasm memory after the hook").toBeGreaterThan(0);
    const gc = (globalThis as { gc?: () => void }).gc;
    expect(gc, "the node project runs with --expose-gc").toBeTypeOf("function");

    const config = {
      vocab: 32,
      context: 16,
      d: 32,
      layers: 2,
      heads: 4,
      mlpRatio: 4,
      prefixLen: 0,
    };
    const rows = 16;
    const model = jax.createModel(initCheckpoint(config, 0), { capacity: rows });
    const rng = Rng.seed(1);
    const tokens = Int32Array.from({ length: rows * config.context }, () => rng.int(config.vocab));
    const batch: TrainBatch = { rows, tokens, mask: new Float32Array(tokens.length).fill(1) };
    const h = { ...DEFAULT_OPTIM, ...POLICY, klCoef: 0 };
    const wasmMB: number[] = [];
    const heapMB: number[] = [];
    for (let s = 1; s <= 1000; s++) {
      await model.trainStep(batch, h);
      if (s % 100 === 0) {
        await model.tokenLogprobs(batch);
        gc!();
        wasmMB.push(memories.reduce((n, m) => n + m.buffer.byteLength, 0) / 2 ** 20);
        heapMB.push(process.memoryUsage().heapUsed / 2 ** 20);
      }
    }
    const ck = await model.checkpoint();
    model.dispose();
    const paramsMB = ck.tensors.reduce((n, t) => n + t.data.byteLength, 0) / 2 ** 20;
    const growth = (xs: number[]) => xs[xs.length - 1] - xs[0];
    console.info(
      `wasm memory after steps 100…1000 (MB): ${wasmMB.map((x) => x.toFixed(2)).join(" ")}\n` +
        `JS heap after GC (MB): ${heapMB.map((x) => x.toFixed(1)).join(" ")}\n` +
        `growth: wasm ${growth(wasmMB).toFixed(2)} MB, heap ${growth(heapMB).toFixed(2)} MB; one parameter copy is ${paramsMB.toFixed(3)} MB`,
    );
    expect(wasmMB[0]).toBeGreaterThan(paramsMB); // the hook sees the memory that holds the tensors
    // leaking one parameter copy per step would add 900 × paramsMB over the measured window
    expect(growth(wasmMB)).toBeLessThan(0.05 * 900 * paramsMB);
    expect(growth(heapMB)).toBeLessThan(5);
  });
});
