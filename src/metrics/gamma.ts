// How collapsed is a simulator? An aligned simulator samples from π_γ ∝ π_ref^γ, the
// KL-regularised RLHF optimum with a typicality-biased reward (γ = 1 + α/β; docs/architecture.md#the-science, after
// "One Frozen Simulator Is Not Enough", arXiv 2608.12253, and Verbalized Sampling,
// arXiv 2510.01171). This file estimates γ against a known reference:
//
// * `gammaMLE` — maximum likelihood from samples (the toy knows π_ref exactly, so γ is the one
//   parameter of an exponential family in the sufficient statistic log π_ref: the log-likelihood
//   is concave and Newton converges in a handful of steps); `gammaMLEFromDistributions` — the
//   same with expected counts, i.e. argmin_γ Σ_c KL(p_c ‖ π_γ), for exactly known simulators.
// * SCOPE's three rough estimators, ported as `scopeGamma` from CHATS-lab/scope_usim,
//   scripts/diagnostics/measure_gamma.py (`fit_gamma`). SCOPE never sees π_ref: per dialogue
//   state it ranks the simulator's observed responses and assumes a reference that is uniform
//   over the N distinct responses seen (Zipf: also log f ∝ −γ·log rank). We keep that port for
//   comparison with the paper's numbers, and add reference-aware versions of the three ideas
//   (`zipfGamma`, `top1Gamma`, `entropyRatioGamma`, plus `entropyMatchGamma`) that use the
//   reference this lab knows, each documented with what it takes and where it is exact.

/** log π_ref at or below this (or −Infinity) marks an option the context does not allow. */
export const DISALLOWED_LOGP = -1e8;

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Maximum likelihood

export interface GammaContext {
  refLogp: ArrayLike<number>; // log π_ref over the options of this context, up to an additive constant (n_c entries)
  counts: ArrayLike<number>; // how often the simulator sampled each option here (non-negative; need not be integers)
}

export interface GammaFitOptions {
  tol?: number; // stop when a Newton step moves γ by less than tol·max(1, γ); default 1e-10
  maxIter?: number; // derivative evaluations allowed, bracketing included; default 200
}

export interface GammaFit {
  /** MLE of γ ≥ 0: 0 when the samples are flatter than π_ref itself favours, Infinity when every sample is its context's reference argmax. */
  gamma: number;
  /**
   * 1 / √(observed Fisher information) at the MLE; Infinity when the information is 0 (γ = Infinity).
   * At γ = 0 it is the curvature there, and ±2 se is not a valid interval on the boundary.
   */
  se: number;
  iterations: number; // derivative evaluations (bracketing + safeguarded Newton)
  logLik: number; // Σ n_cy log π_γ(y|c) at the MLE (its limit for γ = Infinity)
  samples: number; // total count used
  contexts: number; // contexts with at least one sample
}

/**
 * Maximum-likelihood γ of π_γ(y|c) = softmax(γ·log π_ref(·|c))[y] over all contexts jointly.
 *
 * ℓ(γ) = Σ_c Σ_y n_cy (γ·l_cy − log Σ_y' e^{γ l_cy'}),  ℓ' = Σ_c Σ_y n_cy (l_cy − E_γ[l_c]),
 * ℓ'' = −Σ_c N_c Var_γ(l_c) ≤ 0: concave, so Newton's method, kept inside a bracket with
 * bisection as the fallback, finds the maximiser on γ ≥ 0.
 *
 * Options with refLogp = −Infinity or ≤ −1e8 are disallowed and excluded. Contexts with no
 * samples are skipped; contexts whose allowed options all share one log π_ref (a single option,
 * or a flat reference) add only a constant.
 * @throws when there are no contexts or no samples, when a sample falls on a disallowed option,
 *   on malformed input, and when no context can tell γ values apart (every reference is flat).
 */
export function gammaMLE(contexts: readonly GammaContext[], opts: GammaFitOptions = {}): GammaFit {
  const prepared = prepareAll(
    contexts.map((c) => ({ refLogp: c.refLogp, w: c.counts })),
    "gammaMLE",
    "counts",
  );
  const fit = maximise(prepared, opts, "gammaMLE");
  const samples = prepared.reduce((s, c) => s + c.W, 0);
  const se = fit.gamma === Infinity || !(fit.d2 < 0) ? Infinity : 1 / Math.sqrt(-fit.d2);
  return {
    gamma: fit.gamma,
    se,
    iterations: fit.iterations,
    logLik: fit.ll,
    samples,
    contexts: prepared.length,
  };
}

export interface GammaDistribution {
  refLogp: ArrayLike<number>; // log π_ref over the options, as in GammaContext
  p: ArrayLike<number>; // the simulator's probabilities over the same options (normalised by their sum)
  weight?: number; // how much this context counts (e.g. how often it is visited); default 1
}

export interface GammaKLFit {
  gamma: number; // argmin_γ Σ_c weight_c·KL(p_c ‖ π_γ(·|c)); 0 or Infinity at the boundaries, as for gammaMLE
  kl: number; // that minimum (weighted sum over contexts, nats)
  iterations: number;
  contexts: number;
}

/**
 * γ that minimises Σ_c weight_c·KL(p_c ‖ π_γ), for when the simulator's distributions are
 * known exactly. KL(p ‖ π_γ) = Σ p log p − Σ p log π_γ, so this is `gammaMLE` with expected
 * counts p; when p_c = π_γ*(·|c) exactly it returns γ* (to ~1e-10).
 * @throws as gammaMLE, and when p puts mass on a disallowed option (KL = Infinity for every γ).
 */
export function gammaMLEFromDistributions(
  pairs: readonly GammaDistribution[],
  opts: GammaFitOptions = {},
): GammaKLFit {
  const scaled = pairs.map((c, i) => {
    const weight = c.weight ?? 1;
    if (!(weight >= 0) || !Number.isFinite(weight))
      throw new Error(`gammaMLEFromDistributions: context ${i} has weight ${weight}`);
    const z = sumChecked(c.p, `gammaMLEFromDistributions: context ${i} p`);
    if (!(z > 0)) throw new Error(`gammaMLEFromDistributions: context ${i} has p summing to 0`);
    const w = new Float64Array(c.p.length);
    for (let y = 0; y < w.length; y++) w[y] = (weight * c.p[y]) / z;
    return { refLogp: c.refLogp, w };
  });
  const prepared = prepareAll(scaled, "gammaMLEFromDistributions", "p");
  const fit = maximise(prepared, { tol: 1e-12, ...opts }, "gammaMLEFromDistributions");
  let negH = 0; // Σ_c weight_c Σ p log p
  for (const c of prepared)
    for (let y = 0; y < c.w.length; y++) if (c.w[y] > 0) negH += c.w[y] * Math.log(c.w[y] / c.W);
  return {
    gamma: fit.gamma,
    kl: Math.max(0, negH - fit.ll),
    iterations: fit.iterations,
    contexts: prepared.length,
  };
}

/** ℓ(γ) = Σ n_cy log π_γ(y|c), for profile plots and checks; γ = Infinity gives the limit. */
export function gammaLogLik(contexts: readonly GammaContext[], gamma: number): number {
  if (!(gamma >= 0)) throw new Error(`gammaLogLik: γ must be ≥ 0, got ${gamma}`);
  const prepared = prepareAll(
    contexts.map((c) => ({ refLogp: c.refLogp, w: c.counts })),
    "gammaLogLik",
    "counts",
    false,
  );
  return gamma === Infinity ? limitLogLik(prepared) : evaluate(prepared, gamma).ll;
}

/**
 * log π_γ = log softmax(γ·log π_ref) over the allowed options; disallowed ones get −Infinity.
 * γ = Infinity gives the uniform distribution over the reference's argmax set.
 */
export function sharpenLogp(refLogp: ArrayLike<number>, gamma: number): Float64Array {
  if (!(gamma >= 0)) throw new Error(`sharpenLogp: γ must be ≥ 0, got ${gamma}`);
  const out = new Float64Array(refLogp.length).fill(-Infinity);
  const { idx, d } = allowedOf(refLogp, "sharpenLogp");
  if (gamma === Infinity) {
    const ties = d.filter((x) => x === 0).length;
    idx.forEach((y, k) => (out[y] = d[k] === 0 ? -Math.log(ties) : -Infinity));
    return out;
  }
  let s = 0;
  for (const x of d) s += Math.exp(gamma * x);
  const logS = Math.log(s);
  idx.forEach((y, k) => (out[y] = gamma * d[k] - logS));
  return out;
}

// A context ready for the likelihood: allowed options only, log π_ref shifted so its max is 0.
interface Prepared {
  d: Float64Array; // l − max l ≤ 0
  w: Float64Array; // weight (count or expected count) per allowed option
  W: number; // Σ w
  sumWd: number; // Σ w·d, the sufficient statistic
  ties: number; // options at the max (d = 0)
  informative: boolean; // some d < 0: this context's π_γ depends on γ
  onArgmax: boolean; // every unit of weight sits at d = 0
}

function prepareAll(
  raw: readonly { refLogp: ArrayLike<number>; w: ArrayLike<number> }[],
  fn: string,
  wName: string,
  requireInfo = true,
): Prepared[] {
  if (raw.length === 0) throw new Error(`${fn}: no contexts`);
  const out: Prepared[] = [];
  raw.forEach((c, i) => {
    if (c.refLogp.length !== c.w.length)
      throw new Error(
        `${fn}: context ${i} has ${c.refLogp.length} refLogp entries but ${c.w.length} ${wName}`,
      );
    const { idx, d } = allowedOf(c.refLogp, `${fn}: context ${i}`);
    sumChecked(c.w, `${fn}: context ${i} ${wName}`);
    const allowed = new Set(idx);
    for (let y = 0; y < c.w.length; y++) {
      if (c.w[y] > 0 && !allowed.has(y))
        throw new Error(
          `${fn}: context ${i} puts ${wName} ${c.w[y]} on option ${y}, which the reference disallows`,
        );
    }
    const w = Float64Array.from(idx, (y) => c.w[y]);
    let W = 0;
    let sumWd = 0;
    let ties = 0;
    for (let k = 0; k < d.length; k++) {
      W += w[k];
      sumWd += w[k] * d[k];
      if (d[k] === 0) ties++;
    }
    if (W > 0)
      out.push({ d, w, W, sumWd, ties, informative: ties < d.length, onArgmax: sumWd === 0 });
  });
  if (out.length === 0) throw new Error(`${fn}: no samples in any context`);
  if (requireInfo && !out.some((c) => c.informative)) {
    throw new Error(
      `${fn}: γ is not identifiable — in every sampled context the reference is flat over its allowed options`,
    );
  }
  return out;
}

function allowedOf(refLogp: ArrayLike<number>, what: string): { idx: number[]; d: Float64Array } {
  const idx: number[] = [];
  let max = -Infinity;
  for (let y = 0; y < refLogp.length; y++) {
    const l = refLogp[y];
    if (Number.isNaN(l) || l === Infinity) throw new Error(`${what}: refLogp[${y}] is ${l}`);
    if (l > DISALLOWED_LOGP) {
      idx.push(y);
      if (l > max) max = l;
    }
  }
  if (idx.length === 0) throw new Error(`${what}: the reference allows no option`);
  return { idx, d: Float64Array.from(idx, (y) => refLogp[y] - max) };
}

function sumChecked(w: ArrayLike<number>, what: string): number {
  let z = 0;
  for (let y = 0; y < w.length; y++) {
    if (!(w[y] >= 0) || !Number.isFinite(w[y]))
      throw new Error(`${what}[${y}] is ${w[y]}; need finite non-negative numbers`);
    z += w[y];
  }
  return z;
}

// ℓ, ℓ', ℓ'' at a finite γ ≥ 0 (all in terms of d = l − max l, which leaves ℓ' and ℓ'' unchanged).
function evaluate(ctx: readonly Prepared[], g: number): { ll: number; d1: number; d2: number } {
  let ll = 0;
  let d1 = 0;
  let d2 = 0;
  for (const c of ctx) {
    let s = 0;
    let m = 0;
    for (let k = 0; k < c.d.length; k++) {
      const e = Math.exp(g * c.d[k]);
      s += e;
      m += e * c.d[k];
    }
    m /= s; // E_γ[d]
    let v = 0;
    for (let k = 0; k < c.d.length; k++) v += Math.exp(g * c.d[k]) * (c.d[k] - m) ** 2;
    v /= s; // Var_γ[d], two-pass for accuracy when π_γ is nearly a point mass
    ll += g * c.sumWd - c.W * Math.log(s);
    d1 += c.sumWd - c.W * m;
    d2 -= c.W * v;
  }
  return { ll, d1, d2 };
}

// As γ → ∞ with every sample on an argmax, π_γ → uniform over each context's argmax set.
function limitLogLik(ctx: readonly Prepared[]): number {
  let ll = 0;
  for (const c of ctx) {
    if (!c.onArgmax) return -Infinity;
    ll -= c.W * Math.log(c.ties);
  }
  return ll;
}

function maximise(ctx: readonly Prepared[], opts: GammaFitOptions, fn: string) {
  const tol = opts.tol ?? 1e-10;
  const maxIter = opts.maxIter ?? 200;
  // ℓ' > 0 for every γ iff all samples sit on argmaxes: the likelihood rises towards γ = ∞.
  if (ctx.every((c) => c.onArgmax))
    return { gamma: Infinity, ll: limitLogLik(ctx), d2: 0, iterations: 0 };
  let iterations = 1;
  const at0 = evaluate(ctx, 0);
  if (at0.d1 <= 0) return { gamma: 0, ll: at0.ll, d2: at0.d2, iterations }; // flatter than π_ref: the boundary
  // Bracket the root of ℓ': ℓ'(lo) > 0 > ℓ'(hi). It exists: as γ → ∞, ℓ' → Σ n·d < 0.
  let lo = 0;
  let hi = 1;
  for (;;) {
    iterations++;
    if (evaluate(ctx, hi).d1 <= 0) break;
    lo = hi;
    hi *= 2;
    if (iterations > maxIter) throw new Error(`${fn}: could not bracket the MLE (γ > ${lo})`);
  }
  let x = (lo + hi) / 2;
  for (;;) {
    if (++iterations > maxIter)
      throw new Error(`${fn}: no convergence in ${maxIter} iterations (γ ∈ [${lo}, ${hi}])`);
    const { d1, d2 } = evaluate(ctx, x);
    if (d1 > 0) lo = x;
    else if (d1 < 0) hi = x;
    else break;
    const step = d2 < 0 ? -d1 / d2 : NaN;
    // Converged: test before the bracket check, since a step below one ulp would not move x
    // off the bracket's end and would be mistaken for Newton leaving the bracket.
    if (Math.abs(step) <= tol * Math.max(1, x)) {
      x += step;
      break;
    }
    let next = x + step;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2; // safeguard: Newton left the bracket
    x = next;
    if (hi - lo <= tol * Math.max(1, x)) break;
  }
  const fin = evaluate(ctx, x);
  return { gamma: x, ll: fin.ll, d2: fin.d2, iterations };
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// SCOPE's rough estimators, as SCOPE computes them (reference-free)

export interface ScopeGammaContext {
  zipf: number; // −slope of the OLS fit log(f + 1e-10) = a − γ·log rank over the observed responses
  concentration: number; // 1 + log(f_max·N) / log N (1 when f_max ≤ 1/N); never exceeds 2
  entropy: number; // log N / H(f), with H/log N floored at 0.01 (so ≤ 100)
  mean: number; // the average of the three, SCOPE's headline γ
  method: "fit" | "degenerate" | "insufficient_data"; // SCOPE's fallbacks: all four are 1 when N < 2 / N < 3
  numUnique: number; // N, the distinct responses observed
  top1: number; // f_max
}

export interface ScopeGamma {
  zipf: number; // means over contexts, as SCOPE summarises its dialogue states
  concentration: number;
  entropy: number;
  mean: number;
  perContext: ScopeGammaContext[];
}

/**
 * SCOPE's three rough γ estimators, following `fit_gamma` in CHATS-lab/scope_usim,
 * scripts/diagnostics/measure_gamma.py. Each context is the simulator's response counts (or
 * frequencies) in one dialogue state; no reference is used: SCOPE assumes π_ref uniform over
 * the N distinct responses observed, and a Zipf exponent of 1 for the rank–frequency fit.
 * Entries that are 0 are unobserved responses and are dropped, as SCOPE counts only what it saw.
 *
 * Known limits, kept for fidelity: a context with fewer than 3 distinct responses — the most
 * collapsed ones — reports γ = 1 ("degenerate" / "insufficient_data"); concentration is at most 2.
 * Zipf equals γ exactly when the simulator's frequencies are a pure power law f ∝ rank^−γ.
 * @throws when there are no contexts or a context has no samples.
 */
export function scopeGamma(contexts: readonly ArrayLike<number>[]): ScopeGamma {
  if (contexts.length === 0) throw new Error("scopeGamma: no contexts");
  const perContext = contexts.map((c, i) => scopeContext(c, i));
  const avg = (k: "zipf" | "concentration" | "entropy" | "mean") =>
    perContext.reduce((s, r) => s + r[k], 0) / perContext.length;
  return {
    zipf: avg("zipf"),
    concentration: avg("concentration"),
    entropy: avg("entropy"),
    mean: avg("mean"),
    perContext,
  };
}

function scopeContext(c: ArrayLike<number>, i: number): ScopeGammaContext {
  const z = sumChecked(c, `scopeGamma: context ${i}`);
  if (!(z > 0)) throw new Error(`scopeGamma: context ${i} has no samples`);
  const f: number[] = [];
  for (let y = 0; y < c.length; y++) if (c[y] > 0) f.push(c[y] / z);
  f.sort((a, b) => b - a);
  const N = f.length;
  const fallback = (method: ScopeGammaContext["method"]): ScopeGammaContext => ({
    zipf: 1,
    concentration: 1,
    entropy: 1,
    mean: 1,
    method,
    numUnique: N,
    top1: f[0],
  });
  if (N < 2) return fallback("degenerate");
  if (N < 3) return fallback("insufficient_data");
  // SCOPE adds 1e-10 inside its logs; kept so the numbers match its output.
  const x = f.map((_, r) => Math.log(r + 1));
  const y = f.map((fr) => Math.log(fr + 1e-10));
  const zipf = -olsSlope(x, y);
  const concentration = f[0] > 1 / N ? Math.log(f[0] * N) / Math.log(N) + 1 : 1;
  let H = 0;
  for (let r = 0; r < N; r++) H -= f[r] * y[r];
  const entropy = 1 / Math.max(H / Math.log(N), 0.01);
  return {
    zipf,
    concentration,
    entropy,
    mean: (zipf + concentration + entropy) / 3,
    method: "fit",
    numUnique: N,
    top1: f[0],
  };
}

function olsSlope(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  const mx = x.reduce((s, v) => s + v, 0) / n;
  const my = y.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
  }
  return sxy / sxx;
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Reference-aware versions of SCOPE's three ideas

/**
 * One context for the rough estimators: the reference exactly (as log-probabilities) and the
 * simulator as probabilities *or* sample counts over the same options (normalised per context;
 * with counts, unobserved options have 0). Options with refLogp = −Infinity or ≤ −1e8 are
 * disallowed; simulator mass on them is an error. Contexts without simulator mass are skipped;
 * so are contexts where the reference is flat over its allowed options (π_γ is then the same
 * for every γ), by every estimator below except `entropyRatioGamma`.
 */
export interface SimRefContext {
  refLogp: ArrayLike<number>;
  sim: ArrayLike<number>;
}

interface RoughPrepared {
  d: Float64Array; // log π_ref − max over allowed options (≤ 0)
  logRef: Float64Array; // normalised log π_ref over allowed options
  sim: Float64Array; // simulator probabilities over allowed options
}

function prepareRough(
  contexts: readonly SimRefContext[],
  fn: string,
  skipFlat = true,
): RoughPrepared[] {
  const prepared = prepareAll(
    contexts.map((c) => ({ refLogp: c.refLogp, w: c.sim })),
    fn,
    "simulator mass",
    skipFlat,
  );
  const out: RoughPrepared[] = [];
  for (const c of prepared) {
    if (skipFlat && !c.informative) continue;
    let s = 0;
    for (const x of c.d) s += Math.exp(x);
    const logS = Math.log(s);
    out.push({ d: c.d, logRef: c.d.map((x) => x - logS), sim: c.w.map((x) => x / c.W) });
  }
  return out; // non-empty: prepareAll demands a sampled (and, with skipFlat, informative) context
}

export interface ZipfGamma {
  gamma: number; // simSlope / refSlope
  simSlope: number; // s in log f = a_c − s·log rank, fitted to the simulator's rank–frequency curves
  refSlope: number; // the same fit to the reference, on the same ranks
  points: number; // (context, rank) points in the fit
}

/**
 * Runs one estimator on a sample where it may be undefined (Zipf's slope with no state of two
 * observed replies, a fully separated NCE fit, …): its value, or null with `name: reason` pushed
 * onto `problems`, so that one estimator never costs the others or the run.
 */
export function attemptEstimate<T>(name: string, problems: string[], estimate: () => T): T | null {
  try {
    return estimate();
  } catch (e) {
    problems.push(`${name}: ${(e as Error).message}`);
    return null;
  }
}

/**
 * Zipf rank–frequency estimator. In each context the simulator's observed options (mass > 0)
 * are ranked by frequency, r = 1…K_c, and so are the reference's probabilities; one slope s is
 * fitted to log f_c(r) = a_c − s·log r over all contexts jointly (a separate intercept per
 * context absorbs its normaliser), for the simulator and for the reference on the same ranks.
 * γ̂ = s_sim / s_ref. SCOPE fits s_sim alone per state and assumes s_ref = 1.
 *
 * Exact (to rounding) when the simulator is exactly π_γ — for any reference, since
 * log π_γ = γ·log π_ref − log Z sorts in the same order — and for a pure power-law reference
 * at any truncation of the ranks. From samples, the tail ranks that were seen once or never
 * bias it (low frequencies are overestimated, unseen ones dropped).
 * @throws when no context has two observed options, or the reference is flat on those ranks.
 */
export function zipfGamma(contexts: readonly SimRefContext[]): ZipfGamma {
  const prepared = prepareRough(contexts, "zipfGamma");
  let sxx = 0;
  let sxySim = 0;
  let sxyRef = 0;
  let points = 0;
  for (const c of prepared) {
    const sim = Array.from(c.sim)
      .filter((p) => p > 0)
      .sort((a, b) => b - a);
    const K = sim.length;
    if (K < 2) continue;
    const ref = Array.from(c.logRef)
      .sort((a, b) => b - a)
      .slice(0, K);
    const x = sim.map((_, r) => Math.log(r + 1));
    const mx = mean(x);
    const ys = sim.map(Math.log);
    const mys = mean(ys);
    const myr = mean(ref);
    for (let r = 0; r < K; r++) {
      sxx += (x[r] - mx) ** 2;
      sxySim += (x[r] - mx) * (ys[r] - mys);
      sxyRef += (x[r] - mx) * (ref[r] - myr);
    }
    points += K;
  }
  if (points === 0)
    throw new Error(
      "zipfGamma: no context has two observed options; the rank–frequency slope is undefined (gammaMLE handles a fully collapsed simulator)",
    );
  if (sxyRef === 0)
    throw new Error(
      "zipfGamma: the reference is flat on the observed ranks; its slope is 0 and γ undefined",
    );
  return { gamma: sxySim / sxyRef, simSlope: -sxySim / sxx, refSlope: -sxyRef / sxx, points };
}

export interface Top1Gamma {
  gamma: number; // the γ at which π_γ's mean top-1 mass equals the simulator's; 0 or Infinity at the ends
  simTop1: number; // mean over contexts of the simulator's largest probability (or frequency)
  refTop1: number; // the same for π_ref (γ = 1)
}

/**
 * Top-1 concentration estimator: solves mean_c max_y π_γ(y|c) = mean_c max_y p_sim(y|c) for γ.
 * The left side rises monotonically from mean 1/K_c (γ = 0) to mean 1/ties_c (γ = ∞), so the
 * root is unique; a target outside that range gives 0 or Infinity. Exact when the simulator is
 * exactly π_γ. SCOPE's version (`scopeGamma().concentration`) has no reference and uses
 * 1 + log(f_max·N)/log N instead. From samples the simulator's top frequency is the maximum
 * of noisy counts and reads high when options nearly tie (small γ, few samples).
 */
export function top1Gamma(contexts: readonly SimRefContext[]): Top1Gamma {
  const prepared = prepareRough(contexts, "top1Gamma");
  const simTop1 = mean(prepared.map((c) => Math.max(...c.sim)));
  const top1At = (g: number) =>
    mean(prepared.map((c) => 1 / c.d.reduce((s, x) => s + Math.exp(g * x), 0)));
  const atInf = mean(prepared.map((c) => 1 / c.d.filter((x) => x === 0).length));
  const gamma =
    simTop1 <= top1At(0) ? 0 : simTop1 >= atInf ? Infinity : solveIncreasing(top1At, simTop1);
  return { gamma, simTop1, refTop1: top1At(1) };
}

export interface EntropyGamma {
  gamma: number;
  hRef: number; // mean over contexts of H(π_ref), nats
  hSim: number; // mean over contexts of H(p_sim) (plug-in entropy for counts), nats
}

/**
 * Entropy-ratio estimator: γ̂ = mean_c H(π_ref) / mean_c H(p_sim), SCOPE's log N / H(p_sim)
 * with the known reference entropy in place of log N (SCOPE's reference is uniform over N
 * options, so unlike the other estimators this one keeps contexts with a flat reference). A
 * rough heuristic: it is 1 at γ = 1 and rises with γ (H(π_γ) falls monotonically), but equals γ
 * only in the ideal SCOPE's formula assumes — the simulator spread uniformly over N^{1/γ} of a
 * uniform reference's N options — not for π_γ in general, and it errs both ways: at γ = 5 it
 * reads ≈ 14.5 for a Zipf(1) reference over 20 options and ≈ 2.6 on the mixed references of
 * the tests. Plug-in entropy from samples reads low, so γ̂ reads high. A simulator with zero
 * entropy everywhere gives Infinity.
 * @throws when the reference has zero entropy in every sampled context.
 */
export function entropyRatioGamma(contexts: readonly SimRefContext[]): EntropyGamma {
  const prepared = prepareRough(contexts, "entropyRatioGamma", false);
  const hRef = mean(prepared.map((c) => entropyOfLog(c.logRef)));
  const hSim = mean(prepared.map((c) => entropyOfProbs(c.sim)));
  if (!(hRef > 0))
    throw new Error(
      "entropyRatioGamma: the reference has zero entropy in every sampled context; there is nothing to sharpen",
    );
  return { gamma: hSim > 0 ? hRef / hSim : Infinity, hRef, hSim };
}

/**
 * Entropy-matching estimator: solves mean_c H(π_γ(·|c)) = mean_c H(p_sim(·|c)) for γ. Exact when
 * the simulator is exactly π_γ (H(π_γ) falls strictly with γ wherever the reference is not flat);
 * 0 or Infinity when the simulator's entropy is above H(π_0) or at/below H(π_∞).
 */
export function entropyMatchGamma(contexts: readonly SimRefContext[]): EntropyGamma {
  const prepared = prepareRough(contexts, "entropyMatchGamma");
  const hSim = mean(prepared.map((c) => entropyOfProbs(c.sim)));
  const hAt = (g: number) => mean(prepared.map((c) => entropyOfSharpened(c.d, g)));
  const atInf = mean(prepared.map((c) => Math.log(c.d.filter((x) => x === 0).length)));
  const gamma =
    hSim >= hAt(0) ? 0 : hSim <= atInf ? Infinity : solveIncreasing((g) => -hAt(g), -hSim);
  return { gamma, hRef: hAt(1), hSim };
}

// H(π_γ) = log S − γ·E_γ[d], with d = log π_ref − max.
function entropyOfSharpened(d: Float64Array, g: number): number {
  let s = 0;
  let m = 0;
  for (const x of d) {
    const e = Math.exp(g * x);
    s += e;
    m += e * x;
  }
  return Math.max(0, Math.log(s) - (g * m) / s);
}

function entropyOfLog(logp: Float64Array): number {
  let h = 0;
  for (const l of logp) if (l > -Infinity) h -= Math.exp(l) * l;
  return Math.max(0, h);
}

function entropyOfProbs(p: Float64Array): number {
  let h = 0;
  for (const x of p) if (x > 0) h -= x * Math.log(x);
  return Math.max(0, h);
}

function mean(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s / xs.length;
}

// Root of f(γ) = target for an increasing f on γ ≥ 0, with f(0) < target < f(∞) checked by the
// caller: double an upper bound until it passes, then bisect to ~1e-13 relative.
function solveIncreasing(f: (g: number) => number, target: number): number {
  let lo = 0;
  let hi = 1;
  for (let k = 0; f(hi) < target; k++) {
    if (k > 1100) throw new Error("solveIncreasing: no upper bracket (target at the limit)");
    lo = hi;
    hi *= 2;
  }
  for (let k = 0; k < 200 && hi - lo > 1e-13 * hi; k++) {
    const mid = (lo + hi) / 2;
    if (f(mid) < target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
