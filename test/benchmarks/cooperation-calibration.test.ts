// Cooperation against CooperBench (the calibration rows within their stated tolerances) and the
// mechanism the experiment relies on (docs/architecture.md#the-science, #cooperation), checked before any RL: the script that wins
// the modal dutiful partner (rely on its announced plan, never claim, ask or check) is as good as
// anything with that partner, and measurably worse with the whole population than an adaptive agent
// that asks and claims first; and the Bayes predictive's most likely move at the probe states is the
// dutiful partner's, so a sharpened simulator plays the dutiful partner.
import { describe, expect, it } from "vitest";
import { adaptiveAgent, modalScript } from "../../src/benchmarks/cooperation/agents";
import { playEpisode, type CooperationBenchmark } from "../../src/benchmarks/cooperation/bench";
import { COOPERBENCH } from "../../src/benchmarks/cooperation/calibration";
import { PROBE_STATES, cooperation, successWith } from "../../src/benchmarks/cooperation/index";
import {
  ACTS,
  CARD_ACTS,
  FEATURE_CARD,
  NPLANS,
  actId,
  isAgentMessage,
} from "../../src/benchmarks/cooperation/world";
import type { Dialogue } from "../../src/benchmarks/types";
import { Rng } from "../../src/engine/random";

const bench = cooperation.create(cooperation.defaultWorld) as CooperationBenchmark;
const pop = bench.humans;
const E = bench.params.maxExchanges;
const argmax = (p: ArrayLike<number>) =>
  Array.from(p).reduce((b, x, i, a) => (x > a[b] ? i : b), 0);

describe("calibration against CooperBench", () => {
  const cal = cooperation.calibration(bench, cooperation.defaultCorpus, Rng.seed(11));

  it("every row is within its tolerance", () => {
    const out = cal.rows
      .filter((r) => !(Math.abs(r.fitted - r.real) <= r.tolerance))
      .map((r) => `${r.name}: ${r.fitted.toFixed(3)} vs ${r.real} ± ${r.tolerance}`);
    expect(out).toEqual([]);
    expect(cal.rows.length).toBe(7);
  });

  it("keeps CooperBench's orderings: a first-turn plan lowers conflicts; expectation is the most common failure, communication the least", () => {
    const row = (prefix: string) => cal.rows.find((r) => r.name.startsWith(prefix))!.fitted;
    expect(row("merge conflicts, plan")).toBeLessThan(row("merge conflicts, no plan") - 0.1);
    expect(row("failed episodes caused by expectation")).toBeGreaterThan(
      row("failed episodes caused by communication"),
    );
    expect(row("success with a partner")).toBeLessThan(0.75);
    const h = cal.histograms[0];
    expect(h.real.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(h.fitted.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(h.real).toEqual([
      COOPERBENCH.failures.expectation,
      COOPERBENCH.failures.commitment,
      COOPERBENCH.failures.communication,
    ]);
  });
});

describe("the mechanism, before any RL", () => {
  const script = modalScript(E);
  const adaptive = adaptiveAgent(E);
  const DUTIFUL = 0;
  const N = 20000;
  const scriptModal = successWith(bench, script, N, DUTIFUL);
  const adaptiveModal = successWith(bench, adaptive, N, DUTIFUL);
  const scriptAll = successWith(bench, script, N);
  const adaptiveAll = successWith(bench, adaptive, N);

  it("with the dutiful partner, relying on its announcement is as good as asking and claiming: exactly so without slips, on every plan pair", () => {
    // without slips (what a sharpened simulator plays) the dutiful partner is deterministic: enumerate the 36 plan pairs
    const clean = cooperation.create({
      ...cooperation.defaultWorld,
      noise: 0,
    }) as CooperationBenchmark;
    let messages = 0;
    for (let a = 0; a < NPLANS; a++)
      for (let b = 0; b < NPLANS; b++) {
        const persona = {
          card: [CARD_ACTS[0][0], CARD_ACTS[1][0], FEATURE_CARD[b]],
          type: DUTIFUL,
          hidden: [a],
        };
        const withScript = playEpisode(clean, persona, (d: Dialogue) => script(d), Rng.seed(0));
        expect(clean.success(withScript)).toBe(true);
        expect(withScript.acts.filter((x) => isAgentMessage(x))).toEqual([]);
        const withAdaptive = playEpisode(clean, persona, (d: Dialogue) => adaptive(d), Rng.seed(0));
        expect(clean.success(withAdaptive)).toBe(true);
        messages += withAdaptive.acts.filter((x) => isAgentMessage(x)).length;
      }
    expect(messages).toBeGreaterThanOrEqual(36); // the adaptive agent talks; the script never does
    // with slips, the adaptive agent's checks recover a few more episodes, no more
    expect(scriptModal).toBeGreaterThan(0.95);
    expect(scriptModal).toBeGreaterThan(adaptiveModal - 0.03);
  });

  it("with the whole population the modal script loses ≥ 25 points, and the adaptive agent beats it by ≥ 20", () => {
    expect(scriptModal - scriptAll).toBeGreaterThan(0.25);
    expect(adaptiveAll - scriptAll).toBeGreaterThan(0.2);
    // where the gap comes from: partners who never state a plan, who wait for the agent, or who leave work undone
    for (const name of ["silent", "passive", "deferrer"]) {
      const z = pop.types.findIndex((t) => t.name === name);
      expect(
        successWith(bench, adaptive, 4000, z) - successWith(bench, script, 4000, z),
      ).toBeGreaterThan(0.4);
    }
  });

  it("the reference lines report these agents, the solo agent above every cooperative one", () => {
    const lines = cooperation.referenceLines(bench);
    const line = (id: string) => lines.find((l) => l.id === id)!.humanSuccess;
    expect(line("modal-script")).toBeCloseTo(successWith(bench, script), 12);
    expect(line("adaptive")).toBeGreaterThan(line("modal-script") + 0.2);
    expect(line("solo")).toBe(1);
    expect(line("behaviour")).toBeLessThan(line("adaptive"));
  });

  it("the Bayes predictive's most likely move at the probe states is the dutiful partner's, for every card", () => {
    const states = PROBE_STATES.filter((s) => s.id !== "silent-then-told"); // a state the dutiful partner does not reach
    for (const { card } of pop.cardDistribution())
      for (const s of states) {
        const d = { card, acts: s.acts.map(actId) };
        const top = argmax(bench.bayesPredictive(d));
        const dutiful = pop.replyProbs(0, d);
        expect(dutiful[top], `${s.id}: ${ACTS[top].name}`).toBeGreaterThan(0.1);
      }
  });

  it("a simulator that plays the sharpened Bayes predictive (π^γ, γ = 8) is the dutiful partner: the modal script wins it as it wins the dutiful type", () => {
    const gamma = 8;
    const rng = Rng.seed(21);
    const n = 1500;
    let wins = 0;
    for (let i = 0; i < n; i++) {
      const card =
        pop.cardDistribution()[rng.categorical(pop.cardDistribution().map((c) => c.p))].card;
      const d: Dialogue = { card, acts: [], hidden: pop.sampleHidden(rng) };
      for (let t = bench.turn(d); t !== "done"; t = bench.turn(d)) {
        if (t === "env") d.acts.push(bench.envAct!(d, rng));
        else if (t === "agent") d.acts.push(script(d));
        else d.acts.push(rng.categorical(bench.bayesPredictive(d).map((p) => p ** gamma)));
      }
      wins += bench.success(d) ? 1 : 0;
    }
    expect(wins / n).toBeGreaterThan(scriptModal - 0.03);
    expect(wins / n - scriptAll).toBeGreaterThan(0.25);
  });
});
