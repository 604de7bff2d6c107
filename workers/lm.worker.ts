// Thin Comlink adapter: exposes one LmService per worker (the lm tier's models live here, off
// the UI thread). Callbacks arrive as Comlink proxies; progress is fire-and-forget.
import * as Comlink from "comlink";
import { LmService, type LmJob, type LmLoadOptions } from "../src/lm/lm-service";
import type { GenerateOptions, LmPrompt } from "../src/lm/types";
import type { LoadProgress, ModelSource } from "../src/lm/backend";

class LmWorker extends LmService {
  override loadLanguageModel(
    src: ModelSource,
    opts?: LmLoadOptions,
    onProgress?: (p: LoadProgress) => void,
  ) {
    return super.loadLanguageModel(src, opts, onProgress ? (p) => void onProgress(p) : undefined);
  }

  override loadEmbeddingModel(
    src: ModelSource,
    opts?: LmLoadOptions,
    onProgress?: (p: LoadProgress) => void,
  ) {
    return super.loadEmbeddingModel(src, opts, onProgress ? (p) => void onProgress(p) : undefined);
  }

  override generate(
    handle: number,
    prompt: LmPrompt,
    opts?: GenerateOptions,
    job?: LmJob,
    onToken?: (steps: number) => void,
  ) {
    return super.generate(handle, prompt, opts, job, onToken ? (n) => void onToken(n) : undefined);
  }

  override async embed(handle: number, texts: string[]): Promise<Float32Array[]> {
    const vectors = await super.embed(handle, texts);
    return Comlink.transfer(
      vectors,
      vectors.map((v) => v.buffer as ArrayBuffer),
    );
  }
}

export type LmWorkerApi = LmWorker;

Comlink.expose(new LmWorker());
