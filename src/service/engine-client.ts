// The page side of the engine worker: spawn it as a module worker, talk to it through Comlink,
// send checkpoints with their buffers transferred.
import * as Comlink from "comlink";
import type { EngineWorkerApi } from "../../workers/engine.worker";
import { transferables, type Checkpoint } from "../engine/checkpoint";

export interface EngineWorkerHandle {
  api: Comlink.Remote<EngineWorkerApi>;
  worker: Worker;
  terminate(): void;
}

export function spawnEngineWorker(name = "collapse-lab engine"): EngineWorkerHandle {
  const worker = new Worker(new URL("../../workers/engine.worker.ts", import.meta.url), { type: "module", name });
  const api = Comlink.wrap<EngineWorkerApi>(worker);
  return {
    api,
    worker,
    terminate() {
      api[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}

/** Marks a checkpoint's buffers for transfer: the sender's copy becomes unusable (detached). */
export function transferCheckpoint(ck: Checkpoint): Checkpoint {
  return Comlink.transfer(ck, transferables(ck));
}

export { Comlink };
