// γ of a real LM from sampling to the fit, on the LM lab's scripted fakes (test/app/lm-lab.fakes.ts):
// both models sampled at every state at temperature 1 with their own seeds, replies cut to their
// first lines, and a report equal to lmGamma's on the same replies by hand; steps that add up;
// empty replies left out and counted; act-text replies instead of the instruct prompt; a cancel
// between batches.
import { describe, expect, it } from "vitest";
import {
  firstLine,
  gammaSteps,
  sampleAndFitGamma,
  type GammaProgress,
  type GammaRunInput,
  type GammaState,
} from "../../src/lm/gamma-run";
import { lmGamma } from "../../src/lm/lm-gamma";
import { BATCH } from "../../src/lm/sampling";
import type { GenerateOptions, LmPrompt } from "../../src/lm/types";
import { FakeLm } from "../app/lm-lab.fakes";

const REPLIES = [
  "Yes, I will help.",
  "No thanks.",
  "Maybe later.",
  "I'll give $1.",
  "Not now, sorry.",
];
/** A reply per (seed, row), followed by the next speaker's line the run must cut. */
const pick = (offset: number) => (_p: LmPrompt, o: GenerateOptions, row: number) =>
  `${REPLIES[((o.seed ?? 0) + row + offset) % REPLIES.length]}\nPersuader: Thanks!`;
const logprob = (c: string) => -1 - REPLIES.indexOf(c.trim());

const STATES: GammaState[] = ["greeting", "ask"].map((s) => ({
  direct: { chat: [{ role: "user", content: `Reply at ${s}.` }] },
  baseText: { text: `Transcript at ${s}.\nPersuadee:` },
}));

function input(over: Partial<GammaRunInput> = {}): GammaRunInput {
  return {
    instruct: new FakeLm("fake-instruct", pick(0)),
    base: new FakeLm("fake-base", pick(2), logprob),
    states: STATES,
    continuation: (r) => ` ${r}`,
    samples: 6,
    maxNewTokens: 20,
    seed: 3,
    signal: new AbortController().signal,
    ...over,
  };
}

describe("γ of a real LM, end to end", () => {
  it("samples both models at every state with their own seeds, and reports lmGamma's fit on the replies' first lines", async () => {
    const instruct = new FakeLm("fake-instruct", pick(0));
    const base = new FakeLm("fake-base", pick(2), logprob);
    const run = await sampleAndFitGamma(input({ instruct, base }));
    for (const lm of [instruct, base]) {
      expect(lm.calls.every((c) => c.opts.temperature === 1 && c.opts.maxNewTokens === 20)).toBe(
        true,
      );
      expect(lm.calls.map((c) => c.opts.n)).toEqual([BATCH, 2, BATCH, 2]);
    }
    expect(instruct.calls.map((c) => [c.prompt, c.opts.seed])).toEqual([
      [STATES[0].direct, 3],
      [STATES[0].direct, 3 + BATCH],
      [STATES[1].direct, 1003],
      [STATES[1].direct, 1003 + BATCH],
    ]);
    expect(base.calls.map((c) => [c.prompt, c.opts.seed])).toEqual([
      [STATES[0].baseText, 503],
      [STATES[0].baseText, 503 + BATCH],
      [STATES[1].baseText, 1503],
      [STATES[1].baseText, 1503 + BATCH],
    ]);
    // the same replies by hand, fitted directly
    const lines = (offset: number, prompt: LmPrompt, seed: number) =>
      [0, BATCH].flatMap((done) =>
        Array.from({ length: Math.min(BATCH, 6 - done) }, (_, row) =>
          firstLine(pick(offset)(prompt, { seed: seed + done }, row)),
        ),
      );
    const byHand = STATES.map((s, j) => ({
      prompt: s.baseText,
      replies: lines(0, s.direct, 3 + 1000 * j),
      baseSamples: lines(2, s.baseText, 503 + 1000 * j),
    }));
    expect(byHand[0].replies[0]).toBe("I'll give $1.");
    const scorer = new FakeLm("fake-base", pick(2), logprob);
    expect(run.report).toEqual(await lmGamma(byHand, scorer, { continuation: (r) => ` ${r}` }));
    expect(base.scored).toEqual(scorer.scored);
    expect(
      base.scored.every((s) =>
        s.continuations.every((c) => c.startsWith(" ") && !c.includes("\n")),
      ),
    ).toBe(true);
    expect(run.dropped).toBe(0);
  });

  it("reports each sampling and the fit, with steps that add up to gammaSteps", async () => {
    const events: GammaProgress[] = [];
    await sampleAndFitGamma(input({ onProgress: (p) => events.push(p) }));
    expect(events).toEqual([
      { kind: "phase", phase: "instruct", state: 0 },
      { kind: "step" },
      { kind: "phase", phase: "base", state: 0 },
      { kind: "step" },
      { kind: "phase", phase: "instruct", state: 1 },
      { kind: "step" },
      { kind: "phase", phase: "base", state: 1 },
      { kind: "step" },
      { kind: "phase", phase: "fit" },
      { kind: "step" },
    ]);
    expect(events.filter((e) => e.kind === "step")).toHaveLength(gammaSteps(STATES.length));
  });

  it("leaves empty replies out and counts them; with every instruct reply empty there is nothing to fit", async () => {
    const instruct = new FakeLm("fake-instruct", (_p, _o, row) =>
      row === 0 ? "  \n" : REPLIES[row],
    );
    const run = await sampleAndFitGamma(
      input({ instruct, states: STATES.slice(0, 1), samples: 4 }),
    );
    expect(run.dropped).toBe(1);
    expect(run.report.samples).toBe(3);
    const silent = new FakeLm("fake-instruct", () => "\n");
    await expect(sampleAndFitGamma(input({ instruct: silent }))).rejects.toThrow(
      /every instruct reply was empty/,
    );
  });

  it("an instruct model that reads act texts is asked through actReplies, the base model still with its transcript", async () => {
    const instruct = new FakeLm("fake-instruct", pick(0));
    const base = new FakeLm("fake-base", pick(2), logprob);
    const seeds: number[] = [];
    const states = STATES.map((s) => ({
      ...s,
      actReplies: async (o: GenerateOptions & { n: number; seed: number }) => (
        seeds.push(o.seed),
        Array.from({ length: o.n }, () => ({ text: "I'll give $1.", tokens: 1 }))
      ),
    }));
    const run = await sampleAndFitGamma(input({ instruct, base, states }));
    expect(instruct.calls).toHaveLength(0);
    expect(seeds).toEqual([3, 3 + BATCH, 1003, 1003 + BATCH]);
    expect(base.calls).toHaveLength(4);
    expect(run.report.samples).toBe(12);
  });

  it("a cancel lands between batches: the run rejects as cancelled and samples nothing more", async () => {
    const ac = new AbortController();
    const instruct = new FakeLm("fake-instruct", (p, o, row) => {
      ac.abort();
      return pick(0)(p, o, row);
    });
    const base = new FakeLm("fake-base", pick(2), logprob);
    await expect(
      sampleAndFitGamma(input({ instruct, base, signal: ac.signal })),
    ).rejects.toMatchObject({ name: "LmCancelledError" });
    expect(instruct.calls).toHaveLength(1);
    expect(base.calls).toHaveLength(0);
  });
});
