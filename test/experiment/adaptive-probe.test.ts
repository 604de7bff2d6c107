// The adaptive probe: the exact adapt-once persuader against humans and against a simulator. Its
// stated value is checked against an exact evaluation of its moves over the whole game tree.
import { describe, expect, it } from "vitest";
import { adaptOncePersuader, ceilings } from "../../src/benchmarks/persuasion/ceilings";
import { MAX_EXCHANGES } from "../../src/benchmarks/persuasion/world";
import { createPersuasion } from "../../src/benchmarks/persuasion/bench";
import type { Dialogue, Persona } from "../../src/benchmarks/types";
import { Rng } from "../../src/engine/random";
import { adaptiveProbe } from "../../src/experiment/diagnostics";
import {
  BayesPredictive,
  cardPersonas,
  drawRows,
  type UserSimulator,
} from "../../src/simulators/simulator";

const bench = createPersuasion();
const persuader = adaptOncePersuader(bench.humans);

/** A simulator that always refuses to give: p($0) = 1 at the decision, the Bayes predictive elsewhere. */
class Stingy implements UserSimulator {
  readonly name = "stingy";
  readonly #bayes = new BayesPredictive(bench);
  personas(n: number, rng: Rng): Persona[] {
    return cardPersonas(bench, n, rng);
  }
  async distribution(ds: Dialogue[]): Promise<Float64Array> {
    const p = await this.#bayes.distribution(ds);
    const V = bench.acts.length;
    ds.forEach((_, b) => {
      const row = p.subarray(b * V, (b + 1) * V);
      if (bench.acts[row.indexOf(Math.max(...row))].kind !== "outcome") return;
      row.fill(0);
      row[bench.acts.findIndex((a) => a.name === "$0")] = 1;
    });
    return p;
  }
  async reply(ds: Dialogue[], ps: Persona[], rng: Rng): Promise<Int32Array> {
    return drawRows(await this.distribution(ds), ds.length, bench.acts.length, rng);
  }
}

/**
 * Exact P(success) of a deterministic persuader with humans, from the population's generative
 * model alone: the joint of latent type and card from the type priors and trait probabilities
 * (trait "high" with probability ½ + κ·(trait − ½)), then every branch of the game tree — the
 * persuader's act at agent turns, each reply the type may give at talk turns (weighted by
 * replyProbs), and at the donation decision the probability of $1 or more. Shares nothing with
 * ceilings.ts (no plan tables, no assumption about which replies the persuader reads).
 */
function exactHumanSuccess(act: (d: Dialogue) => number): number {
  const pop = bench.humans;
  const { types, cardInformativeness: kappa } = pop.params;
  const success = bench.acts.flatMap((a, i) =>
    a.kind === "outcome" && Number(a.name.slice(1)) >= 1 ? [i] : [],
  );
  expect(success.map((i) => bench.acts[i].name)).toEqual(["$1", "$1.5", "$2"]);
  const value = (z: number, d: Dialogue): number => {
    const t = bench.turn(d);
    if (t === "done") throw new Error("the decision ends the recursion first");
    if (t === "agent") return value(z, { card: d.card, acts: [...d.acts, act(d)] });
    const r = pop.replyProbs(z, d);
    if (bench.acts[d.acts[d.acts.length - 1]].name === "ask" || d.acts.length === 2 * MAX_EXCHANGES)
      return success.reduce((s, i) => s + r[i], 0);
    let v = 0;
    r.forEach((p, u) => p > 0 && (v += p * value(z, { card: d.card, acts: [...d.acts, u] })));
    return v;
  };
  let total = 0;
  let mass = 0;
  for (const { card } of pop.cardDistribution()) {
    types.forEach((type, z) => {
      const pCard = card.reduce((p, c, j) => {
        const high = 0.5 + kappa * (type.traits[j] - 0.5);
        return p * (bench.acts[c].name.endsWith("-high") ? high : 1 - high);
      }, 1);
      mass += type.prior * pCard;
      total += type.prior * pCard * value(z, { card, acts: [] });
    });
  }
  expect(mass).toBeCloseTo(1, 12);
  return total;
}

describe("adaptive probe", () => {
  it("the persuader plays its plan: opener, then strategies chosen from the first reply, then ask or a last strategy", () => {
    // its stated value is its exact success with humans, which the oracle below computes without ceilings.ts
    const exact = exactHumanSuccess((d) => persuader.act(d));
    expect(persuader.value).toBeCloseTo(exact, 12);
    expect(ceilings(bench.humans).adaptOnce.humanSuccess).toBeCloseTo(exact, 12);
    const d: Dialogue = { card: bench.humans.cardDistribution()[0].card, acts: [] };
    const rng = Rng.seed(1);
    for (let t = bench.turn(d); t !== "done"; t = bench.turn(d))
      d.acts.push(
        t === "agent" ? persuader.act(d) : rng.categorical(bench.humans.replyProbs(0, d)),
      );
    const agent = d.acts
      .slice(0, 10)
      .filter((_, i) => i % 2 === 0)
      .map((a) => bench.acts[a].name);
    expect(agent).toHaveLength(5);
    expect(agent[0]).toBe(bench.acts[persuader.first].name);
    expect(
      agent
        .slice(1, 4)
        .every(
          (a) =>
            bench.acts.find((x) => x.name === a)!.kind === "agent" &&
            a !== "ask" &&
            a !== "greeting",
        ),
    ).toBe(true);
    expect(d.acts).toHaveLength(agent[4] === "ask" ? 10 : 11); // an ask is answered with the amount; else the final decision follows the 5th exchange
  });

  it("against the exact Bayes predictive: zero KL and the same success as with humans (its exact value)", async () => {
    const r = await adaptiveProbe(
      bench,
      (d) => persuader.act(d),
      new BayesPredictive(bench),
      3000,
      Rng.seed(4),
    );
    expect(r.klTalk).toBeCloseTo(0, 9);
    expect(r.klDecision).toBeCloseTo(0, 9);
    for (const s of [r.humanSuccess, r.referenceSuccess])
      expect(Math.abs(s - persuader.value)).toBeLessThan(0.03); // ≈ 4 standard errors
  });

  it("a simulator wrong only at the decision shows there, and is never won", async () => {
    const r = await adaptiveProbe(bench, (d) => persuader.act(d), new Stingy(), 500, Rng.seed(5));
    expect(r.klTalk).toBeCloseTo(0, 9);
    expect(r.klDecision).toBeGreaterThan(1);
    expect(r.referenceSuccess).toBe(0);
    expect(r.humanSuccess).toBeGreaterThan(0.7);
  });
});
