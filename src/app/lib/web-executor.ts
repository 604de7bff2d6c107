// Runs an experiment's tasks in a pool of dedicated module workers (one task per worker at a
// time), never on the main thread. Pause / step / resume / stop reach every worker.
// Reliability (docs/architecture.md#reliability): a crashed worker is replaced and its task runs again; a task that
// fails on WebGPU (e.g. a lost device) moves the whole pool to wasm: it runs again there, and so
// does every task still running on WebGPU in another worker. Tasks are deterministic and finished
// ones are kept, so the run continues where it was, on wasm from then on.
import * as Comlink from "comlink";
import type { BackendInfo } from "../../engine/backends";
import type { BackendName } from "../../engine/backend";
import type { UnitProgress } from "../../experiment/runner";
import type { Executor, Task, TaskResult } from "../../experiment/tasks";
import type { ExperimentWorkerApi } from "../../../workers/experiment.worker";
import { wrapWorker, type WorkerHandle } from "./worker-handle";

interface Slot {
  worker: Worker;
  api: Comlink.Remote<ExperimentWorkerApi>;
  ready: Promise<BackendInfo>;
  backend: BackendName;
  busy: boolean;
  crashed: Promise<never>; // rejects when the worker dies, or when its task is moved to wasm
  interrupt: (e: Error) => void; // rejects `crashed`
}

interface Pending {
  task: Task;
  onProgress?: (p: UnitProgress) => void;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  attempts: number;
}

/** Retries of one task after worker crashes before the run gives up. */
const MAX_ATTEMPTS = 3;

export class WorkerCrashed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorkerCrashed";
  }
}

/** A task that was running on WebGPU when the pool moved to wasm: it runs again there. */
class MovedToWasm extends Error {}

export function spawnExperimentWorker(): WorkerHandle<ExperimentWorkerApi> {
  return wrapWorker(
    new Worker(new URL("../../../workers/experiment.worker.ts", import.meta.url), {
      type: "module",
      name: "collapse-lab experiment",
    }),
  );
}

export interface ExecutorEvents {
  /** The pool moved from WebGPU to wasm (once per run) after `finished` tasks had finished on WebGPU; `reason` says why, e.g. "the WebGPU device was lost: …". */
  onFallback?(reason: string, finished: number): void;
  /** A worker died and was replaced. */
  onRestart?(reason: string): void;
}

export class WebWorkerExecutor implements Executor {
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  readonly #inflight = new Set<Pending>();
  #backend: BackendName;
  #paused = false;
  /** Queued tasks that may still start while paused (Step lets one in per idle worker). */
  #allowance = 0;
  #closed = false;
  /** Tasks this pool has finished. */
  #finished = 0;

  constructor(
    readonly parallelism: number,
    backend: BackendName,
    readonly events: ExecutorEvents = {},
  ) {
    this.#backend = backend;
    for (let i = 0; i < parallelism; i++) this.#slots.push(this.#spawn());
  }

  #spawn(): Slot {
    const { worker, api } = spawnExperimentWorker();
    let interrupt: (e: Error) => void = () => undefined;
    const crashed = new Promise<never>((_, reject) => {
      interrupt = reject;
      worker.addEventListener("error", (e) => {
        e.preventDefault(); // handled here: the task is redone on a fresh worker
        reject(new WorkerCrashed(`a worker crashed: ${e.message || "unknown error"}`));
      });
    });
    crashed.catch(() => undefined); // observed in #pump
    return {
      worker,
      api,
      ready: api.init(this.#backend),
      backend: this.#backend,
      busy: false,
      crashed,
      interrupt,
    };
  }

  #replace(slot: Slot): void {
    slot.api[Comlink.releaseProxy]();
    slot.worker.terminate();
    Object.assign(slot, this.#spawn());
  }

  /** The backend the pool runs on now. */
  get backend(): BackendName {
    return this.#backend;
  }

  /** What the first worker actually runs (webgpu may have fallen back to wasm). */
  info(): Promise<BackendInfo> {
    return this.#slots[0].ready;
  }

  run<T extends Task>(task: T, onProgress?: (p: UnitProgress) => void): Promise<TaskResult<T>> {
    if (this.#closed) return Promise.reject(new Error("the run was stopped"));
    return new Promise((resolve, reject) => {
      this.#queue.push({
        task,
        onProgress,
        resolve: resolve as (v: unknown) => void,
        reject,
        attempts: 0,
      });
      this.#pump();
    });
  }

  #pump(): void {
    for (const slot of this.#slots) {
      if (slot.busy || this.#closed) continue;
      // paused: nothing new starts (a pretraining job, which has no RL steps to stop between, ends and the next waits)
      if (this.#paused && this.#allowance <= 0) return;
      const p = this.#queue.shift();
      if (!p) return;
      if (this.#paused) this.#allowance--;
      slot.busy = true;
      this.#inflight.add(p);
      p.attempts++;
      void (async () => {
        let retry = false;
        try {
          if (slot.backend !== this.#backend) this.#replace(slot);
          await Promise.race([slot.ready, slot.crashed]);
          if (this.#paused) await slot.api.pause();
          const progress = p.onProgress ? Comlink.proxy(p.onProgress) : undefined;
          const result = await Promise.race([slot.api.run(p.task, progress), slot.crashed]);
          this.#finished++;
          p.resolve(result);
        } catch (e) {
          const error = e instanceof Error ? e : new Error(String(e));
          if (this.#closed) p.reject(new Error("the run was stopped"));
          else if (e instanceof MovedToWasm) {
            p.attempts--; // nothing failed: it runs again on wasm
            this.#replace(slot);
            retry = true;
          } else if (e instanceof WorkerCrashed && p.attempts < MAX_ATTEMPTS) {
            this.events.onRestart?.(error.message);
            this.#replace(slot);
            retry = true;
          } else if (slot.backend === "webgpu" && p.attempts < MAX_ATTEMPTS) {
            if (this.#backend === "webgpu") {
              this.#backend = "wasm"; // every task from now on, this one included, runs on wasm
              for (const other of this.#slots)
                if (other !== slot && other.busy && other.backend === "webgpu")
                  other.interrupt(new MovedToWasm());
              this.events.onFallback?.(
                /WebGPU device was lost/.test(error.message)
                  ? error.message
                  : `a task failed on WebGPU: ${error.message}`,
                this.#finished,
              );
            }
            this.#replace(slot);
            retry = true;
          } else p.reject(error);
        } finally {
          this.#inflight.delete(p);
          if (retry) this.#queue.unshift(p);
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
    this.#allowance = 0;
    await Promise.all(this.#slots.map((s) => s.api.resume()));
    this.#pump();
  }

  /** One RL step in every running unit, then paused; an idle worker takes its next task (a whole pretraining job). */
  async step(): Promise<void> {
    if (!this.#paused) await this.pause();
    this.#allowance = this.#slots.filter((s) => !s.busy).length;
    this.#pump();
    await Promise.all(this.#slots.map((s) => s.api.step()));
  }

  /** Test hook: worker `i` reports an uncaught error, as a crashing worker does. */
  simulateCrash(i: number): void {
    this.#slots[i].worker.dispatchEvent(
      new ErrorEvent("error", { message: "simulated crash", cancelable: true }),
    );
  }

  /** Test hook: worker `i` destroys its WebGPU device, as a GPU reset would lose it. */
  async simulateDeviceLoss(i: number): Promise<void> {
    await this.#slots[i].ready;
    await this.#slots[i].api.destroyDevice();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of [...this.#queue.splice(0), ...this.#inflight])
      p.reject(new Error("the run was stopped"));
    for (const s of this.#slots) {
      s.api[Comlink.releaseProxy]();
      s.worker.terminate();
    }
  }
}
