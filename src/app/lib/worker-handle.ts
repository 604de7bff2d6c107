// A module worker wrapped with Comlink, and how to end it: the one place workers are spawned.
import * as Comlink from "comlink";

export interface WorkerHandle<T> {
  api: Comlink.Remote<T>;
  worker: Worker;
  terminate(): void;
}

export function wrapWorker<T>(worker: Worker): WorkerHandle<T> {
  const api = Comlink.wrap<T>(worker);
  return {
    api,
    worker,
    terminate() {
      api[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}
