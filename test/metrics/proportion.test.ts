// Success-rate intervals for 0/1 outcomes against values computed by hand: the Clopper–Pearson
// ends that have closed forms (x = n: lo = (α/2)^(1/n); x = 0: hi = 1 − (α/2)^(1/n); 2 of 3: the
// Beta(2, 2) CDF 3q² − 2q³), Korn–Graubard's effective sample size from a t table, and the
// two properties the Play page needs: an all-success cell has width, and clustering by player
// widens the interval when players differ.
import { describe, expect, it } from "vitest";
import { clopperPearson, clusteredProportion } from "../../src/metrics/proportion";

// two-sided 95 % t quantiles t(0.975, df), from a printed table
const T = { 1: 12.7062, 2: 4.3027, 3: 3.1824, 5: 2.5706, 7: 2.3646 } as const;

const trials = (spec: Record<string, [successes: number, dialogues: number]>) =>
  Object.entries(spec).flatMap(([cluster, [x, n]]) =>
    Array.from({ length: n }, (_, i) => ({ cluster, success: i < x })),
  );
/** n players with one dialogue each, x of them successes. */
const independent = (x: number, n: number) =>
  trials(Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, [i < x ? 1 : 0, 1]])));

describe("clopperPearson", () => {
  it("2 of 3: [0.0943, 0.9916], the lower end solving 3q² − 2q³ = 0.025", () => {
    const [lo, hi] = clopperPearson(2, 3);
    expect(lo).toBeCloseTo(0.094299, 5);
    expect(hi).toBeCloseTo(0.975 ** (1 / 3), 6); // 0.991596
  });

  it("all successes and none: the closed-form ends, never a zero width", () => {
    expect(clopperPearson(5, 5)).toEqual([expect.closeTo(0.025 ** (1 / 5), 6), 1]); // 0.478176
    expect(clopperPearson(0, 4)).toEqual([0, expect.closeTo(1 - 0.025 ** (1 / 4), 6)]); // 0.602365
    expect(clopperPearson(1, 1)).toEqual([expect.closeTo(0.025, 9), 1]);
  });

  it("refuses x outside [0, n]", () => {
    expect(() => clopperPearson(4, 3)).toThrow(/0 ≤ x ≤ n/);
    expect(() => clopperPearson(0, 0)).toThrow(/n > 0/);
  });
});

describe("clusteredProportion", () => {
  it("one dialogue per player: the exact interval on all n", () => {
    const r = clusteredProportion(independent(5, 5));
    expect(r).toMatchObject({ method: "exact", n: 5, successes: 5, clusters: 5, nEffective: 5 });
    expect(r.mean).toBe(1);
    expect(r.lo).toBeCloseTo(0.478176, 5);
    expect(r.hi).toBe(1);
  });

  it("an all-success cell played by 3 players twice each: n = 6 shrunk by (t₅ / t₂)², lo = 0.025^(1/n*)", () => {
    const r = clusteredProportion(trials({ a: [2, 2], b: [2, 2], c: [2, 2] }));
    const nStar = 6 * (T[5] / T[2]) ** 2; // 2.1416: no spread to measure, so deff = 1
    expect(r.method).toBe("clustered");
    expect(r.nEffective).toBeCloseTo(nStar, 3);
    expect(r.lo).toBeCloseTo(0.025 ** (1 / nStar), 3); // 0.1786
    expect(r.hi).toBe(1);
    expect(r.hi - r.lo).toBeGreaterThan(0.5);
  });

  it("one player's dialogues are worth one observation", () => {
    const r = clusteredProportion(trials({ solo: [3, 3] }));
    expect(r).toMatchObject({ method: "clustered", clusters: 1, nEffective: 1, hi: 1 });
    expect(r.lo).toBeCloseTo(0.025, 9);
  });

  it("clustering widens the interval when players differ, at the same 4 of 8", () => {
    const alike = clusteredProportion(trials({ a: [1, 2], b: [1, 2], c: [1, 2], d: [1, 2] }));
    const differ = clusteredProportion(trials({ a: [2, 2], b: [2, 2], c: [0, 2], d: [0, 2] }));
    const exact = clusteredProportion(independent(4, 8));
    // alike: no spread between players, deff ≤ 1, n = 8; differ: cluster-robust variance
    // 4/3 · 4 · 1² / 8² = 1/12 against p(1 − p) = 1/4, so n = 3; both shrunk by (t₇ / t₃)²
    expect(alike.nEffective).toBeCloseTo(8 * (T[7] / T[3]) ** 2, 2); // 4.417
    expect(differ.nEffective).toBeCloseTo(3 * (T[7] / T[3]) ** 2, 2); // 1.656
    expect(exact.nEffective).toBe(8);
    for (const r of [alike, differ, exact]) expect(r.mean).toBe(0.5);
    const width = (r: { lo: number; hi: number }) => r.hi - r.lo;
    expect(width(differ)).toBeGreaterThan(width(alike));
    expect(width(alike)).toBeGreaterThan(width(exact));
    expect(exact.lo).toBeCloseTo(clopperPearson(4, 8)[0], 12);
  });

  it("mixed: single-dialogue players and one who played twice are clustered", () => {
    const r = clusteredProportion(trials({ a: [1, 1], b: [0, 1], c: [1, 2] }));
    expect(r).toMatchObject({ method: "clustered", n: 4, successes: 2, clusters: 3 });
    expect(r.lo).toBeGreaterThan(0);
    expect(r.hi).toBeLessThan(1);
  });

  it("refuses no trials and a bad level", () => {
    expect(() => clusteredProportion([])).toThrow(/no trials/);
    expect(() => clusteredProportion(independent(1, 2), 1)).toThrow(/level/);
  });
});
