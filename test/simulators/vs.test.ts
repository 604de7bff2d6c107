// Verbalized Sampling in the toy (docs/architecture.md#conditions): k candidates whose acts are i.i.d. from q, the
// verbalized probability of an act shared among its paraphrases, `random` selection equal to q in
// expectation, `prob` selection equal to its exact finite-k expectation (computed here by
// enumeration and by inclusion–exclusion) and approaching q as k grows, the verbalized exponent,
// option checks, and the simulator wired to a neural base model.
import { describe, expect, it } from "vitest";
import { createPersuasion } from "../../src/benchmarks/persuasion/bench";
import { Float64Backend } from "../../src/engine/backends/float64";
import { Rng } from "../../src/engine/random";
import { presetConfig } from "../../src/experiment/presets";
import { modelConfig, modelOptions } from "../../src/experiment/pretrain";
import { NeuralSimulator } from "../../src/simulators/neural";
import {
  select,
  VerbalizedSampling,
  verbalize,
  vsExponent,
  type VsSelection,
} from "../../src/simulators/vs";
import { randomCheckpoint } from "../engine/fixtures";
import { maxZ } from "../stats-helpers";

const Q = [0.5, 0.25, 0, 0.15, 0.1]; // one act impossible

const tv = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += Math.abs(a[i] - b[i]) / 2;
  return s;
};

/** Subsets (bitmasks) of the support of q. */
function subsets(q: ArrayLike<number>): number[] {
  Array.from(q).forEach((x, i) => {
    if (x > 0 && i > 30) throw new Error("subsets: bitmasks hold acts 0 … 30 only");
  });
  const support = Array.from(q, (x, i) => (x > 0 ? 1 << i : 0)).reduce((a, b) => a | b, 0);
  const out: number[] = [];
  for (let s = support; ; s = (s - 1) & support) {
    if (s) out.push(s);
    if (s === 0) break;
  }
  return out;
}
const mass = (q: ArrayLike<number>, s: number) =>
  Array.from(q).reduce((m, x, i) => (s & (1 << i) ? m + x : m), 0);
const popcount = (s: number) => s.toString(2).replace(/0/g, "").length;

/** P(the set of distinct acts among k i.i.d. draws is exactly S), by inclusion–exclusion. */
function pDistinctSet(q: ArrayLike<number>, k: number, s: number): number {
  let p = 0;
  for (let t = s; ; t = (t - 1) & s) {
    p += (popcount(s) - popcount(t)) % 2 === 0 ? mass(q, t) ** k : -(mass(q, t) ** k);
    if (t === 0) break;
  }
  return p;
}

/** E[chosen act] under `prob` selection: Σ_S P(S) q(a)/q(S) over the listed sets S ∋ a. */
function probSelectionExact(q: ArrayLike<number>, k: number): number[] {
  const out = new Array<number>(q.length).fill(0);
  for (const s of subsets(q)) {
    const ps = pDistinctSet(q, k, s);
    const qs = mass(q, s);
    for (let a = 0; a < q.length; a++) if (s & (1 << a)) out[a] += (ps * q[a]) / qs;
  }
  return out;
}

/** The same by brute force over all q.length^k candidate act tuples. */
function probSelectionBrute(q: ArrayLike<number>, k: number): number[] {
  const m = q.length;
  const out = new Array<number>(m).fill(0);
  for (let code = 0; code < m ** k; code++) {
    const acts: number[] = [];
    for (let j = 0, c = code; j < k; j++, c = Math.floor(c / m)) acts.push(c % m);
    const weight = acts.reduce((w, a) => w * q[a], 1);
    if (weight === 0) continue;
    const listed = [...new Set(acts)];
    const z = listed.reduce((s, a) => s + q[a], 0);
    for (const a of listed) out[a] += (weight * q[a]) / z;
  }
  return out;
}

describe("verbalize", () => {
  it("returns k candidates whose probabilities are q(act)/count(act), so one act's paraphrases sum to q(act)", () => {
    const rng = Rng.seed(1);
    for (const k of [1, 2, 3, 5, 8]) {
      for (let rep = 0; rep < 200; rep++) {
        const c = verbalize(Q, k, rng);
        expect(c).toHaveLength(k);
        const count = new Map<number, number>();
        for (const x of c) count.set(x.act, (count.get(x.act) ?? 0) + 1);
        for (const x of c) expect(x.probability).toBeCloseTo(Q[x.act] / count.get(x.act)!, 15);
        for (const [a] of count) {
          const shared = c.filter((x) => x.act === a).reduce((s, x) => s + x.probability, 0);
          expect(shared).toBeCloseTo(Q[a], 14);
        }
      }
    }
  });

  it("draws the acts i.i.d. from q: act frequencies ≈ q, never an impossible act", () => {
    const rng = Rng.seed(2);
    const counts = new Array<number>(Q.length).fill(0);
    for (let i = 0; i < 10_000; i++) for (const c of verbalize(Q, 3, rng)) counts[c.act]++;
    expect(counts[2]).toBe(0);
    expect(maxZ(counts, Q)).toBeLessThan(4.5);
  });

  it("the number of distinct acts among k follows the i.i.d. law (mean Σ 1 − (1 − q)^k, full distribution)", () => {
    const rng = Rng.seed(3);
    for (const k of [2, 3, 5]) {
      const n = 10_000;
      const hist = new Array<number>(k + 1).fill(0);
      for (let i = 0; i < n; i++) hist[new Set(verbalize(Q, k, rng).map((c) => c.act)).size]++;
      const law = new Array<number>(k + 1).fill(0);
      for (const s of subsets(Q)) if (popcount(s) <= k) law[popcount(s)] += pDistinctSet(Q, k, s);
      expect(law.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
      const mean = Q.reduce((m, q) => m + 1 - (1 - q) ** k, 0);
      expect(law.reduce((m, p, j) => m + p * j, 0)).toBeCloseTo(mean, 12);
      expect(maxZ(hist, law), `k = ${k}`).toBeLessThan(4.5);
      // not k distinct acts: picking among k *distinct* acts would be the wrong model (docs/architecture.md#conditions)
      expect(hist[k]).toBeLessThan(n);
    }
  });
});

describe("select", () => {
  const frequencies = (selection: VsSelection, k: number, n: number, seed: number) => {
    const rng = Rng.seed(seed);
    const counts = new Array<number>(Q.length).fill(0);
    for (let i = 0; i < n; i++) counts[select(verbalize(Q, k, rng), selection, rng)]++;
    return counts;
  };

  it("`random` reproduces q in expectation for k = 1, 3, 5", () => {
    for (const k of [1, 3, 5]) {
      const counts = frequencies("random", k, 20_000, 10 + k);
      expect(maxZ(counts, Q), `k = ${k}`).toBeLessThan(4.5);
    }
  });

  it("`prob` picks by verbalized probability: exactly q(a)/Σ_listed q for a fixed candidate list", () => {
    const rng = Rng.seed(4);
    // three paraphrases of act 0 and one of act 3: act 0 with 0.5/0.65, act 3 with 0.15/0.65
    const list = [
      { act: 0, probability: 0.5 / 3 },
      { act: 3, probability: 0.15 },
      { act: 0, probability: 0.5 / 3 },
      { act: 0, probability: 0.5 / 3 },
    ];
    const counts = new Array<number>(Q.length).fill(0);
    for (let i = 0; i < 20_000; i++) counts[select(list, "prob", rng)]++;
    expect(maxZ(counts, [0.5 / 0.65, 0, 0, 0.15 / 0.65, 0])).toBeLessThan(4.5);
    // `random` on the same list picks candidates uniformly: act 0 three times in four
    const r = new Array<number>(Q.length).fill(0);
    for (let i = 0; i < 20_000; i++) r[select(list, "random", rng)]++;
    expect(maxZ(r, [0.75, 0, 0, 0.25, 0])).toBeLessThan(4.5);
  });

  it("`prob`'s exact finite-k expectation (enumeration = inclusion–exclusion) matches the sampler", () => {
    for (const k of [1, 2, 3, 4]) {
      const exact = probSelectionExact(Q, k);
      const brute = probSelectionBrute(Q, k);
      exact.forEach((x, a) => expect(x).toBeCloseTo(brute[a], 12));
      expect(exact.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 12);
    }
    for (const k of [2, 3]) {
      const counts = frequencies("prob", k, 20_000, 20 + k);
      expect(maxZ(counts, probSelectionExact(Q, k)), `k = ${k}`).toBeLessThan(4.5);
      // and it is biased toward the mode: the sampler rejects q itself
      expect(probSelectionExact(Q, k)[0]).toBeGreaterThan(Q[0] + 0.05);
      expect(maxZ(counts, Q), `k = ${k}`).toBeGreaterThan(6);
    }
    expect(probSelectionExact(Q, 1)).toEqual(Q.map((x) => expect.closeTo(x, 12))); // k = 1 is q
  });

  it("`prob` approaches q as k grows: the bias at k = 20 is far below that at k = 2", () => {
    const bias = (k: number) => tv(probSelectionExact(Q, k), Q);
    expect(bias(2)).toBeGreaterThan(0.05);
    expect(bias(20)).toBeLessThan(bias(2) / 5); // 0.015 vs 0.115 for this q
    // 0 at k = 1 (one candidate is a draw from q), largest at k = 3 here, then shrinking steadily
    expect(bias(1)).toBeLessThan(1e-12);
    for (let k = 3; k < 20; k++) expect(bias(k + 1)).toBeLessThan(bias(k));
    // the sampler agrees at k = 20
    expect(maxZ(frequencies("prob", 20, 20_000, 40), probSelectionExact(Q, 20))).toBeLessThan(4.5);
  });
});

describe("vsExponent and VerbalizedSampling", () => {
  const bench = createPersuasion();
  const config = presetConfig("persuasion-smoke");
  const ck = randomCheckpoint(
    modelConfig(bench, { d: 16, layers: 1, heads: 2, mlpRatio: 2 }, "simulator"),
    5,
  );
  const model = new Float64Backend().createModel(ck, modelOptions(bench, config));
  const GAMMA = 5;
  const base = new NeuralSimulator("aligned", bench, model, GAMMA, true);
  const card = bench.humans.cardDistribution()[2].card;

  it("vsExponent is γ at φ = 0, 1 at φ = 1, linear in between", () => {
    for (const g of [1, 2, 7.5, 40]) {
      expect(vsExponent(g, 0)).toBe(g);
      expect(vsExponent(g, 1)).toBe(1);
      expect(vsExponent(g, 0.5)).toBeCloseTo((1 + g) / 2, 12);
    }
  });

  it("bad k or fidelity is a clear error", () => {
    const make = (k: number, fidelity: number) => () =>
      new VerbalizedSampling(bench, base, { k, selection: "random", fidelity });
    for (const k of [0, -1, 2.5, NaN])
      expect(make(k, 1)).toThrow(/vs\.k must be a positive integer/);
    for (const f of [-0.1, 1.5, NaN])
      expect(make(5, f)).toThrow(/vs\.fidelity must lie in \[0, 1\]/);
    expect(make(1, 0)).not.toThrow();
    expect(make(64, 1)().name).toContain("k=64");
  });

  it("verbalizes q_φ = the base network at exponent 1 + (γ − 1)(1 − φ), and `random` replies follow it", async () => {
    const d = { card, acts: [1] };
    for (const fidelity of [0, 0.5, 1]) {
      const vs = new VerbalizedSampling(bench, base, { k: 5, selection: "random", fidelity });
      const q = await vs.distribution([d]);
      expect(Array.from(q)).toEqual(
        Array.from(await base.distribution([d], undefined, vsExponent(GAMMA, fidelity))),
      );
    }
    const vs = new VerbalizedSampling(bench, base, { k: 5, selection: "random", fidelity: 0.5 });
    const q = await vs.distribution([d]);
    const n = 8000;
    const replies = await vs.reply(
      Array.from({ length: n }, () => d),
      [],
      Rng.seed(6),
    );
    const counts = new Array<number>(q.length).fill(0);
    for (const a of replies) counts[a]++;
    expect(maxZ(counts, q)).toBeLessThan(4.5);
    // fidelity 1 is flatter than the collapsed simulator
    const entropy = (p: Float64Array) =>
      -Array.from(p).reduce((s, x) => (x > 0 ? s + x * Math.log(x) : s), 0);
    expect(entropy(q)).toBeGreaterThan(entropy(await base.distribution([d])));
  });

  it("`prob` replies follow the exact finite-k expectation of q_φ", async () => {
    const d = { card, acts: [1] };
    const vs = new VerbalizedSampling(bench, base, { k: 3, selection: "prob", fidelity: 1 });
    const q = await vs.distribution([d]);
    const n = 8000;
    const replies = await vs.reply(
      Array.from({ length: n }, () => d),
      [],
      Rng.seed(7),
    );
    const counts = new Array<number>(q.length).fill(0);
    for (const a of replies) counts[a]++;
    expect(maxZ(counts, probSelectionExact(q, 3))).toBeLessThan(4.5);
  });
});
