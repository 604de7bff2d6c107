// encode() against tokens, classes and loss masks written out by hand for each role, and agreeing
// with what sampling asks the model for. nextActLogprobs decodes incrementally, assigning decoder
// slots to dialogues by identity. Whatever the order, the overlap between calls or the number of
// dialogues (more than the capacity), it must give the full forward's log-probs.
import { describe, it, expect, beforeAll } from "vitest";
import type { Dialogue } from "../../src/benchmarks/types";
import type { EngineModel } from "../../src/engine/backend";
import { JaxBackend } from "../../src/engine/backends/jax";
import { Float64Backend } from "../../src/engine/backends/float64";
import { initCheckpoint } from "../../src/engine/checkpoint";
import { Rng } from "../../src/engine/random";
import { encode, nextActLogprobs, offset, type Role } from "../../src/benchmarks/encode";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { modelConfig, modelOptions } from "../../src/experiment/pretrain";
import { presetConfig } from "../../src/experiment/presets";
import { randomCheckpoint } from "../engine/fixtures";

const config = presetConfig("persuasion-smoke");
const bench = benchmarkFor(config);
let jax: JaxBackend;
beforeAll(async () => {
  jax = await JaxBackend.create("wasm");
});

/** The full forward's log-probs of each dialogue's next act, row by row. */
async function fullForward(
  model: EngineModel,
  ds: Dialogue[],
  role: Role,
  dist: { temperature: number },
): Promise<Float32Array> {
  const V = model.config.vocab;
  const out = new Float32Array(ds.length * V);
  for (let i = 0; i < ds.length; i++) {
    const { tokens } = encode(bench, [ds[i]], role);
    const d = ds[i];
    const cls = bench.turn(d) === "agent" ? bench.agentClass(d) : bench.userClass(d);
    out.set(
      await model.nextLogprobs(
        tokens,
        1,
        Int32Array.of(offset(bench, role) + d.acts.length),
        Int32Array.of(cls),
        dist,
      ),
      i * V,
    );
  }
  return out;
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) if (b[i] > -1e6) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe("nextActLogprobs with incremental decoding", () => {
  it.each(["policy", "simulator"] as const)(
    "equals the full forward for growing dialogues in shuffled, overlapping calls (%s)",
    async (role) => {
      const opts = { ...modelOptions(bench, config), capacity: 8 };
      const model = jax.createModel(
        initCheckpoint(modelConfig(bench, config.simulator.model, role), 3),
        opts,
      );
      const rng = Rng.seed(4);
      const all: Dialogue[] = Array.from({ length: 13 }, () => ({
        card: bench.humans.sample(rng).card,
        acts: [],
      })); // more than the capacity
      let worst = 0;
      for (let round = 0; round < 24; round++) {
        // a random subset, in random order; each dialogue grows by one act of the turn's kind
        const pick = all.filter(() => rng.int(3) > 0).sort(() => rng.int(3) - 1);
        const live = pick.filter(
          (d) =>
            bench.turn(d) !== "done" && bench.turn(d) === (role === "policy" ? "agent" : "user"),
        );
        if (live.length > 0) {
          const dist = { temperature: 0.5 + rng.int(3) / 2 }; // the cached keys and values do not depend on it
          const lp = await nextActLogprobs(bench, model, live, role, dist);
          worst = Math.max(worst, maxDiff(lp, await fullForward(model, live, role, dist)));
        }
        for (const d of all) {
          const turn = bench.turn(d);
          if (turn === "done") continue;
          const allowed =
            bench.maskClasses[turn === "agent" ? bench.agentClass(d) : bench.userClass(d)].allowed;
          d.acts.push(allowed[rng.int(allowed.length)]);
        }
      }
      expect(worst).toBeLessThan(1e-5);
      model.dispose();
    },
  );
});

// encode() against arrays written out by hand (persuasion: context 16, card 3 tokens). Act ids:
// <bos> 0, greeting 1, ask 2, logical 3, emotion 4, credibility 5, self-modeling 7, personal-story 8,
// donation-information 9, personal-inquiry 12, agree 13, object-trust 16, object-efficacy 17,
// share-personal 18, neutral 19, $1 23, $2 25, cards 26–31 (agreeable-low/high, caring-low/high,
// rational-low/high). Classes: 0 none/all, 1 agent, 2 user talk, 3 donation.
describe("encode, by hand", () => {
  const ids: Record<string, number> = {
    "<bos>": 0,
    greeting: 1,
    ask: 2,
    logical: 3,
    emotion: 4,
    credibility: 5,
    "self-modeling": 7,
    "personal-story": 8,
    "donation-information": 9,
    "personal-inquiry": 12,
    agree: 13,
    "object-trust": 16,
    "object-efficacy": 17,
    "share-personal": 18,
    neutral: 19,
    $1: 23,
    $2: 25,
    "card:agreeable-low": 26,
    "card:agreeable-high": 27,
    "card:caring-low": 28,
    "card:caring-high": 29,
    "card:rational-low": 30,
    "card:rational-high": 31,
  };
  const DIALOGUES: Dialogue[] = [
    // asked at the third exchange, answered $1
    { card: [27, 28, 31], acts: [1, 19, 5, 16, 2, 23] },
    // five exchanges without an ask, then the final decision ($2): 11 acts, the longest dialogue
    { card: [26, 29, 30], acts: [4, 18, 8, 13, 7, 13, 4, 19, 12, 18, 25] },
    // in progress, the agent spoke last
    { card: [27, 29, 31], acts: [3, 17, 9] },
    // not started
    { card: [26, 28, 30], acts: [] },
  ];
  const pad = (xs: number[]) => [...xs, ...new Array<number>(16 - xs.length).fill(0)];
  const rowsOf = (a: ArrayLike<number>) =>
    Array.from({ length: 4 }, (_, b) => Array.from(a).slice(16 * b, 16 * (b + 1)));

  it("the act ids and the context these arrays assume", () => {
    for (const [name, i] of Object.entries(ids)) expect(bench.acts[i].name).toBe(name);
    expect([bench.context, bench.cardLen]).toEqual([16, 3]);
  });

  it("policy: [BOS, acts…]; every act's class at its own position; the loss on the agent's acts only", () => {
    const b = encode(bench, DIALOGUES, "policy");
    expect(b.rows).toBe(4);
    expect(rowsOf(b.tokens)).toEqual([
      pad([0, 1, 19, 5, 16, 2, 23]),
      pad([0, 4, 18, 8, 13, 7, 13, 4, 19, 12, 18, 25]),
      pad([0, 3, 17, 9]),
      pad([0]),
    ]);
    expect(rowsOf(b.cls!)).toEqual([
      pad([0, 1, 2, 1, 2, 1, 3]),
      pad([0, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 3]),
      pad([0, 1, 2, 1]),
      pad([]),
    ]);
    expect(rowsOf(b.mask)).toEqual([
      pad([0, 1, 0, 1, 0, 1, 0]),
      pad([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]),
      pad([0, 1, 0, 1]),
      pad([]),
    ]);
  });

  it("simulator: [card ×3, BOS, acts…]; the loss on the user's replies, talk and donation, only", () => {
    const b = encode(bench, DIALOGUES, "simulator");
    expect(b.rows).toBe(4);
    expect(rowsOf(b.tokens)).toEqual([
      pad([27, 28, 31, 0, 1, 19, 5, 16, 2, 23]),
      pad([26, 29, 30, 0, 4, 18, 8, 13, 7, 13, 4, 19, 12, 18, 25]),
      pad([27, 29, 31, 0, 3, 17, 9]),
      pad([26, 28, 30, 0]),
    ]);
    expect(rowsOf(b.cls!)).toEqual([
      pad([0, 0, 0, 0, 1, 2, 1, 2, 1, 3]),
      pad([0, 0, 0, 0, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 3]),
      pad([0, 0, 0, 0, 1, 2, 1]),
      pad([]),
    ]);
    expect(rowsOf(b.mask)).toEqual([
      pad([0, 0, 0, 0, 0, 1, 0, 1, 0, 1]),
      pad([0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1]),
      pad([0, 0, 0, 0, 0, 1]),
      pad([]),
    ]);
    expect([offset(bench, "policy"), offset(bench, "simulator")]).toEqual([1, 4]);
  });

  // The engine scores token t with the distribution at t − 1 (reference backend: "token t ≥ 1 with
  // mask ≠ 0 is scored by the distribution at t − 1"). What the model learns at a masked position
  // must be what sampling asks it for that act: nextActLogprobs of the prefix, at that act.
  it.each(["policy", "simulator"] as const)(
    "each learned act's training log-prob is its sampling log-prob (%s)",
    async (role) => {
      const model = new Float64Backend().createModel(
        randomCheckpoint(modelConfig(bench, config.simulator.model, role), 7),
        { ...modelOptions(bench, config), capacity: 8 },
      );
      const batch = encode(bench, DIALOGUES, role);
      const train = await model.tokenLogprobs(batch);
      const V = bench.acts.length;
      let checked = 0;
      for (const [b, d] of DIALOGUES.entries()) {
        for (let i = 0; i < d.acts.length; i++) {
          const t = offset(bench, role) + i;
          if (batch.mask[b * 16 + t] === 0) continue;
          const sampled = await nextActLogprobs(
            bench,
            model,
            [{ card: d.card, acts: d.acts.slice(0, i) }],
            role,
          );
          expect(train[b * 16 + t]).toBeCloseTo(sampled[d.acts[i]], 5);
          expect(sampled.slice(0, V).filter((x) => x > -1e6).length).toBe(
            bench.maskClasses[batch.cls![b * 16 + t]].allowed.length,
          );
          checked++;
        }
      }
      expect(checked).toBe(role === "policy" ? 3 + 5 + 2 : 3 + 6 + 1);
      model.dispose();
    },
  );
});
