// Summaries over seeds: Student-t intervals against published t quantiles (values from
// scipy.stats.t.ppf, which agree with printed tables) and hand-computed examples.
import { describe, it, expect } from "vitest";
import {
  EXACT_SIGN_FLIP_SEEDS,
  hierarchicalBootstrap,
  MIN_CLAIM_SEEDS,
  pairedDifference,
  signFlipP,
  summarize,
} from "../../src/experiment/stats";
import { heldoutDetail } from "../../src/experiment/experiment";

// Half-width divided by sd/√n recovers the t quantile the interval used.
const impliedT = (s: { hi: number; mean: number; sd: number; n: number }) =>
  (s.hi - s.mean) / (s.sd / Math.sqrt(s.n));

describe("summarize", () => {
  it("uses the Student-t quantile with n − 1 degrees of freedom", () => {
    const cases: [number[], number][] = [
      [[0, 1], 12.706205], // t_{0.975,1}
      [[1, 2, 4], 4.302653], // t_{0.975,2}
      [[3, 1, 4, 1, 5], 2.776445], // t_{0.975,4}
      [[2, 7, 1, 8, 2, 8, 1, 8, 2, 8], 2.262157], // t_{0.975,9}
    ];
    for (const [xs, t] of cases)
      expect(impliedT(summarize(xs)), `n = ${xs.length}`).toBeCloseTo(t, 5);
    expect(impliedT(summarize([1, 2, 4], 0.9))).toBeCloseTo(2.919986, 5); // t_{0.95,2}
  });

  it("matches a hand-computed example", () => {
    // xs = 1, 2, 4: mean 7/3, sd = √(42/9 / 2) = √(7/3), half-width 4.302653·√(7/3)/√3.
    const s = summarize([1, 2, 4]);
    expect(s.n).toBe(3);
    expect(s.mean).toBeCloseTo(7 / 3, 12);
    expect(s.sd).toBeCloseTo(Math.sqrt(7 / 3), 12);
    expect(s.lo).toBeCloseTo(-1.461249700263426, 6);
    expect(s.hi).toBeCloseTo(6.1279163669300925, 6);
    const s90 = summarize([1, 2, 4], 0.9);
    expect(s90.lo).toBeCloseTo(-0.24185189250352135, 6);
    expect(s90.hi).toBeCloseTo(4.908518559170188, 6);
  });

  it("is symmetric around the mean and shift-invariant", () => {
    const xs = [0.31, 0.42, 0.28, 0.39];
    const s = summarize(xs);
    const t = summarize(xs.map((x) => x + 1e6));
    expect(s.mean - s.lo).toBeCloseTo(s.hi - s.mean, 12);
    expect(t.sd).toBeCloseTo(s.sd, 6); // two-pass variance keeps precision far from 0
  });

  it("n = 1 gives a degenerate interval at the mean; n = 0 and bad input throw", () => {
    expect(summarize([0.7])).toEqual({ mean: 0.7, lo: 0.7, hi: 0.7, sd: 0, n: 1 });
    expect(() => summarize([])).toThrow(/n = 0/);
    expect(() => summarize([1, NaN])).toThrow(/value 1/);
    expect(() => summarize([1, 2], 1)).toThrow(/level/);
    expect(() => summarize([1, 2], 0)).toThrow(/level/);
  });

  it("identical values give a zero-width interval", () => {
    const s = summarize([0.5, 0.5, 0.5]);
    expect([s.lo, s.hi, s.sd]).toEqual([0.5, 0.5, 0]);
  });
});

describe("pairedDifference", () => {
  const a = [0.61, 0.55, 0.7, 0.58, 0.66];
  const b = [0.5, 0.52, 0.57, 0.49, 0.6];

  it("summarises a_i − b_i (hand-computed, n = 5, t_{0.975,4} = 2.776445)", () => {
    const d = pairedDifference(a, b);
    expect(d.n).toBe(5);
    expect(d.mean).toBeCloseTo(0.084, 12);
    expect(d.sd).toBeCloseTo(0.03974921382870356, 12);
    expect(d.lo).toBeCloseTo(0.03464483223199559, 6);
    expect(d.hi).toBeCloseTo(0.13335516776800443, 6);
    expect(d.excludesZero).toBe(true);
    const r = pairedDifference(b, a);
    expect(r.mean).toBeCloseTo(-0.084, 12);
    expect(r.excludesZero).toBe(true);
  });

  it("pairing removes shared seed variation that an unpaired view would keep", () => {
    // Seeds differ a lot, condition a is always exactly 0.01 better: paired sd is ~0.
    const base = [0.1, 0.5, 0.9, 0.3];
    const d = pairedDifference(
      base.map((x) => x + 0.01),
      base,
    );
    expect(d.sd).toBeLessThan(1e-12);
    expect(d.excludesZero).toBe(true);
    expect(summarize(base).hi - summarize(base).lo).toBeGreaterThan(0.5);
  });

  it("an interval that straddles 0 does not exclude it", () => {
    const d = pairedDifference([0.5, 0.6, 0.4], [0.55, 0.5, 0.45]);
    expect(d.lo).toBeLessThan(0);
    expect(d.hi).toBeGreaterThan(0);
    expect(d.excludesZero).toBe(false);
  });

  it("n = 1 never claims a difference; unequal lengths and empty input throw", () => {
    const d = pairedDifference([0.9], [0.1]);
    expect(d.lo).toBe(d.hi);
    expect(d.excludesZero).toBe(false);
    expect(() => pairedDifference([1, 2, 3], [1, 2])).toThrow(/3 values and b has 2/);
    expect(() => pairedDifference([], [])).toThrow(/n = 0/);
  });

  it("bounds cut a summary's interval, never the mean or the spread; a paired difference is never cut", () => {
    const xs = [0.97, 0.8, 1]; // a success rate near its ceiling: t reaches past 1
    const free = summarize(xs);
    const cut = summarize(xs, 0.95, [0, 1]);
    expect(free.hi).toBeGreaterThan(1);
    expect(cut.hi).toBe(1);
    expect(cut.lo).toBe(free.lo);
    expect([cut.mean, cut.sd]).toEqual([free.mean, free.sd]);
    const entropy = summarize([0.05, 0.9, 0.1], 0.95, [0, Infinity]);
    expect(entropy.lo).toBe(0);
    expect(pairedDifference([1, 0.9, 1], [0.1, 0.2, 0.05]).hi).toBeGreaterThan(1);
  });

  it(`claims no difference under ${MIN_CLAIM_SEEDS} seeds, however far the interval is from 0`, () => {
    const three = pairedDifference([1, 0.9, 1], [0.1, 0.2, 0.05]);
    expect(three.lo).toBeGreaterThan(0);
    expect(three.excludesZero).toBe(false);
    expect(three.p).toBe(0.25); // the smallest p three seeds can give
    const four = pairedDifference([1, 0.9, 1, 0.95], [0.1, 0.2, 0.05, 0.1]);
    expect(four.excludesZero).toBe(true);
    expect(four.p).toBe(0.125);
  });
});

/** The sign-flip p by brute force: every pattern as a bit mask, summed from scratch. */
function bruteForceP(d: number[]): number {
  const observed = Math.abs(d.reduce((a, b) => a + b, 0));
  let count = 0;
  for (let m = 0; m < 2 ** d.length; m++) {
    let sum = 0;
    for (let i = 0; i < d.length; i++) sum += (m >> i) & 1 ? -d[i] : d[i];
    if (Math.abs(sum) >= observed - 1e-9) count++;
  }
  return count / 2 ** d.length;
}

describe("signFlipP", () => {
  it("counts the sign patterns at least as extreme as the observed one (hand-computed)", () => {
    // ±1 ±2 ±3 over the 8 patterns: 6, 4, 2, 0, 0, −2, −4, −6; |sum| ≥ 6 for two of them
    expect(signFlipP([1, 2, 3])).toBe(2 / 8);
    // 1 − 2 + 3 = 2: |sum| ≥ 2 for 6 of 8 (all but the two zeros)
    expect(signFlipP([1, -2, 3])).toBe(6 / 8);
    expect(signFlipP([0, 0])).toBe(1);
    expect(signFlipP([5])).toBe(1);
  });

  it("equals brute-force enumeration on random small cases", () => {
    let state = 7;
    const next = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 0.8;
    for (let n = 2; n <= 12; n++) {
      const d = Array.from({ length: n }, next).map((x) => Math.round(x * 100) / 100);
      expect(signFlipP(d), d.join(" ")).toBeCloseTo(bruteForceP(d), 12);
    }
  });

  it(`beyond ${EXACT_SIGN_FLIP_SEEDS} seeds, random patterns from a fixed seed come within 0.003 of the exact value`, () => {
    const d = Array.from({ length: 22 }, (_, i) => Math.sin(i + 1) + 0.25);
    const exact = bruteForceP(d);
    const sampled = signFlipP(d);
    expect(Math.abs(sampled - exact)).toBeLessThan(0.003);
    expect(signFlipP(d)).toBe(sampled); // the same data give the same p
  });

  it("refuses empty or non-finite input", () => {
    expect(() => signFlipP([])).toThrow(/n = 0/);
    expect(() => signFlipP([1, NaN])).toThrow(/value 1 is NaN/);
  });
});

describe("hierarchicalBootstrap", () => {
  it("gives a point interval for constant differences, and is the same on every call", () => {
    const d = [
      [0.1, 0.1],
      [0.1, 0.1, 0.1],
    ];
    const b = hierarchicalBootstrap(d);
    expect(b.lo).toBeCloseTo(0.1, 12);
    expect(b.hi).toBeCloseTo(0.1, 12);
    expect(
      hierarchicalBootstrap([
        [1, 2],
        [3, 5],
        [0, 4],
      ]),
    ).toEqual(
      hierarchicalBootstrap([
        [1, 2],
        [3, 5],
        [0, 4],
      ]),
    );
  });

  it("widens with the members' spread around the same seed means, and brackets the mean", () => {
    const seedMeans = [0.02, 0.08, 0.05, 0.11, 0.04, 0.07];
    const flat = hierarchicalBootstrap(seedMeans.map((m) => [m, m, m, m]));
    const spread = hierarchicalBootstrap(
      seedMeans.map((m) => [m - 0.2, m + 0.2, m - 0.1, m + 0.1]),
    );
    const mean = seedMeans.reduce((a, b) => a + b, 0) / seedMeans.length;
    for (const b of [flat, spread]) {
      expect(b.lo).toBeLessThan(mean);
      expect(b.hi).toBeGreaterThan(mean);
    }
    expect(spread.hi - spread.lo).toBeGreaterThan(2 * (flat.hi - flat.lo));
  });

  it("refuses no seeds, a seed without members, and non-finite values", () => {
    expect(() => hierarchicalBootstrap([])).toThrow(/no seeds/);
    expect(() => hierarchicalBootstrap([[1], []])).toThrow(/seed 1 has no members/);
    expect(() => hierarchicalBootstrap([[1, NaN]])).toThrow(/seed 0 member 1 is NaN/);
  });
});

describe("heldoutDetail", () => {
  const seeds = (rows: Record<string, number>[]) =>
    rows.map((heldoutByMember, seed) => ({ seed, heldoutByMember }));
  const a = seeds([
    { x: 0.5, y: 0.3 },
    { x: 0.6, y: 0.2 },
    { x: 0.4, y: 0.4 },
  ]);
  const b = seeds([
    { x: 0.4, y: 0.3 },
    { x: 0.5, y: 0.1 },
    { x: 0.2, y: 0.3 },
  ]);

  it("pairs each member over seeds, and bootstraps the pooled difference", () => {
    const { byMember, bootstrap } = heldoutDetail(a, b);
    expect(byMember!.x).toEqual(pairedDifference([0.5, 0.6, 0.4], [0.4, 0.5, 0.2]));
    expect(byMember!.y).toEqual(pairedDifference([0.3, 0.2, 0.4], [0.3, 0.1, 0.3]));
    const pooled = (byMember!.x.mean + byMember!.y.mean) / 2;
    expect(bootstrap!.lo).toBeLessThanOrEqual(pooled);
    expect(bootstrap!.hi).toBeGreaterThanOrEqual(pooled);
  });

  it("gives nothing when the seeds' members or order differ", () => {
    expect(heldoutDetail(a, seeds([{ x: 0.1 }, { x: 0.1 }, { x: 0.1 }]))).toEqual({});
    expect(heldoutDetail(a, [...b].reverse())).toEqual({});
  });
});
