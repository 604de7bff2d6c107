// Summaries over seeds (docs/architecture.md#metrics): the mean of a metric with a Student-t confidence interval,
// and paired differences between two conditions run on the same seeds, with a sign-flip
// permutation p-value beside the interval. Seeds are few (3–20), so the t interval, not a normal
// one; the t quantile comes from stdlib (a port of Boost's incomplete-beta inverse) rather than a
// hand-written special function.
import tQuantile from "@stdlib/stats-base-dists-t-quantile";

export interface Summary {
  mean: number;
  lo: number; // lower end of the `level` confidence interval
  hi: number; // upper end
  sd: number; // sample standard deviation (n − 1 in the denominator)
  n: number;
}

export interface PairedSummary extends Summary {
  /**
   * The interval lies strictly on one side of 0, with at least MIN_CLAIM_SEEDS seeds: the two
   * conditions differ at this level. Fewer seeds never make that claim, whatever the interval.
   */
  excludesZero: boolean;
  /**
   * Two-sided sign-flip permutation p-value of the mean difference over seeds (signFlipP); absent
   * from reports written before it was computed (report-schema.ts fills it in on reading).
   */
  p?: number;
}

/** Fewer seeds than this never read as "excludes 0": at n = 3 a sign-flip test cannot go below p = 0.25. */
export const MIN_CLAIM_SEEDS = 4;

/** Up to this many seeds the sign-flip p-value enumerates all 2^n sign patterns. */
export const EXACT_SIGN_FLIP_SEEDS = 20;

/**
 * Mean of `xs` with a two-sided Student-t confidence interval at `level`:
 * mean ± t_{(1+level)/2, n−1} · sd / √n, intersected with `bounds`, the range the metric can take
 * (a success rate in [0, 1], an entropy ≥ 0): with 3–5 seeds the t interval is wide and would
 * otherwise reach values no run can have.
 *
 * With n = 1 there is no spread to estimate: sd is reported as 0 and lo = hi = mean. That is a
 * degenerate interval, not a claim of certainty — run more seeds for a real one.
 * @throws on an empty array, a non-finite value, or a level outside (0, 1).
 */
export function summarize(
  xs: readonly number[],
  level = 0.95,
  bounds: readonly [number, number] = [-Infinity, Infinity],
): Summary {
  checkLevel(level);
  const n = xs.length;
  if (n === 0) throw new Error("summarize: no values (n = 0); a mean needs at least one seed");
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(xs[i]))
      throw new Error(`summarize: value ${i} is ${xs[i]}, not a finite number`);
  }
  let sum = 0;
  for (const x of xs) sum += x;
  const mean = sum / n;
  if (n === 1) return { mean, lo: mean, hi: mean, sd: 0, n };
  let ss = 0; // two-pass variance: stable when the values sit far from 0
  for (const x of xs) ss += (x - mean) ** 2;
  const sd = Math.sqrt(ss / (n - 1));
  const half = tQuantile((1 + level) / 2, n - 1) * (sd / Math.sqrt(n));
  return {
    mean,
    lo: Math.max(bounds[0], mean - half),
    hi: Math.min(bounds[1], mean + half),
    sd,
    n,
  };
}

/**
 * Summary of a_i − b_i over paired seeds (seed i ran both conditions), so that seed-to-seed
 * variation shared by both conditions cancels, with its sign-flip p-value. The interval is not cut
 * (a difference's range is wide enough, and a cut hides the width). `excludesZero` needs
 * MIN_CLAIM_SEEDS seeds; at n = 1 the interval is degenerate (see `summarize`) in any case.
 * @throws when the arrays differ in length or are empty.
 */
export function pairedDifference(
  a: readonly number[],
  b: readonly number[],
  level = 0.95,
): PairedSummary {
  if (a.length !== b.length) {
    throw new Error(
      `pairedDifference: a has ${a.length} values and b has ${b.length}; paired seeds need equal lengths`,
    );
  }
  const d = a.map((ai, i) => ai - b[i]);
  const s = summarize(d, level);
  return {
    ...s,
    excludesZero: s.n >= MIN_CLAIM_SEEDS && (s.lo > 0 || s.hi < 0),
    p: signFlipP(d),
  };
}

/**
 * The two-sided sign-flip permutation p-value of mean(d) = 0 over paired seeds: under the null
 * each seed's difference is as likely to have either sign, so p is the fraction of the 2^n sign
 * patterns whose |Σ ± d_i| is at least the observed |Σ d_i| (the observed pattern included, so
 * p ≥ 2 / 2^n when no d_i is 0). Exact up to EXACT_SIGN_FLIP_SEEDS seeds; beyond, `draws` random
 * patterns from a fixed-seed generator, with the observed one counted (p = (k + 1) / (draws + 1)).
 * @throws on an empty array or a non-finite value.
 */
export function signFlipP(d: readonly number[], draws = 1 << 20): number {
  const n = d.length;
  if (n === 0) throw new Error("signFlipP: no values (n = 0)");
  for (let i = 0; i < n; i++)
    if (!Number.isFinite(d[i]))
      throw new Error(`signFlipP: value ${i} is ${d[i]}, not a finite number`);
  const total = d.reduce((s, x) => s + x, 0);
  const scale = d.reduce((s, x) => s + Math.abs(x), 0);
  // sums that equal the observed one in exact arithmetic may differ in the last bits
  const threshold = Math.abs(total) - 1e-12 * scale;
  if (n <= EXACT_SIGN_FLIP_SEEDS) {
    // Gray code: each pattern differs from the previous one in one sign, so the sum is updated once
    let sum = total;
    const sign = new Int8Array(n).fill(1);
    let count = Math.abs(sum) >= threshold ? 1 : 0;
    const patterns = 2 ** n;
    for (let k = 1; k < patterns; k++) {
      const i = 31 - Math.clz32(k & -k); // the lowest set bit of k: the sign that flips
      sum -= 2 * sign[i] * d[i];
      sign[i] = -sign[i];
      if (Math.abs(sum) >= threshold) count++;
    }
    return count / patterns;
  }
  const next = xorshift32(); // a fixed seed: the same data give the same p
  let count = 0;
  for (let k = 0; k < draws; k++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += next() & 1 ? d[i] : -d[i];
    if (Math.abs(sum) >= threshold) count++;
  }
  return (count + 1) / (draws + 1);
}

/** Marsaglia's xorshift32 from a fixed seed: unsigned 32-bit integers, the same sequence every time. */
function xorshift32(seed = 0x9e3779b9): () => number {
  let state = seed >>> 0;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
}

export interface BootstrapInterval {
  lo: number;
  hi: number;
  level: number;
  draws: number;
}

/**
 * A percentile interval for the mean of `d[seed][member]` by a two-level (hierarchical) bootstrap:
 * each draw resamples the seeds with replacement, then, within each drawn seed, its members with
 * replacement, and takes the mean over all. It covers both sources of the held-out panel's
 * randomness: which seeds were run, and which panel members each seed drew. A fixed-seed
 * generator makes it reproducible.
 * @throws when there are no seeds, a seed has no members, or a value is not finite.
 */
export function hierarchicalBootstrap(
  d: readonly (readonly number[])[],
  level = 0.95,
  draws = 10_000,
): BootstrapInterval {
  checkLevel(level);
  if (d.length === 0) throw new Error("hierarchicalBootstrap: no seeds");
  d.forEach((row, s) => {
    if (row.length === 0) throw new Error(`hierarchicalBootstrap: seed ${s} has no members`);
    row.forEach((x, m) => {
      if (!Number.isFinite(x))
        throw new Error(
          `hierarchicalBootstrap: seed ${s} member ${m} is ${x}, not a finite number`,
        );
    });
  });
  const next = xorshift32();
  const pick = (n: number) => next() % n; // n ≤ a few dozen: the modulo bias is below 1e-8
  const means = new Float64Array(draws);
  for (let k = 0; k < draws; k++) {
    let sum = 0;
    let count = 0;
    for (let i = 0; i < d.length; i++) {
      const row = d[pick(d.length)];
      for (let j = 0; j < row.length; j++) sum += row[pick(row.length)];
      count += row.length;
    }
    means[k] = sum / count;
  }
  means.sort();
  const at = (q: number) => means[Math.min(draws - 1, Math.max(0, Math.floor(q * draws)))];
  return { lo: at((1 - level) / 2), hi: at((1 + level) / 2), level, draws };
}

function checkLevel(level: number): void {
  if (!(level > 0 && level < 1))
    throw new Error(`confidence level must lie in (0, 1), got ${level}`);
}
