// Sweeps in the app: a sweep started from the app runs each point as an ordinary run of the
// Experiment page's experiment (pretraining once for every γ), is summed up as the CLI sums it,
// and resumes from its finished points; the figure draws one dot and one interval per point and
// comparison, the ±100 limit only where an interval reaches it; imported files are sorted into
// sweeps and runs, a point's report with another config refused by name; recorded sweeps load
// from their index, one bad sweep losing nothing else.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanup, render } from "@testing-library/svelte";
import { flushSync } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import SweepFigure from "../../src/app/components/SweepFigure.svelte";
import type { RunStore, StoredRun } from "../../src/app/lib/run-store";
import { effectRows, xAxis } from "../../src/app/lib/sweep-figure";
import { loadRecordedSweeps, sortImport } from "../../src/app/lib/sweep-files";
import type { StoredSweep, SweepStore } from "../../src/app/lib/sweep-store";
import { parseUrlState } from "../../src/app/lib/url-state";
import { ExperimentState, type ControlledExecutor } from "../../src/app/state/experiment.svelte";
import { SweepState } from "../../src/app/state/sweep.svelte";
import { createBackend } from "../../src/engine/backends/index";
import type { TaskCache } from "../../src/experiment/experiment";
import { parseReport } from "../../src/experiment/report-schema";
import {
  isEffectMetric,
  gridPoints,
  parseSweep,
  summarizeSweep,
  type SweepSummary,
} from "../../src/experiment/sweep";
import { InlineExecutor, type Task } from "../../src/experiment/tasks";
import { seedsOf } from "../../src/experiment/config";
import { pretrainJobs } from "../../src/experiment/pretrain";
import { stubResizeObserver, TEST_CONFIG } from "./report-fixture";

afterEach(() => cleanup());
const FIXTURE = join(process.cwd(), "test/fixtures/sweep-smoke/sweep.json");
const fixture = () => parseSweep(readFileSync(FIXTURE, "utf8"));

/** The stores in memory: the same contracts as IndexedDB's. */
function memoryStores() {
  const runs = new Map<string, StoredRun>();
  const tasks = new Map<string, Map<string, unknown>>();
  const sweeps = new Map<string, StoredSweep>();
  const runStore = {
    list: async () => [...runs.values()],
    get: async (id: string) => structuredClone(runs.get(id)),
    put: async (r: StoredRun) => void runs.set(r.id, structuredClone(r)),
    delete: async (id: string) => void runs.delete(id),
    taskCache: (id: string): TaskCache => {
      const m = tasks.get(id) ?? tasks.set(id, new Map()).get(id)!;
      return { get: async (k) => m.get(k), put: async (k, v) => void m.set(k, v) };
    },
  } as unknown as RunStore;
  const sweepStore = {
    list: async () => [...sweeps.values()].reverse(),
    get: async (id: string) => structuredClone(sweeps.get(id)),
    put: async (s: StoredSweep) => void sweeps.set(s.id, structuredClone(s)),
    delete: async (id: string) => void sweeps.delete(id),
  } as unknown as SweepStore;
  return { runs, sweeps, runStore, sweepStore };
}

describe("a sweep run from the app", () => {
  it("runs each point as a stored run, pretrains once for both γ, and resumes from finished points", async () => {
    const { backend } = await createBackend("float64");
    const counts = { pretrain: 0, unit: 0, diagnose: 0, rescore: 0 };
    const counting = () => {
      const inner = new InlineExecutor(backend);
      return {
        parallelism: 1,
        run: (t: Task, p?: never) => (counts[t.kind]++, inner.run(t, p)),
        close: () => inner.close(),
      } as ControlledExecutor;
    };
    const stores = memoryStores();
    const exp = new ExperimentState({
      createExecutor: counting,
      decideBackend: async () => ({ requested: "auto", name: "wasm", reason: "test" }),
      parallelism: 1,
      store: stores.runStore,
    });
    exp.setUrl(parseUrlState("?preset=persuasion-smoke").state);
    for (const key of [
      "seeds",
      "conditions",
      "corpus",
      "simulator",
      "policy",
      "rl",
      "panel",
    ] as const)
      exp.set(key, TEST_CONFIG[key]);
    exp.set("eval", { ...TEST_CONFIG.eval, diagnosticSeeds: 0 });
    const sweeps = new SweepState({ runs: stores.runStore, sweeps: stores.sweepStore });
    flushSync();

    await sweeps.run(exp, [{ path: "simulator.gamma", values: [1, 4] }]);
    expect(sweeps.error).toBeNull();
    const [record] = [...stores.sweeps.values()];
    const summary = record.summary!;
    expect(summary.points.map((p) => p.name)).toEqual(["simulator.gamma=1", "simulator.gamma=4"]);
    // both seeds' models pretrained once, for γ = 1, and taken by γ = 4; every unit trained once
    const config = exp.resolved.config!;
    expect(counts.pretrain).toBe(seedsOf(config).flatMap((s) => pretrainJobs(config, s)).length);
    expect(counts.unit).toBe(2 * TEST_CONFIG.conditions.length * TEST_CONFIG.seeds);

    const reports = summary.points.map((p) => stores.runs.get(record.plan!.runs[p.name])!.report!);
    expect(reports.map((r) => r.config.simulator.gamma)).toEqual([1, 4]);
    expect(summary.points[1].comparisons).toEqual(
      reports[1].comparisons
        .filter((c) => isEffectMetric(c.metric)) // the headline ones
        .map(({ a, b, metric, difference }) => ({ a, b, metric, difference })),
    );
    expect(summary.points[1].cost?.baseline).toBe("simulator.gamma=1");
    expect(sweeps.shown?.id).toBe(record.id);

    // the same plan, its points' runs finished: nothing runs again, the same summary
    const before = { ...counts };
    const again: StoredSweep = { ...record, id: "sweep-again", summary: undefined };
    await stores.sweepStore.put(again);
    await sweeps.resume(exp, again);
    expect(counts).toEqual(before);
    const resumed = stores.sweeps.get("sweep-again")!.summary!;
    expect(resumed.points.map((p) => p.comparisons)).toEqual(
      summary.points.map((p) => p.comparisons),
    );
  }, 300_000);
});

describe("the sweep figure", () => {
  stubResizeObserver();
  const count = (root: Element, label: string, shape: string) =>
    root.querySelectorAll(`g[aria-description="${label}"] ${shape}`).length;

  it("draws a dot and an interval per point and comparison, on a log axis for γ, without a limit when none is reached", () => {
    const summary = fixture();
    expect(xAxis(summary)).toMatchObject({ path: "simulator.gamma", log: true });
    const { getByTestId } = render(SweepFigure, { summary });
    const success = getByTestId("figure-sweep");
    const lines = 6; // five conditions − single, and the collapse's cost
    expect(count(success, "effect", "circle")).toBe(5 * lines * 2);
    expect(count(success, "interval", "line")).toBe(5 * lines * 2);
    expect(count(success, "limit", "line")).toBe(0);
    const entropy = getByTestId("figure-sweep-entropy");
    expect(count(entropy, "effect", "circle")).toBe(5 * lines);
    expect(getByTestId("sweep-table").querySelectorAll("tbody tr")).toHaveLength(5 * lines);
  });

  it("draws the ±100-point limit where an interval reaches past it, the interval uncut", () => {
    const summary = fixture();
    const d = summary.points[2].comparisons.find((c) => c.metric === "humanSuccess")!.difference;
    Object.assign(d, { lo: -1.6, hi: 1.3 });
    const rows = effectRows(summary).filter((r) => r.point === summary.points[2].name);
    expect(rows.some((r) => r.lo === -160 && r.hi === 130)).toBe(true);
    const { getByTestId } = render(SweepFigure, { summary });
    expect(count(getByTestId("figure-sweep"), "limit", "line")).toBe(2 * 2); // −100 and +100, in both panels
  });

  it("draws no interval for one seed, and says so", () => {
    const summary = fixture();
    for (const p of summary.points)
      for (const e of [...p.comparisons, ...(p.cost?.effects ?? [])])
        Object.assign(e.difference, { n: 1, lo: e.difference.mean, hi: e.difference.mean });
    for (const p of summary.points) p.seeds = [0];
    const { getByTestId } = render(SweepFigure, { summary });
    const success = getByTestId("figure-sweep");
    expect(count(success, "interval", "line")).toBe(0);
    expect(count(success, "effect", "circle")).toBe(60);
    expect(success.textContent).toContain("one seed, no interval");
  });
});

describe("importing a sweep's files", () => {
  const recorded = readFileSync(
    join(process.cwd(), "public/recorded/persuasion-smoke.json"),
    "utf8",
  );
  const report = parseReport(recorded);
  const grid = [{ path: "simulator.gamma", values: [10, 1] }];
  const [atTen, atOne] = gridPoints(grid);
  const summary: SweepSummary = summarizeSweep(
    { preset: "persuasion-smoke", backend: "wasm", config: report.config, sets: [] },
    grid,
    [
      { ...atTen, report, file: `${atTen.name}.json` },
      { ...atOne, report, file: `${atOne.name}.json` },
    ],
  );

  it("sorts a folder's files into the sweep with its points' reports, and other reports into runs", () => {
    const sorted = sortImport([
      { name: "gamma/sweep.json", text: JSON.stringify(summary) },
      { name: "gamma/simulator.gamma=10.json", text: recorded },
      { name: "gamma/simulator.gamma=1.json", text: recorded }, // γ = 10's report under γ = 1's name
      { name: "other.json", text: recorded },
      { name: "gamma/notes.json", text: "{ nope" },
    ]);
    expect(sorted.sweeps).toHaveLength(1);
    expect(Object.keys(sorted.sweeps[0].reports)).toEqual(["simulator.gamma=10.json"]);
    expect(sorted.reports.map((r) => r.file)).toEqual(["other.json"]);
    expect(sorted.problems).toEqual([
      expect.stringMatching(/^gamma\/notes\.json: not JSON/),
      "gamma/simulator.gamma=1.json: not the report of the sweep's point simulator.gamma=1: its simulator.gamma is 10, the point's is 1",
    ]);
  });

  it("loads recorded sweeps from their index; a bad one is named, the others kept", async () => {
    const files: Record<string, string> = {
      "recorded/sweeps/index.json": JSON.stringify({
        format: "collapse-lab/recorded-sweeps@1",
        sweeps: [
          { id: "good", title: "Good" },
          { id: "bad", title: "Bad" },
        ],
      }),
      "recorded/sweeps/good/sweep.json": JSON.stringify(summary),
      "recorded/sweeps/bad/sweep.json": JSON.stringify({ ...summary, grid: [] }),
    };
    const fetchFn = (async (url: string) =>
      files[url] === undefined
        ? new Response("", { status: 404 })
        : new Response(files[url], {
            headers: { "content-type": "application/json" },
          })) as typeof fetch;
    const loaded = await loadRecordedSweeps(fetchFn);
    expect(loaded.map((s) => [s.id, !!s.summary])).toEqual([
      ["good", true],
      ["bad", false],
    ]);
    expect(loaded[1].error).toMatch(/grid/);
    const none = (async () => new Response("", { status: 404 })) as typeof fetch;
    expect(await loadRecordedSweeps(none)).toEqual([]);
  });
});
