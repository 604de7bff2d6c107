// Helpers shared by the tests that compare sampled counts with exact probabilities.

export const sum = (xs: ArrayLike<number>) => Array.from(xs).reduce((a, b) => a + b, 0);

/**
 * Largest |z| of empirical counts against probabilities p: (f − p) / sqrt(p(1 − p)/n), with a
 * 1/n allowance so that one draw of a very rare act is not a failure. An act with p = 0 that was
 * drawn counts as Infinity.
 */
export function maxZ(counts: ArrayLike<number>, p: ArrayLike<number>): number {
  const n = sum(counts);
  let worst = 0;
  for (let v = 0; v < p.length; v++) {
    const f = counts[v] / n;
    if (p[v] === 0) {
      if (counts[v] > 0) return Infinity;
      continue;
    }
    const excess = Math.max(0, Math.abs(f - p[v]) - 1 / n);
    worst = Math.max(worst, excess / Math.sqrt((p[v] * (1 - p[v])) / n));
  }
  return worst;
}
