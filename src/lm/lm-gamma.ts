// γ of a real LM (docs/architecture.md#the-science, #the-lm-tier): how sharpened is an instruct model relative to its base model,
// if π_instruct ∝ π_base^γ (the KL-regularised RLHF optimum with a typicality-biased reward)?
// We sample replies from the instruct model, score every reply exactly under the base model and
// fit γ. Two estimators, because real replies are long and rarely repeat:
//
// * `mle` — γ-MLE on a candidate set (gammaMLE of src/metrics/gamma.ts). Per prompt c the model
//   is π_γ(y | c, y ∈ C_c) = π_base(y|c)^γ / Σ_{y'∈C_c} π_base(y'|c)^γ, the reference log-probs are
//   the base model's log-likelihoods of the candidates and the counts how often the instruct
//   model produced each. It is the exact MLE when C_c is fixed independently of the samples (a
//   given candidate list, or short answers that repeat). When C_c is built from the samples
//   themselves it is biased towards 0 — with every reply unique it returns 0 — so the
//   report warns when most replies are unique; base-model samples added as zero-count candidates
//   help, but do not remove the bias.
// * `nce` — contrastive (noise-contrastive estimation, Gutmann & Hyvärinen 2010): pool instruct
//   and base samples of each prompt; under the model, P(instruct | y) = σ(b_c + (γ − 1)·log
//   π_base(y|c)), so a logistic regression of "which model wrote it" on the base log-likelihood,
//   one intercept per prompt, has slope γ − 1. Consistent whether or not replies repeat; it needs
//   base-model samples.
//
// Log-likelihoods are summed over tokens by default, since π_γ ∝ π_ref^γ is a statement about
// whole sequences; `lengthNormalise` divides by the token count — a different model
// (π_γ ∝ exp(γ·mean token log-prob)), offered as a diagnostic against length effects.
// SCOPE's three rough estimators run alongside on the same counts: the reference-free port
// (`scopeGamma`) and the reference-aware Zipf / top-1 / entropy-ratio versions.
import {
  attemptEstimate,
  entropyRatioGamma,
  gammaMLE,
  scopeGamma,
  top1Gamma,
  zipfGamma,
  type EntropyGamma,
  type GammaFit,
  type ScopeGamma,
  type Top1Gamma,
  type ZipfGamma,
} from "../metrics/gamma";
import type { LanguageModel, LmPrompt } from "./types";
import { pct } from "../util/format";

export interface LmGammaPrompt {
  /** What the base model is conditioned on (for a base model: e.g. `baseTextPrompt(d)`). */
  prompt: LmPrompt;
  /** Replies the instruct model sampled for this prompt; repeats count. */
  replies: string[];
  /** Replies the base model sampled under `prompt` (needed by `nce`; extra candidates for `mle`). */
  baseSamples?: string[];
  /** A candidate set fixed independently of the samples; instruct replies outside it are dropped. */
  candidates?: string[];
}

export interface LmGammaOptions {
  lengthNormalise?: boolean; // divide log-likelihoods by token counts (default false: summed)
  /** Which replies count as the same (default: trimmed, whitespace collapsed). */
  key?: (reply: string) => string;
  /** The continuation scored for a reply (default: as is; e.g. `baseContinuation` for base text prompts). */
  continuation?: (reply: string) => string;
  /** Warn about the sample-built candidate set when more than this fraction of replies is unique (default 0.5). */
  uniqueWarning?: number;
}

export interface LmGammaContext {
  candidates: string[]; // distinct replies (canonical text: first seen)
  refLogp: number[]; // base log-likelihood of each candidate (per token when length-normalised)
  tokens: number[];
  counts: number[]; // instruct samples on each candidate
  outside: number; // instruct samples not in a fixed candidate set
  baseRefLogp: number[]; // base log-likelihood of each base sample (for nce)
  replyRefLogp: number[]; // base log-likelihood of each instruct sample (for nce)
}

export interface NceFit {
  gamma: number; // 1 + slope
  se: number; // standard error of the slope (= of γ), from the observed information
  slope: number;
  groups: number; // prompts with both instruct and base samples
  samples: number; // instruct + base samples in those prompts
  iterations: number;
}

export interface LmGammaReport {
  lengthNormalised: boolean;
  candidateSet: "fixed" | "samples" | "samples+base";
  contexts: LmGammaContext[];
  mle: GammaFit | null;
  nce: NceFit | null;
  scope: ScopeGamma | null; // SCOPE's port: reference-free, per-prompt means
  zipf: ZipfGamma | null; // reference-aware rough estimators on the candidate sets
  top1: Top1Gamma | null;
  entropyRatio: EntropyGamma | null;
  samples: number; // instruct samples used
  uniqueFraction: number; // instruct samples whose reply occurs once in its prompt
  /** Caveats and the reasons an estimator could not run (it is then null). */
  warnings: string[];
}

const defaultKey = (s: string) => s.trim().replace(/\s+/g, " ");

/**
 * Scores every reply under the base model (one `score` call per prompt) and fits γ.
 * @throws when there are no prompts, or a prompt mixes fixed candidates with none at all.
 */
export async function lmGamma(
  prompts: readonly LmGammaPrompt[],
  base: LanguageModel,
  opts: LmGammaOptions = {},
): Promise<LmGammaReport> {
  if (prompts.length === 0) throw new Error("lmGamma: no prompts");
  const key = opts.key ?? defaultKey;
  const cont = opts.continuation ?? ((s: string) => s);
  const norm = opts.lengthNormalise ?? false;
  const fixed = prompts.every((p) => p.candidates !== undefined);
  if (!fixed && prompts.some((p) => p.candidates !== undefined))
    throw new Error("lmGamma: give fixed candidates for every prompt or for none");
  const withBase = prompts.some((p) => (p.baseSamples?.length ?? 0) > 0);
  const warnings: string[] = [];

  const contexts: LmGammaContext[] = [];
  for (const p of prompts) {
    const base0 = p.baseSamples ?? [];
    const candidates: string[] = [];
    const index = new Map<string, number>();
    const add = (s: string) => {
      const k = key(s);
      if (!index.has(k)) {
        index.set(k, candidates.length);
        candidates.push(s);
      }
    };
    if (fixed) p.candidates!.forEach(add);
    else [...p.replies, ...base0].forEach(add);
    const counts = new Array<number>(candidates.length).fill(0);
    let outside = 0;
    for (const r of p.replies) {
      const i = index.get(key(r));
      if (i === undefined) outside++;
      else counts[i]++;
    }
    // score each distinct text once: candidates, instruct replies, base samples
    const texts = new Map<string, number>();
    const reps: string[] = [];
    for (const s of [...candidates, ...p.replies, ...base0]) {
      if (!texts.has(key(s))) {
        texts.set(key(s), reps.length);
        reps.push(s);
      }
    }
    const scores = reps.length ? await base.score(p.prompt, reps.map(cont)) : [];
    if (scores.length !== reps.length)
      throw new Error(
        `lmGamma: ${base.id} returned ${scores.length} scores for ${reps.length} continuations`,
      );
    const value = (s: string) => {
      const sc = scores[texts.get(key(s))!];
      return norm ? sc.logprob / Math.max(1, sc.tokens) : sc.logprob;
    };
    contexts.push({
      candidates,
      refLogp: candidates.map(value),
      tokens: candidates.map((s) => scores[texts.get(key(s))!].tokens),
      counts,
      outside,
      baseRefLogp: base0.map(value),
      replyRefLogp: p.replies.map(value),
    });
  }

  const samples = contexts.reduce((s, c) => s + c.counts.reduce((a, b) => a + b, 0), 0);
  const outside = contexts.reduce((s, c) => s + c.outside, 0);
  if (outside > 0)
    warnings.push(
      `${outside} instruct replies are outside the fixed candidate sets and were left out of mle and the rough estimators`,
    );
  const singles = contexts.reduce((s, c) => s + c.counts.filter((n) => n === 1).length, 0);
  const uniqueFraction = samples ? singles / samples : 0;
  if (!fixed && uniqueFraction > (opts.uniqueWarning ?? 0.5)) {
    warnings.push(
      `${pct(uniqueFraction)} of the instruct replies occur once: with candidate sets built from the samples, mle is biased towards 0 ` +
        `(0 when every reply is unique)${withBase ? "" : " — add baseSamples for nce"}; trust nce or a fixed candidate set`,
    );
  }

  const attempt = <T>(name: string, f: () => T) => attemptEstimate(name, warnings, f);
  const sampled = contexts.filter((c) => c.counts.some((n) => n > 0));
  const gammaContexts = sampled.map((c) => ({ refLogp: c.refLogp, counts: c.counts }));
  const simRef = sampled.map((c) => ({ refLogp: c.refLogp, sim: c.counts }));
  const nceGroups = contexts.map((c) => ({ positive: c.replyRefLogp, negative: c.baseRefLogp }));
  return {
    lengthNormalised: norm,
    candidateSet: fixed ? "fixed" : withBase ? "samples+base" : "samples",
    contexts,
    mle: attempt("mle", () => gammaMLE(gammaContexts)),
    nce: withBase ? attempt("nce", () => gammaNCE(nceGroups)) : null,
    scope: attempt("scope", () => scopeGamma(sampled.map((c) => c.counts))),
    zipf: attempt("zipf", () => zipfGamma(simRef)),
    top1: attempt("top1", () => top1Gamma(simRef)),
    entropyRatio: attempt("entropyRatio", () => entropyRatioGamma(simRef)),
    samples,
    uniqueFraction,
    warnings,
  };
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// The contrastive estimator

export interface NceGroup {
  positive: ArrayLike<number>; // base log-likelihoods of the instruct model's samples
  negative: ArrayLike<number>; // base log-likelihoods of the base model's samples
}

/**
 * γ by noise-contrastive estimation: maximises Σ log σ(±(b_c + β·x)) over one intercept b_c per
 * group and a shared slope β (logistic regression of "sampled by the instruct model" on the base
 * log-likelihood x), γ = 1 + β. Newton's method on the concave log-likelihood; the Hessian is an
 * arrow (intercepts only meet β), solved through its Schur complement; steps are halved when
 * the likelihood would fall. x is centred per group, which changes only the intercepts.
 * @throws when no group has both kinds of samples, every x within each group is equal, or the
 *   two kinds are perfectly separated (β = ±∞).
 */
export function gammaNCE(
  groups: readonly NceGroup[],
  opts: { tol?: number; maxIter?: number } = {},
): NceFit {
  const tol = opts.tol ?? 1e-10;
  const maxIter = opts.maxIter ?? 100;
  const gs = groups
    .filter((g) => g.positive.length > 0 && g.negative.length > 0)
    .map((g) => {
      const xs = [...Array.from(g.positive), ...Array.from(g.negative)];
      for (const x of xs)
        if (!Number.isFinite(x)) throw new Error(`gammaNCE: log-likelihood ${x} is not finite`);
      const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
      return {
        x: Float64Array.from(xs, (x) => x - mean),
        y: Uint8Array.from(xs, (_, i) => (i < g.positive.length ? 1 : 0)),
      };
    });
  if (gs.length === 0) throw new Error("gammaNCE: no group has both instruct and base samples");
  if (gs.every((g) => g.x.every((x) => Math.abs(x) < 1e-12)))
    throw new Error(
      "gammaNCE: the base log-likelihood is constant within every group; the slope is not identifiable",
    );
  const b = new Float64Array(gs.length);
  let beta = 0;
  const logLik = (bb: Float64Array, be: number) => {
    let ll = 0;
    gs.forEach((g, c) => {
      for (let i = 0; i < g.x.length; i++) {
        const z = bb[c] + be * g.x[i];
        ll -= g.y[i] ? softplus(-z) : softplus(z); // log σ(z) = −softplus(−z)
      }
    });
    return ll;
  };
  let ll = logLik(b, beta);
  for (let it = 1; it <= maxIter; it++) {
    // gradient and (negated) Hessian blocks
    let gBeta = 0;
    let hBB = 0;
    const gC = new Float64Array(gs.length);
    const hCC = new Float64Array(gs.length);
    const hCB = new Float64Array(gs.length);
    gs.forEach((g, c) => {
      for (let i = 0; i < g.x.length; i++) {
        const p = sigmoid(b[c] + beta * g.x[i]);
        const r = g.y[i] - p;
        const w = p * (1 - p);
        gC[c] += r;
        gBeta += r * g.x[i];
        hCC[c] += w;
        hCB[c] += w * g.x[i];
        hBB += w * g.x[i] * g.x[i];
      }
    });
    let S = hBB;
    let rhs = gBeta;
    for (let c = 0; c < gs.length; c++) {
      S -= (hCB[c] * hCB[c]) / hCC[c];
      rhs -= (hCB[c] * gC[c]) / hCC[c];
    }
    if (!(S > 0) || gs.some((_, c) => !(hCC[c] > 0)))
      throw new Error(
        "gammaNCE: the instruct and base samples are perfectly separated; the slope is infinite",
      );
    const dBeta = rhs / S;
    const dB = Float64Array.from(gC, (g, c) => (g - hCB[c] * dBeta) / hCC[c]);
    let step = 1;
    for (;;) {
      const nb = Float64Array.from(b, (x, c) => x + step * dB[c]);
      const nl = logLik(nb, beta + step * dBeta);
      if (nl >= ll - 1e-12 * Math.abs(ll) || step < 1e-6) {
        b.set(nb);
        beta += step * dBeta;
        ll = nl;
        break;
      }
      step /= 2;
    }
    if (Math.abs(step * dBeta) <= tol * Math.max(1, Math.abs(beta)) && step === 1) {
      return {
        gamma: 1 + beta,
        se: 1 / Math.sqrt(S),
        slope: beta,
        groups: gs.length,
        samples: gs.reduce((s, g) => s + g.x.length, 0),
        iterations: it,
      };
    }
    if (Math.abs(beta) > 1e6) break;
  }
  throw new Error(
    `gammaNCE: no convergence in ${maxIter} iterations (slope ${beta}); the samples may be (nearly) separated`,
  );
}

const sigmoid = (z: number) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));
const softplus = (z: number) => (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z)));
