// The sweeps the app shows and runs: the recorded ones (public/recorded/sweeps/), those kept in
// this browser (imported, or run here), which one is shown, and a sweep run from the app — each
// point an ordinary run of the Experiment page's experiment with the point's settings (in the
// RunStore, resumable), one after the other, sharing pretraining, then summed up as the CLI does.
import type { RunReport } from "../../experiment/experiment";
import {
  gridPoints,
  planSweep,
  summarizeSweep,
  valueText,
  type SweepAxis,
  type SweepSummary,
} from "../../experiment/sweep";
import type { RunStore } from "../lib/run-store";
import { fetchRecordedPoint, loadRecordedSweeps, type RecordedSweep } from "../lib/sweep-files";
import { newRecordId } from "../lib/record-id";
import type { StoredSweep, SweepStore } from "../lib/sweep-store";
import { configWith, type UrlState } from "../lib/url-state";
import type { ExperimentState } from "./experiment.svelte";

export interface ShownSweep {
  id: string;
  title: string;
  source: "recorded" | "imported" | "app";
  summary: SweepSummary;
}

export interface SweepDeps {
  runs?: RunStore;
  sweeps?: SweepStore;
  fetchFn?: typeof fetch;
}

/** A sweep's title: the preset and what it sweeps. */
export const sweepTitle = (s: { preset: string; grid: readonly SweepAxis[] }) =>
  `${s.preset} over ${s.grid.map((a) => `${a.path} = ${a.values.map(valueText).join(", ")}`).join(" × ")}`;

export class SweepState {
  /** null until loaded. */
  recorded = $state.raw<RecordedSweep[] | null>(null);
  recordedError = $state<string | null>(null);
  stored = $state.raw<StoredSweep[]>([]);
  /** The id of the sweep on show (a recorded sweep's folder, or a stored sweep's id). */
  shownId = $state<string | null>(null);
  /** The sweep under way in the app: which point, of how many. */
  running = $state<{ id: string; point: number; total: number; name: string } | null>(null);
  error = $state<string | null>(null);
  #stopping = false;
  #loading: Promise<void> | null = null;

  constructor(readonly deps: SweepDeps = {}) {}

  /** Every sweep that can be shown: finished stored ones, then the recorded ones. */
  readonly available = $derived<ShownSweep[]>([
    ...this.stored.flatMap((s) =>
      s.summary ? [{ id: s.id, title: s.title, source: s.source, summary: s.summary }] : [],
    ),
    ...(this.recorded ?? []).flatMap((r) =>
      r.summary
        ? [{ id: r.id, title: r.title, source: "recorded" as const, summary: r.summary }]
        : [],
    ),
  ]);

  /** The sweep on show: the chosen one, else the first recorded one. */
  readonly shown = $derived<ShownSweep | null>(
    this.available.find((s) => s.id === this.shownId) ??
      this.available.find((s) => s.source === "recorded") ??
      null,
  );

  /** App sweeps that stopped before their last point: they can be resumed. */
  readonly unfinished = $derived(this.stored.filter((s) => s.source === "app" && !s.summary));

  /** Loads the recorded sweeps (once) and the stored ones. */
  load(): Promise<void> {
    this.#loading ??= (async () => {
      try {
        this.recorded = await loadRecordedSweeps(this.deps.fetchFn);
      } catch (e) {
        this.recorded = [];
        this.recordedError = (e as Error).message;
      }
    })();
    return Promise.all([this.#loading, this.refresh()]).then(() => undefined);
  }

  async refresh(): Promise<void> {
    this.stored = (await this.deps.sweeps?.list()) ?? [];
  }

  show(id: string): void {
    this.shownId = id;
  }

  /** A point's report: from the recording's folder, the import, or the stored run of an app sweep. */
  async pointReport(sweep: ShownSweep, pointName: string): Promise<RunReport> {
    if (sweep.source === "recorded")
      return fetchRecordedPoint(sweep.id, sweep.summary, pointName, this.deps.fetchFn);
    const stored = await this.deps.sweeps?.get(sweep.id);
    const point = sweep.summary.points.find((p) => p.name === pointName);
    const report =
      (point && stored?.reports[point.report]) ??
      (stored?.plan?.runs[pointName] &&
        (await this.deps.runs?.get(stored.plan.runs[pointName]))?.report);
    if (!report)
      throw new Error(
        `the report of ${pointName} was not imported with the sweep; import it with the sweep's folder`,
      );
    return report;
  }

  /** Keeps an imported sweep (with the reports of its points that came with it) and shows it. */
  async keepImported(summary: SweepSummary, reports: Record<string, RunReport>): Promise<string> {
    const id = newRecordId("sweep");
    await this.deps.sweeps?.put({
      id,
      createdAt: Date.now(),
      title: sweepTitle(summary),
      source: "imported",
      summary: JSON.parse(JSON.stringify(summary)) as SweepSummary,
      reports: JSON.parse(JSON.stringify(reports)) as Record<string, RunReport>,
    });
    await this.refresh();
    this.show(id);
    return id;
  }

  async remove(id: string): Promise<void> {
    await this.deps.sweeps?.delete(id);
    await this.refresh();
  }

  /**
   * Runs a sweep of the experiment on the Experiment page over `grid` (throws SweepError for a bad
   * grid, before any work). Resolves when it finishes or stops.
   */
  async run(exp: ExperimentState, grid: SweepAxis[]): Promise<void> {
    if (this.running || exp.busy) return;
    const shown = $state.snapshot(exp.url) as UrlState;
    // the swept settings replace the page's own values of them
    const swept = new Set(grid.map((a) => a.path));
    const url: UrlState = {
      ...shown,
      sets: shown.sets.filter((s) => !swept.has(s.slice(0, s.indexOf("=")))),
      page: "experiment",
      embed: undefined,
      sweep: undefined,
      autorun: false,
    };
    planSweep(grid, url.sets, (sets) => configWith({ ...url, sets: [...url.sets, ...sets] }));
    const record: StoredSweep = {
      id: newRecordId("sweep"),
      createdAt: Date.now(),
      title: sweepTitle({ preset: url.preset, grid }),
      source: "app",
      reports: {},
      plan: { url, grid, runs: {} },
    };
    await this.deps.sweeps?.put(record);
    await this.refresh();
    await this.#execute(exp, record);
  }

  /** Continues an app sweep that stopped: finished points are kept, an interrupted one resumes. */
  async resume(exp: ExperimentState, record: StoredSweep): Promise<void> {
    if (this.running || exp.busy || !record.plan) return;
    await this.#execute(exp, structuredClone($state.snapshot(record) as StoredSweep));
  }

  async stop(exp: ExperimentState): Promise<void> {
    if (!this.running) return;
    this.#stopping = true;
    await exp.stop();
  }

  async #execute(exp: ExperimentState, record: StoredSweep): Promise<void> {
    const { url, grid } = record.plan!;
    const points = gridPoints(grid);
    const shared = new Map<string, unknown>(); // pretrained models, shared between points
    const done: ((typeof points)[number] & { report: RunReport; file: string })[] = [];
    this.#stopping = false;
    this.error = null;
    try {
      for (const [i, p] of points.entries()) {
        this.running = { id: record.id, point: i + 1, total: points.length, name: p.name };
        const kept = record.plan!.runs[p.name]
          ? await this.deps.runs?.get(record.plan!.runs[p.name])
          : undefined;
        let report = kept?.report ?? null;
        if (!report) {
          exp.setUrl({ ...url, sets: [...url.sets, ...p.sets] });
          report = await exp.run(kept, {
            sharedPretraining: shared,
            title: `${url.preset}, ${p.name} (sweep point ${i + 1}/${points.length})`,
            onStarted: (runId) => {
              record.plan!.runs[p.name] = runId;
              void this.deps.sweeps?.put(record);
            },
          });
        }
        if (!report) {
          this.error = this.#stopping
            ? `Stopped at point ${i + 1} of ${points.length}; Resume continues from its finished tasks.`
            : `Point ${p.name} failed: ${exp.error ?? "unknown error"}. Resume tries it again.`;
          return;
        }
        done.push({ ...p, report, file: `${p.name}.json` });
      }
      const backends = [...new Set(done.map((d) => d.report.env.backend))];
      record.summary = summarizeSweep(
        {
          preset: url.preset,
          backend: backends.join(", "),
          config: configWith(url),
          sets: url.sets,
        },
        grid,
        done,
      );
      await this.deps.sweeps?.put(JSON.parse(JSON.stringify(record)) as StoredSweep);
      await this.refresh();
      this.show(record.id);
    } finally {
      this.running = null;
      // the Experiment page goes back to the sweep's experiment (it shows the last point's run)
      if (!exp.busy) exp.setUrl({ ...url, page: exp.url.page, sweep: exp.url.sweep }, exp.problems);
      await this.refresh();
    }
  }
}
