// The LM lab on Service, on fake models (lm-lab.fakes.ts): the lab offers every benchmark with LM
// prompts; choosing Service opens its first card at its first "does it work?" state with Service's
// own prompts and transcript, and clears the other benchmark's results; Direct vs VS and γ run
// with Service's prompts and states and read verdicts with its parser; the page (jsdom) shows the
// customer, Service's outcome names, no comparison with real data (no KS / L1 rows, no humans in
// the chart) and the module's note saying why.
import { cleanup, fireEvent, render, screen, within } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";
import { tick } from "svelte";
import LmPage from "../../src/app/pages/LmPage.svelte";
import { LmLabState } from "../../src/app/state/lm.svelte";
import {
  LAB_BENCHMARK,
  LAB_BENCHMARKS,
  defaultState,
  labBenchmark,
  labDialogue,
} from "../../src/app/lib/lm-benchmarks";
import { benchmarkModule } from "../../src/benchmarks/registry";
import type { LmPrompt } from "../../src/lm/types";
import { FakeEmbedder, FakeHost, FakeLm, isBasePrompt, isVsPrompt } from "./lm-lab.fakes";
import { stubResizeObserver } from "./report-fixture";

stubResizeObserver();
afterEach(() => cleanup());

const service = benchmarkModule("service");
const lm = service.lm!;
const VS = JSON.stringify({
  responses: [
    { text: "Yes, it works now!", probability: 0.5 },
    { text: "No, it still doesn't work.", probability: 0.3 },
    { text: "Sorry, where is that?", probability: 0.2 },
  ],
});
/** The overly cooperative customer: "it works" every time; VS lists three different replies. */
const cooperative = () =>
  new FakeLm("fake-instruct", (p: LmPrompt) => (isVsPrompt(p) ? VS : "Yes, it works now!"));

async function serviceLab(instruct = cooperative(), base?: FakeLm) {
  const host = new FakeHost({ models: [instruct, new FakeEmbedder(), ...(base ? [base] : [])] });
  const lab = new LmLabState(host, "service");
  lab.ids = { instruct: instruct.id, base: base?.id ?? "", embedder: "fake-embedder" };
  expect(await lab.load()).toBe(true);
  return { lab, instruct };
}

async function until(cond: () => boolean) {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

describe("the lab's benchmarks", () => {
  it("every benchmark with LM prompts, Persuasion first; Service's presets are dialogues at the customer's turn", () => {
    expect(LAB_BENCHMARKS.map((b) => b.id)).toEqual(["persuasion", "service"]);
    expect(LAB_BENCHMARK).toBe("persuasion");
    for (const c of lm.cards)
      for (const s of lm.states)
        expect(
          labBenchmark("service").bench.turn(labDialogue(c.id, s.id, "service")),
          `${c.id} ${s.id}`,
        ).toBe("user");
    expect(defaultState("service")).toBe(
      lm.states.find((s) => lm.decisionDue(labDialogue(lm.cards[0].id, s.id, "service")))!.id,
    );
    expect(defaultState("persuasion")).toBe("ask-after-greeting");
    expect(() => labDialogue(lm.cards[0].id, "ask-after-greeting", "service")).toThrow(
      /no dialogue state/,
    );
    expect(() => labBenchmark("chess")).toThrow(/unknown benchmark/);
  });

  it("choosing Service opens its first card at its default state, with its prompts, and clears the other's results", async () => {
    const instruct = new FakeLm("fake-instruct", (p) => (isVsPrompt(p) ? VS : "I'll donate $1."));
    const lab = new LmLabState(new FakeHost({ models: [instruct] }));
    lab.ids = { instruct: "fake-instruct", base: "", embedder: "" };
    await lab.load();
    lab.n = 2;
    await lab.runCompare();
    expect(lab.compare?.settings.benchmark).toBe("persuasion");
    lab.benchmark = "service";
    expect(lab.compare).toBeNull();
    expect(lab.cardId).toBe(lm.cards[0].id);
    expect(lab.stateId).toBe(defaultState("service"));
    expect(lab.cards).toBe(lm.cards);
    expect(lab.states).toBe(lm.states);
    expect(lab.decision).toBe(true);
    expect(lab.transcript.split("\n")[0]).toMatch(/^System: \[Ticket\]/);
    expect(lab.transcript.endsWith("Agent: Could you try now: does it work?")).toBe(true);
    expect(lab.prompts.direct).toEqual(lm.directPrompt(lab.dialogue));
    expect(lab.prompts.vs).toEqual(lm.vsPrompt(lab.dialogue, { k: 5 }));
    expect(Object.keys(lab.loaded)).toEqual(["instruct"]); // the models stay loaded
    lab.benchmark = "persuasion";
    expect(lab.stateId).toBe("ask-after-greeting");
  });

  it("refuses another benchmark while a job runs", async () => {
    const { lab, instruct } = await serviceLab();
    instruct.hold();
    const run = lab.runCompare();
    await Promise.resolve();
    expect(() => (lab.benchmark = "persuasion")).toThrow(/wait for the running job/);
    expect(lab.benchmark).toBe("service");
    instruct.gate!.release();
    await run;
  });
});

describe("Direct vs VS and γ on Service", () => {
  it("uses Service's prompts and reads verdicts: a collapsed 'it works', a spread in VS, no real data to compare with", async () => {
    const { lab, instruct } = await serviceLab();
    lab.n = 6;
    lab.k = 3;
    const r = (await lab.runCompare())!;
    expect(r.status).toBe("done");
    expect(r.settings.benchmark).toBe("service");
    expect(instruct.calls.filter((c) => !isVsPrompt(c.prompt))[0].prompt).toEqual(
      lm.directPrompt(lab.dialogue),
    );
    expect(instruct.calls.filter((c) => isVsPrompt(c.prompt))[0].prompt).toEqual(
      lm.vsPrompt(lab.dialogue, { k: 3 }),
    );
    expect(r.direct.every((x) => x.outcome === 1)).toBe(true);
    expect(r.vs[0].candidates.map((c) => c.outcome)).toEqual([1, 0, null]);
    const m = r.measures!;
    expect(m.direct.outcomes).toEqual(lm.compareOutcomes(Array(6).fill(1)));
    expect(m.vsAll.outcomes).toMatchObject({
      amounts: [0, 1],
      counts: [2, 2],
      parsed: 4,
      unparsed: 2,
      mean: 0.5,
      human: [],
      ks: null,
      l1: null,
    });
    expect(m.vsAll.distinct.distinct2).toBeGreaterThan(m.direct.distinct.distinct2);
  });

  it("γ samples Service's states and scores under its base-model transcript", async () => {
    const base = new FakeLm(
      "fake-base",
      (_p, o, row) => ["Done.", "Okay.", "Sorry, where is that?"][((o.seed ?? 0) + row) % 3],
    );
    const instruct = new FakeLm(
      "fake-instruct",
      (_p, o, row) => ["Done.", "Okay.", "Sorry, where is that?"][((o.seed ?? 0) + row) % 2],
    );
    const { lab } = await serviceLab(instruct, base);
    lab.gammaSamples = 4;
    const r = (await lab.runGamma())!;
    expect(r.status).toBe("done");
    expect(r.settings.benchmark).toBe("service");
    expect(r.settings.states).toEqual(lm.states.map((s) => s.id));
    expect(
      base.calls.every(
        (c) =>
          isBasePrompt(c.prompt) && (c.prompt as { text: string }).text.endsWith("\nCustomer:"),
      ),
    ).toBe(true);
    expect(base.scored[0].prompt).toEqual(
      lm.baseTextPrompt(labDialogue(lab.cardId, lm.states[0].id, "service")),
    );
  });
});

describe("the LM lab page on Service", () => {
  it("the benchmark picker switches the page to the customer, its cards and states", async () => {
    const lab = new LmLabState(new FakeHost({ models: [] }));
    render(LmPage, { lab });
    const picker = screen.getByTestId("benchmark") as HTMLSelectElement;
    expect([...picker.options].map((o) => o.value)).toEqual(["persuasion", "service"]);
    expect(screen.getByTestId("lm-page").textContent).toContain("plays the persuadee of");
    await fireEvent.change(picker, { target: { value: "service" } });
    expect(lab.benchmark).toBe("service");
    await tick();
    expect(screen.getByTestId("lm-page").textContent).toContain(
      `plays the customer of ${service.title}`,
    );
    const cards = screen.getByTestId("card") as HTMLSelectElement;
    expect([...cards.options].map((o) => o.textContent)).toEqual(lm.cards.map((c) => c.label));
    expect(
      [...(screen.getByTestId("state") as HTMLSelectElement).options].map((o) => o.value),
    ).toEqual(lm.states.map((s) => s.id));
    const dialogue = screen.getByTestId("dialogue");
    expect(dialogue.textContent).toContain(`The customer is ${lm.cards[0].label}.`);
    expect(dialogue.textContent).toContain(lm.outcomeView.due);
    expect(dialogue.textContent).toContain("System: [Ticket]");
    expect(screen.getByText(new RegExp(`all ${lm.states.length} preset states`))).toBeTruthy();
  });

  it("a run shows verdicts as words, Service's rows without KS / L1, a chart without humans, and why", async () => {
    const { lab } = await serviceLab();
    render(LmPage, { lab });
    await fireEvent.input(screen.getByTestId("n"), { target: { value: "4" } });
    await fireEvent.input(screen.getByTestId("k"), { target: { value: "3" } });
    await fireEvent.click(screen.getByTestId("run-compare"));
    await until(() => lab.compare?.status === "done");
    await tick();
    const direct = screen.getByTestId("direct-replies");
    expect(within(direct).getAllByRole("listitem")).toHaveLength(4);
    expect(direct.querySelectorAll(".tag")[0].textContent).toBe("works");
    expect(screen.getAllByTestId("vs-call")[0].textContent).toContain("not working");
    const table = screen.getByTestId("measures");
    const names = [...table.querySelectorAll("tbody th")].map((th) => th.textContent);
    expect(names).toContain("verdicts stated");
    expect(names).toContain("share saying it works");
    expect(table.querySelector('tr[data-row="ks"]')).toBeNull();
    expect(table.querySelector('tr[data-row="l1"]')).toBeNull();
    const row = (id: string) =>
      [...table.querySelectorAll(`tr[data-row="${id}"] td`)].map((td) => td.textContent);
    expect(row("parsed").slice(0, 2)).toEqual(["4 of 4", "4 of 6"]); // VS: 2 calls × 3 candidates, one says neither
    expect(row("mean")[0]).toBe("works");
    expect(row("mean")[1]).toBe("50\u202f%"); // pct: a narrow no-break space
    const chart = screen.getByTestId("outcome-chart");
    expect(chart.querySelectorAll('g[aria-label="bar"] rect').length).toBe(2 * 3); // two verdicts × (Direct, VS all, VS selected)
    expect(chart.textContent).not.toMatch(/humans/);
    expect(screen.getByTestId("lm-page").textContent).toContain("no real replies to compare");
  });
});
