// The LM simulator in the toy persuasion game, with a fake LanguageModel whose label scores we
// control: its distribution is the softmax of the summed label log-probs over the allowed class
// (temperature and per-token variants too), disallowed acts get 0, identical prompts are scored
// once and cached, `vs` verbalizes q ∝ p^exponent and its `random` replies follow q, and it
// plays whole dialogues against a policy through the experiment's own rollout loop.
import { describe, expect, it } from "vitest";
import {
  ACTS,
  AMOUNT_ACTS,
  ASK,
  CARD_ACTS,
  GREETING,
  USER_ACTS,
} from "../../src/benchmarks/persuasion/world";
import { createPersuasion } from "../../src/benchmarks/persuasion/bench";
import type { Dialogue } from "../../src/benchmarks/types";
import { Float64Backend } from "../../src/engine/backends/float64";
import { Rng } from "../../src/engine/random";
import { presetConfig } from "../../src/experiment/presets";
import { modelConfig, modelOptions } from "../../src/experiment/pretrain";
import { play } from "../../src/experiment/rollout";
import { LmSimulator } from "../../src/simulators/lm";
import { actLabelPrompt } from "../../src/benchmarks/persuasion/lm-prompts";
import { promptKey } from "../../src/lm/types";
import type { ContinuationScore, LanguageModel, LmPrompt } from "../../src/lm/types";
import { randomCheckpoint } from "../engine/fixtures";

const bench = createPersuasion();
const V = ACTS.length;
const card = [CARD_ACTS[1], CARD_ACTS[2], CARD_ACTS[5]];
const name = (n: string) => ACTS.findIndex((a) => a.name === n);
const talk: Dialogue = { card, acts: [GREETING, name("neutral"), name("credibility")] };
const asked: Dialogue = {
  card,
  acts: [GREETING, name("neutral"), name("credibility"), name("ask-question"), ASK],
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
      await new Promise((r) => setTimeout(r, 1)); // a real backend answers later
      return continuations.map((c) => fakeScore(prompt, c));
    },
  };
}

/** The expected row: softmax over the allowed acts of score(label)/T, computed independently. */
function expectedRow(
  d: Dialogue,
  opts: { temperature?: number; perToken?: boolean } = {},
): Float64Array {
  const { prompt, acts, continuations } = actLabelPrompt(d);
  const s = continuations.map((c) => {
    const sc = fakeScore(prompt, c);
    return (opts.perToken ? sc.logprob / sc.tokens : sc.logprob) / (opts.temperature ?? 1);
  });
  const z = s.reduce((a, x) => a + Math.exp(x), 0);
  const row = new Float64Array(V);
  acts.forEach((a, i) => (row[a] = Math.exp(s[i]) / z));
  return row;
}

const close = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  Array.from(a).forEach((x, i) => expect(x, `entry ${i}`).toBeCloseTo(b[i], 12));

describe("LmSimulator (direct)", () => {
  it("is the softmax of the summed label log-probs over the allowed class, 0 elsewhere", async () => {
    const lm = fakeLm();
    const sim = new LmSimulator(bench, lm);
    const p = await sim.distribution([talk, asked]);
    close(p.subarray(0, V), expectedRow(talk));
    close(p.subarray(V), expectedRow(asked));
    for (let v = 0; v < V; v++) {
      if (!USER_ACTS.includes(v)) expect(p[v]).toBe(0);
      if (!AMOUNT_ACTS.includes(v)) expect(p[V + v]).toBe(0);
    }
    expect(lm.calls.map((c) => c.continuations.length)).toEqual([
      USER_ACTS.length,
      AMOUNT_ACTS.length,
    ]); // one call per prompt, all labels in it
  });

  it("temperature and per-token scoring change the distribution as stated", async () => {
    const lm = fakeLm();
    close(
      (await new LmSimulator(bench, lm, { temperature: 2.5 }).distribution([talk])).subarray(0, V),
      expectedRow(talk, { temperature: 2.5 }),
    );
    close(
      (await new LmSimulator(bench, lm, { lengthNormalise: true }).distribution([talk])).subarray(
        0,
        V,
      ),
      expectedRow(talk, { perToken: true }),
    );
  });

  it("scores identical prompts once and caches them across calls", async () => {
    const lm = fakeLm();
    const sim = new LmSimulator(bench, lm, { concurrency: 2 });
    const batch = [talk, asked, { card: [...card], acts: [...talk.acts] }, talk, asked];
    const p = await sim.distribution(batch);
    expect(lm.calls).toHaveLength(2);
    close(p.subarray(2 * V, 3 * V), p.subarray(0, V));
    await sim.distribution([asked, talk]);
    expect(lm.calls).toHaveLength(2);
    expect(sim.scoreCalls).toBe(2);
  });

  it("replies follow the distribution", async () => {
    const sim = new LmSimulator(bench, fakeLm());
    const n = 6000;
    const acts = await sim.reply(
      Array.from({ length: n }, () => talk),
      [],
      Rng.seed(5),
    );
    const p = expectedRow(talk);
    const counts = new Float64Array(V);
    for (const a of acts) counts[a]++;
    for (let v = 0; v < V; v++)
      expect(Math.abs(counts[v] / n - p[v])).toBeLessThan(
        4 * Math.sqrt((p[v] * (1 - p[v])) / n) + 1e-9,
      );
  });

  it("refuses other benchmarks and bad options", () => {
    const lm = fakeLm();
    expect(() => new LmSimulator({ ...bench, id: "chess" }, lm)).toThrow(
      /unknown benchmark "chess"/,
    );
    expect(() => new LmSimulator(bench, lm, { temperature: 0 })).toThrow(/temperature/);
    expect(() => new LmSimulator(bench, lm, { mode: "vs", k: 0 })).toThrow(/k must be/);
    expect(() => new LmSimulator(bench, lm, { exponent: -1 })).toThrow(/exponent/);
    expect(() => new LmSimulator(bench, lm, { mode: "nope" as "vs" })).toThrow(/mode/);
  });

  it("a backend returning the wrong number of scores, or NaN, is a clear error", async () => {
    const short: LanguageModel = {
      id: "short",
      generate: async () => [],
      score: async () => [{ logprob: -1, tokens: 1 }],
    };
    await expect(new LmSimulator(bench, short).distribution([talk])).rejects.toThrow(
      /returned 1 scores for 8 labels/,
    );
    const nan: LanguageModel = {
      id: "nan",
      generate: async () => [],
      score: async (_, c) => c.map(() => ({ logprob: NaN, tokens: 1 })),
    };
    await expect(new LmSimulator(bench, nan).distribution([talk])).rejects.toThrow(
      /scored label .* as NaN/,
    );
  });
});

describe("LmSimulator (vs)", () => {
  it("verbalizes q ∝ p^exponent, and `random` replies follow q", async () => {
    const e = 0.5;
    const sim = new LmSimulator(bench, fakeLm(), {
      mode: "vs",
      exponent: e,
      k: 5,
      selection: "random",
    });
    const q = (await sim.distribution([talk])).subarray(0, V);
    const p = expectedRow(talk);
    const z = p.reduce((s, x) => s + x ** e, 0);
    close(
      q,
      p.map((x) => x ** e / z),
    );
    const n = 6000;
    const acts = await sim.reply(
      Array.from({ length: n }, () => talk),
      [],
      Rng.seed(8),
    );
    const counts = new Float64Array(V);
    for (const a of acts) counts[a]++;
    for (let v = 0; v < V; v++)
      expect(Math.abs(counts[v] / n - q[v])).toBeLessThan(
        4 * Math.sqrt((q[v] * (1 - q[v])) / n) + 1e-9,
      );
    expect(sim.name).toContain("vs k=5 random e=0.5");
  });

  it("a large exponent concentrates on the LM's argmax without underflow", async () => {
    const q = (
      await new LmSimulator(bench, fakeLm(), { mode: "vs", exponent: 5000 }).distribution([talk])
    ).subarray(0, V);
    const p = expectedRow(talk);
    const top = p.indexOf(Math.max(...p));
    expect(q[top]).toBeCloseTo(1, 12);
    expect(q.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 12);
  });
});

describe("LmSimulator in a rollout", () => {
  it("plays whole persuasion dialogues against a policy through play()", async () => {
    const config = presetConfig("persuasion-smoke");
    const policy = new Float64Backend().createModel(
      randomCheckpoint(
        modelConfig(bench, { d: 16, layers: 1, heads: 2, mlpRatio: 2 }, "policy"),
        3,
      ),
      modelOptions(bench, config),
    );
    for (const mode of ["direct", "vs"] as const) {
      const lm = fakeLm();
      const sim = new LmSimulator(bench, lm, { mode });
      const rng = Rng.seed(21);
      const personas = sim.personas(6, rng);
      expect(personas.every((p) => p.type === -1 && p.card.length === 3)).toBe(true);
      const played = await play(bench, policy, sim, personas, rng, 1);
      for (const d of played.dialogues) {
        expect(bench.turn(d)).toBe("done");
        d.acts.forEach((a, i) => {
          const prefix = { card: d.card, acts: d.acts.slice(0, i) };
          if (bench.turn(prefix) === "user")
            expect(bench.maskClasses[bench.userClass(prefix)].allowed).toContain(a);
        });
        expect(bench.reward(d)).toBeGreaterThanOrEqual(0);
      }
      expect(lm.calls.length).toBeGreaterThan(0);
      expect(lm.calls.length).toBe(sim.scoreCalls);
      // every prompt it scored was a persuadee turn of one of these dialogues
      const keys = new Set(
        played.dialogues.flatMap((d) =>
          d.acts.flatMap((_, i) =>
            bench.turn({ card: d.card, acts: d.acts.slice(0, i) }) === "user"
              ? [promptKey(actLabelPrompt({ card: d.card, acts: d.acts.slice(0, i) }).prompt)]
              : [],
          ),
        ),
      );
      for (const c of lm.calls) expect(keys.has(promptKey(c.prompt))).toBe(true);
    }
  });
});
