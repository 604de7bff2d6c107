// Summaries over seeds (docs/architecture.md#metrics): the mean of a metric with a Student-t confidence interval,
// and paired differences between two conditions run on the same seeds. Seeds are few (3–10), so
// the t interval, not a normal one; the t quantile comes from stdlib (a port of Boost's
// incomplete-beta inverse) rather than a hand-written special function.
import tQuantile from "@stdlib/stats-base-dists-t-quantile";

export interface Summary {
  mean: number;
  lo: number; // lower end of the `level` confidence interval
  hi: number; // upper end
  sd: number; // sample standard deviation (n − 1 in the denominator)
  n: number;
}

export interface PairedSummary extends Summary {
  /** The interval lies strictly on one side of 0: the two conditions differ at this level. */
  excludesZero: boolean;
}

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
 * variation shared by both conditions cancels. `excludesZero` is false for n = 1, where the
 * interval is degenerate (see `summarize`) and says nothing about a difference.
 * @throws when the arrays differ in length or are empty.
 */
export function pairedDifference(
  a: readonly number[],
  b: readonly number[],
  level = 0.95,
  bounds: readonly [number, number] = [-Infinity, Infinity],
): PairedSummary {
  if (a.length !== b.length) {
    throw new Error(
      `pairedDifference: a has ${a.length} values and b has ${b.length}; paired seeds need equal lengths`,
    );
  }
  const d = a.map((ai, i) => ai - b[i]);
  const s = summarize(d, level, bounds);
  return { ...s, excludesZero: s.n >= 2 && (s.lo > 0 || s.hi < 0) };
}

function checkLevel(level: number): void {
  if (!(level > 0 && level < 1))
    throw new Error(`confidence level must lie in (0, 1), got ${level}`);
}
