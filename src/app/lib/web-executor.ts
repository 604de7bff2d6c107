// Runs an experiment's tasks in a pool of dedicated module workers (one task per worker at a
// time), never on the main thread. Pause / step / resume / stop reach every worker.
import * as Comlink from "comlink";
import type { BackendInfo } from "../../engine/backends";
import type { BackendName } from "../../engine/backend";
import type { UnitProgress } from "../../experiment/runner";
import type { Executor, Task, TaskResult } from "../../experiment/tasks";
import type { ExperimentWorkerApi } from "../../../workers/experiment.worker";

interface Slot {
  worker: Worker;
  api: Comlink.Remote<ExperimentWorkerApi>;
  ready: Promise<BackendInfo>;
  busy: boolean;
}

interface Pending {
  task: Task;
  onProgress?: (p: UnitProgress) => void;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export function spawnExperimentWorker(): { worker: Worker; api: Comlink.Remote<ExperimentWorkerApi> } {
  const worker = new Worker(new URL("../../../workers/experiment.worker.ts", import.meta.url), { type: "module", name: "collapse-lab experiment" });
  return { worker, api: Comlink.wrap<ExperimentWorkerApi>(worker) };
}

export class WebWorkerExecutor implements Executor {
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  readonly #inflight = new Set<Pending>();
  #paused = false;
  #closed = false;

  constructor(
    readonly parallelism: number,
    readonly backend: BackendName,
  ) {
    for (let i = 0; i < parallelism; i++) {
      const { worker, api } = spawnExperimentWorker();
      this.#slots.push({ worker, api, ready: api.init(backend), busy: false });
    }
  }

  /** What the first worker actually runs (webgpu may have fallen back to wasm). */
  info(): Promise<BackendInfo> {
    return this.#slots[0].ready;
  }

  run<T extends Task>(task: T, onProgress?: (p: UnitProgress) => void): Promise<TaskResult<T>> {
    if (this.#closed) return Promise.reject(new Error("the run was stopped"));
    return new Promise((resolve, reject) => {
      this.#queue.push({ task, onProgress, resolve: resolve as (v: unknown) => void, reject });
      this.#pump();
    });
  }

  #pump(): void {
    for (const slot of this.#slots) {
      if (slot.busy || this.#closed) continue;
      const p = this.#queue.shift();
      if (!p) return;
      slot.busy = true;
      this.#inflight.add(p);
      void (async () => {
        try {
          await slot.ready;
          if (this.#paused) await slot.api.pause();
          const progress = p.onProgress ? Comlink.proxy(p.onProgress) : undefined;
          p.resolve(await slot.api.run(p.task, progress));
        } catch (e) {
          p.reject(e instanceof Error ? e : new Error(String(e)));
        } finally {
          this.#inflight.delete(p);
          slot.busy = false;
          this.#pump();
        }
      })();
    }
  }

  get paused(): boolean {
    return this.#paused;
  }

  async pause(): Promise<void> {
    this.#paused = true;
    await Promise.all(this.#slots.map((s) => s.api.pause()));
  }

  async resume(): Promise<void> {
    this.#paused = false;
    await Promise.all(this.#slots.map((s) => s.api.resume()));
  }

  /** One RL step in every running unit, then paused again. */
  async step(): Promise<void> {
    if (!this.#paused) await this.pause();
    await Promise.all(this.#slots.map((s) => s.api.step()));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of [...this.#queue.splice(0), ...this.#inflight]) p.reject(new Error("the run was stopped"));
    for (const s of this.#slots) {
      s.api[Comlink.releaseProxy]();
      s.worker.terminate();
    }
  }
}
