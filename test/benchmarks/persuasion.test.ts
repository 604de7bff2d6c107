// The persuasion world (docs/architecture.md#persuasion, #models): the latent-type population (priors, sampling, reply
// rows on the allowed class only, willingness moved by liked / disliked strategies with decaying
// repeats, ordered-logit donations, conflicting preferences — trap 2), the exact Bayes predictive
// against Monte Carlo estimates from the population itself, the episode rules and reward, the
// calibration rows against P4G, and the behaviour persuader's strategy frequencies against the
// real annotated corpus in ../shared/data/p4g.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import {
  ACTS,
  AMOUNT_ACTS,
  AMOUNTS,
  ASK,
  CLASS,
  GREETING,
  MAX_EXCHANGES,
  STRATEGY_ACTS,
  USER_ACTS,
  donation,
  turn,
  userClass,
} from "../../src/benchmarks/persuasion/world";
import { DEFAULT_PARAMS, PersuasionPopulation } from "../../src/benchmarks/persuasion/population";
import { behaviourDialogue, createPersuasion } from "../../src/benchmarks/persuasion/bench";
import { calibrate } from "../../src/benchmarks/persuasion/calibration";
import { loadP4GStats } from "../../src/benchmarks/persuasion/p4g-load";
import { HAVE_P4G, P4G_DATA } from "./p4g-data";
import { p4gStats, type P4GStrategy } from "../../src/benchmarks/persuasion/p4g-stats";
import type { CalibrationRow, Dialogue } from "../../src/benchmarks/types";
import { Rng } from "../../src/engine/random";
import { maxZ, sum } from "../stats-helpers";

const bench = createPersuasion();
const pop = bench.humans;

const P4G_DIR = P4G_DATA; // ../shared beside the project, as in CI

/** The corpus' persuadees' donations: full_info.csv rows with B4 = 1 and a donation B6 in [0, 2] (p4g-load.ts' rule). */
function corpusDonations(): number[] {
  const rows = parse(readFileSync(join(P4G_DIR, "full_info.csv"), "utf8"), {
    columns: true,
    skip_empty_lines: true,
  }) as Record<string, string>[];
  return rows
    .filter((r) => r.B4 === "1" && r.B6.trim() !== "")
    .map((r) => Number(r.B6))
    .filter((x) => Number.isFinite(x) && x >= 0 && x <= 2);
}

/** Donations of n humans talking to the behaviour persuader (the calibration's recipe). */
function simulatedDonations(n: number, rng: Rng): number[] {
  return Array.from({ length: n }, () => donation(behaviourDialogue(pop, pop.sample(rng), rng)));
}
const V = ACTS.length;
const act = (name: string) => {
  const i = ACTS.findIndex((a) => a.name === name);
  if (i < 0) throw new Error(`no act ${name}`);
  return i;
};
const acts = (...names: string[]) => names.map(act);
const typeIndex = (name: string) => {
  const z = pop.types.findIndex((t) => t.name === name);
  if (z < 0) throw new Error(`no type ${name}`);
  return z;
};
const CARD = pop.cardDistribution()[0].card; // any card; fixed so conditioning is well defined

/** Prefixes of a dialogue at which the user acts next. */
function userPrefixes(d: Dialogue): Dialogue[] {
  const out: Dialogue[] = [];
  for (let i = 1; i <= d.acts.length; i += 2) out.push({ card: d.card, acts: d.acts.slice(0, i) });
  return out;
}

// One shared corpus of behaviour dialogues (about 1 s): used for the predictive by grouping,
// for the reply-row checks and for the strategy frequencies.
const CORPUS_N = 100_000;
const corpus: { d: Dialogue; type: number }[] = (() => {
  const rng = Rng.seed(20240);
  return Array.from({ length: CORPUS_N }, () => {
    const persona = pop.sample(rng);
    return { d: behaviourDialogue(pop, persona, rng), type: persona.type };
  });
})();

describe("the human population", () => {
  it("type priors sum to 1 and every type has a name and a positive prior", () => {
    expect(sum(pop.types.map((t) => t.prior))).toBeCloseTo(1, 12);
    for (const t of pop.types) {
      expect(t.prior).toBeGreaterThan(0);
      expect(t.name.length).toBeGreaterThan(0);
    }
    expect(
      () =>
        new PersuasionPopulation({
          ...DEFAULT_PARAMS,
          types: DEFAULT_PARAMS.types.map((t) => ({ ...t, prior: t.prior * 2 })),
        }),
    ).toThrow(/type priors sum to .*, expected 1/);
  });

  it("sample draws types with the prior frequencies and cards with cardDistribution's", () => {
    const rng = Rng.seed(1);
    const n = 20_000;
    const typeCounts = new Array<number>(pop.types.length).fill(0);
    const cards = pop.cardDistribution();
    const cardCounts = new Array<number>(cards.length).fill(0);
    for (let i = 0; i < n; i++) {
      const p = pop.sample(rng);
      typeCounts[p.type]++;
      const c = cards.findIndex((x) => x.card.join(",") === p.card.join(","));
      expect(c).toBeGreaterThanOrEqual(0);
      cardCounts[c]++;
    }
    // chi-square with 3 and 7 degrees of freedom: 99.9 % quantiles 16.3 and 24.3
    const chi2 = (counts: number[], p: number[]) =>
      counts.reduce((s, c, i) => s + (c - n * p[i]) ** 2 / (n * p[i]), 0);
    expect(
      chi2(
        typeCounts,
        pop.types.map((t) => t.prior),
      ),
    ).toBeLessThan(16.3);
    expect(sum(cards.map((c) => c.p))).toBeCloseTo(1, 12);
    expect(
      chi2(
        cardCounts,
        cards.map((c) => c.p),
      ),
    ).toBeLessThan(24.3);
  });

  it("replyProbs rows sum to 1 over exactly the allowed class (userClass) and are 0 elsewhere", () => {
    let checked = 0;
    const bad: string[] = [];
    const classesSeen = new Set<number>();
    for (const { d } of corpus.slice(0, 400)) {
      for (const prefix of userPrefixes(d)) {
        const cls = userClass(prefix);
        classesSeen.add(cls);
        const allowed = new Set(bench.maskClasses[cls].allowed);
        for (let z = 0; z < pop.types.length; z++) {
          const row = pop.replyProbs(z, prefix);
          let inside = 0;
          for (let v = 0; v < V; v++) {
            if (allowed.has(v)) inside += row[v];
            if (row.length !== V || row[v] < 0 || (!allowed.has(v) && row[v] !== 0))
              bad.push(`${prefix.acts} type ${z} act ${v}: ${row[v]}`);
          }
          if (Math.abs(inside - 1) > 1e-12) bad.push(`${prefix.acts} type ${z}: sums to ${inside}`);
          checked++;
        }
      }
    }
    expect(bad).toEqual([]);
    expect(classesSeen).toEqual(new Set([CLASS.talk, CLASS.amount]));
    expect(bench.maskClasses[CLASS.talk].allowed).toEqual(USER_ACTS);
    expect(bench.maskClasses[CLASS.amount].allowed).toEqual(AMOUNT_ACTS);
    expect(checked).toBeGreaterThan(1000);
  });

  it("willingness rises after a liked strategy and falls after a disliked one (skeptic, empathetic)", () => {
    const w = (type: string, ...names: string[]) =>
      pop.willingness(typeIndex(type), { card: CARD, acts: acts(...names) });
    const w0 = (type: string) => w(type);
    expect(w("skeptic", "credibility")).toBeGreaterThan(w0("skeptic"));
    expect(w("skeptic", "emotion")).toBeLessThan(w0("skeptic"));
    expect(w("empathetic", "emotion")).toBeGreaterThan(w0("empathetic"));
    expect(w("empathetic", "credibility")).toBeLessThan(w0("empathetic"));
    // only the agent's acts move it: the user's replies do not
    expect(w("skeptic", "credibility", "agree")).toBe(w("skeptic", "credibility", "refuse"));
  });

  it("the n-th use of one strategy moves willingness by repeatDecay^(n−1) of the first, other strategies in between or not", () => {
    for (const decay of [DEFAULT_PARAMS.repeatDecay, 0.25]) {
      const p = new PersuasionPopulation({ ...DEFAULT_PARAMS, repeatDecay: decay });
      const z = typeIndex("skeptic");
      const w = (...names: string[]) => p.willingness(z, { card: CARD, acts: acts(...names) });
      const first = w("credibility") - w();
      expect(Math.abs(first)).toBeGreaterThan(0.1);
      expect(w("credibility", "neutral", "credibility") - w("credibility")).toBeCloseTo(
        first * decay,
        12,
      );
      expect(
        w("credibility", "neutral", "credibility", "neutral", "credibility") -
          w("credibility", "neutral", "credibility"),
      ).toBeCloseTo(first * decay ** 2, 12);
      // an interleaved strategy adds its own first-use effect and does not reset the count
      const logical = w("logical") - w();
      expect(w("credibility", "neutral", "logical", "neutral", "credibility") - w()).toBeCloseTo(
        first + logical + first * decay,
        12,
      );
    }
  });

  it("amountProbs is a distribution over $0 … $2 whose mean rises with willingness", () => {
    let prevMean = -Infinity;
    for (let w = -4; w <= 5; w += 0.25) {
      const p = pop.amountProbs(w);
      expect(p).toHaveLength(AMOUNTS.length);
      for (const x of p) expect(x).toBeGreaterThanOrEqual(0);
      expect(sum(p)).toBeCloseTo(1, 12);
      const mean = p.reduce((s, x, k) => s + x * AMOUNTS[k], 0);
      expect(mean).toBeGreaterThan(prevMean);
      prevMean = mean;
    }
    expect(pop.amountProbs(-10)[0]).toBeGreaterThan(0.99);
    expect(pop.amountProbs(10)[AMOUNTS.length - 1]).toBeGreaterThan(0.99);
  });

  it("a liked strategy makes the type give more when asked and react more positively", () => {
    const z = typeIndex("skeptic");
    const expected = (names: string[]) => {
      const row = pop.replyProbs(z, { card: CARD, acts: acts(...names) });
      return AMOUNT_ACTS.reduce((s, a, k) => s + row[a] * AMOUNTS[k], 0);
    };
    expect(expected(["credibility", "neutral", "ask"])).toBeGreaterThan(
      expected(["emotion", "neutral", "ask"]) + 0.1,
    );
    const positive = (names: string[]) => {
      const row = pop.replyProbs(z, { card: CARD, acts: acts(...names) });
      return row[act("agree")] + row[act("share-personal")];
    };
    expect(positive(["credibility"])).toBeGreaterThan(positive(["emotion"]));
  });

  it("types want different, conflicting strategies: the modal type's best strategy puts off another type (trap 2)", () => {
    const delta = (z: number, s: number) =>
      pop.willingness(z, { card: CARD, acts: [s] }) - pop.willingness(z, { card: CARD, acts: [] });
    const best = pop.types.map((_, z) =>
      STRATEGY_ACTS.reduce((b, s) => (delta(z, s) > delta(z, b) ? s : b)),
    );
    const modal = pop.types.reduce((m, t, z) => (t.prior > pop.types[m].prior ? z : m), 0);
    expect(new Set(best).size).toBeGreaterThan(1); // not one strategy for everybody
    const hurt = pop.types.map((_, z) => z).filter((z) => z !== modal && delta(z, best[modal]) < 0);
    expect(hurt.length).toBeGreaterThanOrEqual(1);
    // and it is a best strategy of no other type
    for (let z = 0; z < pop.types.length; z++)
      if (z !== modal) expect(best[z]).not.toBe(best[modal]);
  });
});

describe("the exact Bayes predictive", () => {
  it("equals Monte Carlo next-act frequencies, grouping behaviour dialogues by (card, prefix)", () => {
    const groups = new Map<string, { d: Dialogue; counts: Float64Array }>();
    for (const { d } of corpus) {
      for (let i = 1; i < d.acts.length; i += 2) {
        const key = `${d.card.join(",")}|${d.acts.slice(0, i).join(",")}`;
        let g = groups.get(key);
        if (!g)
          groups.set(
            key,
            (g = { d: { card: d.card, acts: d.acts.slice(0, i) }, counts: new Float64Array(V) }),
          );
        g.counts[d.acts[i]]++;
      }
    }
    const byLength = (len: number) =>
      [...groups.values()]
        .filter((g) => g.d.acts.length === len)
        .sort((a, b) => sum(b.counts) - sum(a.counts))
        .slice(0, 4);
    const tested = [...byLength(1), ...byLength(3)];
    for (const g of tested) {
      expect(sum(g.counts)).toBeGreaterThan(300);
      expect(
        maxZ(g.counts, bench.bayesPredictive(g.d)),
        g.d.acts.map((a) => ACTS[a].name).join(" "),
      ).toBeLessThan(4.5);
    }
  });

  it("equals Monte Carlo estimates by rejection on deeper prefixes, and the prior-only predictive does not", () => {
    // The behaviour persuader ignores the user, so conditioning on its acts is the same as fixing
    // them: draw (type, card) from the population, keep those with the target card whose replies
    // to the fixed agent acts match the prefix, and draw the next reply.
    const targets: Dialogue[] = [
      ["greeting", "share-personal", "emotion"],
      ["credibility", "object-trust", "logical", "ask-question", "ask"], // answered with an amount
      ["greeting", "agree", "personal-story", "share-personal", "emotion"],
    ].map((names) => ({ card: CARD, acts: acts(...names) }));
    const counts = targets.map(() => new Float64Array(V));
    const rng = Rng.seed(77);
    const key = CARD.join(",");
    for (let i = 0; i < 400_000; i++) {
      const p = pop.sample(rng);
      if (p.card.join(",") !== key) continue;
      targets.forEach((t, j) => {
        for (let k = 1; k < t.acts.length; k += 2) {
          if (
            rng.categorical(pop.replyProbs(p.type, { card: CARD, acts: t.acts.slice(0, k) })) !==
            t.acts[k]
          )
            return;
        }
        counts[j][rng.categorical(pop.replyProbs(p.type, t))]++;
      });
    }
    const prior = pop.posterior({ card: CARD, acts: [] });
    targets.forEach((t, j) => {
      const name = t.acts.map((a) => ACTS[a].name).join(" ");
      expect(sum(counts[j]), name).toBeGreaterThan(500);
      expect(maxZ(counts[j], bench.bayesPredictive(t)), name).toBeLessThan(4.5);
      // ignoring what the replies reveal (the card-only mixture) is clearly rejected
      const naive = new Float64Array(V);
      prior.forEach((w, z) => pop.replyProbs(z, t).forEach((x, v) => (naive[v] += w * x)));
      expect(maxZ(counts[j], naive), name).toBeGreaterThan(6);
    });
  });

  it("is a distribution on the allowed class, and posterior sums to 1", () => {
    for (const { d } of corpus.slice(0, 200)) {
      for (const prefix of userPrefixes(d)) {
        const post = pop.posterior(prefix);
        expect(sum(post)).toBeCloseTo(1, 12);
        const p = bench.bayesPredictive(prefix);
        const allowed = new Set(bench.maskClasses[userClass(prefix)].allowed);
        expect(sum(p)).toBeCloseTo(1, 12);
        expect(p.every((x, v) => (allowed.has(v) ? x >= 0 : x === 0))).toBe(true);
      }
    }
  });

  it("with cardInformativeness 0 the posterior before any reply is the prior; with 1 the card moves it", () => {
    const blind = createPersuasion({ ...DEFAULT_PARAMS, cardInformativeness: 0 }).humans;
    const priors = blind.types.map((t) => t.prior);
    for (const { card, p } of blind.cardDistribution()) {
      expect(p).toBeCloseTo(1 / 8, 12);
      for (const prefix of [[], [GREETING], [ASK]]) {
        const post = Array.from(blind.posterior({ card, acts: prefix }));
        post.forEach((x, z) => expect(x).toBeCloseTo(priors[z], 12));
      }
    }
    // with an informative card, some card shifts the posterior away from the prior
    const shifts = pop
      .cardDistribution()
      .map(({ card }) =>
        Math.max(
          ...Array.from(pop.posterior({ card, acts: [] }), (x, z) =>
            Math.abs(x - pop.types[z].prior),
          ),
        ),
      );
    expect(Math.max(...shifts)).toBeGreaterThan(0.01);
    // and a reply moves it even when the card says nothing
    const after = blind.posterior({ card: CARD, acts: acts("greeting", "share-personal") });
    expect(after[typeIndex("empathetic")]).toBeGreaterThan(priors[typeIndex("empathetic")] + 0.1);
  });
});

describe("episode rules", () => {
  const d = (...names: string[]): Dialogue => ({ card: CARD, acts: acts(...names) });

  it("agent and user alternate, the agent opens", () => {
    expect(turn(d())).toBe("agent");
    expect(turn(d("greeting"))).toBe("user");
    expect(turn(d("greeting", "neutral"))).toBe("agent");
    expect(turn(d("greeting", "neutral", "logical"))).toBe("user");
    expect(bench.agentClass(d())).toBe(CLASS.agent);
    expect(bench.maskClasses[CLASS.agent].allowed.every((a) => ACTS[a].kind === "agent")).toBe(
      true,
    );
  });

  it("the user must answer ask with an amount, which ends the dialogue", () => {
    expect(userClass(d("ask"))).toBe(CLASS.amount);
    expect(userClass(d("greeting", "neutral", "ask"))).toBe(CLASS.amount);
    expect(userClass(d("greeting"))).toBe(CLASS.talk);
    for (const a of AMOUNT_ACTS) expect(turn({ card: CARD, acts: [ASK, a] })).toBe("done");
    expect(turn(d("greeting", "neutral", "ask", "$0"))).toBe("done");
    // the Bayes predictive puts all its mass on amounts after ask
    const p = bench.bayesPredictive(d("greeting", "neutral", "ask"));
    expect(sum(AMOUNT_ACTS.map((a) => p[a]))).toBeCloseTo(1, 12);
  });

  it("after 5 exchanges without an ask the user states a final donation", () => {
    const five = d(
      "greeting",
      "neutral",
      "logical",
      "agree",
      "emotion",
      "neutral",
      "credibility",
      "agree",
      "task-inquiry",
      "neutral",
    );
    expect(five.acts).toHaveLength(2 * MAX_EXCHANGES);
    expect(turn(five)).toBe("user");
    expect(userClass(five)).toBe(CLASS.amount);
    expect(turn({ card: CARD, acts: [...five.acts, act("$1")] })).toBe("done");
    expect(userClass({ card: CARD, acts: five.acts.slice(0, 9) })).toBe(CLASS.talk);
  });

  it("behaviour dialogues obey the rules: alternate kinds, end at their first and only amount, ≤ 5 exchanges", () => {
    for (const { d: x } of corpus.slice(0, 2000)) {
      expect(x.acts.length).toBeLessThanOrEqual(2 * MAX_EXCHANGES + 1);
      // agent, user, agent, user, …, and the last act is the user's amount (after ask, or the
      // final decision that follows the 5th exchange directly)
      x.acts.forEach((a, i) => {
        const kind = ACTS[a].kind;
        if (i === x.acts.length - 1) expect(kind).toBe("outcome");
        else expect(kind).toBe(i % 2 === 0 ? "agent" : "user");
      });
      expect(turn(x)).toBe("done");
      const asked = x.acts.indexOf(ASK);
      if (asked >= 0) expect(asked).toBe(x.acts.length - 2);
      else expect(x.acts).toHaveLength(2 * MAX_EXCHANGES + 1);
    }
  });

  // render() picks the speaker by parity, so the final decision after the 5th exchange (act 10,
  // an even index) is shown as the agent's line; turn() and encode() get it right.
  it("render: the final decision after 5 exchanges is spoken by the user", () => {
    const bench = createPersuasion();
    const names = [
      "greeting",
      "neutral",
      "logical",
      "agree",
      "emotion",
      "neutral",
      "credibility",
      "agree",
      "task-inquiry",
      "neutral",
      "$1",
    ];
    const acts = names.map((n) => bench.acts.findIndex((a) => a.name === n));
    const lines = bench.render({ card: bench.humans.cardDistribution()[0].card, acts });
    expect(lines.map((l) => l.speaker)).toEqual([
      "agent",
      "user",
      "agent",
      "user",
      "agent",
      "user",
      "agent",
      "user",
      "agent",
      "user",
      "user",
    ]);
  });

  it("reward = min(donation / 2, 1), success = donation ≥ $1", () => {
    AMOUNT_ACTS.forEach((a, k) => {
      const x: Dialogue = { card: CARD, acts: [GREETING, act("neutral"), ASK, a] };
      expect(donation(x)).toBe(AMOUNTS[k]);
      expect(bench.reward(x)).toBeCloseTo(Math.min(AMOUNTS[k] / 2, 1), 12);
      expect(bench.success(x)).toBe(AMOUNTS[k] >= 1);
    });
    expect(bench.reward(d("greeting", "neutral"))).toBe(0); // no amount yet
    expect(bench.success(d("greeting", "neutral"))).toBe(false);
  });
});

describe.skipIf(!HAVE_P4G)("calibration against Persuasion for Good", () => {
  const rows = calibrate(pop, Rng.seed(2024));
  console.info(
    "persuasion calibration (fitted vs real, tolerance):\n" +
      rows
        .map(
          (r) =>
            `  ${r.name.padEnd(32)} real ${r.real.toFixed(3)}  fitted ${r.fitted.toFixed(3)}  ±${r.tolerance}${Math.abs(r.fitted - r.real) <= r.tolerance ? "" : "  OUTSIDE"}`,
        )
        .join("\n"),
  );
  const row = (name: string): CalibrationRow => {
    const r = rows.find((x) => x.name === name);
    if (!r)
      throw new Error(`no calibration row "${name}"; rows: ${rows.map((x) => x.name).join(", ")}`);
    return r;
  };

  it("reports the four docs/architecture.md#persuasion targets with the real corpus values", () => {
    expect(rows.map((r) => r.name)).toEqual([
      "mean donation ($)",
      "fraction giving $0",
      "median among donors ($)",
      "fraction giving ≥ $1 (success)",
    ]);
    expect(row("mean donation ($)").real).toBeCloseTo(0.35, 1);
    expect(row("fraction giving $0").real).toBeCloseTo(0.48, 1);
    expect(row("median among donors ($)").real).toBe(0.5);
  });

  // Bands from the corpus' own sampling error, not the tolerance the world reports: 982 persuadees
  // (n_real) against calibrate's 20,000 simulated ones (n_fit), so the difference of a mean or a
  // fraction has se² = var_real / n_real + var_fit / n_fit. A fitted value must lie within 3 se:
  // three statistics at 3 se each keep the chance that a population drawn like the corpus falls
  // outside any band below 1 % (Bonferroni). The median among donors (a discrete statistic) must
  // lie in the distribution-free band of the real donors' order statistics at ranks m/2 ± 3·√m/2.
  const corpus = corpusDonations();
  const nReal = corpus.length;
  const nFit = 20_000; // calibrate's default
  const fittedDonations = simulatedDonations(nFit, Rng.seed(2025));
  const sdOf = (xs: number[]) => {
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
  };

  it("reads the same 982 persuadees as the committed statistics", () => {
    expect(nReal).toBe(982);
    expect(corpus.reduce((a, b) => a + b, 0) / nReal).toBeCloseTo(p4gStats.donations.mean, 3);
    expect(corpus.filter((x) => x === 0).length / nReal).toBeCloseTo(
      p4gStats.donations.zeroFraction,
      3,
    );
  });

  it("mean donation: fitted within 3 standard errors of the corpus' mean", () => {
    const r = row("mean donation ($)");
    const se = Math.sqrt(sdOf(corpus) ** 2 / nReal + sdOf(fittedDonations) ** 2 / nFit); // ≈ 0.018
    expect(
      Math.abs(r.fitted - r.real),
      `fitted ${r.fitted}, real ${r.real}, se ${se.toFixed(4)}`,
    ).toBeLessThanOrEqual(3 * se);
  });

  for (const [name, p] of [
    ["fraction giving $0", (x: number) => x === 0],
    ["fraction giving ≥ $1 (success)", (x: number) => x >= 1],
  ] as const) {
    it(`${name}: fitted within 3 standard errors of the corpus' fraction`, () => {
      const r = row(name);
      expect(r.real).toBeCloseTo(corpus.filter(p).length / nReal, 3);
      const se = Math.sqrt((r.real * (1 - r.real)) / nReal + (r.fitted * (1 - r.fitted)) / nFit); // ≈ 0.016 and 0.013
      expect(
        Math.abs(r.fitted - r.real),
        `fitted ${r.fitted}, real ${r.real}, se ${se.toFixed(4)}, z ${((r.fitted - r.real) / se).toFixed(2)}`,
      ).toBeLessThanOrEqual(3 * se);
    });
  }

  it("median among donors: fitted within the real donors' order-statistic band", () => {
    const donors = corpus.filter((x) => x > 0).sort((a, b) => a - b);
    const m = donors.length; // 510
    const [lo, hi] = [
      donors[Math.floor(m / 2 - (3 * Math.sqrt(m)) / 2)],
      donors[Math.ceil(m / 2 + (3 * Math.sqrt(m)) / 2) - 1],
    ]; // $0.30, $0.50
    const r = row("median among donors ($)");
    expect(r.real).toBe(0.5);
    expect(r.fitted >= lo && r.fitted <= hi, `fitted ${r.fitted}, band [${lo}, ${hi}]`).toBe(true);
  });
});

describe.skipIf(!HAVE_P4G)("the fitted donation histogram against the real one", () => {
  // Distance: Pearson's X² = Σ_k (O_k − E_k)² / E_k over the five amounts, O the corpus' counts
  // (982 persuadees, each donation rounded to the nearest $0.5 as the report's "real" histogram
  // is), E = 982 × the fitted fractions (20,000 simulated persuadees, the report's recipe), divided
  // by 1 + 982 / 20,000 for the simulation's own noise. If the corpus were 982 draws from the
  // fitted population, X² would follow χ² with 4 degrees of freedom: P(X² > x) = e^(−x/2)(1 + x/2),
  // so X² > 18.47 happens with probability 0.001. That is the bound.
  const nFit = 20_000;
  const corpus = corpusDonations();
  const real = AMOUNTS.map(
    (_, k) => corpus.filter((d) => Math.floor(d * 2 + 0.5) === k).length / corpus.length,
  );
  const donations = simulatedDonations(nFit, Rng.seed(12345));
  const fitted = AMOUNTS.map((a) => donations.filter((d) => d === a).length / nFit);

  it("the real histogram is the committed one", () => {
    real.forEach((r, k) => expect(r).toBeCloseTo(p4gStats.donations.histogram.fractions[k], 3));
    const bound = 18.47;
    expect(Math.exp(-bound / 2) * (1 + bound / 2)).toBeCloseTo(0.001, 5);
  });

  // A known miss, kept as a failing expectation until the world is recalibrated: the corpus has 57
  // of 982 persuadees giving $2 (5.8 %), the toy 0.2 %, and too many give $0.5 (X² ≈ 1,800). The
  // world is fitted to the four summary rows above, not to the histogram's shape. `it.fails` turns
  // red the day the shape is fitted, so that this becomes a plain test again.
  it.fails(
    "is within sampling error of the real one (χ², 4 df, p > 0.001) — known miss: the $2 and $0.5 bins",
    () => {
      const n = corpus.length;
      const x2 =
        (n * real.reduce((s, r, k) => s + (r - fitted[k]) ** 2 / fitted[k], 0)) / (1 + n / nFit);
      const tvd = real.reduce((s, r, k) => s + Math.abs(r - fitted[k]), 0) / 2;
      const bins = AMOUNTS.map(
        (a, k) => `$${a}: real ${real[k].toFixed(4)} fitted ${fitted[k].toFixed(4)}`,
      ).join("; ");
      expect(x2, `X² ${x2.toFixed(1)}, total variation ${tvd.toFixed(3)} — ${bins}`).toBeLessThan(
        18.47,
      );
    },
  );
});

describe.skipIf(!HAVE_P4G)("the behaviour persuader against the real P4G corpus", () => {
  const real = loadP4GStats(P4G_DIR);
  // toy act → P4G label
  const LABEL: Record<string, P4GStrategy> = {
    logical: "logical-appeal",
    emotion: "emotion-appeal",
    credibility: "credibility-appeal",
    "foot-in-the-door": "foot-in-the-door",
    "self-modeling": "self-modeling",
    "personal-story": "personal-story",
    "donation-information": "donation-information",
    "source-inquiry": "source-related-inquiry",
    "task-inquiry": "task-related-inquiry",
    "personal-inquiry": "personal-related-inquiry",
  };
  const counts = new Map<P4GStrategy, number>();
  for (const { d } of corpus) {
    d.acts.forEach((a, i) => {
      if (i % 2 === 0 && STRATEGY_ACTS.includes(a))
        counts.set(LABEL[ACTS[a].name], (counts.get(LABEL[ACTS[a].name]) ?? 0) + 1);
    });
  }
  const total = sum([...counts.values()]);
  const toy = (s: P4GStrategy) => (counts.get(s) ?? 0) / total;

  it("every toy strategy maps to a P4G strategy", () => {
    expect(STRATEGY_ACTS.map((a) => LABEL[ACTS[a].name]).sort()).toEqual(
      Object.keys(real.strategies.counts).sort(),
    );
  });

  it("orders the strategies as the real corpus does (credibility > donation-information > logical > emotion > the rest)", () => {
    const labels = Object.keys(real.strategies.counts) as P4GStrategy[];
    const r = real.strategies.counts;
    const order = [...labels].sort((a, b) => toy(b) - toy(a));
    console.info(
      "behaviour persuader strategy shares:",
      order
        .map(
          (s) =>
            `${s} ${(100 * toy(s)).toFixed(1)}% (real ${(100 * real.strategies.frequencies[s]).toFixed(1)}%)`,
        )
        .join(", "),
    );
    expect(order.slice(0, 4)).toEqual([
      "credibility-appeal",
      "donation-information",
      "logical-appeal",
      "emotion-appeal",
    ]);
    // every pair the real corpus orders clearly (counts ≥ 10 % apart) is ordered the same way;
    // the tail (153–191 sentences each) is too close to order from any sample
    let pairs = 0;
    for (const s of labels) {
      for (const t of labels) {
        if (r[s] > 1.1 * r[t]) {
          expect(toy(s), `${s} vs ${t}`).toBeGreaterThan(toy(t));
          pairs++;
        }
      }
    }
    expect(pairs).toBeGreaterThan(30);
  });

  it("matches the real strategy shares within sampling error", () => {
    expect(total).toBeGreaterThan(200_000);
    for (const s of Object.keys(real.strategies.frequencies) as P4GStrategy[]) {
      const p = real.strategies.frequencies[s];
      expect(Math.abs(toy(s) - p), s).toBeLessThan(4.5 * Math.sqrt((p * (1 - p)) / total));
    }
  });

  it("donation-information is, as in the real corpus, the strategy whose use is most correlated with the donation", () => {
    expect(real.strategyDonation.highestByUse).toBe("donation-information");
    const don = corpus.map(({ d }) => donation(d));
    const r = (s: number) => {
      const use = corpus.map(({ d }) => (d.acts.some((a, i) => i % 2 === 0 && a === s) ? 1 : 0));
      const mu = sum(use) / use.length;
      const md = sum(don) / don.length;
      let sxy = 0,
        sxx = 0,
        syy = 0;
      for (let i = 0; i < use.length; i++) {
        sxy += (use[i] - mu) * (don[i] - md);
        sxx += (use[i] - mu) ** 2;
        syy += (don[i] - md) ** 2;
      }
      return sxy / Math.sqrt(sxx * syy);
    };
    const byStrategy = STRATEGY_ACTS.map((s) => ({ name: ACTS[s].name, r: r(s) })).sort(
      (a, b) => b.r - a.r,
    );
    expect(byStrategy[0].name).toBe("donation-information");
  });
});
