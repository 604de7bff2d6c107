// The LM lab's models in the LM worker (workers/lm.worker.ts, through lm-client.ts): one worker
// per loaded set, spawned on the first load and terminated by reset(), which is also how a load
// is cancelled at once (a download in flight would otherwise finish first). Generation and
// scoring are cancelled per call through the worker's job ids, keeping the models loaded.
// transformers.js is never imported here; the tiny test models are built in the page (a module
// loaded only when they are picked) and handed to the worker in memory. Endpoint models (a server
// over the OpenAI-compatible API) are called from the page itself: no worker is needed to wait on HTTP.
import {
  Comlink,
  RemoteEmbeddingModel,
  RemoteLanguageModel,
  spawnLmWorker,
  type LmWorkerHandle,
} from "./lm-client";
import { LmCancelledError } from "../../lm/errors";
import { detectWebGPU } from "../../engine/backends";
import type { LoadProgress, ModelSource } from "../../lm/backend";
import {
  MODELS_FOLDER,
  OFFLINE_EMBEDDER_ID,
  offlineEmbedderSource,
} from "../../lm/offline-embedder";
import type { LoadedModel } from "../../lm/lm-service";
import type {
  EndpointSpec,
  LabEmbeddingModel,
  LabLanguageModel,
  LmLabHost,
  LoadCall,
  ModelRole,
} from "./lm-contracts";

/** Tiny models' context: room for the longest VS prompt (≈1,000 byte-level tokens) and its reply. */
const TINY_CONTEXT = 2048;

/**
 * A local folder as the page reads it ("models/" beside the app), as a path from the origin: the
 * worker would resolve a relative one against its own script's URL, and transformers.js looks for
 * a tokenizer only in folders that are not full URLs.
 */
function pageRelative(src: ModelSource): ModelSource {
  if (src.localModelPath === undefined) return src;
  const url = new URL(src.localModelPath, document.baseURI);
  return { ...src, localModelPath: url.origin === location.origin ? url.pathname : url.href };
}

export class WorkerLmHost implements LmLabHost {
  #handle: LmWorkerHandle | null = null;
  #jobs = 0;

  #worker(): LmWorkerHandle {
    return (this.#handle ??= spawnLmWorker("collapse-lab lm lab"));
  }

  /** Runs one load in the worker; an abort terminates the worker and rejects at once. */
  #load(
    src: ModelSource,
    call: LoadCall,
    run: (
      w: LmWorkerHandle,
      jobId: string,
      onProgress: (p: LoadProgress) => void,
    ) => Promise<LoadedModel>,
  ): Promise<{ w: LmWorkerHandle; loaded: LoadedModel }> {
    const w = this.#worker();
    const jobId = `lab-load-${++this.#jobs}`;
    const progress = Comlink.proxy(call.onProgress);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.reset();
        reject(new LmCancelledError(`loading ${src.id}`));
      };
      if (call.signal.aborted) return onAbort();
      call.signal.addEventListener("abort", onAbort, { once: true });
      run(w, jobId, progress)
        .then((loaded) => resolve({ w, loaded }), reject)
        .finally(() => call.signal.removeEventListener("abort", onAbort));
    });
  }

  async loadLanguageModel(picked: ModelSource, call: LoadCall): Promise<LabLanguageModel> {
    const src = pageRelative(picked);
    const { w, loaded } = await this.#load(src, call, (w, jobId, p) =>
      w.api.loadLanguageModel(src, { device: call.device, jobId }, p),
    );
    return new RemoteLanguageModel(w.api, loaded.handle, loaded.info);
  }

  async loadEmbeddingModel(picked: ModelSource, call: LoadCall): Promise<LabEmbeddingModel> {
    const src = pageRelative(picked);
    const { w, loaded } = await this.#load(src, call, (w, jobId, p) =>
      w.api.loadEmbeddingModel(src, { device: call.device, jobId }, p),
    );
    return new RemoteEmbeddingModel(w.api, loaded.handle, loaded.info);
  }

  async tinySources(): Promise<Record<ModelRole, ModelSource>> {
    const { makeTinyGpt2, makeTinyBert, TINY_LM, TINY_EMBEDDER } = await import("../../lm/tiny");
    return {
      instruct: { id: TINY_LM, files: makeTinyGpt2({ context: TINY_CONTEXT }).files },
      // a second random model, with no chat template, stands in for the base model
      base: {
        id: `${TINY_LM}-base`,
        files: makeTinyGpt2({ seed: 2, context: TINY_CONTEXT, chatTemplate: false }).files,
      },
      embedder: { id: TINY_EMBEDDER, files: makeTinyBert().files },
    };
  }

  /** Software WebGPU (SwiftShader, a fallback adapter) runs these models many times slower than wasm. */
  async webGpuNote(): Promise<string | null> {
    const found = await detectWebGPU();
    if (!("adapter" in found)) return null;
    const { vendor, architecture, isFallbackAdapter } = found.adapter;
    if (
      !isFallbackAdapter &&
      !/swiftshader|llvmpipe|lavapipe|software/i.test(`${vendor} ${architecture}`)
    )
      return null;
    return `This browser's WebGPU is a software renderer (${[vendor, architecture].filter(Boolean).join(" ") || "fallback adapter"}): models run many times slower on it than on wasm, which "auto" does not know. Choose wasm.`;
  }

  /** A model on an OpenAI-compatible server, called from this page (src/remote/ is loaded only when used). */
  async connectEndpoint(spec: EndpointSpec, signal: AbortSignal): Promise<LabLanguageModel> {
    const { connectEndpoint } = await import("./lm-endpoint");
    return connectEndpoint(spec, signal);
  }

  /** The embedder copy beside the app (models/, scripts/offline-embedder.sh), found by its config.json. */
  async localEmbedder(): Promise<ModelSource | null> {
    const root = new URL(MODELS_FOLDER, document.baseURI);
    try {
      const res = await fetch(new URL(`${OFFLINE_EMBEDDER_ID}/config.json`, root));
      // a static host (and Vite's dev server) may answer a missing file with the app's page
      if (!res.ok || res.headers.get("content-type")?.includes("text/html")) return null;
      return offlineEmbedderSource(root.pathname);
    } catch {
      return null; // offline and never cached: the hub's is asked for, and says it is offline
    }
  }

  reset(): void {
    this.#handle?.terminate();
    this.#handle = null;
  }
}
