// The Runs page with the recordings shipped in public/recorded/ (served by a fetch stub): they
// are listed next to the user's runs and offered in both compare pickers; one click compares a
// stored run with the paper's recording; a recording opens on the Experiment page; a broken
// recording shows its reason while the others still list, and a missing one is left out.
import { cleanup, fireEvent, render, screen, within } from "@testing-library/svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import RunsPage from "../../src/app/pages/RunsPage.svelte";
import { ExperimentState } from "../../src/app/state/experiment.svelte";
import { DEFAULT_STATE } from "../../src/app/lib/url-state";
import type { RunStore, StoredRun } from "../../src/app/lib/run-store";
import { parseReport } from "../../src/experiment/report-schema";
import { PRESETS } from "../../src/experiment/presets";
import { stubResizeObserver } from "./report-fixture";

stubResizeObserver();
const recorded = (id: string) =>
  readFileSync(join(__dirname, "../../public/recorded", `${id}.json`), "utf8");
const FILES: Record<string, string> = Object.fromEntries(
  ["persuasion-paper", "persuasion-quick", "persuasion-smoke"].map((id) => [id, recorded(id)]),
);
const title = (id: string) => PRESETS.find((p) => p.id === id)!.title;
/** The presets the recordings table lists, in order (the header row left out). */
const listedPresets = (table: HTMLElement) =>
  within(table)
    .getAllByRole("row")
    .slice(1)
    .map((r) => r.dataset.preset);

/** Serves recorded/<id>.json from `files`; an id not there gets a 404; "html" answers the app's page. */
function stubFetch(files: Record<string, string | "html">) {
  const fetch = vi.fn(async (url: string) => {
    const id = /recorded\/(.+)\.json$/.exec(url)?.[1] ?? "";
    const body = files[id];
    if (body === undefined) return new Response("not found", { status: 404 });
    if (body === "html")
      return new Response("<!doctype html><title>collapse-lab</title>", {
        headers: { "content-type": "text/html" },
      });
    return new Response(body, { headers: { "content-type": "application/json" } });
  });
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

function fakeStore(runs: StoredRun[] = []): RunStore {
  return {
    list: async () => runs,
    put: async () => {},
    delete: async () => {},
  } as unknown as RunStore;
}

function setup(runs: StoredRun[] = []) {
  const exp = new ExperimentState({
    createExecutor: () => null as never,
    decideBackend: async () => ({ requested: "auto", name: "wasm", reason: "test" }),
    parallelism: 1,
  });
  exp.setUrl({ ...DEFAULT_STATE, sets: [], page: "runs" });
  const onopen = vi.fn();
  render(RunsPage, { exp, store: fakeStore(runs), onopen });
  return { exp, onopen };
}

const optionsOf = (select: HTMLElement, group: string) =>
  within(select.querySelector(`optgroup[label="${group}"]`) as HTMLElement)
    .getAllByRole("option")
    .map((o) => (o as HTMLOptionElement).value);

beforeEach(() => stubFetch(FILES));
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("RunsPage: recordings", () => {
  it("lists every shipped recording with its seeds, conditions and backend, and offers them in both compare pickers", async () => {
    setup();
    const table = await screen.findByTestId("recordings-table");
    const rows = within(table).getAllByRole("row").slice(1);
    expect(listedPresets(table)).toEqual([
      "persuasion-paper",
      "persuasion-quick",
      "persuasion-smoke",
    ]);
    const paper = parseReport(FILES["persuasion-paper"]);
    const paperRow = rows[0];
    expect(paperRow.textContent).toContain(title("persuasion-paper"));
    const cells = within(paperRow)
      .getAllByRole("cell")
      .map((c) => c.textContent!.trim());
    expect(cells[1]).toBe(String(paper.config.seeds));
    expect(cells[2]).toBe(paper.conditions.map((c) => c.id).join(", "));
    expect(cells[3]).toContain(paper.env.backend);
    const single = paper.conditions.find((c) => c.id === "single")!.summary.humanSuccess.mean;
    expect(cells[5]).toContain((100 * single).toFixed(1));
    expect(screen.queryByTestId("recording-error")).toBeNull();

    const left = screen.getByTestId("compare-left");
    const right = screen.getByTestId("compare-right");
    for (const select of [left, right])
      expect(optionsOf(select, "Recordings")).toEqual([
        "rec:persuasion-paper",
        "rec:persuasion-quick",
        "rec:persuasion-smoke",
      ]);
    expect(screen.queryByTestId("compare")).toBeNull();
    await fireEvent.change(left, { target: { value: "rec:persuasion-paper" } });
    await fireEvent.change(right, { target: { value: "rec:persuasion-quick" } });
    const compare = screen.getByTestId("compare");
    const tables = within(compare).getAllByTestId("results-table");
    expect(tables).toHaveLength(2);
    // each table has one row per condition of its own recording
    expect(within(tables[0]).getAllByRole("row")).toHaveLength(1 + paper.conditions.length);
    expect(within(tables[1]).getAllByRole("row")).toHaveLength(
      1 + parseReport(FILES["persuasion-quick"]).conditions.length,
    );
    expect(
      within(compare)
        .getAllByRole("heading")
        .map((h) => h.textContent),
    ).toEqual([
      `${title("persuasion-paper")} (recording)`,
      `${title("persuasion-quick")} (recording)`,
    ]);
  });

  it("a broken recording shows its reason while the others still list and compare", async () => {
    stubFetch({ ...FILES, "persuasion-quick": "{ not json" });
    setup();
    const table = await screen.findByTestId("recordings-table");
    expect(listedPresets(table)).toEqual(["persuasion-paper", "persuasion-smoke"]);
    const errors = screen.getAllByTestId("recording-error");
    expect(errors).toHaveLength(1);
    expect(errors[0].textContent).toContain(title("persuasion-quick"));
    expect(errors[0].textContent).toContain("not JSON");
    expect(optionsOf(screen.getByTestId("compare-left"), "Recordings")).toEqual([
      "rec:persuasion-paper",
      "rec:persuasion-smoke",
    ]);
  });

  it("a preset without a recording (404, or the app's HTML page) is left out without an error", async () => {
    stubFetch({ "persuasion-paper": FILES["persuasion-paper"], "persuasion-smoke": "html" });
    setup();
    const table = await screen.findByTestId("recordings-table");
    expect(listedPresets(table)).toEqual(["persuasion-paper"]);
    expect(screen.queryByTestId("recording-error")).toBeNull();
    expect(screen.queryByTestId("compare-left")).toBeNull(); // one report: nothing to compare yet
  });

  it("a recording that is valid JSON but not a RunReport names what is wrong", async () => {
    const bad = JSON.parse(FILES["persuasion-quick"]);
    delete bad.conditions;
    stubFetch({ ...FILES, "persuasion-quick": JSON.stringify(bad) });
    setup();
    await screen.findByTestId("recordings-table");
    expect(screen.getByTestId("recording-error").textContent).toContain("conditions");
    expect(within(screen.getByTestId("recordings-table")).getAllByRole("row")).toHaveLength(3);
  });

  it("compares a stored run with the paper's recording in one click", async () => {
    const run: StoredRun = {
      id: "r1",
      createdAt: Date.now(),
      updatedAt: Date.now(),
      status: "done",
      title: "my quick run",
      url: { ...DEFAULT_STATE, sets: [], preset: "persuasion-quick" },
      backend: "wasm",
      report: parseReport(FILES["persuasion-quick"]),
      tasksDone: 1,
      tasksTotal: 1,
    };
    setup([run]);
    const button = await screen.findByRole("button", { name: "Compare with the paper's figure" });
    await fireEvent.click(button);
    expect((screen.getByTestId("compare-left") as HTMLSelectElement).value).toBe("run:r1");
    expect((screen.getByTestId("compare-right") as HTMLSelectElement).value).toBe(
      "rec:persuasion-paper",
    );
    const compare = screen.getByTestId("compare");
    expect(
      within(compare)
        .getAllByRole("heading")
        .map((h) => h.textContent),
    ).toEqual(["my quick run", `${title("persuasion-paper")} (recording)`]);
    expect(within(compare).getAllByTestId("results-table")).toHaveLength(2);
    expect(optionsOf(screen.getByTestId("compare-right"), "Your runs")).toEqual(["run:r1"]);
  });

  it("opens a recording on the Experiment page as the recorded run of its preset", async () => {
    const { exp, onopen } = setup();
    await screen.findByTestId("recordings-table");
    await fireEvent.click(
      screen.getByRole("button", { name: `Open ${title("persuasion-paper")}` }),
    );
    expect(onopen).toHaveBeenCalledOnce();
    expect(exp.url.preset).toBe("persuasion-paper");
    expect(exp.url.sets).toEqual([]);
    expect(exp.source).toBe("recorded");
    expect(exp.report?.preset).toBe("persuasion-paper");
  });

  it("the Compare button of a recording puts it beside another", async () => {
    setup();
    await screen.findByTestId("recordings-table");
    await fireEvent.click(
      screen.getByRole("button", { name: `Compare ${title("persuasion-quick")}` }),
    );
    expect((screen.getByTestId("compare-right") as HTMLSelectElement).value).toBe(
      "rec:persuasion-quick",
    );
    expect((screen.getByTestId("compare-left") as HTMLSelectElement).value).toBe(
      "rec:persuasion-paper",
    );
    expect(within(screen.getByTestId("compare")).getAllByTestId("results-table")).toHaveLength(2);
  });
});
