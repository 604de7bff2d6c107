// The LM lab's state on fake models (test/app/lm-lab.fakes.ts): the presets are valid dialogues;
// loading goes through the host with per-file progress, skips empty roles, maps errors that
// crossed the worker boundary to readable ones and can be cancelled; Direct vs VS asks for N
// Direct samples and ⌈N/k⌉ VS calls with the right prompts, parses and selects (random, prob,
// tail threshold), and its numbers equal the measures module's on the same replies; γ samples
// both models at temperature 1, scores first lines under the base model and recovers a known γ.
import { describe, expect, it } from "vitest";
import { flushSync } from "svelte";
import { LmLabState } from "../../src/app/state/lm.svelte";
import { LM_CARDS, LM_STATES, labDialogue } from "../../src/app/lib/lm-benchmarks";
import { describeLoadError } from "../../src/app/lib/lm-errors";
import { DEFAULT_MODEL_IDS } from "../../src/lm/models";
import { offlineEmbedderSource } from "../../src/lm/offline-embedder";
import { firstLine } from "../../src/lm/gamma-run";
import {
  baseContinuation,
  baseTextPrompt,
  decisionDue,
  directPrompt,
  vsPrompt,
} from "../../src/benchmarks/persuasion/lm-prompts";
import { distinctScores } from "../../src/lm/measures";
import { compareDonations, parseDonation } from "../../src/benchmarks/persuasion/lm-measures";
import type { GenerateOptions, LmPrompt } from "../../src/lm/types";
import { FakeEmbedder, FakeHost, FakeLm, isBasePrompt, isVsPrompt } from "./lm-lab.fakes";

const vsJson = (items: [string, number][]) =>
  JSON.stringify({ responses: items.map(([text, probability]) => ({ text, probability })) });
const VS_ITEMS: [string, number][] = [
  ["I'll give $1, it's a good cause.", 0.4],
  ["Not today, money is tight.", 0.3],
  ["Maybe 50 cents.", 0.2],
  ["I will donate $2, all of it!", 0.1],
];

/** A collapsed simulator: the same Direct reply every time; VS lists four different ones. */
function collapsedLm(id = "fake-instruct") {
  return new FakeLm(id, (p) => (isVsPrompt(p) ? vsJson(VS_ITEMS) : "I'll donate $1."));
}

async function loaded(models: { instruct?: FakeLm; base?: FakeLm; embedder?: FakeEmbedder } = {}) {
  const instruct = models.instruct ?? collapsedLm();
  const embedder = models.embedder ?? new FakeEmbedder();
  const host = new FakeHost({
    models: [instruct, embedder, ...(models.base ? [models.base] : [])],
  });
  const lab = new LmLabState(host);
  lab.ids = { instruct: instruct.id, base: models.base?.id ?? "", embedder: embedder.id };
  expect(await lab.load()).toBe(true);
  return { lab, host, instruct, embedder };
}

const chatText = (p: LmPrompt) => ("chat" in p ? p.chat.map((m) => m.content).join("\n") : p.text);

describe("presets", () => {
  it("8 distinct persona cards in words and dialogue states that end at the persuadee's turn", () => {
    expect(LM_CARDS).toHaveLength(8);
    expect(new Set(LM_CARDS.map((c) => c.label)).size).toBe(8);
    expect(LM_CARDS[0].label).toBe("agreeable, caring and rational");
    expect(LM_CARDS[7].label).toBe("not very agreeable, not very caring and not very rational");
    for (const s of LM_STATES) expect(() => labDialogue(LM_CARDS[0].id, s.id), s.id).not.toThrow();
    const decisions = LM_STATES.filter((s) => decisionDue(labDialogue(LM_CARDS[0].id, s.id))).map(
      (s) => s.id,
    );
    expect(decisions).toEqual([
      "ask-after-greeting",
      "ask-after-sharing",
      "ask-after-cost-objection",
      "final-decision",
    ]);
    expect(() => labDialogue("nope", LM_STATES[0].id)).toThrow(/no card/);
  });

  it("starts on the backend's default models, on auto, at a donation decision", () => {
    const lab = new LmLabState(new FakeHost({ models: [] }));
    expect(lab.ids).toEqual({
      instruct: "HuggingFaceTB/SmolLM2-135M-Instruct",
      base: "HuggingFaceTB/SmolLM2-135M",
      embedder: "Xenova/all-MiniLM-L6-v2",
    });
    expect(lab.ids).toEqual(DEFAULT_MODEL_IDS);
    expect(lab.device).toBe("auto");
    expect(lab.decision).toBe(true);
    expect(lab.prompts.vs).toEqual(vsPrompt(lab.dialogue, { k: 5 }));
    expect(lab.transcript).toContain("Persuader: Would you like to donate some of your payment?");
  });
});

describe("loading", () => {
  it("loads every role with a given id, shows per-file and overall progress, and the device", async () => {
    const { lab, host } = await loaded({ base: new FakeLm("fake-base", () => "x") });
    expect(host.sources.map((s) => s.src.id)).toEqual([
      "fake-instruct",
      "fake-base",
      "fake-embedder",
    ]);
    expect(host.sources.every((s) => s.device === "auto" && !s.src.localModelPath)).toBe(true);
    expect(host.resets).toBe(1); // the previous set is dropped first
    expect(lab.files).toHaveLength(6);
    expect(lab.files.every((f) => f.done && f.loaded === f.total)).toBe(true);
    expect(lab.overall).toBe(1);
    expect(Object.keys(lab.loaded)).toEqual(["instruct", "base", "embedder"]);
    expect(lab.job).toBeNull();
    expect(lab.error).toBeNull();
  });

  it("skips an empty base id; a local folder and a forced device reach the host", async () => {
    const host = new FakeHost({ models: [collapsedLm(), new FakeEmbedder()] });
    const lab = new LmLabState(host);
    lab.ids = { instruct: "fake-instruct", base: " ", embedder: "fake-embedder" };
    lab.source = "local";
    lab.localPath = "/models/";
    lab.device = "wasm";
    expect(await lab.load()).toBe(true);
    expect(host.sources.map((s) => [s.src.id, s.src.localModelPath, s.device])).toEqual([
      ["fake-instruct", "/models/", "wasm"],
      ["fake-embedder", "/models/", "wasm"],
    ]);
    expect(lab.loaded.base).toBeUndefined();
  });

  it("the default embedder loads from the app's own copy where one is served; another, or none, as picked", async () => {
    const copy = offlineEmbedderSource("/app/models/");
    const models = [collapsedLm(), new FakeEmbedder(copy.id), new FakeEmbedder("my-embedder")];
    const served = new FakeHost({ models, localEmbedder: copy });
    const lab = new LmLabState(served);
    lab.ids = { instruct: "fake-instruct", base: "", embedder: DEFAULT_MODEL_IDS.embedder };
    expect(await lab.load()).toBe(true);
    expect(served.sources.map((s) => s.src)).toEqual([{ id: "fake-instruct" }, copy]);
    expect(copy).toMatchObject({
      localModelPath: "/app/models/",
      allowRemote: false,
    });
    expect(lab.localEmbedder).toEqual(copy);
    lab.ids.embedder = "my-embedder";
    expect(await lab.load()).toBe(true);
    expect(served.sources.at(-1)!.src).toEqual({ id: "my-embedder" });

    const none = new FakeHost({
      models: [collapsedLm(), new FakeEmbedder(DEFAULT_MODEL_IDS.embedder)],
    });
    const hub = new LmLabState(none);
    hub.ids = { instruct: "fake-instruct", base: "", embedder: DEFAULT_MODEL_IDS.embedder };
    expect(await hub.load()).toBe(true);
    expect(none.sources.at(-1)!.src).toEqual({ id: DEFAULT_MODEL_IDS.embedder });
    expect(hub.localEmbedder).toBeNull();
  });

  it("the tiny test models come from the host's in-page builder", async () => {
    const host = new FakeHost({
      models: [
        collapsedLm("tiny-gpt2"),
        new FakeLm("tiny-gpt2-base", () => "x"),
        new FakeEmbedder("tiny-bert"),
      ],
    });
    const lab = new LmLabState(host);
    lab.source = "tiny";
    expect(await lab.load()).toBe(true);
    expect(host.sources.map((s) => s.src.id)).toEqual(["tiny-gpt2", "tiny-gpt2-base", "tiny-bert"]);
    expect(host.sources.every((s) => s.src.files !== undefined)).toBe(true);
    expect(lab.loadedSource).toBe("tiny");
  });

  it("a model the hub does not have is a readable 'Model not found' (error crossed the worker by name)", async () => {
    const host = new FakeHost({ models: [], missing: ["no/such-model"] });
    const lab = new LmLabState(host);
    lab.ids = { instruct: "no/such-model", base: "", embedder: "" };
    expect(await lab.load()).toBe(false);
    expect(lab.error).toMatchObject({
      kind: "model-not-found",
      title: "Model not found",
      job: "load",
    });
    expect(lab.error!.message).toContain('Model "no/such-model" was not found');
    expect(lab.loaded).toEqual({});
  });

  it("refuses to load without a simulator model id, and warns about a model without a chat template", async () => {
    const lab = new LmLabState(new FakeHost({ models: [] }));
    lab.ids = { instruct: "", base: "", embedder: "" };
    expect(await lab.load()).toBe(false);
    expect(lab.error?.title).toBe("No simulator model");
    const base = new FakeLm("base-only", () => "x", undefined, false);
    const lab2 = new LmLabState(new FakeHost({ models: [base] }));
    lab2.ids = { instruct: "base-only", base: "", embedder: "" };
    expect(await lab2.load()).toBe(true);
    expect(lab2.notice?.text).toMatch(/no chat template/);
  });

  it("a local folder answered with the app's HTML page (a missing file on a single-page host) reads as 'Model not found'", async () => {
    const html = new SyntaxError(`Unexpected token '<', "<!doctype "... is not valid JSON`);
    const e = describeLoadError(html, { id: "SmolLM2-135M", localModelPath: "models" });
    expect(e).toMatchObject({ kind: "model-not-found", title: "Model not found" });
    expect(e.message).toContain("models/SmolLM2-135M/config.json");
    // from the hub the same text is not about a folder
    expect(describeLoadError(html, { id: "x/y" })).toMatchObject({
      kind: null,
      title: "Something went wrong",
    });
    const host = new FakeHost({ models: [] });
    host.loadLanguageModel = async () => Promise.reject(html);
    const lab = new LmLabState(host);
    lab.source = "local";
    lab.ids = { instruct: "SmolLM2-135M-Instruct", base: "", embedder: "" };
    expect(await lab.load()).toBe(false);
    expect(lab.error).toMatchObject({ title: "Model not found", job: "load" });
    expect(lab.error!.message).toContain("models/SmolLM2-135M-Instruct/config.json");
  });

  it("shows the host's note about a software WebGPU adapter", async () => {
    const host = new FakeHost({ models: [] });
    const lab = new LmLabState(host);
    await lab.checkWebGpu();
    expect(lab.gpuNote).toBeNull();
    Object.assign(host, { webGpuNote: async () => "software renderer: choose wasm" });
    await lab.checkWebGpu();
    expect(lab.gpuNote).toBe("software renderer: choose wasm");
  });

  it("cancel stops a load: a notice, not an error, and nothing stays loaded", async () => {
    const host = new FakeHost({ models: [collapsedLm()], hang: true });
    const lab = new LmLabState(host);
    lab.ids = { instruct: "fake-instruct", base: "", embedder: "" };
    const done = lab.load();
    await Promise.resolve();
    expect(lab.busy).toBe(true);
    expect(lab.job?.kind).toBe("load");
    lab.cancel();
    expect(lab.cancelling).toBe(true);
    expect(await done).toBe(false);
    expect(lab.cancelling).toBe(false);
    expect(lab.error).toBeNull();
    expect(lab.notice).toEqual({ job: "load", text: "Loading was cancelled." });
    expect(lab.loaded).toEqual({});
    expect(lab.busy).toBe(false);
    expect(host.resets).toBe(2);
  });
});

describe("Direct vs Verbalized Sampling", () => {
  it("asks for N Direct samples and ⌈N/k⌉ VS calls with the Direct and VS prompts, seeded and at the temperature", async () => {
    const { lab, instruct } = await loaded();
    lab.n = 10;
    lab.k = 4;
    lab.temperature = 0.9;
    lab.maxNewTokens = 30;
    lab.seed = 7;
    const r = (await lab.runCompare())!;
    expect(r.status).toBe("done");
    const direct = instruct.calls.filter((c) => !isVsPrompt(c.prompt));
    const vs = instruct.calls.filter((c) => isVsPrompt(c.prompt));
    expect(direct.reduce((s, c) => s + (c.opts.n ?? 1), 0)).toBe(10);
    expect(vs.reduce((s, c) => s + (c.opts.n ?? 1), 0)).toBe(3);
    expect(direct[0].prompt).toEqual(directPrompt(lab.dialogue));
    expect(vs[0].prompt).toEqual(vsPrompt(lab.dialogue, { k: 4 }));
    for (const c of instruct.calls) expect(c.opts.temperature).toBe(0.9);
    expect(direct.map((c) => c.opts.maxNewTokens)).toEqual(direct.map(() => 30));
    expect(vs[0].opts.maxNewTokens!).toBeGreaterThan(4 * 30);
    expect(new Set(instruct.calls.map((c) => c.opts.seed)).size).toBe(instruct.calls.length); // each batch its own seed
    expect(r.direct).toHaveLength(10);
    expect(r.vs).toHaveLength(3);
    expect(
      r.vs.every((c) => c.format === "json" && c.candidates.length === 4 && c.selected !== null),
    ).toBe(true);
    expect(lab.job).toBeNull();
  });

  it("its numbers are the measures module's on the same replies: collapsed Direct, diverse VS", async () => {
    const { lab } = await loaded();
    lab.n = 8;
    lab.k = 4;
    const r = (await lab.runCompare())!;
    const m = r.measures!;
    expect(m.direct.count).toBe(8);
    expect(m.direct.uniqueShare).toBe(0);
    expect(m.direct.distinct).toEqual(distinctScores(Array(8).fill("I'll donate $1.")));
    expect(m.direct.embedding).toBeCloseTo(0, 6);
    expect(m.direct.outcomes).toEqual(compareDonations(Array(8).fill(1)));
    const vsTexts = [...VS_ITEMS, ...VS_ITEMS].map(([t]) => t);
    expect(m.vsAll.count).toBe(8);
    expect(m.vsAll.distinct).toEqual(distinctScores(vsTexts));
    expect(m.vsAll.outcomes).toEqual(compareDonations(vsTexts.map((t) => parseDonation(t))));
    expect(m.vsAll.distinct.distinct2).toBeGreaterThan(m.direct.distinct.distinct2);
    expect(m.vsAll.embedding!).toBeGreaterThan(0.2);
    expect(m.vsSelected.count).toBe(2);
    expect(m.vsAll.outcomes.ks).not.toBeNull();
    expect(r.embeddingNote).toBeNull();
  });

  it("prob selection with a tail threshold keeps only candidates at or above τ", async () => {
    const { lab } = await loaded();
    lab.n = 40;
    lab.k = 4;
    lab.selection = "prob";
    lab.tailThreshold = 0.35;
    const r = (await lab.runCompare())!;
    expect(r.vs.map((c) => c.selected)).toEqual(Array(10).fill(0)); // only the 0.4 candidate passes τ
    lab.tailThreshold = 0;
    lab.selection = "random";
    const r2 = (await lab.runCompare())!;
    expect(new Set(r2.vs.map((c) => c.selected)).size).toBeGreaterThan(1);
  });

  it("unparseable VS output becomes one raw candidate with a warning; text is kept as text", async () => {
    const weird = '<b onmouseover="x">hi</b> I dunno, maybe $0.50?';
    const lm = new FakeLm("fake-instruct", (p) => (isVsPrompt(p) ? weird : weird));
    const { lab } = await loaded({ instruct: lm });
    lab.n = 2;
    lab.k = 2;
    const r = (await lab.runCompare())!;
    expect(r.vs).toHaveLength(1);
    expect(r.vs[0].format).toBe("raw");
    expect(r.vs[0].warnings.length).toBeGreaterThan(0);
    expect(r.vs[0].candidates).toEqual([{ text: weird, probability: 1, outcome: 0.5 }]);
    expect(r.direct[0].text).toBe(weird);
  });

  it("without an embedding model the other numbers still come, with a note why embedding diversity is missing", async () => {
    const instruct = collapsedLm();
    const lab = new LmLabState(new FakeHost({ models: [instruct] }));
    lab.ids = { instruct: instruct.id, base: "", embedder: "" };
    await lab.load();
    lab.n = 4;
    const r = (await lab.runCompare())!;
    expect(r.status).toBe("done");
    expect(r.measures!.direct.embedding).toBeNull();
    expect(r.embeddingNote).toBe("no embedding model is loaded");
    expect(r.measures!.direct.distinct.distinct1).toBeGreaterThan(0);
  });

  it("cancel stops a run in flight: partial replies stay, a notice, the lab is free again", async () => {
    const { lab, instruct } = await loaded();
    lab.n = 12;
    const first = lab.runCompare();
    await first; // one full run, then a held one
    instruct.hold();
    const run = lab.runCompare();
    await Promise.resolve();
    expect(lab.job?.kind).toBe("compare");
    lab.cancel();
    const r = (await run)!;
    expect(r.status).toBe("cancelled");
    expect(r.measures).toBeNull();
    expect(lab.notice).toEqual({ job: "compare", text: "The Direct vs VS run was cancelled." });
    expect(lab.error).toBeNull();
    expect(lab.busy).toBe(false);
    instruct.gate = null;
    expect((await lab.runCompare())!.status).toBe("done");
  });

  it("bad settings and a missing model are readable errors, not runs", async () => {
    const lab = new LmLabState(new FakeHost({ models: [] }));
    expect(await lab.runCompare()).toBeNull();
    expect(lab.error).toMatchObject({ title: "No model loaded", job: "compare" });
    const { lab: ok } = await loaded();
    ok.n = 0;
    flushSync();
    expect(ok.settingsProblem).toMatch(/replies each way/);
    expect(await ok.runCompare()).toBeNull();
    expect(ok.error).toMatchObject({ title: "Check the settings", job: "compare" });
    ok.k = Number.NaN; // an emptied number field: the shown prompt falls back to a valid k
    expect(ok.prompts.vs).toEqual(vsPrompt(ok.dialogue, { k: 5 }));
  });
});

describe("γ of the real LM", () => {
  // Six replies with known base probabilities; the instruct model samples π_base^3, the base
  // model π_base. Each reply comes with a second transcript line the lab must cut.
  const REPLIES = [
    "Yes, I will help.",
    "No thanks.",
    "Maybe later.",
    "I'll give $1.",
    "Not now, sorry.",
    "Sure, take $2.",
  ];
  const P = [0.3, 0.25, 0.2, 0.12, 0.08, 0.05];
  const GAMMA = 3;
  const draw = (weights: number[], seed: number) => {
    let h = (seed * 2654435761) >>> 0; // a small hash per (call seed, row): independent draws
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d) >>> 0;
    h ^= h >>> 12;
    const u = (h >>> 0) / 2 ** 32;
    const z = weights.reduce((a, b) => a + b, 0);
    let c = 0;
    for (let i = 0; i < weights.length; i++) if (u < (c += weights[i] / z)) return i;
    return weights.length - 1;
  };
  const sampler = (w: number[]) => (_p: LmPrompt, o: GenerateOptions, row: number) =>
    `${REPLIES[draw(w, (o.seed ?? 0) * 97 + row)]}\nPersuader: Thanks!`;
  const logprob = (c: string) => Math.log(P[REPLIES.indexOf(c.trim())]) - 5;

  it("samples both models at temperature 1, scores first lines under the base model and recovers γ", async () => {
    const instruct = new FakeLm("fake-instruct", sampler(P.map((p) => p ** GAMMA)));
    const base = new FakeLm("fake-base", sampler(P), logprob);
    const { lab } = await loaded({ instruct, base });
    lab.gammaSamples = 60;
    const r = (await lab.runGamma())!;
    expect(r.status).toBe("done");
    expect(instruct.calls.every((c) => c.opts.temperature === 1 && "chat" in c.prompt)).toBe(true);
    expect(base.calls.every((c) => c.opts.temperature === 1 && isBasePrompt(c.prompt))).toBe(true);
    expect(instruct.calls.reduce((s, c) => s + (c.opts.n ?? 1), 0)).toBe(60 * LM_STATES.length);
    // every state scored under its base transcript, continuations are " " + first line
    expect(base.scored).toHaveLength(LM_STATES.length);
    expect(base.scored[0].prompt).toEqual(baseTextPrompt(labDialogue(lab.cardId, LM_STATES[0].id)));
    for (const s of base.scored)
      for (const c of s.continuations) expect(REPLIES.map(baseContinuation)).toContain(c);
    const rep = r.report!;
    expect(rep.candidateSet).toBe("samples+base");
    expect(rep.samples).toBe(60 * LM_STATES.length);
    expect(rep.nce!.gamma).toBeGreaterThan(GAMMA - 4 * rep.nce!.se);
    expect(rep.nce!.gamma).toBeLessThan(GAMMA + 4 * rep.nce!.se);
    expect(rep.nce!.se).toBeLessThan(0.6);
    // replies repeat here, so the sample-built candidate sets work: within 4 standard errors too
    expect(Math.abs(rep.mle!.gamma - GAMMA)).toBeLessThan(4 * rep.mle!.se);
    expect(rep.mle!.se).toBeLessThan(0.6); // and the bound is tight enough to tell γ = 3 from 1
    expect(rep.scope).not.toBeNull();
    expect(Array.isArray(rep.warnings)).toBe(true);
  });

  it("only the picked state when asked; empty replies are left out and counted", async () => {
    const instruct = new FakeLm("fake-instruct", (_p, _o, row) =>
      row === 0 ? "  \n" : REPLIES[row % 6],
    );
    const base = new FakeLm("fake-base", (_p, _o, row) => REPLIES[(row + 1) % 6], logprob);
    const { lab } = await loaded({ instruct, base });
    lab.gammaAllStates = false;
    lab.gammaSamples = 4;
    const r = (await lab.runGamma())!;
    expect(r.settings.states).toEqual([lab.stateId]);
    expect(r.dropped).toBe(1);
    expect(r.report!.samples).toBe(3);
  });

  it("needs the base model", async () => {
    const { lab } = await loaded();
    expect(await lab.runGamma()).toBeNull();
    expect(lab.error).toMatchObject({ title: "Load both models", job: "gamma" });
  });

  it("firstLine keeps the reply's own line", () => {
    expect(firstLine("  I'd give $1.\nPersuader: great")).toBe("I'd give $1.");
    expect(firstLine("\n\nhello")).toBe("hello");
    expect(chatText(directPrompt(labDialogue(LM_CARDS[0].id, "after-greeting")))).toContain(
      "agreeable, caring and rational",
    );
  });
});
