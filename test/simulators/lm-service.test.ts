// The LM simulator on Service, with a fake LanguageModel whose label scores we control: at each
// customer turn it scores exactly the allowed reply class's labels under Service's base-model
// transcript and its row is their softmax (0 elsewhere); its personas carry the episode's hidden
// faults; and it plays whole Service calls against a policy through the experiment's own rollout
// loop (the world's ticket, screens and look-ups in between), direct and VS.
import { describe, expect, it } from "vitest";
import { benchmarkModule } from "../../src/benchmarks/registry";
import type { Dialogue } from "../../src/benchmarks/types";
import { Float64Backend } from "../../src/engine/backends/float64";
import { Rng } from "../../src/engine/random";
import { presetConfig } from "../../src/experiment/presets";
import { modelConfig, modelOptions } from "../../src/experiment/pretrain";
import { play } from "../../src/experiment/rollout";
import { LmSimulator } from "../../src/simulators/lm";
import { promptKey } from "../../src/lm/types";
import type { ContinuationScore, LanguageModel, LmPrompt } from "../../src/lm/types";
import { randomCheckpoint } from "../engine/fixtures";

const config = presetConfig("service-smoke");
const module = benchmarkModule("service");
const lm = module.lm!;
const bench = module.create(config.world);
const V = bench.acts.length;
const id = (name: string) => bench.acts.findIndex((a) => a.name === name);
const card = lm.cards[1].card;
const step: Dialogue = {
  card,
  acts: ["ticket:mobile-data", "check:apn", "see:apn-bad", "fix:reset-apn"].map(id),
};
const confirm: Dialogue = {
  card,
  acts: ["ticket:mms", "fix:grant-permission", "did-fix", "confirm"].map(id),
};

/** A deterministic log-prob in (−8, −0.5) per (prompt, continuation), and word counts as tokens. */
function fakeScore(prompt: LmPrompt, continuation: string): ContinuationScore {
  let h = 2166136261;
  for (const ch of `${promptKey(prompt)}|${continuation}`)
    h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return {
    logprob: -0.5 - 7.5 * ((h >>> 0) / 2 ** 32),
    tokens: continuation.trim().split(/\s+/).length,
  };
}

function fakeLm(): LanguageModel & { calls: { prompt: LmPrompt; continuations: string[] }[] } {
  const calls: { prompt: LmPrompt; continuations: string[] }[] = [];
  return {
    id: "fake-lm",
    calls,
    async generate() {
      throw new Error("the simulator only scores");
    },
    async score(prompt, continuations) {
      calls.push({ prompt, continuations });
      await new Promise((r) => setTimeout(r, 1));
      return continuations.map((c) => fakeScore(prompt, c));
    },
  };
}

describe("LmSimulator on Service", () => {
  it("scores the allowed reply class's labels under the customer transcript; its row is their softmax, 0 elsewhere", async () => {
    const fake = fakeLm();
    const sim = new LmSimulator(bench, fake);
    const p = await sim.distribution([step, confirm]);
    for (const [b, d] of [step, confirm].entries()) {
      const { prompt, acts, continuations } = lm.actLabelPrompt(d);
      expect(acts).toEqual(bench.maskClasses[bench.userClass(d)].allowed);
      const s = continuations.map((c) => fakeScore(prompt, c).logprob);
      const z = s.reduce((a, x) => a + Math.exp(x), 0);
      for (let v = 0; v < V; v++) {
        const i = acts.indexOf(v);
        expect(p[b * V + v], bench.acts[v].name).toBeCloseTo(i < 0 ? 0 : Math.exp(s[i]) / z, 12);
      }
      expect((fake.calls[b].prompt as { text: string }).text.endsWith("\nCustomer:")).toBe(true);
    }
    expect(fake.calls.map((c) => c.continuations.length)).toEqual([6, 3]); // a step's six outcomes; works / not / leave
  });

  it("its personas are cards of the population with the episode's hidden faults", () => {
    const personas = new LmSimulator(bench, fakeLm()).personas(8, Rng.seed(3));
    const cards = new Set(bench.humans.cardDistribution().map((c) => c.card.join(",")));
    for (const p of personas) {
      expect(p.type).toBe(-1);
      expect(cards.has(p.card.join(","))).toBe(true);
      expect(p.hidden?.length).toBeGreaterThan(0);
    }
  });

  it("plays whole calls against a policy through play(): replies allowed, the world's moves in between, prompts only at customer turns", async () => {
    const policy = new Float64Backend().createModel(
      randomCheckpoint(
        modelConfig(bench, { d: 16, layers: 1, heads: 2, mlpRatio: 2 }, "policy"),
        5,
      ),
      modelOptions(bench, config),
    );
    for (const mode of ["direct", "vs"] as const) {
      const fake = fakeLm();
      const sim = new LmSimulator(bench, fake, { mode, k: 3 });
      const rng = Rng.seed(17);
      const played = await play(bench, policy, sim, sim.personas(6, rng), rng, 1);
      const userPrefixes: Dialogue[] = [];
      for (const d of played.dialogues) {
        expect(bench.turn(d)).toBe("done");
        expect(bench.acts[d.acts[0]].kind).toBe("env"); // the ticket
        d.acts.forEach((a, i) => {
          const prefix = { card: d.card, acts: d.acts.slice(0, i) };
          if (bench.turn(prefix) === "user") {
            expect(bench.maskClasses[bench.userClass(prefix)].allowed).toContain(a);
            userPrefixes.push(prefix);
          }
        });
        expect([0, 1]).toContain(bench.reward(d));
        expect(module.outcome(bench, d)).toMatch(/fixed|transferred|left|out of time/);
      }
      expect(userPrefixes.length).toBeGreaterThan(0);
      expect(fake.calls.length).toBe(sim.scoreCalls);
      const keys = new Set(userPrefixes.map((d) => promptKey(lm.actLabelPrompt(d).prompt)));
      expect(fake.calls.length).toBe(keys.size); // each distinct customer turn scored once
      for (const c of fake.calls) expect(keys.has(promptKey(c.prompt))).toBe(true);
    }
  });
});
