// Neural user simulators on the float64 reference backend with a tiny random model on the
// persuasion benchmark: sharpening by γ is π_ref^γ renormalised over the allowed class, a
// γ-baked checkpoint at scale 1 is the unbaked model at scale γ, and a frozen simulator's cache
// gives identical answers (also for duplicates, partial hits and per-γ entries) while an unfrozen
// one always asks the model.
import { describe, expect, it } from "vitest";
import { ACTS, AMOUNT_ACTS, USER_ACTS } from "../../src/benchmarks/persuasion/world";
import { createPersuasion } from "../../src/benchmarks/persuasion/bench";
import type { Dialogue } from "../../src/benchmarks/types";
import { Float64Backend } from "../../src/engine/backends/float64";
import { paramSpecs } from "../../src/engine/config";
import { Rng } from "../../src/engine/random";
import { presetConfig } from "../../src/experiment/presets";
import { modelConfig, modelOptions } from "../../src/experiment/pretrain";
import { bakeGamma, NeuralSimulator } from "../../src/simulators/neural";
import { randomCheckpoint } from "../engine/fixtures";

const bench = createPersuasion();
const V = ACTS.length;
const config = presetConfig("persuasion-smoke");
const opts = modelOptions(bench, config);
const backend = new Float64Backend();
const mc = modelConfig(bench, { d: 16, layers: 1, heads: 2, mlpRatio: 2 }, "simulator");
const ck = randomCheckpoint(mc, 11); // parameters away from init: a distribution with real shape
const act = (name: string) => ACTS.findIndex((a) => a.name === name);
const cards = bench.humans.cardDistribution().map((c) => c.card);

/** User-turn prefixes of both user classes: talk replies, answers to ask, the final decision. */
const DIALOGUES: Dialogue[] = [
  { card: cards[0], acts: [act("greeting")] },
  { card: cards[5], acts: [act("greeting")] },
  { card: cards[1], acts: [act("greeting"), act("neutral"), act("credibility")] },
  { card: cards[3], acts: [act("emotion"), act("share-personal"), act("ask")] },
  {
    card: cards[7],
    acts: [
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
    ].map(act),
  },
];
const allowedOf = (d: Dialogue) => new Set(bench.maskClasses[bench.userClass(d)].allowed);

const row = (p: Float64Array, b: number) => p.subarray(b * V, (b + 1) * V);

describe("NeuralSimulator.distribution", () => {
  const sim = new NeuralSimulator("reference", bench, backend.createModel(ck, opts), 1, true);

  it("at γ = 1 is a distribution on the allowed class of each dialogue", async () => {
    const p = await sim.distribution(DIALOGUES);
    expect(p).toHaveLength(DIALOGUES.length * V);
    DIALOGUES.forEach((d, b) => {
      const r = row(p, b);
      const allowed = allowedOf(d);
      expect(allowed).toEqual(new Set(b >= 3 ? AMOUNT_ACTS : USER_ACTS));
      expect(r.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 6);
      r.forEach((x, v) => (allowed.has(v) ? expect(x).toBeGreaterThan(0) : expect(x).toBe(0)));
    });
  });

  it("at γ equals π_ref^γ renormalised over the allowed class", async () => {
    const ref = await sim.distribution(DIALOGUES, undefined, 1);
    for (const gamma of [0.5, 2, 5, 10]) {
      const p = await sim.distribution(DIALOGUES, undefined, gamma);
      DIALOGUES.forEach((d, b) => {
        const r = row(ref, b);
        const allowed = allowedOf(d);
        const z = Array.from(r).reduce((s, x, v) => (allowed.has(v) ? s + x ** gamma : s), 0);
        row(p, b).forEach((x, v) => {
          if (!allowed.has(v)) expect(x).toBe(0);
          else
            expect(
              Math.abs(x - r[v] ** gamma / z),
              `γ ${gamma}, row ${b}, act ${ACTS[v].name}`,
            ).toBeLessThan(1e-5);
        });
      });
      // γ > 1 sharpens: the top act gains mass
      if (gamma > 1) {
        DIALOGUES.forEach((_, b) =>
          expect(Math.max(...row(p, b))).toBeGreaterThan(Math.max(...row(ref, b))),
        );
      }
    }
  });

  it("the simulator's own γ is the default scale", async () => {
    const sharp = new NeuralSimulator("aligned", bench, backend.createModel(ck, opts), 4, true);
    expect(Array.from(await sharp.distribution(DIALOGUES))).toEqual(
      Array.from(await sim.distribution(DIALOGUES, undefined, 4)),
    );
  });
});

describe("bakeGamma", () => {
  it("scales only the output head, and leaves the input checkpoint alone", () => {
    const before = ck.tensors.map((t) => t.data.slice());
    const baked = bakeGamma(ck, 3);
    const specs = paramSpecs(ck.config);
    baked.tensors.forEach((t, i) => {
      expect(t.name).toBe(specs[i].name);
      expect(t.data).not.toBe(ck.tensors[i].data); // fresh buffers
      const scale = t.name === "head.w" || t.name === "head.b" ? 3 : 1;
      t.data.forEach((x, j) => expect(x).toBeCloseTo(scale * ck.tensors[i].data[j], 5));
    });
    ck.tensors.forEach((t, i) => expect(t.data).toEqual(before[i]));
    expect(baked.config).toEqual(ck.config);
  });

  it("a baked checkpoint sampled at scale 1 is the unbaked model at scale γ (distributions and draws)", async () => {
    for (const gamma of [2, 10]) {
      const baked = new NeuralSimulator(
        "baked",
        bench,
        backend.createModel(bakeGamma(ck, gamma), opts),
        1,
        true,
      );
      const scaled = new NeuralSimulator(
        "scaled",
        bench,
        backend.createModel(ck, opts),
        gamma,
        true,
      );
      const a = await baked.distribution(DIALOGUES);
      const b = await scaled.distribution(DIALOGUES);
      a.forEach((x, i) => expect(Math.abs(x - b[i])).toBeLessThan(1e-5));
      const many = Array.from({ length: 60 }, (_, i) => DIALOGUES[i % DIALOGUES.length]);
      const personas = many.map((d) => ({ card: d.card, type: -1 }));
      expect(Array.from(await baked.reply(many, personas, Rng.seed(gamma)))).toEqual(
        Array.from(await scaled.reply(many, personas, Rng.seed(gamma))),
      );
      // and it differs from the unsharpened model
      const plain = await new NeuralSimulator(
        "plain",
        bench,
        backend.createModel(ck, opts),
        1,
        true,
      ).distribution(DIALOGUES);
      expect(Math.max(...a.map((x, i) => Math.abs(x - plain[i])))).toBeGreaterThan(0.01);
    }
  });
});

describe("the frozen simulator's cache", () => {
  const other = randomCheckpoint(mc, 12);

  it("returns identical results on repeated calls, and copies (callers cannot corrupt it)", async () => {
    const sim = new NeuralSimulator("frozen", bench, backend.createModel(ck, opts), 2, true);
    const first = await sim.distribution(DIALOGUES);
    const kept = first.slice();
    first.fill(-1);
    const second = await sim.distribution(DIALOGUES);
    expect(second).not.toBe(first);
    expect(Array.from(second)).toEqual(Array.from(kept));
    expect(Array.from(await sim.distribution(DIALOGUES))).toEqual(Array.from(kept));
  });

  it("serves cached prefixes without asking the model; an unfrozen simulator always asks", async () => {
    const frozenModel = backend.createModel(ck, opts);
    const liveModel = backend.createModel(ck, opts);
    const frozen = new NeuralSimulator("frozen", bench, frozenModel, 1, true);
    const live = new NeuralSimulator("live", bench, liveModel, 1, false);
    const before = await frozen.distribution(DIALOGUES);
    expect(Array.from(await live.distribution(DIALOGUES))).toEqual(Array.from(before));
    frozenModel.load(other);
    liveModel.load(other);
    // the frozen one keeps answering from its cache …
    expect(Array.from(await frozen.distribution(DIALOGUES))).toEqual(Array.from(before));
    // … the live one follows its model
    const after = await live.distribution(DIALOGUES);
    expect(Math.max(...after.map((x, i) => Math.abs(x - before[i])))).toBeGreaterThan(0.01);
    // a prefix the frozen one has not seen comes from the (new) model
    const fresh: Dialogue = { card: cards[2], acts: [act("logical")] };
    const [f, l] = [await frozen.distribution([fresh]), await live.distribution([fresh])];
    expect(Array.from(f)).toEqual(Array.from(l));
  });

  it("handles duplicates and partial hits row by row, and keeps one cache per γ", async () => {
    const frozen = new NeuralSimulator("frozen", bench, backend.createModel(ck, opts), 1, true);
    const truth = new NeuralSimulator("uncached", bench, backend.createModel(ck, opts), 1, false);
    await frozen.distribution([DIALOGUES[1], DIALOGUES[3]]); // warm two entries
    const mixed = [
      DIALOGUES[0],
      DIALOGUES[1],
      DIALOGUES[0],
      DIALOGUES[4],
      DIALOGUES[3],
      DIALOGUES[2],
      DIALOGUES[1],
    ];
    const got = await frozen.distribution(mixed);
    const want = await truth.distribution(mixed);
    expect(Array.from(got)).toEqual(Array.from(want));
    for (const gamma of [1, 3, 1, 3]) {
      expect(Array.from(await frozen.distribution(mixed, undefined, gamma))).toEqual(
        Array.from(await truth.distribution(mixed, undefined, gamma)),
      );
    }
    // same acts, different card: a different prefix, not a cache hit
    const a = await frozen.distribution([{ card: cards[0], acts: [act("greeting")] }]);
    const b = await frozen.distribution([{ card: cards[6], acts: [act("greeting")] }]);
    expect(Array.from(a)).not.toEqual(Array.from(b));
  });
});
