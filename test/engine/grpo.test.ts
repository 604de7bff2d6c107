// Group-relative advantages and the GRPO update's plumbing (reference model, ratio, groups).
import { describe, it, expect } from "vitest";
import { groupAdvantages, grpoUpdate } from "../../src/engine/grpo";
import { Float64Backend } from "../../src/engine/backends/float64";
import { DEFAULT_OPTIM } from "../../src/engine/backend";
import { initCheckpoint } from "../../src/engine/checkpoint";
import { TINY } from "./fixtures";

describe("groupAdvantages", () => {
  it("standardises rewards within each group of G", () => {
    const a = groupAdvantages([1, 0, 1, 0, 0.5, 0.5, 0.5, 0.5], 4);
    expect(Array.from(a.slice(0, 4))).toEqual([1, -1, 1, -1].map((x) => expect.closeTo(x, 5)));
    expect(Array.from(a.slice(4))).toEqual([0, 0, 0, 0]); // all-equal group: no signal
  });

  it("centres without scaling when scaleByStd is off (Dr. GRPO)", () => {
    const a = groupAdvantages([3, 1], 2, { scaleByStd: false, eps: 0 });
    expect(Array.from(a)).toEqual([1, -1]);
  });

  it("rejects rewards that do not split into groups", () => {
    expect(() => groupAdvantages([1, 2, 3], 2)).toThrow(/groups of 2/);
  });
});

describe("grpoUpdate", () => {
  const cpu = new Float64Backend();
  const T = TINY.context;
  const rows = 4;
  const tokens = Int32Array.from({ length: rows * T }, (_, i) => (i * 5) % TINY.vocab);
  const mask = Float32Array.from({ length: rows * T }, (_, i) => (i % T >= 2 ? 1 : 0));
  const hyper = {
    ...DEFAULT_OPTIM,
    epsLow: 0.2,
    epsHigh: 0.28,
    klCoef: 0.05,
    temperature: 1,
    groupSize: 2,
    updatesPerBatch: 1,
    scaleByStd: true,
  };

  it("raises the log-prob of the better rollout in each group and reports KL to the reference", async () => {
    const ck = initCheckpoint(TINY, 1);
    const policy = cpu.createModel(ck, { capacity: rows });
    const reference = cpu.createModel(ck, { capacity: rows });
    const before = await policy.tokenLogprobs({ rows, tokens });
    const first = await grpoUpdate(policy, reference, { rows, tokens, mask }, [1, 0, 0, 1], hyper);
    expect(first.kl).toBeCloseTo(0, 10); // policy = reference before the first update
    expect(first.rewardMean).toBe(0.5);
    const after = await policy.tokenLogprobs({ rows, tokens });
    const sum = (lp: Float32Array, b: number) =>
      lp.slice(b * T, (b + 1) * T).reduce((s, x) => s + x, 0);
    expect(sum(after, 0)).toBeGreaterThan(sum(before, 0));
    expect(sum(after, 1)).toBeLessThan(sum(before, 1));
    expect(sum(after, 3)).toBeGreaterThan(sum(before, 3));
    const second = await grpoUpdate(policy, reference, { rows, tokens, mask }, [1, 0, 0, 1], hyper);
    expect(second.kl).toBeGreaterThan(0);
  });

  it("takes several clipped steps per batch when updatesPerBatch > 1", async () => {
    const policy = cpu.createModel(initCheckpoint(TINY, 2), { capacity: rows });
    const s = await grpoUpdate(policy, null, { rows, tokens, mask }, [1, 0, 1, 0], {
      ...hyper,
      lr: 0.05,
      updatesPerBatch: 4,
    });
    expect(s.clipFrac).toBe(0); // stats of the first update, where r ≡ 1
    const ck = await policy.checkpoint();
    expect(ck.optimizer?.step).toBe(4);
  });
});
