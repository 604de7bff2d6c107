// Confidence intervals for a success rate from 0/1 outcomes. A t interval over 0/1 values is wrong
// here: an all-success cell has no spread and gets zero width, and it treats every outcome as
// independent. Instead:
// * independent trials: the exact binomial (Clopper–Pearson) interval, conservative at any n,
//   never empty, and inside [0, 1] by construction;
// * trials grouped in clusters (one player's several dialogues): Korn & Graubard's interval
//   (Survey Methodology 24(2), 1998; R's survey::svyciprop(method = "beta")), the same exact
//   interval on an effective sample size: n divided by the design effect, estimated from how much
//   the clusters' rates differ (a cluster-robust variance), and shrunk again for having few
//   clusters (the ratio of t quantiles on n − 1 and on clusters − 1 degrees of freedom). Chosen
//   over a cluster bootstrap because it needs no random draws, gives the same numbers every time,
//   and stays sensible with 2–5 players, where a bootstrap over players has almost nothing to
//   resample.
// Beta and t quantiles come from stdlib, not hand-written special functions.
import betaQuantile from "@stdlib/stats-base-dists-beta-quantile";
import tQuantile from "@stdlib/stats-base-dists-t-quantile";

export interface ProportionInterval {
  mean: number; // successes / trials
  lo: number;
  hi: number;
  n: number; // trials
  successes: number;
  clusters: number;
  /** `exact`: every trial its own cluster (Clopper–Pearson); `clustered`: Korn–Graubard. */
  method: "exact" | "clustered";
  /** The number of independent trials the interval is worth (n when exact). */
  nEffective: number;
}

/**
 * Clopper–Pearson interval for x successes in n trials at `level`; x and n may be fractional (an
 * effective sample), as in Korn–Graubard: lo = B⁻¹(α/2; x, n − x + 1), hi = B⁻¹(1 − α/2; x + 1, n − x).
 */
export function clopperPearson(x: number, n: number, level = 0.95): [number, number] {
  if (!(n > 0) || !(x >= 0) || x > n)
    throw new Error(`clopperPearson: need 0 ≤ x ≤ n and n > 0 (x = ${x}, n = ${n})`);
  const alpha = 1 - level;
  const lo = x === 0 ? 0 : betaQuantile(alpha / 2, x, n - x + 1);
  const hi = x === n ? 1 : betaQuantile(1 - alpha / 2, x + 1, n - x);
  return [lo, hi];
}

/**
 * The success rate of `trials` with a `level` interval: exact where every cluster has one trial,
 * Korn–Graubard where some cluster has several. With a single cluster (one player) there is no
 * spread between clusters to estimate: the interval treats its rate as one observation.
 * @throws on no trials or a level outside (0, 1).
 */
export function clusteredProportion(
  trials: readonly { cluster: string; success: boolean }[],
  level = 0.95,
): ProportionInterval {
  if (!(level > 0 && level < 1)) throw new Error(`level must lie in (0, 1), got ${level}`);
  const n = trials.length;
  if (n === 0) throw new Error("clusteredProportion: no trials");
  const byCluster = new Map<string, { n: number; x: number }>();
  for (const t of trials) {
    const c = byCluster.get(t.cluster) ?? { n: 0, x: 0 };
    c.n++;
    if (t.success) c.x++;
    byCluster.set(t.cluster, c);
  }
  const successes = trials.filter((t) => t.success).length;
  const p = successes / n;
  const m = byCluster.size;
  const result = (nEffective: number, method: ProportionInterval["method"]) => {
    const [lo, hi] = clopperPearson(p * nEffective, nEffective, level);
    return { mean: p, lo, hi, n, successes, clusters: m, method, nEffective };
  };
  if (m === n) return result(n, "exact");
  if (m === 1) return result(1, "clustered");
  // cluster-robust (linearised ratio) variance of p: m/(m−1) · Σ_j (x_j − p·n_j)² / n²
  let ss = 0;
  for (const c of byCluster.values()) ss += (c.x - p * c.n) ** 2;
  const variance = ((m / (m - 1)) * ss) / n ** 2;
  // design effect = variance / (p(1 − p)/n); where it is below 1, or p is 0 or 1 (no spread to
  // measure), the clusters are taken as no better than independent trials: n
  const nDesign = variance > 0 ? Math.min(n, (p * (1 - p)) / variance) : n;
  const alpha = 1 - level;
  const dfShrink = (tQuantile(1 - alpha / 2, n - 1) / tQuantile(1 - alpha / 2, m - 1)) ** 2;
  return result(nDesign * dfShrink, "clustered");
}
