// What-if reply distributions for the Simulators page: the aligned and VS rows of a reply table
// recomputed in the page from its reference row for any γ, φ, k and selection, with no training.
// The science is the engine's: the aligned simulator is π_ref^γ renormalised (`sharpenLogp`, the
// same softmax(γ·log π_ref) over the allowed replies the backends compute with logitScale γ), VS
// verbalizes q_φ = π_ref^vsExponent(γ, φ) (src/simulators/vs.ts) and samples it through
// `verbalize` + `select`; `vsSampled` is the exact distribution of that sampler.
import { sharpenLogp } from "../../metrics/gamma";
import { pct } from "../../util/format";
import { vsExponent, type VsSelection } from "../../simulators/vs";

/** π^e renormalised over the entries with π > 0 (zeros stay 0): the engine's `sharpenLogp`. */
export function sharpen(p: readonly number[], e: number): number[] {
  if (!p.some((x) => x > 0)) return p.map(() => 0);
  return Array.from(
    sharpenLogp(
      p.map((x) => (x > 0 ? Math.log(x) : -Infinity)),
      e,
    ),
    Math.exp,
  );
}

/**
 * The exact distribution of the act VS returns, given the verbalized q: `verbalize` lists k acts
 * drawn i.i.d. from q, then `select` picks one. `random` picks a candidate uniformly, so each act
 * comes out with probability q exactly. `prob` picks a candidate with probability ∝ its
 * verbalized probability q(a)/count(a); summed over an act's paraphrases that is q(a)/q(S), S the
 * set of distinct acts listed, so P(a) = Σ_{S∋a} P(S) q(a)/q(S), where P(S) — the k draws cover
 * exactly S — is Σ_{T⊆S} (−1)^{|S∖T|} q(T)^k (inclusion–exclusion, a Möbius transform over subsets).
 */
export function vsSampled(q: readonly number[], k: number, selection: VsSelection): number[] {
  if (!(k >= 1 && Number.isInteger(k)))
    throw new Error(`vs k must be a positive integer, got ${k}`);
  const z = q.reduce((s, x) => s + Math.max(0, x), 0);
  const qn = q.map((x) => Math.max(0, x) / z);
  if (selection === "random" || k === 1) return qn;
  const idx = qn.flatMap((x, i) => (x > 0 ? [i] : []));
  const n = idx.length;
  if (n > 20)
    throw new Error(`vsSampled: ${n} possible replies is too many for the exact sum over subsets`);
  const mass = new Float64Array(1 << n); // q(S)
  for (let s = 1; s < 1 << n; s++) {
    const low = s & -s;
    mass[s] = mass[s ^ low] + qn[idx[31 - Math.clz32(low)]];
  }
  const cover = Float64Array.from(mass, (m) => m ** k); // P(all k draws in S)
  for (let b = 0; b < n; b++)
    for (let s = 0; s < 1 << n; s++) if (s & (1 << b)) cover[s] -= cover[s ^ (1 << b)]; // → P(distinct set = S)
  const out = qn.map(() => 0);
  for (let s = 1; s < 1 << n; s++) {
    const ps = Math.max(0, cover[s]); // clamp rounding noise
    if (ps === 0) continue;
    for (let j = 0; j < n; j++) if (s & (1 << j)) out[idx[j]] += (ps * qn[idx[j]]) / mass[s];
  }
  const t = out.reduce((a, b) => a + b, 0);
  return out.map((x) => x / t);
}

export interface WhatIf {
  gamma: number; // alignment γ of the aligned simulator
  fidelity: number; // VS φ
  k: number; // VS candidates
  selection: VsSelection;
}

/** The aligned row (π_ref^γ) and the VS rows (verbalized q_φ and what VS samples) from a reference row. */
export function whatIfRows(
  reference: readonly number[],
  w: WhatIf,
): { aligned: number[]; verbalized: number[]; vs: number[] } {
  const verbalized = sharpen(reference, vsExponent(w.gamma, w.fidelity));
  return {
    aligned: sharpen(reference, w.gamma),
    verbalized,
    vs: vsSampled(verbalized, w.k, w.selection),
  };
}

export const sameWhatIf = (a: WhatIf, b: WhatIf) =>
  a.gamma === b.gamma && a.fidelity === b.fidelity && a.k === b.k && a.selection === b.selection;

// γ sliders run on a log scale from 1 to 100; a position maps to γ with 3 significant digits so
// that dragging back to the run's γ (a round number) lands on it exactly.
export const GAMMA_MAX = 100;
export const gammaToPosition = (g: number) => Math.log(g) / Math.log(GAMMA_MAX);
export const positionToGamma = (t: number) =>
  Math.min(GAMMA_MAX, Math.max(1, Number((GAMMA_MAX ** t).toPrecision(3))));

/** How many of the most likely replies it takes to hold at least `share` of the mass. */
export function repliesToCover(p: readonly number[], share = 0.9): number {
  const sorted = [...p].sort((a, b) => b - a);
  let s = 0;
  for (let i = 0; i < sorted.length; i++) {
    s += sorted[i];
    if (s >= share - 1e-9) return i + 1;
  }
  return sorted.length;
}

/** The replies in decreasing probability: [act, p] pairs. */
export function ranked(
  p: readonly number[],
  acts: readonly string[],
): { act: string; p: number }[] {
  return p.map((x, i) => ({ act: acts[i], p: x })).sort((a, b) => b.p - a.p);
}

// a share that rounds to 100 % but is not all of it reads "over 99 %", one that rounds to 0 "under 1 %"
const share = (x: number) =>
  x >= 0.995 && x < 1 ? `over ${pct(0.99)}` : x > 0 && x < 0.005 ? `under ${pct(0.01)}` : pct(x);
const replies = (n: number) => (n === 1 ? "1 reply holds" : `${n} replies hold`);

/**
 * One sentence about how concentrated the aligned row is, built from the numbers on screen (no
 * fixed claim such as "almost all its mass on one reply" that a chart showing 36 % and 35 % would
 * contradict).
 */
export function concentrationSentence(
  acts: readonly string[],
  rows: { aligned: readonly number[]; reference: readonly number[]; bayes?: readonly number[] },
  gamma: number,
): string {
  const [first, second] = ranked(rows.aligned, acts);
  const top =
    first.p >= 0.9 || !second || second.p < 0.005
      ? `puts ${share(first.p)} of its mass on one reply, “${first.act}”`
      : `puts ${share(first.p)} on “${first.act}” and ${share(second.p)} on “${second.act}”`;
  const nA = repliesToCover(rows.aligned);
  const nR = repliesToCover(rows.reference);
  const others = rows.bayes
    ? `the Bayes predictive of real people needs ${repliesToCover(rows.bayes)} and the reference ${nR}`
    : `the reference needs ${nR}`;
  const lead =
    gamma === 1
      ? "With γ = 1 the aligned simulator is the reference itself (no collapse): it"
      : `At γ = ${gamma} the aligned simulator`;
  return `${lead} ${top}; ${replies(nA)} 90 % of its mass, where ${others}.`;
}
