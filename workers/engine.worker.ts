// Thin Comlink adapter: exposes one EngineService per worker. Checkpoints leave the worker
// with their buffers transferred, not copied; callbacks arrive as Comlink proxies.
import * as Comlink from "comlink";
import { EngineService } from "../src/service/engine-service";
import { transferables, type Checkpoint } from "../src/engine/checkpoint";
import type { PatternProgress } from "../src/demo/pattern-task";

class EngineWorker extends EngineService {
  override async checkpoint(id: number): Promise<Checkpoint> {
    const ck = await super.checkpoint(id);
    return Comlink.transfer(ck, transferables(ck));
  }

  override runPatternTask(...[config, job, onProgress]: Parameters<EngineService["runPatternTask"]>) {
    // a proxied callback returns a promise; progress is fire-and-forget
    return super.runPatternTask(config, job, onProgress ? (p: PatternProgress) => void onProgress(p) : undefined);
  }
}

export type EngineWorkerApi = EngineWorker;

Comlink.expose(new EngineWorker());
