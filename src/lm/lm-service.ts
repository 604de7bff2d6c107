// The lm tier as one service object for a worker: it owns loaded models by handle, runs
// cancellable jobs (generation, scoring, loads) and throttles load progress. No Comlink here —
// workers/lm.worker.ts exposes it — so the same object runs (and is tested) in Node.
import {
  TransformersEmbeddingModel,
  TransformersLanguageModel,
  runtimeVersions,
  type DeviceRequest,
  type LoadProgress,
  type LoadedInfo,
  type ModelSource,
  type TokenGeneration,
} from "./backend";
import type { ContinuationScore, GenerateOptions, LmPrompt } from "./types";
import { throttle, type Throttled } from "../util/throttle";

export interface LmJob {
  /** cancel(jobId) stops the job: generation at its next token, loads and scoring between steps. */
  jobId?: string;
}

export interface LmLoadOptions extends LmJob {
  device?: DeviceRequest;
  /** Minimum interval between byte-progress callbacks per file and for the total (default 100 ms). */
  progressMs?: number;
}

export interface LoadedModel {
  handle: number;
  info: LoadedInfo;
}

/** Byte progress is throttled per file (and for the total); start, end and ready always pass. */
function throttledProgress(onProgress: ((p: LoadProgress) => void) | undefined, ms: number) {
  if (!onProgress) return { report: undefined, flush: () => {} };
  const byKey = new Map<string, Throttled<LoadProgress>>();
  const key = (p: LoadProgress) => (p.kind === "file" ? `file:${p.file}` : p.kind);
  const report = (p: LoadProgress) => {
    if (p.kind === "ready" || (p.kind === "file" && p.status !== "progress")) {
      byKey.get(key(p))?.flush();
      onProgress(p);
      return;
    }
    let t = byKey.get(key(p));
    if (!t) byKey.set(key(p), (t = throttle(onProgress, ms)));
    t(p);
  };
  return { report, flush: () => byKey.forEach((t) => t.flush()) };
}

export class LmService {
  #models = new Map<number, TransformersLanguageModel | TransformersEmbeddingModel>();
  #jobs = new Map<string, AbortController>();
  #next = 1;

  /** transformers.js and its ONNX Runtime versions, e.g. to check the served wasm matches. */
  versions(): Promise<Record<string, string | undefined>> {
    return runtimeVersions();
  }

  /** Every URL this worker has fetched (Resource Timing), e.g. to show that a load stayed offline. */
  fetchedUrls(): string[] {
    if (typeof performance === "undefined" || typeof performance.getEntriesByType !== "function")
      return [];
    return performance.getEntriesByType("resource").map((e) => e.name);
  }

  #job<T>(jobId: string | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (jobId !== undefined && this.#jobs.has(jobId))
      return Promise.reject(new Error(`a job with id ${jobId} is already running`));
    const controller = new AbortController();
    if (jobId !== undefined) this.#jobs.set(jobId, controller);
    return run(controller.signal).finally(() => {
      if (jobId !== undefined) this.#jobs.delete(jobId);
    });
  }

  async #load<M extends TransformersLanguageModel | TransformersEmbeddingModel>(
    load: (src: ModelSource, o: Parameters<typeof TransformersLanguageModel.load>[1]) => Promise<M>,
    src: ModelSource,
    opts: LmLoadOptions,
    onProgress?: (p: LoadProgress) => void,
  ): Promise<LoadedModel> {
    const { report, flush } = throttledProgress(onProgress, opts.progressMs ?? 100);
    const model = await this.#job(opts.jobId, (signal) =>
      load(src, { device: opts.device, onProgress: report, signal }),
    );
    flush();
    const handle = this.#next++;
    this.#models.set(handle, model);
    return { handle, info: model.info };
  }

  /** Loads a causal LM (tokenizer + ONNX weights); WebGPU when available unless `device` says otherwise. */
  loadLanguageModel(
    src: ModelSource,
    opts: LmLoadOptions = {},
    onProgress?: (p: LoadProgress) => void,
  ): Promise<LoadedModel> {
    return this.#load((s, o) => TransformersLanguageModel.load(s, o), src, opts, onProgress);
  }

  /** Loads a sentence embedder through the feature-extraction pipeline. */
  loadEmbeddingModel(
    src: ModelSource,
    opts: LmLoadOptions = {},
    onProgress?: (p: LoadProgress) => void,
  ): Promise<LoadedModel> {
    return this.#load((s, o) => TransformersEmbeddingModel.load(s, o), src, opts, onProgress);
  }

  #lm(handle: number): TransformersLanguageModel {
    const m = this.#models.get(handle);
    if (!(m instanceof TransformersLanguageModel))
      throw new Error(`no language model with handle ${handle}`);
    return m;
  }

  #embedder(handle: number): TransformersEmbeddingModel {
    const m = this.#models.get(handle);
    if (!(m instanceof TransformersEmbeddingModel))
      throw new Error(`no embedding model with handle ${handle}`);
    return m;
  }

  /** `onToken` gets the generation steps done so far after each step. */
  generate(
    handle: number,
    prompt: LmPrompt,
    opts: GenerateOptions = {},
    job: LmJob = {},
    onToken?: (steps: number) => void,
  ): Promise<TokenGeneration[]> {
    const lm = this.#lm(handle);
    return this.#job(job.jobId, (signal) => lm.generate(prompt, opts, { signal, onToken }));
  }

  score(
    handle: number,
    prompt: LmPrompt,
    continuations: string[],
    job: LmJob = {},
  ): Promise<ContinuationScore[]> {
    const lm = this.#lm(handle);
    return this.#job(job.jobId, (signal) => lm.score(prompt, continuations, { signal }));
  }

  /** Prompt token ids as the model sees them (chat template applied), e.g. to show token counts. */
  encodePrompt(handle: number, prompt: LmPrompt): number[] {
    return this.#lm(handle).encodePrompt(prompt);
  }

  embed(handle: number, texts: string[]): Promise<Float32Array[]> {
    return this.#embedder(handle).embed(texts);
  }

  /** Cancels a running job; false when no such job runs. */
  cancel(jobId: string): boolean {
    const c = this.#jobs.get(jobId);
    c?.abort();
    return !!c;
  }

  async unload(handle: number): Promise<void> {
    const m = this.#models.get(handle);
    if (!m) throw new Error(`no model with handle ${handle}`);
    this.#models.delete(handle);
    await m.dispose();
  }

  async dispose(): Promise<void> {
    for (const c of this.#jobs.values()) c.abort();
    const models = [...this.#models.values()];
    this.#models.clear();
    await Promise.all(models.map((m) => m.dispose()));
  }
}
