// The executor of a Ray job's driver: every task of the experiment (a pretraining job, a condition
// × seed unit, a seed's diagnostics) becomes one Ray task on the cluster. The Node driver cannot
// speak to Ray itself; its parent, driver.py, holds the Ray connection. They talk in JSON lines:
// requests on Node's stdout, replies on its stdin (so the driver's own words go to stderr). Tasks
// and results cross as v8-serialised bytes in base64, the same bytes a worker thread would get.
import { createInterface } from "node:readline";
import { deserialize, serialize } from "node:v8";
import { describeJob } from "../../experiment/pretrain";
import type { UnitProgress } from "../../experiment/runner";
import type { Executor, Task, TaskResult } from "../../experiment/tasks";

export interface BridgeHello {
  op: "hello";
  cpus: number; // the cluster's, when the driver started
  gpus: number;
  nodes: number;
  parallelism: number; // tasks the cluster runs at once with the resources asked per task
}

type Reply =
  | BridgeHello
  | { op: "done"; id: number; result: string }
  | { op: "failed"; id: number; error: string };

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

/** A label Ray shows for a task (its name in the dashboard), and the task's own log lines. */
export function taskLabel(task: Task): string {
  switch (task.kind) {
    case "pretrain":
      return `pretrain seed ${task.job.seed}: ${describeJob(task.config, task.job)}`;
    case "unit":
      return `unit ${task.condition} seed ${task.pretrained.seed}`;
    case "diagnose":
      return `diagnose seed ${task.pretrained.seed}`;
    case "rescore":
      return `rescore ${task.condition} seed ${task.pretrained.seed}`;
  }
}

export class RayExecutor implements Executor {
  readonly #out: NodeJS.WritableStream;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #closed = false;
  #lost?: Error;

  private constructor(
    readonly parallelism: number,
    readonly cluster: BridgeHello,
    out: NodeJS.WritableStream,
    replies: AsyncIterable<string>,
  ) {
    this.#out = out;
    void this.#read(replies);
  }

  /** Connects to driver.py (stdout out, stdin in) and waits for its description of the cluster. */
  static async connect(): Promise<RayExecutor> {
    const out = process.stdout;
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })[
      Symbol.asyncIterator
    ]();
    const first = await lines.next();
    if (first.done) throw new Error("driver.py closed the bridge before saying hello");
    const hello = JSON.parse(first.value) as BridgeHello;
    if (hello.op !== "hello")
      throw new Error(`driver.py began with ${first.value.slice(0, 80)}, not hello`);
    return new RayExecutor(Math.max(1, hello.parallelism), hello, out, {
      [Symbol.asyncIterator]: () => lines,
    });
  }

  async #read(replies: AsyncIterable<string>): Promise<void> {
    for await (const line of replies) {
      if (!line.trim()) continue;
      const r = JSON.parse(line) as Reply;
      if (r.op === "hello") continue;
      const p = this.#pending.get(r.id);
      if (!p) continue;
      this.#pending.delete(r.id);
      if (r.op === "done") p.resolve(deserialize(Buffer.from(r.result, "base64")));
      else p.reject(new Error(r.error));
    }
    this.#lost = new Error("driver.py closed the bridge");
    for (const p of this.#pending.values()) p.reject(this.#lost);
    this.#pending.clear();
  }

  run<T extends Task>(task: T, _onProgress?: (p: UnitProgress) => void): Promise<TaskResult<T>> {
    if (this.#closed) return Promise.reject(new Error("executor is closed"));
    if (this.#lost) return Promise.reject(this.#lost);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      const payload = Buffer.from(serialize(task)).toString("base64");
      this.#out.write(
        `${JSON.stringify({ op: "run", id, kind: task.kind, label: taskLabel(task), payload })}\n`,
      );
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await new Promise<void>((resolve) =>
      this.#out.end(`${JSON.stringify({ op: "close" })}\n`, () => resolve()),
    );
  }
}
