// The LM lab page on a lab with fake models: the tiny-model option is labelled as gibberish;
// loading shows per-file progress and the device; a run renders replies as text (never HTML),
// the VS calls with their parse warnings and selection, the numbers table and the outcome chart;
// a held run shows its Cancel button and cancelling shows a note; errors land in their section.
import { cleanup, fireEvent, render, screen, within } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";
import { tick } from "svelte";
import LmPage from "../../src/app/pages/LmPage.svelte";
import { LmLabState } from "../../src/app/state/lm.svelte";
import { FakeEmbedder, FakeHost, FakeLm, isVsPrompt } from "./lm-lab.fakes";
import { stubResizeObserver } from "./report-fixture";

stubResizeObserver();
afterEach(() => cleanup());

const HTMLISH = "<img src=x onerror=alert(1)> I will donate $1.";
const VS = JSON.stringify({
  responses: [
    { text: "Not today.", probability: 0.6 },
    { text: "<b>Sure</b>, $2!", probability: 0.4 },
  ],
});

function tinyLab(reply = (vs: boolean) => (vs ? VS : HTMLISH)) {
  const instruct = new FakeLm("tiny-gpt2", (p) => reply(isVsPrompt(p)));
  const host = new FakeHost({
    models: [instruct, new FakeLm("tiny-gpt2-base", () => "x"), new FakeEmbedder("tiny-bert")],
  });
  return { lab: new LmLabState(host), instruct, host };
}

async function until(cond: () => boolean) {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

describe("LmPage", () => {
  it("labels the tiny test models as gibberish, loads them with progress, and shows the device", async () => {
    const { lab } = tinyLab();
    render(LmPage, { lab });
    const tiny = screen.getByTestId("source-tiny");
    expect(tiny.closest("label")!.textContent).toMatch(/random weights that write gibberish/);
    expect((screen.getByTestId("run-compare") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(tiny);
    expect(lab.source).toBe("tiny");
    await fireEvent.change(screen.getByTestId("device"), { target: { value: "wasm" } });
    await fireEvent.click(screen.getByTestId("load"));
    await until(() => !lab.busy && !!lab.loaded.embedder);
    await tick();
    const progress = screen.getByTestId("load-progress");
    expect(progress.querySelectorAll("progress").length).toBe(7); // overall + 2 files × 3 models
    expect(screen.getByTestId("loaded").textContent).toContain("tiny-gpt2");
    expect(screen.getByTestId("device-instruct").textContent).toBe("wasm");
    expect(screen.getByTestId("tiny-warning")).toBeTruthy();
    expect((screen.getByTestId("run-compare") as HTMLButtonElement).disabled).toBe(false);
  });

  it("renders replies as text, VS calls with selection, the numbers and the outcome chart", async () => {
    const { lab } = tinyLab();
    lab.source = "tiny";
    await lab.load();
    render(LmPage, { lab });
    await fireEvent.input(screen.getByTestId("n"), { target: { value: "4" } });
    await fireEvent.input(screen.getByTestId("k"), { target: { value: "2" } });
    await fireEvent.click(screen.getByTestId("run-compare"));
    await until(() => lab.compare?.status === "done");
    await tick();
    const direct = screen.getByTestId("direct-replies");
    expect(within(direct).getAllByRole("listitem")).toHaveLength(4);
    expect(direct.textContent).toContain(HTMLISH);
    expect(direct.querySelector("img")).toBeNull();
    const calls = screen.getAllByTestId("vs-call");
    expect(calls).toHaveLength(2);
    expect(calls[0].textContent).toContain("<b>Sure</b>, $2!");
    expect(calls[0].querySelector("b")).toBeNull();
    expect(calls[0].querySelectorAll(".chosen")).toHaveLength(1);
    const table = screen.getByTestId("measures");
    const header = within(table)
      .getAllByRole("columnheader")
      .map((h) => h.textContent);
    expect(header).toEqual(["measure", "Direct", "VS, all", "VS, selected"]);
    const row = (id: string) =>
      [...table.querySelectorAll(`tr[data-row="${id}"] td`)].map((td) => td.textContent);
    expect(row("count")).toEqual(["4", "4", "2"]);
    expect(row("parsed")[0]).toBe("4 of 4");
    expect(row("mean")[0]).toBe("$1.00");
    expect(Number(row("distinct1")[1])).toBeGreaterThan(Number(row("distinct1")[0]));
    const bars = screen.getByTestId("outcome-chart").querySelectorAll('g[aria-label="bar"] rect');
    expect(bars.length).toBe(5 * 4); // five amounts × (Direct, VS all, VS selected, humans)
  });

  it("a running job shows Cancel; cancelling leaves a note in its section", async () => {
    const { lab, instruct } = tinyLab();
    lab.source = "tiny";
    await lab.load();
    render(LmPage, { lab });
    instruct.hold();
    instruct.slowCancel = true;
    await fireEvent.click(screen.getByTestId("run-compare"));
    await tick();
    expect(screen.getByTestId("compare-status").textContent).toMatch(/Direct replies/);
    expect((screen.getByTestId("load") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(screen.getByTestId("compare-cancel"));
    expect(screen.getByTestId("compare-status").textContent).toMatch(/Stopping/);
    expect(screen.queryByTestId("compare-cancel")).toBeNull();
    instruct.gate!.release(); // the model reaches its next step
    await until(() => !lab.busy);
    await tick();
    expect(screen.getByTestId("compare-notice").textContent).toBe(
      "The Direct vs VS run was cancelled.",
    );
    expect(screen.queryByTestId("compare-status")).toBeNull();
  });

  it("the model id fields edit the lab's ids; the tiny option shows the tiny names instead", async () => {
    const { lab } = tinyLab();
    render(LmPage, { lab });
    await fireEvent.input(screen.getByTestId("model-base"), {
      target: { value: "HuggingFaceTB/SmolLM2-360M" },
    });
    expect(lab.ids.base).toBe("HuggingFaceTB/SmolLM2-360M");
    await fireEvent.click(screen.getByTestId("source-tiny"));
    expect(screen.queryByTestId("model-base")).toBeNull();
    expect(screen.getByDisplayValue("tiny-gpt2-base")).toBeTruthy();
    await fireEvent.click(screen.getByTestId("source-hub"));
    expect((screen.getByTestId("model-base") as HTMLInputElement).value).toBe(
      "HuggingFaceTB/SmolLM2-360M",
    );
  });

  it("a load error shows in the model section with its title", async () => {
    const lab = new LmLabState(
      new FakeHost({ models: [], missing: ["HuggingFaceTB/SmolLM2-135M-Instruct"] }),
    );
    render(LmPage, { lab });
    await fireEvent.click(screen.getByTestId("load"));
    await until(() => !lab.busy);
    await tick();
    const err = screen.getByTestId("load-error");
    expect(err.textContent).toMatch(
      /^Model not found\. Model "HuggingFaceTB\/SmolLM2-135M-Instruct" was not found/,
    );
    expect(screen.queryByTestId("compare-error")).toBeNull();
  });
});
