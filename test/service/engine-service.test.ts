// The worker's service object, run directly in Node: models by id, checkpoints, seeded
// sampling, jobs with throttled progress and cancellation.
import { describe, it, expect } from "vitest";
import { EngineService, CancelledError } from "../../src/service/engine-service";
import { throttle } from "../../src/service/throttle";
import { initCheckpoint } from "../../src/engine/checkpoint";
import { TINY } from "../engine/fixtures";

describe("EngineService", () => {
  it("needs init before use and refuses a second backend", async () => {
    const s = new EngineService();
    expect(() => s.createModel(initCheckpoint(TINY, 0), { capacity: 2 })).toThrow(/init/);
    expect((await s.init("cpu")).name).toBe("cpu");
    await expect(s.init("wasm")).rejects.toThrow(/already runs cpu/);
  });

  it("round-trips a checkpoint and samples reproducibly from a seed", async () => {
    const s = new EngineService();
    await s.init("wasm");
    const ck = initCheckpoint(TINY, 3);
    const id = s.createModel(ck, { capacity: 4 });
    expect(await s.checkpoint(id)).toMatchObject({ config: ck.config, tensors: ck.tensors });
    const tokens = new Int32Array(4 * TINY.context);
    const pos = new Int32Array(4).fill(1);
    const [a, b, c] = [await s.sampleNext(id, tokens, 4, pos, 7), await s.sampleNext(id, tokens, 4, pos, 7), await s.sampleNext(id, tokens, 4, pos, 8)];
    expect(b).toEqual(a);
    expect(Array.from(a.logp).every((x) => x < 0)).toBe(true);
    expect(c.tokens).not.toEqual(a.tokens); // 4 draws from a ~uniform 11-way distribution
    s.disposeModel(id);
    expect(() => s.checkpoint(id)).toThrow(/no model/);
  });

  it("reports throttled progress, flushes the last step, and can be cancelled", async () => {
    const s = new EngineService();
    await s.init("wasm");
    const seen: number[] = [];
    const r = await s.runPatternTask({ steps: 12, evalEvery: 100 }, { jobId: "a", progressMs: 0 }, (p) => seen.push(p.step));
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(r.steps).toBe(12);

    const slow: number[] = [];
    await s.runPatternTask({ steps: 12, evalEvery: 100 }, { jobId: "b", progressMs: 1e9 }, (p) => slow.push(p.step));
    expect(slow).toEqual([1, 12]); // first immediately, the rest throttled, the last flushed

    const running = s.runPatternTask({ steps: 10_000 }, { jobId: "c", progressMs: 0 }, (p) => {
      if (p.step >= 3) s.cancel("c");
    });
    await expect(running).rejects.toBeInstanceOf(CancelledError);
    expect(s.cancel("c")).toBe(false); // the job is gone
  });
});

describe("throttle", () => {
  it("passes the first call, holds the rest within the interval, flushes the latest", () => {
    let now = 0;
    const got: number[] = [];
    const t = throttle(
      (v: number) => got.push(v),
      100,
      () => now,
    );
    t(1);
    now = 50;
    t(2);
    t(3);
    expect(got).toEqual([1]);
    now = 120;
    t(4);
    expect(got).toEqual([1, 4]);
    t(5);
    t.flush();
    t.flush();
    expect(got).toEqual([1, 4, 5]);
  });
});
