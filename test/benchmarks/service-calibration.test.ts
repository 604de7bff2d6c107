// Service against τ²-bench telecom (the calibration rows within their stated tolerances) and the
// mechanism the experiment relies on (docs/architecture.md#the-science, #models), checked before any RL: (a) the script that
// wins the modal accurate customer loses ≥ 20 points with the whole population; (b) a careful
// adaptive agent beats it clearly with the population, while with the accurate customer alone the
// blind script is the better one (so a policy trained on a collapsed simulator has a reason to
// skip checks); (c) the Bayes predictive's most likely reply is the cooperative one at the probe
// states for every card and at nearly every state of the corpus before the customer shows trouble.
import { describe, expect, it } from "vitest";
import { carefulAgent, modalScript } from "../../src/benchmarks/service/agents";
import { playEpisode, type ServiceBenchmark } from "../../src/benchmarks/service/bench";
import { TAU2 } from "../../src/benchmarks/service/calibration";
import { PROBE_STATES, service, successWith } from "../../src/benchmarks/service/index";
import { ACTS, actId } from "../../src/benchmarks/service/world";
import { Rng } from "../../src/engine/random";

const bench = service.create(service.defaultWorld) as ServiceBenchmark;
const pop = bench.humans;
const { faultPrior, maxExchanges } = bench.params;
const argmax = (p: ArrayLike<number>) =>
  Array.from(p).reduce((b, x, i, a) => (x > a[b] ? i : b), 0);
const COOPERATIVE = new Set(["did-fix", "ack", "confirm-ok", "not-ok"]);
const TROUBLE = new Set(
  ["failed-fix", "did-something-else", "confused", "refuse", "leave"].map(actId),
);

describe("calibration against τ² telecom", () => {
  const cal = service.calibration(bench, service.defaultCorpus, Rng.seed(11));

  it("every row is within its tolerance", () => {
    const out = cal.rows
      .filter((r) => !(Math.abs(r.fitted - r.real) <= r.tolerance))
      .map((r) => `${r.name}: ${r.fitted.toFixed(3)} vs ${r.real} ± ${r.tolerance}`);
    expect(out).toEqual([]);
    expect(cal.rows.length).toBeGreaterThanOrEqual(11);
  });

  it("keeps τ²'s orderings: dual control < solo < gold plan; pass^4 < pass^1; MMS hardest, no service easiest; success falls to ~0 at ≥ 9 actions", () => {
    const row = (prefix: string) => cal.rows.find((r) => r.name.startsWith(prefix))!.fitted;
    expect(row("success, dual control")).toBeLessThan(row("success, agent operates") - 0.05);
    expect(row("success, agent operates")).toBeLessThan(row("success, agent given") - 0.1);
    expect(row("pass^4")).toBeLessThan(row("success, dual control") - 0.05);
    expect(row("success, mms")).toBeLessThan(row("success, mobile-data"));
    expect(row("success, mobile-data")).toBeLessThan(row("success, no-service"));
    expect(row("success, fixes of ≥ 9")).toBeLessThan(0.05);
    expect(row("success, fixes of 2")).toBeGreaterThan(row("success, fixes of ≥ 9") + 0.3);
  });

  it("histograms hold distributions over the same bins as τ²'s counts", () => {
    const h = cal.histograms[0];
    expect(h.bins).toHaveLength(TAU2.actionCounts.length);
    expect(h.real.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(h.fitted.reduce((a, b) => a + b, 0)).toBeGreaterThan(0.99); // fixes of 0 user actions (agent-only) fall outside τ²'s bins
    expect(cal.histograms[1].fitted).toEqual([...bench.params.intentPrior]);
  });
});

describe("the mechanism, before any RL", () => {
  const script = modalScript(faultPrior, maxExchanges);
  const careful = carefulAgent(faultPrior, maxExchanges);
  const MODAL = 0; // the accurate customer
  const scriptModal = successWith(bench, script, 10000, MODAL);
  const scriptAll = successWith(bench, script);
  const carefulModal = successWith(bench, careful, 10000, MODAL);
  const carefulAll = successWith(bench, careful);

  it("(a) the modal customer's script: ≥ 0.95 with them, ≥ 20 points lower with the population", () => {
    expect(pop.types[MODAL].prior).toBe(Math.max(...pop.types.map((t) => t.prior)));
    expect(scriptModal).toBeGreaterThan(0.95);
    expect(scriptModal - scriptAll).toBeGreaterThan(0.2);
  });

  it("(b) the careful agent beats the script by ≥ 15 points with the population, yet loses to it with the accurate customer", () => {
    expect(carefulAll - scriptAll).toBeGreaterThan(0.15);
    expect(scriptModal - carefulModal).toBeGreaterThan(0.01); // 10 000 episodes each, same seed: SE of the difference < 0.003
  });

  it("the reference lines report these agents", () => {
    const lines = service.referenceLines(bench);
    expect(lines.find((l) => l.id === "modal-script")!.humanSuccess).toBeCloseTo(scriptAll, 12);
    expect(lines.find((l) => l.id === "careful")!.humanSuccess).toBeCloseTo(carefulAll, 12);
    for (const l of lines) expect(l.humanSuccess).toBeGreaterThan(0);
  });

  it("(c) the Bayes predictive's most likely reply is cooperative at every probe state, for every card", () => {
    for (const s of PROBE_STATES) {
      const acts = s.acts.map(actId);
      for (const { card } of pop.cardDistribution()) {
        const d = { card, acts };
        expect(bench.turn(d)).toBe("user");
        const best = ACTS[argmax(bench.bayesPredictive(d))].name;
        expect(
          COOPERATIVE.has(best),
          `${s.id} with card ${card.map((c) => ACTS[c].name).join(" ")}: ${best}`,
        ).toBe(true);
      }
    }
  });

  it("(c) … and at ≥ 99 % of the corpus' customer states before the customer showed any trouble", () => {
    const rng = Rng.seed(5);
    let states = 0;
    let cooperative = 0;
    for (let i = 0; i < 1500; i++) {
      const d = service.corpusDialogue(bench, service.defaultCorpus, rng);
      for (let j = 1; j < d.acts.length; j++) {
        const pre = { card: d.card, acts: d.acts.slice(0, j) };
        if (bench.turn(pre) !== "user" || pre.acts.some((a) => TROUBLE.has(a))) continue;
        states++;
        if (COOPERATIVE.has(ACTS[argmax(bench.bayesPredictive(pre))].name)) cooperative++;
      }
    }
    expect(states).toBeGreaterThan(3000);
    expect(cooperative / states).toBeGreaterThan(0.99);
  });

  it("humans are not the modal customer: each minority type fails the script far more often than the careful agent", () => {
    for (let z = 1; z < pop.types.length; z++) {
      const rng = Rng.seed(100 + z);
      let s = 0;
      let c = 0;
      const n = 3000;
      for (let i = 0; i < n; i++) {
        const persona = { ...pop.sample(rng), type: z };
        if (bench.success(playEpisode(bench, persona, script, rng))) s++;
        if (bench.success(playEpisode(bench, persona, careful, rng))) c++;
      }
      expect(c / n - s / n, pop.types[z].name).toBeGreaterThan(0.15);
    }
  });
});
