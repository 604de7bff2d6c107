// pass^k against hand-computed cases, and the co-trained simulator's rewards (adversarial,
// cooperative, SCOPE's curriculum) on hand-made groups.
import { describe, expect, it } from "vitest";
import { passCurve, passK } from "../../src/metrics/pass-k";
import { simulatorRewards } from "../../src/simulators/cotrained";

describe("pass^k", () => {
  it("is C(c, k) / C(n, k)", () => {
    expect(passK(2, 4, 2)).toBeCloseTo(1 / 6, 15); // C(2,2)/C(4,2) = 1/6
    expect(passK(3, 4, 2)).toBeCloseTo(3 / 6, 15); // C(3,2)/C(4,2)
    expect(passK(4, 4, 4)).toBe(1);
    expect(passK(3, 4, 4)).toBe(0);
    expect(passK(1, 4, 1)).toBe(0.25); // pass^1 is the success rate
    expect(passK(0, 4, 1)).toBe(0);
  });

  it("averages over tasks and falls with k", () => {
    // tasks with 4, 2 and 0 successes in 4 trials: pass^1 = 0.5; pass^2 = (1 + 1/6 + 0)/3; pass^4 = 1/3
    const curve = passCurve([4, 2, 0], 4);
    expect(curve[0]).toBeCloseTo(0.5, 15);
    expect(curve[1]).toBeCloseTo((1 + 1 / 6) / 3, 15);
    expect(curve[3]).toBeCloseTo(1 / 3, 15);
    for (let j = 1; j < 4; j++) expect(curve[j]).toBeLessThanOrEqual(curve[j - 1]);
  });

  it("refuses impossible counts", () => {
    expect(() => passK(5, 4, 2)).toThrow(/0 ≤ c ≤ n/);
    expect(() => passK(2, 4, 5)).toThrow(/1 ≤ k ≤ n/);
    expect(() => passCurve([], 4)).toThrow(/no tasks/);
  });
});

describe("the co-trained simulator's reward", () => {
  const rewards = Float64Array.from([1, 0, 1, 0, 1, 1, 1, 1]); // two groups of 4: success 1/2 and 1
  it("adversarial and cooperative mirror the agent's reward", () => {
    expect(Array.from(simulatorRewards("adversarial", rewards, 4))).toEqual([
      0, 1, 0, 1, 0, 0, 0, 0,
    ]);
    expect(Array.from(simulatorRewards("cooperative", rewards, 4))).toEqual(Array.from(rewards));
  });
  it("curriculum peaks where the agent succeeds half the time (variance 0.25)", () => {
    const r = simulatorRewards("curriculum", rewards, 4);
    expect(Array.from(r.subarray(0, 4))).toEqual([1, 1, 1, 1]); // Var = 0.25
    const solved = Math.exp(-(0.25 ** 2) / 0.02); // Var = 0
    for (const x of r.subarray(4)) expect(x).toBeCloseTo(solved, 15);
    expect(solved).toBeLessThan(0.05);
  });
});
