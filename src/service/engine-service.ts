// The engine as one service object for a worker: it owns a backend, models by id and
// cancellable jobs that report throttled progress. No Comlink here — workers/engine.worker.ts
// exposes it — so the same object runs (and is tested) in Node without a worker.
import type { Dist, ModelOptions, PolicyHyper, StepHyper, StepStats, TokenBatch, TrainBatch, EngineBackend, EngineModel } from "../engine/backend";
import { validateCheckpoint, type Checkpoint } from "../engine/checkpoint";
import { createBackend, type BackendInfo, type BackendRequest } from "../engine/backends";
import { Rng } from "../engine/random";
import { sampleNext, type Draw } from "../engine/sampling";
import { DEFAULT_PATTERN_TASK, runPatternTask, type PatternProgress, type PatternResult, type PatternTaskConfig } from "../demo/pattern-task";
import { throttle } from "./throttle";

export interface JobOptions {
  jobId: string; // cancel(jobId) stops the job at its next step
  progressMs?: number; // minimum interval between progress callbacks (default 100)
}

export class CancelledError extends Error {
  constructor(jobId: string) {
    super(`job ${jobId} was cancelled`);
    this.name = "CancelledError";
  }
}

const nextMacrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export class EngineService {
  #backend: EngineBackend | null = null;
  #info: BackendInfo | null = null;
  #models = new Map<number, EngineModel>();
  #nextId = 1;
  #jobs = new Map<string, AbortController>();

  /** Starts a backend (webgpu falls back to wasm with a reason); idempotent for the same request. */
  async init(request: BackendRequest): Promise<BackendInfo> {
    if (this.#info && this.#info.requested === request) return this.#info;
    if (this.#backend) throw new Error(`this engine already runs ${this.#info!.name}; start another worker for ${request}`);
    const { backend, info } = await createBackend(request);
    this.#backend = backend;
    this.#info = info;
    return info;
  }

  info(): BackendInfo | null {
    return this.#info;
  }

  #be(): EngineBackend {
    if (!this.#backend) throw new Error("engine not initialised: call init(backend) first");
    return this.#backend;
  }

  #model(id: number): EngineModel {
    const m = this.#models.get(id);
    if (!m) throw new Error(`no model with id ${id}`);
    return m;
  }

  createModel(ck: Checkpoint, opts: ModelOptions): number {
    const model = this.#be().createModel(validateCheckpoint(ck), opts);
    const id = this.#nextId++;
    this.#models.set(id, model);
    return id;
  }

  loadCheckpoint(id: number, ck: Checkpoint): void {
    this.#model(id).load(ck);
  }

  checkpoint(id: number): Promise<Checkpoint> {
    return this.#model(id).checkpoint();
  }

  nextLogprobs(id: number, tokens: Int32Array, rows: number, pos: Int32Array, cls?: Int32Array, dist?: Dist): Promise<Float32Array> {
    return this.#model(id).nextLogprobs(tokens, rows, pos, cls, dist);
  }

  tokenLogprobs(id: number, batch: TokenBatch, dist?: Dist): Promise<Float32Array> {
    return this.#model(id).tokenLogprobs(batch, dist);
  }

  gradients(id: number, batch: TrainBatch, hyper: PolicyHyper): ReturnType<EngineModel["gradients"]> {
    return this.#model(id).gradients(batch, hyper);
  }

  trainStep(id: number, batch: TrainBatch, hyper: StepHyper): Promise<StepStats> {
    return this.#model(id).trainStep(batch, hyper);
  }

  /** One batched sampling step with a seeded draw (the seed fixes the draw, not the logits). */
  sampleNext(id: number, tokens: Int32Array, rows: number, pos: Int32Array, seed: number, cls?: Int32Array, dist?: Dist): Promise<Draw> {
    return sampleNext(this.#model(id), tokens, rows, pos, cls, Rng.seed(seed), dist);
  }

  disposeModel(id: number): void {
    this.#model(id).dispose();
    this.#models.delete(id);
  }

  /** Runs the GRPO pattern demo; progress is throttled; cancel(jobId) rejects with CancelledError. */
  async runPatternTask(config: Partial<PatternTaskConfig>, job: JobOptions, onProgress?: (p: PatternProgress) => void): Promise<PatternResult> {
    if (this.#jobs.has(job.jobId)) throw new Error(`a job with id ${job.jobId} is already running`);
    const controller = new AbortController();
    this.#jobs.set(job.jobId, controller);
    const report = onProgress ? throttle(onProgress, job.progressMs ?? 100) : undefined;
    try {
      const result = await runPatternTask(
        this.#be(),
        { ...DEFAULT_PATTERN_TASK, ...config },
        {
          signal: controller.signal,
          onProgress: report,
          tick: nextMacrotask, // let cancel() and other messages in between steps
        },
      );
      report?.flush();
      return result;
    } catch (e) {
      if (controller.signal.aborted) throw new CancelledError(job.jobId);
      throw e;
    } finally {
      this.#jobs.delete(job.jobId);
    }
  }

  /** Stops a running job at its next step; false when no such job runs. */
  cancel(jobId: string): boolean {
    const c = this.#jobs.get(jobId);
    c?.abort();
    return !!c;
  }

  dispose(): void {
    for (const c of this.#jobs.values()) c.abort();
    for (const m of this.#models.values()) m.dispose();
    this.#models.clear();
  }
}
