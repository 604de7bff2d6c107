// The page side of the LM worker: spawn it as a module worker, talk to it through Comlink, and
// view its loaded models through the plain LanguageModel / EmbeddingModel contract of types.ts,
// so prompts, γ and the LM simulator run unchanged on a worker-hosted model. No transformers.js
// import here: it stays inside the worker.
import * as Comlink from "comlink";
import type { LmWorkerApi } from "../../../workers/lm.worker";
import type { LoadedInfo } from "../../lm/backend";
import { wrapWorker, type WorkerHandle } from "./worker-handle";
import type {
  ContinuationScore,
  EmbeddingModel,
  GenerateOptions,
  Generation,
  LanguageModel,
  LmPrompt,
} from "../../lm/types";

export type LmWorkerHandle = WorkerHandle<LmWorkerApi>;

export function spawnLmWorker(name = "collapse-lab lm"): LmWorkerHandle {
  return wrapWorker(
    new Worker(new URL("../../../workers/lm.worker.ts", import.meta.url), { type: "module", name }),
  );
}

let jobCounter = 0;
const nextJobId = (what: string) => `${what}-${++jobCounter}`;

/** A causal LM living in the worker; `signal` aborts a call by cancelling its job there. */
export class RemoteLanguageModel implements LanguageModel {
  readonly id: string;

  constructor(
    private readonly api: Comlink.Remote<LmWorkerApi>,
    readonly handle: number,
    readonly info: LoadedInfo,
  ) {
    this.id = info.id;
  }

  async #withJob<T>(
    what: string,
    signal: AbortSignal | undefined,
    run: (jobId: string) => Promise<T>,
  ): Promise<T> {
    const jobId = nextJobId(what);
    const onAbort = () => void this.api.cancel(jobId);
    signal?.addEventListener("abort", onAbort);
    try {
      return await run(jobId);
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** `onToken` (progress: generation steps done in the worker) arrives asynchronously, one message per step. */
  generate(
    prompt: LmPrompt,
    opts?: GenerateOptions,
    control: { signal?: AbortSignal; onToken?: (steps: number) => void } = {},
  ): Promise<Generation[]> {
    const onToken = control.onToken ? Comlink.proxy(control.onToken) : undefined;
    return this.#withJob("generate", control.signal, (jobId) =>
      this.api.generate(this.handle, prompt, opts, { jobId }, onToken),
    );
  }

  score(
    prompt: LmPrompt,
    continuations: string[],
    control: { signal?: AbortSignal } = {},
  ): Promise<ContinuationScore[]> {
    return this.#withJob("score", control.signal, (jobId) =>
      this.api.score(this.handle, prompt, continuations, { jobId }),
    );
  }

  unload(): Promise<void> {
    return this.api.unload(this.handle);
  }
}

export class RemoteEmbeddingModel implements EmbeddingModel {
  readonly id: string;

  constructor(
    private readonly api: Comlink.Remote<LmWorkerApi>,
    readonly handle: number,
    readonly info: LoadedInfo,
  ) {
    this.id = info.id;
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return this.api.embed(this.handle, texts);
  }

  unload(): Promise<void> {
    return this.api.unload(this.handle);
  }
}

export { Comlink };
