// Parallel tasks in Node: a pool of worker_threads, each with its own jax-js engine. Used by the
// CLI to spread an experiment over the machine's cores. Tasks and results are structured-cloned.
import { Worker } from "node:worker_threads";
import type { BackendName } from "../engine/backend";
import type { DecodingMode } from "../benchmarks/encode";
import type { UnitProgress } from "./runner";
import type { Executor, Task, TaskResult } from "./tasks";

interface Pending {
  task: Task;
  onProgress?: (p: UnitProgress) => void;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class NodeWorkerExecutor implements Executor {
  readonly #workers: Worker[] = [];
  readonly #idle: Worker[] = [];
  readonly #queue: Pending[] = [];
  readonly #running = new Map<Worker, Pending>();
  #closed = false;

  constructor(
    readonly parallelism: number,
    backend: BackendName,
    opts: { decoding?: DecodingMode } = {}, // `full`: no incremental decoding (for benchmarks)
  ) {
    for (let i = 0; i < parallelism; i++) {
      const w = new Worker(new URL("./node-worker.mjs", import.meta.url), {
        workerData: { backend, decoding: opts.decoding },
      });
      w.on(
        "message",
        (
          msg:
            | { type: "progress"; progress: UnitProgress }
            | { type: "done"; result: unknown }
            | { type: "error"; message: string },
        ) => {
          const p = this.#running.get(w);
          if (!p) return;
          if (msg.type === "progress") return p.onProgress?.(msg.progress);
          this.#running.delete(w);
          if (msg.type === "done") p.resolve(msg.result);
          else p.reject(new Error(msg.message));
          this.#idle.push(w);
          this.#pump();
        },
      );
      w.on("error", (e) => {
        const p = this.#running.get(w);
        this.#running.delete(w);
        p?.reject(e);
      });
      this.#workers.push(w);
      this.#idle.push(w);
    }
  }

  #pump(): void {
    while (this.#idle.length > 0 && this.#queue.length > 0) {
      const w = this.#idle.shift()!;
      const p = this.#queue.shift()!;
      this.#running.set(w, p);
      w.postMessage(p.task);
    }
  }

  run<T extends Task>(task: T, onProgress?: (p: UnitProgress) => void): Promise<TaskResult<T>> {
    if (this.#closed) return Promise.reject(new Error("executor is closed"));
    return new Promise((resolve, reject) => {
      this.#queue.push({ task, onProgress, resolve: resolve as (v: unknown) => void, reject });
      this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
