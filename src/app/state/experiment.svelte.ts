// The experiment page's state: the URL state (preset + overrides + seeds + backend), the run's
// status, live learning curves, the final RunReport. Runs go to an Executor (web workers in the
// app, inline in tests); finished tasks are kept in the RunStore so a run can be resumed.
import { newRecordId } from "../lib/record-id";
import type { BackendName } from "../../engine/backend";
import type { BackendInfo } from "../../engine/backends";
import type { ModelConfig } from "../../engine/config";
import { type ConditionId, type ExperimentConfig, validateConfig } from "../../experiment/config";
import {
  runExperiment,
  type ExperimentProgress,
  type RunReport,
} from "../../experiment/experiment";
import { benchmarkFor } from "../../benchmarks/registry";
import { modelConfig, modelOptions } from "../../experiment/pretrain";
import type { CurvePoint } from "../../experiment/runner";
import type { PretrainStore } from "../../experiment/store";
import { sharePretraining } from "../../experiment/sweep";
import type { Executor } from "../../experiment/tasks";
import type { BackendDecision } from "../lib/backend-choice";
import { configDifferences } from "../../experiment/config-diff";
import type { RunStore, StoredRun } from "../lib/run-store";
import type { CorpusStore } from "../lib/corpus-store";
import { loadCorpora } from "../lib/corpus-import";
import {
  configWith,
  DEFAULT_STATE,
  formatUrlState,
  withSet,
  type BackendChoice,
  type UrlState,
} from "../lib/url-state";

export type RunStatus = "idle" | "starting" | "running" | "paused" | "done" | "stopped" | "error";

/** An executor the page can pause, step, resume and stop. */
export interface ControlledExecutor extends Executor {
  pause?(): Promise<void>;
  resume?(): Promise<void>;
  step?(): Promise<void>;
  info?(): Promise<BackendInfo>;
}

export interface ExperimentDeps {
  createExecutor(parallelism: number, backend: BackendName): ControlledExecutor;
  /** `measure: false` answers at once (a run never waits for a measurement); `valid` says whether a measurement may be kept. */
  decideBackend(
    choice: BackendChoice,
    model: ModelConfig,
    rows: number,
    options?: { measure?: boolean; valid?: () => boolean },
  ): Promise<BackendDecision>;
  /** ms per micro-benchmark step on this device (src/engine/micro-benchmark.ts), for run-time estimates. */
  measureSpeed?(model: ModelConfig, rows: number): Promise<number>;
  parallelism: number;
  store?: RunStore;
  /** Pretrained models to load instead of pretraining (public/pretrained/). */
  pretrained?: PretrainStore;
  /** Dialogue corpora dropped on the page, by hash (docs/humans.md). */
  corpora?: CorpusStore;
}

/** A run that is a point of a sweep (state/sweep.svelte.ts). */
export interface RunOptions {
  /** Pretrained models shared with the sweep's other points (experiment/sweep.ts). */
  sharedPretraining?: Map<string, unknown>;
  title?: string;
  /** Called with the stored run's id as soon as it is kept. */
  onStarted?: (runId: string) => void;
}

export interface CurveRow {
  condition: ConditionId;
  seed: number;
  step: number;
  metric: "training simulator" | "held-out panel" | "humans";
  value: number;
}

export class ExperimentState {
  url = $state<UrlState>({ ...DEFAULT_STATE, sets: [] });
  problems = $state<string[]>([]);
  status = $state<RunStatus>("idle");
  error = $state<string | null>(null);
  progress = $state<ExperimentProgress | null>(null);
  /** Learning curves by `${condition}:${seed}`. */
  curves = $state<Record<string, CurvePoint[]>>({});
  report = $state<RunReport | null>(null);
  /** Where the shown report came from. */
  source = $state<"live" | "recorded" | "stored" | "imported" | null>(null);
  backend = $state<BackendDecision | null>(null);
  runId = $state<string | null>(null);
  /** Things that happened during the run that the user should know (worker restarts, fallbacks). */
  notes = $state<string[]>([]);
  /** This device's micro-benchmark on the current experiment's simulator model (ms per step); null until measured. */
  speed = $state<number | null>(null);
  startedAt = $state<number | null>(null);
  finishedAt = $state<number | null>(null);
  /** Time spent paused so far, and when the current pause began: the clock stops while paused. */
  pausedMs = $state(0);
  pausedAt = $state<number | null>(null);

  readonly resolved = $derived.by(() => {
    try {
      return { config: configWith(this.url), error: null };
    } catch (e) {
      return { config: null, error: (e as Error).message };
    }
  });

  /** The learning curves on show, by `${condition}:${seed}`: the live ones, or those of a shown report. */
  readonly shownCurves = $derived(
    this.report && this.source !== "live" ? curvesOf(this.report) : this.curves,
  );

  /** Every curve point's success values as rows for the charts. */
  readonly curveRows = $derived.by(() => {
    const rows: CurveRow[] = [];
    for (const [key, points] of Object.entries(this.shownCurves)) {
      const [condition, seed] = key.split(":");
      for (const p of points) {
        const base = { condition: condition as ConditionId, seed: Number(seed), step: p.step };
        rows.push({ ...base, metric: "training simulator", value: p.train });
        rows.push({ ...base, metric: "held-out panel", value: p.heldout });
        rows.push({ ...base, metric: "humans", value: p.human });
      }
    }
    return rows.filter((r) => r.value !== null && Number.isFinite(r.value));
  });

  /**
   * Where the shown report's settings differ from the URL's (empty when they agree): the figure
   * then says it was made with other settings. Nothing during a run, whose report is not shown yet.
   */
  readonly mismatch = $derived.by(() => {
    const config = this.resolved.config;
    if (!this.report || !config || this.source === null) return [];
    let shown: ExperimentConfig;
    try {
      shown = validateConfig(this.report.config); // fills defaults older reports lack
    } catch {
      return [{ path: "(config)", shown: "unreadable", wanted: "this one" }];
    }
    return configDifferences(shown, config);
  });

  readonly busy = $derived(
    this.status === "starting" || this.status === "running" || this.status === "paused",
  );

  #executor: ControlledExecutor | null = null;
  #runsStarted = 0;
  #preparing: Promise<void> | null = null;
  #stopped = false;
  /** Why and when this run moved from WebGPU to wasm, for its report. */
  #fallback: string | null = null;
  #lastSave = 0;

  constructor(readonly deps: ExperimentDeps) {}

  /** Wall time the run has been going at `now`, pauses left out. */
  elapsedMs(now: number): number {
    if (this.startedAt === null) return 0;
    const end = this.finishedAt ?? this.pausedAt ?? now;
    return Math.max(0, end - this.startedAt - this.pausedMs);
  }

  get shareUrl(): string {
    return formatUrlState(this.url);
  }

  setUrl(state: UrlState, problems: string[] = []): void {
    this.url = state;
    this.problems = problems;
  }

  /** Sets one override (undefined removes it). */
  set(path: string, value: unknown): void {
    this.url = { ...this.url, sets: withSet(this.url.sets, path, value) };
  }

  /** The value of a config path in the resolved config. */
  get(path: string): unknown {
    let node: unknown = this.resolved.config;
    for (const k of path.split(".")) node = (node as Record<string, unknown> | null)?.[k];
    return node;
  }

  /** Measures this device's speed for run-time estimates (once; skipped while a run is busy). */
  async measureSpeed(): Promise<void> {
    const config = this.resolved.config;
    if (!config || !this.deps.measureSpeed || this.busy || this.speed !== null) return;
    const bench = benchmarkFor(config);
    try {
      this.speed = await this.deps.measureSpeed(
        modelConfig(bench, config.simulator.model, "simulator"),
        modelOptions(bench, config).capacity,
      );
    } catch {
      // no estimate, nothing else lost
    }
  }

  /**
   * Measures WebGPU against wasm for backend `auto` while the page is idle, so that runs never wait
   * for it; a run that starts meanwhile makes the measurement void (they would share the CPU).
   */
  prepareBackend(): Promise<void> {
    const config = this.resolved.config;
    if (!config || this.busy || this.url.backend !== "auto") return Promise.resolve();
    const bench = benchmarkFor(config);
    const runs = this.#runsStarted;
    this.#preparing ??= this.deps
      .decideBackend(
        "auto",
        modelConfig(bench, config.simulator.model, "simulator"),
        modelOptions(bench, config).capacity,
        { measure: true, valid: () => this.#runsStarted === runs },
      )
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => (this.#preparing = null));
    return this.#preparing;
  }

  /** Forgets the shown report (another preset was chosen); nothing during a run. */
  clearShown(): void {
    if (this.busy) return;
    this.report = null;
    this.source = null;
    this.runId = null;
    this.curves = {};
    this.speed = null; // another preset may have another model size
  }

  showReport(
    report: RunReport,
    source: "recorded" | "stored" | "imported",
    runId: string | null = null,
  ): void {
    if (this.busy) return;
    this.report = report;
    this.source = source;
    this.runId = runId;
    this.curves = {};
    this.status = "idle";
    this.error = null;
  }

  /** Starts a run of the current URL state, or resumes a stored one. */
  async run(resume?: StoredRun, options: RunOptions = {}): Promise<RunReport | null> {
    if (this.busy) return null;
    if (resume) this.url = { ...resume.url, autorun: false };
    const named = this.resolved.config;
    if (!named) {
      this.status = "error";
      this.error = this.resolved.error;
      return null;
    }
    this.#stopped = false;
    this.#fallback = null;
    this.#runsStarted++;
    this.status = "starting";
    this.error = null;
    this.report = null;
    this.source = "live";
    this.curves = {};
    this.progress = null;
    this.notes = [];
    this.startedAt = Date.now();
    this.finishedAt = null;
    this.pausedMs = 0;
    this.pausedAt = null;
    let executor: ControlledExecutor | null = null;
    try {
      // the dialogue corpora the config names, from this browser's store (a missing one: why, and how to bring it)
      const { config, corpora } = await loadCorpora(this.deps.corpora, named);
      const bench = benchmarkFor(config);
      const opts = modelOptions(bench, config);
      this.backend = await this.deps.decideBackend(
        this.url.backend,
        modelConfig(bench, config.simulator.model, "simulator"),
        opts.capacity,
        { measure: false },
      );
      const units = config.conditions.length * config.seeds;
      executor = this.deps.createExecutor(
        Math.max(1, Math.min(this.deps.parallelism, units)),
        this.backend.name,
      );
      this.#executor = executor;
      const info = await executor.info?.();
      if (info && info.name !== this.backend.name) {
        this.backend = {
          ...this.backend,
          name: info.name as "webgpu" | "wasm",
          reason: `fell back to ${info.name}: ${info.fallbackReason}`,
          notice: `WebGPU could not start (${info.fallbackReason}); running on ${info.name}.`,
        };
      }
      if (this.#stopped) throw new Error("stopped");
      const id = resume?.id ?? newRecordId("run");
      this.runId = id;
      const stored: StoredRun = {
        id,
        createdAt: resume?.createdAt ?? Date.now(),
        updatedAt: Date.now(),
        status: "running",
        title:
          options.title ??
          `${this.url.preset}${this.url.sets.length ? " (modified)" : ""}, ${config.seeds} seed${config.seeds > 1 ? "s" : ""}`,
        url: $state.snapshot(this.url),
        backend: this.backend.name,
        tasksDone: 0,
        tasksTotal: 0,
      };
      await this.deps.store?.put(stored);
      options.onStarted?.(id);
      this.status = "running";
      const kept = this.deps.store?.taskCache(id);
      const report = await runExperiment(config, executor, {
        backend: this.backend.name,
        preset: this.url.preset,
        cache:
          kept && options.sharedPretraining
            ? sharePretraining(kept, options.sharedPretraining)
            : kept,
        store: this.deps.pretrained,
        onNote: (m) => this.note(m), // how many models came from the store, and any stored file that could not be used
        onProgress: (p) => this.#onProgress(p, stored),
        corpora,
      });
      if (this.#stopped) throw new Error("stopped");
      if (this.backend.name !== report.env.backend)
        report.env.backend = `${this.backend.name} (started on ${report.env.backend})`;
      if (this.#fallback) report.env.fallback = this.#fallback;
      this.report = report;
      this.status = "done";
      this.finishedAt = Date.now();
      await this.deps.store?.put({
        ...stored,
        status: "done",
        report: JSON.parse(JSON.stringify(report)) as RunReport,
        tasksDone: stored.tasksTotal,
      });
      return report;
    } catch (e) {
      if (this.#stopped) {
        this.status = "stopped";
      } else {
        this.status = "error";
        this.error = (e as Error).message;
      }
      if (this.runId) {
        const s = await this.deps.store?.get(this.runId);
        if (s && s.status === "running")
          await this.deps.store?.put({ ...s, status: "interrupted" });
      }
      return null;
    } finally {
      if (this.pausedAt !== null) this.#unpauseClock();
      this.finishedAt ??= Date.now();
      this.#executor = null;
      await executor?.close();
    }
  }

  #onProgress(p: ExperimentProgress, stored: StoredRun): void {
    this.progress = p;
    if (p.phase === "train" && p.unit.point) {
      const key = `${p.unit.condition}:${p.unit.seed}`;
      this.curves[key] ??= [];
      const list = this.curves[key]; // read back: the stored array is the reactive proxy
      if (list.length === 0 || list[list.length - 1].step < p.unit.point.step)
        list.push(p.unit.point);
    }
    // keep the stored run's progress roughly current (every few seconds)
    if (this.deps.store && Date.now() - this.#lastSave > 3000) {
      this.#lastSave = Date.now();
      void this.deps.store.put({
        ...stored,
        tasksDone: p.done,
        tasksTotal: p.total,
        status: "running",
      });
    }
  }

  /** The pool moved from WebGPU to wasm mid-run, after `finished` of its tasks had finished there (they are kept). */
  fellBack(reason: string, finished: number): void {
    const lost = /^the WebGPU device was lost: (.*)$/.exec(reason);
    const what = lost
      ? `The GPU was lost (${lost[1].replace(/\.$/, "")})`
      : `WebGPU stopped working (${reason})`;
    const tasks = `${finished} finished task${finished === 1 ? "" : "s"}`;
    this.#fallback = `moved to wasm after ${tasks} on webgpu: ${reason}`;
    if (this.backend)
      this.backend = {
        ...this.backend,
        name: "wasm",
        reason: "switched from WebGPU to wasm mid-run",
        notice: `${what}: the run moved to the CPU (wasm), keeping its ${tasks}.`,
      };
  }

  note(message: string): void {
    this.notes = [...this.notes, message];
  }

  async pause(): Promise<void> {
    if (this.status !== "running") return;
    this.status = "paused";
    this.pausedAt = Date.now();
    await this.#executor?.pause?.();
  }

  async resume(): Promise<void> {
    if (this.status !== "paused") return;
    this.#unpauseClock();
    this.status = "running";
    await this.#executor?.resume?.();
  }

  /** One RL step of every running unit, then paused (the clock runs during the step). */
  async step(): Promise<void> {
    if (this.status !== "paused" && this.status !== "running") return;
    if (this.pausedAt !== null) this.#unpauseClock();
    await this.#executor?.step?.();
    if (this.busy) {
      this.status = "paused";
      this.pausedAt = Date.now();
    }
  }

  #unpauseClock(): void {
    if (this.pausedAt !== null) this.pausedMs += Date.now() - this.pausedAt;
    this.pausedAt = null;
  }

  async stop(): Promise<void> {
    if (!this.busy) return;
    this.#stopped = true;
    await this.#executor?.close();
  }
}

function curvesOf(report: RunReport): Record<string, CurvePoint[]> {
  const out: Record<string, CurvePoint[]> = {};
  for (const c of report.conditions) for (const s of c.seeds) out[`${c.id}:${s.seed}`] = s.curve;
  return out;
}
