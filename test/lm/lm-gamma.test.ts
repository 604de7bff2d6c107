// γ of a real LM, on synthetic data where the answer is known: fake LanguageModels whose "base"
// puts log-probabilities l on a fixed list of replies per prompt and whose "instruct" model samples
// exactly from base^γ restricted to that list (γ = 3). The candidate-set MLE recovers γ when the
// set is fixed; the contrastive estimator recovers it from instruct + base samples even when no
// reply repeats, where the sample-built MLE collapses to 0 and the report says so.
import { describe, expect, it } from "vitest";
import { Rng } from "../../src/engine/random";
import { gammaNCE, lmGamma, type LmGammaPrompt } from "../../src/lm/lm-gamma";
import type {
  ContinuationScore,
  GenerateOptions,
  Generation,
  LanguageModel,
  LmPrompt,
} from "../../src/lm/types";

const GAMMA = 3;

interface World {
  prompts: { text: string }[];
  replies: string[][]; // per prompt: the candidate texts
  logp: Float64Array[]; // per prompt: base log-probabilities (normalised over the list)
  tokens: number[][];
}

function makeWorld(seed: number, prompts: number, size: number, spread: number): World {
  const rng = Rng.seed(seed);
  const w: World = { prompts: [], replies: [], logp: [], tokens: [] };
  for (let c = 0; c < prompts; c++) {
    w.prompts.push({ text: `Persuader: message ${c}\nPersuadee:` });
    w.replies.push(Array.from({ length: size }, (_, j) => ` reply ${j} to ${c}`));
    const z = Array.from({ length: size }, () => spread * rng.normal());
    const m = Math.max(...z);
    const lse = m + Math.log(z.reduce((s, x) => s + Math.exp(x - m), 0));
    w.logp.push(Float64Array.from(z, (x) => x - lse));
    w.tokens.push(Array.from({ length: size }, () => 2 + rng.int(20)));
  }
  return w;
}

/**
 * An Rng for a per-call seed. Freshly seeded xoroshiro128+ streams of nearby seeds start alike
 * (pure-rand seeds the state with the seed's bits; the first uniform of Rng.seed(s) is ≈ 1 for
 * small s), which correlated the fake's samples across prompts: hash the seed and warm up.
 */
function seededStream(seed: number): Rng {
  let h = Math.imul(seed ^ (seed >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  const rng = Rng.seed((h ^ (h >>> 16)) | 0);
  for (let i = 0; i < 32; i++) rng.uniform();
  return rng;
}

/** A fake LM over the world: scores exactly, samples from base^power over each prompt's list. */
function fakeLm(w: World, id: string, power: number): LanguageModel & { scoreCalls: number } {
  const where = (p: LmPrompt) => {
    if (!("text" in p)) throw new Error("fake LM: text prompts only");
    const c = w.prompts.findIndex((q) => q.text === p.text);
    if (c < 0) throw new Error(`fake LM: unknown prompt ${p.text}`);
    return c;
  };
  return {
    id,
    scoreCalls: 0,
    async score(p: LmPrompt, continuations: string[]): Promise<ContinuationScore[]> {
      this.scoreCalls++;
      const c = where(p);
      return continuations.map((s) => {
        const j = w.replies[c].indexOf(s);
        if (j < 0) throw new Error(`fake LM: unknown continuation ${JSON.stringify(s)}`);
        return { logprob: w.logp[c][j], tokens: w.tokens[c][j] };
      });
    },
    async generate(p: LmPrompt, opts: GenerateOptions = {}): Promise<Generation[]> {
      const c = where(p);
      const rng = seededStream(opts.seed ?? 0);
      const max = Math.max(...w.logp[c]);
      const weights = Array.from(w.logp[c], (l) => Math.exp(power * (l - max)));
      return Array.from({ length: opts.n ?? 1 }, () => {
        const j = rng.categorical(weights);
        return { text: w.replies[c][j], tokens: w.tokens[c][j] };
      });
    },
  };
}

async function samples(
  w: World,
  instructN: number,
  baseN: number,
  seed: number,
  fixed: boolean,
): Promise<LmGammaPrompt[]> {
  const instruct = fakeLm(w, "instruct", GAMMA);
  const base = fakeLm(w, "base", 1);
  return Promise.all(
    w.prompts.map(async (prompt, c) => ({
      prompt,
      replies: (await instruct.generate(prompt, { n: instructN, seed: seed + 2 * c })).map(
        (g) => g.text,
      ),
      baseSamples: baseN
        ? (await base.generate(prompt, { n: baseN, seed: seed + 2 * c + 1 })).map((g) => g.text)
        : undefined,
      candidates: fixed ? w.replies[c] : undefined,
    })),
  );
}

describe("lmGamma on synthetic data (instruct = base^3 on a candidate list)", () => {
  it("candidate-set MLE with the list fixed recovers γ = 3 within a few percent", async () => {
    const w = makeWorld(1, 40, 30, 1.5);
    const base = fakeLm(w, "base", 1);
    const r = await lmGamma(await samples(w, 200, 0, 100, true), base);
    expect(base.scoreCalls).toBe(40); // one batched call per prompt
    expect(r.candidateSet).toBe("fixed");
    expect(r.samples).toBe(8000);
    const err = Math.abs(r.mle!.gamma - GAMMA) / GAMMA;
    expect(err).toBeLessThan(0.03);
    expect(Math.abs(r.mle!.gamma - GAMMA)).toBeLessThan(4 * r.mle!.se);
    expect(r.nce).toBeNull(); // no base samples
    // the reference-aware rough estimators are near γ too; SCOPE's port sees no reference
    expect(Math.abs(r.top1!.gamma - GAMMA) / GAMMA).toBeLessThan(0.15);
    expect(Math.abs(r.zipf!.gamma - GAMMA) / GAMMA).toBeLessThan(0.3);
    expect(Number.isFinite(r.entropyRatio!.gamma)).toBe(true);
    expect(r.scope!.perContext).toHaveLength(40);
    expect(r.warnings).toEqual([]);
  });

  it("the contrastive estimator recovers γ = 3 from instruct and base samples", async () => {
    const w = makeWorld(2, 40, 30, 1.5);
    const r = await lmGamma(await samples(w, 200, 200, 300, false), fakeLm(w, "base", 1));
    expect(r.candidateSet).toBe("samples+base");
    expect(Math.abs(r.nce!.gamma - GAMMA) / GAMMA).toBeLessThan(0.05);
    expect(Math.abs(r.nce!.gamma - GAMMA)).toBeLessThan(4 * r.nce!.se);
    expect(r.nce!.groups).toBe(40);
  });

  it("when no reply repeats: the sample-built MLE collapses to 0 and is flagged; NCE still recovers γ", async () => {
    const w = makeWorld(3, 40, 2000, 0.4);
    const r = await lmGamma(await samples(w, 30, 300, 500, false), fakeLm(w, "base", 1));
    expect(r.uniqueFraction).toBeGreaterThan(0.8);
    expect(r.warnings.some((m) => /biased towards 0/.test(m))).toBe(true);
    expect(r.mle!.gamma).toBeLessThan(2); // far from 3: the candidate set is the data
    expect(Math.abs(r.nce!.gamma - GAMMA) / GAMMA).toBeLessThan(0.05);
    // instruct samples only: every reply unique gives exactly 0
    const only = (await samples(w, 30, 0, 700, false)).map((p) => ({
      ...p,
      replies: [...new Set(p.replies)],
    }));
    const r0 = await lmGamma(only, fakeLm(w, "base", 1));
    expect(Math.abs(r0.mle!.gamma)).toBeLessThan(1e-9); // 0 up to rounding
    expect(r0.nce).toBeNull();
    expect(r0.warnings.some((m) => /add baseSamples for nce/.test(m))).toBe(true);
  });

  it("length normalisation divides each log-likelihood by its token count", async () => {
    const w = makeWorld(4, 3, 10, 1);
    const ps = await samples(w, 20, 5, 900, true);
    const r = await lmGamma(ps, fakeLm(w, "base", 1), { lengthNormalise: true });
    expect(r.lengthNormalised).toBe(true);
    r.contexts.forEach((c, i) => {
      c.candidates.forEach((s, j) => {
        const k = w.replies[i].indexOf(s);
        expect(c.refLogp[j]).toBeCloseTo(w.logp[i][k] / w.tokens[i][k], 12);
        expect(c.tokens[j]).toBe(w.tokens[i][k]);
      });
    });
  });

  it("counts replies outside a fixed candidate set and says so", async () => {
    const w = makeWorld(5, 2, 10, 1);
    const ps = (await samples(w, 50, 0, 1000, true)).map((p) => ({
      ...p,
      candidates: p.candidates!.slice(0, 5),
    }));
    const r = await lmGamma(ps, fakeLm(w, "base", 1));
    const outside = r.contexts.reduce((s, c) => s + c.outside, 0);
    expect(outside).toBeGreaterThan(0);
    expect(r.samples + outside).toBe(100);
    expect(r.warnings.some((m) => m.includes(`${outside} instruct replies are outside`))).toBe(
      true,
    );
  });

  it("refuses no prompts and a mix of fixed and sample-built candidate sets", async () => {
    const w = makeWorld(6, 2, 5, 1);
    const base = fakeLm(w, "base", 1);
    await expect(lmGamma([], base)).rejects.toThrow(/no prompts/);
    const ps = await samples(w, 5, 0, 1, true);
    await expect(lmGamma([ps[0], { ...ps[1], candidates: undefined }], base)).rejects.toThrow(
      /every prompt or for none/,
    );
  });
});

describe("gammaNCE", () => {
  it("recovers the slope of a simulated logistic model, with intercepts per group", () => {
    const rng = Rng.seed(9);
    const groups = Array.from({ length: 20 }, (_, c) => {
      const positive: number[] = [];
      const negative: number[] = [];
      for (let i = 0; i < 400; i++) {
        const x = 2 * rng.normal() - c; // groups on different scales: the intercepts absorb that
        const p = 1 / (1 + Math.exp(-(0.3 * c - 1 + 1.7 * x)));
        (rng.uniform() < p ? positive : negative).push(x);
      }
      return { positive, negative };
    });
    const fit = gammaNCE(groups);
    expect(Math.abs(fit.slope - 1.7)).toBeLessThan(4 * fit.se);
    expect(fit.gamma).toBeCloseTo(1 + fit.slope, 12);
  });

  it("refuses groups without both kinds, constant x and perfect separation", () => {
    expect(() => gammaNCE([{ positive: [1, 2], negative: [] }])).toThrow(/both/);
    expect(() => gammaNCE([{ positive: [1, 1], negative: [1] }])).toThrow(/constant/);
    expect(() => gammaNCE([{ positive: [3, 4, 5], negative: [0, 1, 2] }])).toThrow(/separated/);
  });
});
