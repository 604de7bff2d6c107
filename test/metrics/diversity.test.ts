// Diversity metrics: entropy / KL against closed forms, distinct-n on hand-counted n-grams,
// and SCOPE's ≥ 5-sample mode coverage for one simulator and for a union.
import { describe, it, expect } from "vitest";
import {
  entropy,
  klDivergence,
  distinctN,
  modeCoverage,
  unionCoverage,
} from "../../src/metrics/diversity";

describe("entropy", () => {
  it("matches closed forms in nats", () => {
    expect(entropy([1, 0, 0])).toBe(0);
    expect(entropy([0.5, 0.5])).toBeCloseTo(Math.log(2), 14);
    expect(entropy(new Array(7).fill(1 / 7))).toBeCloseTo(Math.log(7), 14);
    expect(entropy([0.25, 0.75])).toBeCloseTo(-(0.25 * Math.log(0.25) + 0.75 * Math.log(0.75)), 14);
  });

  it("normalises counts and rejects bad input", () => {
    expect(entropy([3, 1])).toBeCloseTo(entropy([0.75, 0.25]), 14);
    expect(entropy(Float64Array.of(2, 2, 0))).toBeCloseTo(Math.log(2), 14);
    expect(() => entropy([0, 0])).toThrow(/all entries are 0/);
    expect(() => entropy([0.5, -0.1])).toThrow(/entry 1/);
    expect(() => entropy([0.5, NaN])).toThrow(/entry 1/);
  });
});

describe("klDivergence", () => {
  it("matches a hand computation and is 0 for equal distributions", () => {
    const p = [0.5, 0.5];
    const q = [0.9, 0.1];
    expect(klDivergence(p, q)).toBeCloseTo(
      0.5 * Math.log(0.5 / 0.9) + 0.5 * Math.log(0.5 / 0.1),
      14,
    );
    expect(klDivergence(q, q)).toBe(0);
    expect(klDivergence([2, 6], [1, 3])).toBe(0); // normalised
  });

  it("is Infinity where q = 0 but p > 0, and ignores p = 0 terms", () => {
    expect(klDivergence([0.5, 0.5], [1, 0])).toBe(Infinity);
    expect(klDivergence([1, 0], [0.5, 0.5])).toBeCloseTo(Math.log(2), 14);
    expect(() => klDivergence([1, 0], [1])).toThrow(/2 entries and q has 1/);
  });
});

describe("distinctN", () => {
  const seqs = [
    [1, 2, 3, 1, 2],
    [1, 2, 4],
  ];
  it("counts distinct over total n-grams across sequences", () => {
    expect(distinctN(seqs, 1)).toBeCloseTo(4 / 8, 14); // unigrams 1,2,3,4 of 8 tokens
    expect(distinctN(seqs, 2)).toBeCloseTo(4 / 6, 14); // 12 23 31 12 | 12 24 → {12,23,31,24}
    expect(distinctN(seqs, 3)).toBeCloseTo(4 / 4, 14); // 123 231 312 | 124
  });

  it("keeps multi-digit tokens apart and handles short or no sequences", () => {
    expect(
      distinctN(
        [
          [1, 12],
          [11, 2],
        ],
        2,
      ),
    ).toBe(1); // "1,12" ≠ "11,2"
    expect(distinctN([[5]], 2)).toBe(0);
    expect(distinctN([], 1)).toBe(0);
    expect(distinctN([[7, 7, 7, 7]], 2)).toBeCloseTo(1 / 3, 14); // a collapsed policy repeats itself
    expect(() => distinctN(seqs, 0)).toThrow(/positive integer/);
  });
});

describe("mode coverage", () => {
  const modes = ["a", "b", "c", "d"];
  const rep = (m: string, k: number) => new Array<string>(k).fill(m);

  it("covers a mode at ≥ minCount samples (SCOPE: 5)", () => {
    const cov = modeCoverage(
      [...rep("a", 5), ...rep("b", 4), ...rep("c", 20), ...rep("zz", 9)],
      modes,
    );
    expect(cov.covered).toBe(0.5);
    expect(cov.coveredModes).toEqual(["a", "c"]);
    expect(cov.counts.get("b")).toBe(4);
    expect(cov.outside).toBe(9); // "zz" is not a mode of the universe and covers nothing
    expect(modeCoverage(rep("b", 4), modes, 4).coveredModes).toEqual(["b"]);
    expect(modeCoverage([], modes).covered).toBe(0);
  });

  it("unions several simulators by pooling (default) or by SCOPE's per-model rule", () => {
    const s1 = [...rep("a", 6), ...rep("c", 3)];
    const s2 = [...rep("b", 5), ...rep("c", 3)];
    const s3 = [...rep("a", 2)];
    const pooled = unionCoverage([s1, s2, s3], modes);
    expect(pooled.coveredModes).toEqual(["a", "b", "c"]); // c: 3 + 3 pooled
    expect(pooled.covered).toBe(0.75);
    const any = unionCoverage([s1, s2, s3], modes, 5, { rule: "any" });
    expect(any.coveredModes).toEqual(["a", "b"]); // no single model has 5 in c
    expect(any.counts.get("c")).toBe(6);
    // The union never covers less than any member.
    for (const s of [s1, s2, s3])
      expect(pooled.covered).toBeGreaterThanOrEqual(modeCoverage(s, modes).covered);
  });

  it("rejects a bad universe or minCount", () => {
    expect(() => modeCoverage(["a"], [])).toThrow(/empty/);
    expect(() => modeCoverage(["a"], ["a", "a"])).toThrow(/twice/);
    expect(() => modeCoverage(["a"], ["a"], 0)).toThrow(/minCount/);
    expect(() => unionCoverage([["a"]], ["a"], 2.5)).toThrow(/minCount/);
  });
});
