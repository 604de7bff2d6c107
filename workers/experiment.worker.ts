// One experiment worker of the app: an engine backend and the experiment's tasks (pretraining,
// a condition × seed unit, diagnostics), one at a time, exposed with Comlink. Pause / step /
// resume act through the gate the runner awaits before every RL step; cancel aborts the task.
// On WebGPU the worker watches its GPUDevice: once the device is lost, the running task and every
// later one fail at once with "the WebGPU device was lost: …", so the pool can move to wasm (a
// destroyed device's reads reject or never come; its results are never returned).
import * as Comlink from "comlink";
import { createBackend, type BackendInfo } from "../src/engine/backends";
import type { BackendName, EngineBackend } from "../src/engine/backend";
import { executeTask, type Task } from "../src/experiment/tasks";
import type { UnitProgress } from "../src/experiment/runner";
import { microBenchmark, type MicroBenchmark } from "../src/engine/micro-benchmark";
import type { ModelConfig } from "../src/engine/config";

class ExperimentWorker {
  #backend?: EngineBackend;
  #info?: BackendInfo;
  #paused = false;
  #steps = 0; // RL steps still allowed while paused (Step)
  #waiters: (() => void)[] = [];
  #abort = new AbortController();
  #device?: GPUDevice;
  /** Settles with the reason once the WebGPU device is lost; never on wasm. */
  #lost: Promise<string> = new Promise(() => undefined);
  #lostReason?: string;

  async init(backend: BackendName): Promise<BackendInfo> {
    const { backend: b, info, gpuDevice } = await createBackend(backend);
    this.#backend = b;
    this.#info = info;
    if (gpuDevice) this.#watch(gpuDevice);
    return info;
  }

  #watch(device: GPUDevice): void {
    this.#device = device;
    this.#lost = device.lost.then(({ reason, message }) => {
      this.#lostReason = `the WebGPU device was lost: ${message || reason}`;
      this.#abort.abort(new Error(this.#lostReason));
      return this.#lostReason;
    });
  }

  /** Test hook: destroys this worker's GPUDevice, as a GPU reset or a driver crash would lose it. */
  destroyDevice(): void {
    if (!this.#device) throw new Error("this worker has no WebGPU device");
    this.#device.destroy();
  }

  /** Times train and sampling steps of a model of this size on this worker's backend. */
  async benchmark(config: ModelConfig, rows: number): Promise<MicroBenchmark> {
    if (!this.#backend) throw new Error("worker not initialised");
    return microBenchmark(this.#backend, config, rows);
  }

  async run(task: Task, onProgress?: (p: UnitProgress) => void) {
    if (!this.#backend) throw new Error("worker not initialised");
    if (this.#lostReason) throw new Error(this.#lostReason);
    this.#abort = new AbortController();
    const lost = this.#lost.then((reason) => Promise.reject(new Error(reason)));
    try {
      return await Promise.race([
        executeTask(
          this.#backend,
          task,
          onProgress ? (p) => void onProgress(p) : undefined,
          this.#abort.signal,
          () => this.#gate(),
        ),
        lost,
      ]);
    } catch (e) {
      // a destroyed device's failed read can come before its `lost` promise settles: wait a moment to name the loss
      if (this.#device && !this.#lostReason)
        await Promise.race([this.#lost, new Promise((r) => setTimeout(r, 1000))]);
      throw this.#lostReason ? new Error(this.#lostReason) : e;
    }
  }

  #gate(): Promise<void> {
    if (!this.#paused) return Promise.resolve();
    if (this.#steps > 0) {
      this.#steps--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #release(): void {
    const w = this.#waiters;
    this.#waiters = [];
    w.forEach((f) => f());
  }

  pause(): void {
    this.#paused = true;
    this.#steps = 0;
  }

  resume(): void {
    this.#paused = false;
    this.#release();
  }

  /** While paused: let one more RL step through. */
  step(): void {
    if (!this.#paused) return;
    if (this.#waiters.length > 0) {
      const [first, ...rest] = this.#waiters;
      this.#waiters = rest;
      first();
    } else this.#steps++;
  }

  cancel(): void {
    this.#abort.abort(new Error("stopped"));
    this.#release();
  }

  info(): BackendInfo | undefined {
    return this.#info;
  }
}

export type ExperimentWorkerApi = ExperimentWorker;

Comlink.expose(new ExperimentWorker());
