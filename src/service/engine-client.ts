// The page side of the engine worker: spawn it as a module worker, talk to it through Comlink,
// send checkpoints with their buffers transferred.
import * as Comlink from "comlink";
import type { EngineWorkerApi } from "../../workers/engine.worker";
import { transferables, type Checkpoint } from "../engine/checkpoint";
import { wrapWorker, type WorkerHandle } from "./worker-handle";

export type EngineWorkerHandle = WorkerHandle<EngineWorkerApi>;

export function spawnEngineWorker(name = "collapse-lab engine"): EngineWorkerHandle {
  return wrapWorker(new Worker(new URL("../../workers/engine.worker.ts", import.meta.url), { type: "module", name }));
}

/** Marks a checkpoint's buffers for transfer: the sender's copy becomes unusable (detached). */
export function transferCheckpoint(ck: Checkpoint): Checkpoint {
  return Comlink.transfer(ck, transferables(ck));
}

export { Comlink };
