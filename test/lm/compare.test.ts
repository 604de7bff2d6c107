// Direct vs VS as a plain procedure, on the LM lab's scripted fakes (test/app/lm-lab.fakes.ts) and
// prompts and outcomes made up here: n Direct rows and ⌈n/k⌉ VS calls in batches, with the prompts,
// options and seeds handed in; the replies parsed, selected and measured as the measures module
// measures them (the unique share by hand); progress steps that add up; the same seed giving the
// same run; the VS schema for a model that constrains its output; act-text replies instead of the prompts; streaming only when asked; a cancel between
// batches; and why embedding diversity is missing when it is.
import { describe, expect, it } from "vitest";
import {
  compareDirectVs,
  compareSteps,
  uniqueShare,
  type CompareInput,
  type ComparePrompts,
  type CompareProgress,
  type CompareSampling,
} from "../../src/lm/compare";
import { BATCH, type GenerateControl } from "../../src/lm/sampling";
import { distinctScores, embeddingDiversity } from "../../src/lm/measures";
import type { LmPrompt } from "../../src/lm/types";
import { vsConstrainedMaxTokens, vsJsonSchema } from "../../src/lm/vs-schema";
import { FakeEmbedder, FakeLm } from "../app/lm-lab.fakes";

const DIRECT: LmPrompt = { chat: [{ role: "user", content: "Reply once." }] };
const vsPrompt = (k: number): LmPrompt => ({
  chat: [{ role: "user", content: `Reply ${k} ways as JSON.` }],
});
const isVs = (p: LmPrompt) => "chat" in p && p.chat[0].content.includes("ways");

/** Outcomes here: a dollar amount in the text; compared by listing what was read. */
const PROMPTS: ComparePrompts<{ values: (number | null)[] }> = {
  direct: DIRECT,
  vs: vsPrompt,
  parseOutcome: (text) => (/\$(\d+)/.exec(text) ? Number(/\$(\d+)/.exec(text)![1]) : null),
  compareOutcomes: (values) => ({ values: [...values] }),
};

const VS_ITEMS: [string, number][] = [
  ["I'll give $1.", 0.4],
  ["Not today.", 0.3],
  ["Maybe $2 later.", 0.2],
  ["Take $3, all of it!", 0.1],
];
const vsJson = JSON.stringify({
  responses: VS_ITEMS.map(([text, probability]) => ({ text, probability })),
});

/** Direct: the same reply every time (collapsed); VS: four different candidates. */
const collapsed = () =>
  new FakeLm("fake-instruct", (p) => (isVs(p) ? vsJson : "  I'll donate $1. "));

const SAMPLING: CompareSampling = {
  n: 10,
  k: 4,
  selection: "random",
  tailThreshold: 0,
  temperature: 0.9,
  maxNewTokens: 30,
  seed: 7,
};

function run(over: Partial<CompareInput<{ values: (number | null)[] }>> = {}) {
  const events: CompareProgress[] = [];
  const input: CompareInput<{ values: (number | null)[] }> = {
    lm: collapsed(),
    prompts: PROMPTS,
    embedder: new FakeEmbedder(),
    sampling: SAMPLING,
    signal: new AbortController().signal,
    onProgress: (p) => events.push(p),
    ...over,
  };
  return { input, events, result: compareDirectVs(input) };
}

describe("Direct vs VS", () => {
  it("asks n Direct rows and ⌈n/k⌉ VS calls in batches, with the prompts, the temperature and a seed per batch", async () => {
    const lm = collapsed();
    const r = await run({ lm }).result;
    const direct = lm.calls.filter((c) => !isVs(c.prompt));
    const vs = lm.calls.filter((c) => isVs(c.prompt));
    expect(direct.map((c) => c.opts.n)).toEqual([4, 4, 2]);
    expect(vs.map((c) => c.opts.n)).toEqual([3]);
    expect(direct.every((c) => c.prompt === DIRECT)).toBe(true);
    expect(vs[0].prompt).toEqual(vsPrompt(4));
    expect(direct.map((c) => c.opts.seed)).toEqual([7, 7 + BATCH, 7 + 2 * BATCH]);
    expect(vs[0].opts.seed).toBe(7 + 100_003);
    expect(lm.calls.every((c) => c.opts.temperature === 0.9)).toBe(true);
    expect(direct.every((c) => c.opts.maxNewTokens === 30)).toBe(true);
    expect(vs[0].opts.maxNewTokens).toBe(4 * 30 + 16 * 4 + 16);
    expect(r.direct).toHaveLength(10);
    expect(r.direct[0]).toEqual({ text: "I'll donate $1.", tokens: 6, outcome: 1 });
    expect(r.vs).toHaveLength(3);
    expect(
      r.vs.every((c) => c.format === "json" && c.candidates.length === 4 && c.selected !== null),
    ).toBe(true);
    expect(r.vs[0].candidates.map((c) => c.outcome)).toEqual([1, null, 2, 3]);
  });

  it("a model that constrains its output gets the VS schema and room for its longest reply on VS calls only", async () => {
    const plain = await run().result;
    expect(plain.constrained).toBe(false);
    const lm = Object.assign(collapsed(), { constrainsJson: true });
    const r = await run({ lm }).result;
    expect(r.constrained).toBe(true);
    const vs = lm.calls.filter((c) => isVs(c.prompt));
    expect(vs[0].opts.jsonSchema).toEqual(vsJsonSchema(4, 30));
    expect(vs[0].opts.maxNewTokens).toBe(vsConstrainedMaxTokens(4, 30));
    expect(lm.calls.filter((c) => !isVs(c.prompt)).every((c) => !c.opts.jsonSchema)).toBe(true);
    expect(r.vs.map((c) => c.candidates)).toEqual(plain.vs.map((c) => c.candidates));
  });

  it("measures each set as the measures module does: collapsed Direct, diverse VS", async () => {
    const embedder = new FakeEmbedder();
    const r = await run({ embedder }).result;
    const m = r.measures;
    expect(m.direct).toMatchObject({
      label: "Direct",
      count: 10,
      uniqueShare: 0,
      embedding: expect.closeTo(0, 6),
    });
    expect(m.direct.distinct).toEqual(distinctScores(Array(10).fill("I'll donate $1.")));
    expect(m.direct.outcomes).toEqual({ values: Array(10).fill(1) });
    const vsTexts = [0, 1, 2].flatMap(() => VS_ITEMS.map(([t]) => t));
    expect(m.vsAll).toMatchObject({ label: "VS, all candidates", count: 12, uniqueShare: 0 });
    expect(embedder.calls).toBe(1); // one embed call for every distinct text
    expect(m.vsAll.distinct).toEqual(distinctScores(vsTexts));
    expect(m.vsAll.embedding).toBeCloseTo(embeddingDiversity(await embedder.embed(vsTexts)), 12);
    const selected = r.vs.map((c) => c.candidates[c.selected!].text);
    expect(m.vsSelected).toMatchObject({ label: "VS, selected", count: 3 });
    expect(m.vsSelected.outcomes).toEqual({ values: selected.map(PROMPTS.parseOutcome) });
    expect(r.embeddingNote).toBeNull();
  });

  it("counts a reply as unique when no other has the same text, whitespace collapsed", () => {
    expect(uniqueShare(["a", " a ", "b", "c  d", "c d", "e"])).toBe(2 / 6);
    expect(uniqueShare([])).toBe(0);
  });

  it("reports the replies after each batch and steps that add up to compareSteps, phase by phase", async () => {
    const { events, result } = run();
    await result;
    expect(
      events.filter((e) => e.kind === "phase").map((e) => e.kind === "phase" && e.phase),
    ).toEqual(["direct", "vs", "measures"]);
    expect(events.filter((e) => e.kind === "step")).toHaveLength(compareSteps(10, 4));
    expect(compareSteps(10, 4)).toBe(10 + 3 + 1);
    const sizes = events.flatMap((e) =>
      e.kind === "replies" ? [[e.direct.length, e.vs.length]] : [],
    );
    expect(sizes).toEqual([
      [4, 0],
      [8, 0],
      [10, 0],
      [10, 3],
    ]);
    expect(events.some((e) => e.kind === "batch" || e.kind === "text")).toBe(false); // not streaming
  });

  it("the same seed gives the same run; prob selection with a tail threshold keeps only candidates at or above τ", async () => {
    const a = await run().result;
    const b = await run().result;
    expect(b).toEqual(a);
    const tail = await run({
      sampling: { ...SAMPLING, n: 40, selection: "prob", tailThreshold: 0.35 },
    }).result;
    expect(tail.vs.map((c) => c.selected)).toEqual(Array(10).fill(0)); // only the 0.4 candidate passes τ
  });

  it("a model that reads act texts is asked through actReplies, never with the prompts", async () => {
    const lm = collapsed();
    const asked: (number | null)[] = [];
    const r = await run({
      lm,
      actReplies: async (vsK, opts) => {
        asked.push(vsK);
        return Array.from({ length: opts.n }, () => ({
          text: vsK === null ? "Okay, $2." : vsJson,
          tokens: 1,
        }));
      },
    }).result;
    expect(lm.calls).toHaveLength(0);
    expect(asked).toEqual([null, null, null, 4]);
    expect(r.direct[0].outcome).toBe(2);
    expect(r.vs[0].candidates).toHaveLength(4);
  });

  it("streams only when asked: each batch announced, its text reported by row, onText handed to the model", async () => {
    const fake = collapsed();
    const controls: GenerateControl[] = [];
    const lm = {
      id: fake.id,
      generate: (p: LmPrompt, o?: object, c?: GenerateControl) => {
        controls.push(c!);
        c?.onText?.(1, "I'll");
        return fake.generate(p, o, c);
      },
      score: fake.score.bind(fake),
    };
    const { events, result } = run({ lm, stream: true, sampling: { ...SAMPLING, n: 5, k: 5 } });
    await result;
    expect(controls.every((c) => typeof c.onText === "function" && c.signal !== undefined)).toBe(
      true,
    );
    expect(events.filter((e) => e.kind === "batch")).toEqual([
      { kind: "batch", side: "direct", first: 0, rows: 4 },
      { kind: "batch", side: "direct", first: 4, rows: 1 },
      { kind: "batch", side: "vs", first: 0, rows: 1 },
    ]);
    expect(events.filter((e) => e.kind === "text")).toEqual(
      Array(3).fill({ kind: "text", row: 1, text: "I'll" }),
    );
    controls.length = 0;
    await run({ lm, sampling: { ...SAMPLING, n: 5, k: 5 } }).result;
    expect(controls.every((c) => c.onText === undefined)).toBe(true);
  });

  it("a cancel lands between batches: the run rejects as cancelled and asks nothing more", async () => {
    const lm = collapsed();
    const ac = new AbortController();
    const { result } = run({
      lm,
      signal: ac.signal,
      onProgress: (p) => p.kind === "replies" && ac.abort(),
    });
    await expect(result).rejects.toMatchObject({ name: "LmCancelledError" });
    expect(lm.calls).toHaveLength(1);
    const before = new AbortController();
    before.abort();
    const lm2 = collapsed();
    await expect(run({ lm: lm2, signal: before.signal }).result).rejects.toMatchObject({
      name: "LmCancelledError",
    });
    expect(lm2.calls).toHaveLength(0);
  });

  it("says why embedding diversity is missing: no embedder, a failing one (in the caller's words), too few replies", async () => {
    const none = await run({ embedder: undefined }).result;
    expect(none.measures.direct.embedding).toBeNull();
    expect(none.embeddingNote).toBe("no embedding model is loaded");
    expect(none.measures.direct.distinct.distinct1).toBeGreaterThan(0);
    const broken = { id: "broken", embed: () => Promise.reject(new Error("out of memory")) };
    const failed = await run({
      embedder: broken,
      errorMessage: (e) => `said: ${(e as Error).message}`,
    }).result;
    expect(failed.embeddingNote).toBe("the embedding model failed: said: out of memory");
    const one = await run({ sampling: { ...SAMPLING, n: 1 } }).result; // one Direct reply, one VS call of 4
    expect(one.measures.direct.embedding).toBeNull();
    expect(one.measures.vsAll.embedding).not.toBeNull();
    expect(one.embeddingNote).toBe("it needs at least 2 replies");
  });
});
