// The lm tier's model backend: the only module that imports transformers.js. It loads a causal
// LM (LanguageModel: generate, exact continuation scores) and a sentence embedder
// (EmbeddingModel: feature-extraction, mean pooling, L2 normalisation) on WebGPU when an
// adapter exists, else wasm (the default CPU in Node); reports per-file and overall load
// progress; cancels generation; and turns runtime failures into the typed errors of errors.ts.
//
// Offline: a model folder in Hugging Face layout loads from `localModelPath` (a directory in
// Node, a URL path in the browser) with remote downloads off, or, in the browser, from files in
// memory (`files`), e.g. a toy model just exported by onnx-export.ts. The ORT wasm binaries are
// served by the app from the onnxruntime-web copy transformers.js itself resolves, never from a
// CDN.
import {
  AutoConfig,
  AutoModelForCausalLM,
  AutoTokenizer,
  Tensor,
  env,
  pipeline,
  random,
  type FeatureExtractionPipeline,
  type PreTrainedModel,
  type PreTrainedTokenizer,
} from "@huggingface/transformers";
import type {
  ContinuationScore,
  EmbeddingModel,
  GenerateOptions,
  Generation,
  LanguageModel,
  LmPrompt,
} from "./types";
import type { HfFiles } from "./onnx-export";
import {
  ContextOverflowError,
  LmCancelledError,
  LmError,
  ModelNotFoundError,
  NoWebGpuError,
  OfflineError,
  StorageQuotaError,
} from "./errors";

export const DEFAULT_MODELS = {
  base: "HuggingFaceTB/SmolLM2-135M",
  instruct: "HuggingFaceTB/SmolLM2-135M-Instruct",
  embedder: "Xenova/all-MiniLM-L6-v2",
} as const;

export type DeviceRequest = "auto" | "webgpu" | "wasm";
export type Device = "webgpu" | "wasm" | "cpu";
export type Dtype = "auto" | "fp32" | "fp16" | "q8" | "int8" | "uint8" | "q4" | "q4f16" | "bnb4";

/** Where a model comes from; plain data, so it crosses the worker boundary. */
export interface ModelSource {
  /** Hub id ("HuggingFaceTB/SmolLM2-135M") or folder name under localModelPath. */
  id: string;
  /** Folder (Node) or URL path (browser, e.g. "/models/") holding `<id>/config.json` …; enables local loading. */
  localModelPath?: string;
  /** Browser only: the model's files in memory (relative path → content), e.g. from exportCheckpoint. */
  files?: HfFiles;
  /** Download from the hub when not found locally; default: true unless localModelPath or files is given. */
  allowRemote?: boolean;
  /** Hub mirror (default https://huggingface.co/). */
  remoteHost?: string;
  revision?: string;
  /** Weight precision (model file suffix); default: the model's config, else transformers.js's per-device default. */
  dtype?: Dtype;
}

/** One file's progress or the whole load's, for one progress bar per file and one overall. */
export type LoadProgress =
  | {
      kind: "file";
      model: string;
      file: string;
      status: "initiate" | "download" | "progress" | "done";
      loaded: number;
      total: number;
    }
  | { kind: "total"; model: string; loaded: number; total: number; files: number }
  | { kind: "ready"; model: string; device: Device };

export interface LoadOptions {
  device?: DeviceRequest;
  onProgress?: (p: LoadProgress) => void;
  /** Checked between files; a download in flight finishes first. */
  signal?: AbortSignal;
}

/** Per-call controls that cannot travel as plain data: cancellation and progress. */
export interface CallControl {
  signal?: AbortSignal;
  /** generate(): called after each generation step with the steps done so far (progress; a cancel can start from it). */
  onToken?: (steps: number) => void;
}

const IS_NODE =
  typeof process !== "undefined" &&
  !!process.versions?.node &&
  typeof window === "undefined" &&
  typeof self === "undefined";

// ---------------------------------------------------------------------------------------------
// Runtime settings (transformers.js keeps them in one global `env`)

const MEMORY_ROOT = "/__collapse-lab-memory__/"; // URL prefix of in-memory model folders
const memoryFiles = new Map<string, string | Uint8Array>();
let baseFetch: typeof env.fetch | null = null;
let wasmConfigured: Promise<void> | undefined;

/**
 * Points onnxruntime-web at the wasm files the app serves (browser only; Node runs
 * onnxruntime-node). They are the files of the onnxruntime-web copy transformers.js itself
 * imports, found by module resolution from its location (scripts/transformers-ort.mjs, a Vite
 * plugin): the JS glue bundled with transformers.js and the wasm binary must be one version.
 * Imported only here, in the browser, so that Node never meets the `?url` imports.
 */
function configureWasm(): Promise<void> {
  if (IS_NODE) return Promise.resolve();
  wasmConfigured ??= (async () => {
    const [mjs, wasm] = await Promise.all([
      import("transformers-ort:dist/ort-wasm-simd-threaded.asyncify.mjs?url"),
      import("transformers-ort:dist/ort-wasm-simd-threaded.asyncify.wasm?url"),
    ]);
    env.backends.onnx.wasm!.wasmPaths = {
      mjs: new URL(mjs.default, self.location.href).href,
      wasm: new URL(wasm.default, self.location.href).href,
    };
  })();
  return wasmConfigured;
}

/** transformers.js and ONNX Runtime versions, and (browser) the wasm URL the app serves. */
export async function runtimeVersions(): Promise<Record<string, string | undefined>> {
  await configureWasm();
  const paths = env.backends.onnx.wasm?.wasmPaths as { wasm?: string | URL } | string | undefined;
  const wasm = typeof paths === "object" && paths?.wasm ? String(paths.wasm) : undefined;
  return {
    transformers: env.version,
    ...(env.backends.onnx.versions as Record<string, string> | undefined),
    ...(wasm ? { wasm } : {}),
  };
}

/** Sets the global loading flags for one model (loads are serialised by the caller). */
async function configureSource(src: ModelSource): Promise<string> {
  await configureWasm();
  env.remoteHost = src.remoteHost ?? "https://huggingface.co/";
  if (src.files) {
    if (IS_NODE)
      throw new Error(
        "in-memory model files load in the browser only; in Node write them to a folder (writeHfFolder) and use localModelPath",
      );
    if (!baseFetch) {
      baseFetch = env.fetch;
      env.fetch = async (input: string | URL, init?: unknown) => {
        const key = typeof input === "string" ? input : input.href;
        const path = key.startsWith("http") ? new URL(key).pathname : key;
        if (path.startsWith(MEMORY_ROOT)) {
          const body = memoryFiles.get(path);
          if (body === undefined)
            return new Response(null, { status: 404, statusText: "Not Found" });
          const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
          return new Response(bytes.slice(), {
            status: 200,
            headers: { "content-length": String(bytes.byteLength) },
          });
        }
        return baseFetch!(input, init);
      };
    }
    for (const [rel, content] of Object.entries(src.files))
      memoryFiles.set(`${MEMORY_ROOT}${src.id}/${rel}`, content);
    env.localModelPath = MEMORY_ROOT;
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
    env.useBrowserCache = false; // these files are not the hub's: never cache them under a hub-like key
    return `${MEMORY_ROOT}${src.id}`;
  }
  env.useBrowserCache = typeof caches !== "undefined";
  if (src.localModelPath) {
    env.localModelPath = src.localModelPath.endsWith("/")
      ? src.localModelPath
      : src.localModelPath + "/";
    env.allowLocalModels = true;
    env.allowRemoteModels = src.allowRemote ?? false;
  } else {
    env.allowLocalModels = IS_NODE;
    env.allowRemoteModels = src.allowRemote ?? true;
  }
  return `${env.localModelPath}${src.id}`;
}

/** WebGPU when an adapter exists (or when asked for, else NoWebGpuError), wasm otherwise; Node: CPU. */
export async function resolveDevice(
  request: DeviceRequest = "auto",
): Promise<{ device: Device; reason?: string }> {
  if (IS_NODE) {
    if (request === "webgpu")
      throw new NoWebGpuError("this is Node, where the backend runs on the CPU");
    return { device: "cpu" };
  }
  if (request === "wasm") return { device: "wasm" };
  const gpu = typeof navigator !== "undefined" ? navigator.gpu : undefined;
  const adapter = gpu ? await gpu.requestAdapter().catch(() => null) : null;
  if (adapter) return { device: "webgpu" };
  const reason = gpu
    ? "navigator.gpu.requestAdapter() returned no adapter"
    : "this browser has no navigator.gpu";
  if (request === "webgpu") throw new NoWebGpuError(reason);
  return { device: "wasm", reason };
}

// ---------------------------------------------------------------------------------------------
// Errors

/** Maps what transformers.js, fetch or the storage layer threw to a typed LmError. */
export function classifyLoadError(
  e: unknown,
  src: Pick<ModelSource, "id" | "localModelPath" | "files">,
  where: string,
): unknown {
  if (e instanceof LmError) return e;
  const err = e as { name?: string; message?: string; status?: number } | null;
  const name = err?.name ?? "";
  const message = String(err?.message ?? e);
  if (name === "QuotaExceededError" || /quota/i.test(message))
    return new StorageQuotaError(src.id, message, { cause: e });
  if (
    name === "ModelFileNotFoundError" ||
    /could not locate file|not found locally|file was not found/i.test(message)
  ) {
    const detail = /locally at "([^"]+)"/.exec(message)?.[1];
    const place = detail
      ? `no file at ${detail}`
      : src.localModelPath || src.files
        ? `not in ${where}`
        : `the hub has no such model or file (${message})`;
    return new ModelNotFoundError(src.id, place, { cause: e });
  }
  if (name === "TypeError" && /fetch|network|load failed/i.test(message))
    return new OfflineError(src.id, { cause: e });
  if (typeof navigator !== "undefined" && navigator.onLine === false)
    return new OfflineError(src.id, { cause: e });
  return e;
}

/** Maps transformers.js progress events to LoadProgress, aggregating an overall total. */
function progressReporter(model: string, onProgress?: (p: LoadProgress) => void) {
  const files = new Map<string, { loaded: number; total: number }>();
  return (info: Record<string, unknown>) => {
    if (!onProgress) return;
    const status = info.status as string;
    if (
      status !== "initiate" &&
      status !== "download" &&
      status !== "progress" &&
      status !== "done"
    )
      return;
    const file = String(info.file ?? "");
    const prev = files.get(file) ?? { loaded: 0, total: 0 };
    const total = Number(info.total ?? prev.total) || prev.total;
    const loaded =
      status === "done"
        ? Math.max(prev.loaded, total)
        : Number(info.loaded ?? prev.loaded) || prev.loaded;
    files.set(file, { loaded, total });
    onProgress({ kind: "file", model, file, status, loaded, total });
    let sumLoaded = 0;
    let sumTotal = 0;
    for (const f of files.values()) {
      sumLoaded += f.loaded;
      sumTotal += f.total;
    }
    onProgress({ kind: "total", model, loaded: sumLoaded, total: sumTotal, files: files.size });
  };
}

function checkAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new LmCancelledError(what);
}

/** Lets queued messages (a cancel) in between model steps: a macrotask, not a microtask. */
const nextMacrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

// ---------------------------------------------------------------------------------------------
// Causal LM

/** A serial queue: transformers.js's sampler uses one global seeded RNG, and web sessions run one call at a time. */
class Serial {
  #tail: Promise<unknown> = Promise.resolve();
  run<T>(f: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(f, f);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}
const serial = new Serial();

export interface LoadedInfo {
  id: string;
  device: Device;
  fallbackReason?: string;
  /** Longest sequence (prompt + continuation) the model accepts. */
  contextLength: number;
  hasChatTemplate: boolean;
}

/** A reply with the exact token ids it was generated as (its text may not re-encode to them). */
export interface TokenGeneration extends Generation {
  ids: number[];
}

export class TransformersLanguageModel implements LanguageModel {
  #disposed = false;

  private constructor(
    readonly id: string,
    readonly info: LoadedInfo,
    private readonly model: PreTrainedModel,
    private readonly tokenizer: PreTrainedTokenizer,
  ) {}

  static async load(src: ModelSource, opts: LoadOptions = {}): Promise<TransformersLanguageModel> {
    const { device, reason } = await resolveDevice(opts.device);
    return serial.run(async () => {
      const where = await configureSource(src);
      const progress_callback = progressReporter(src.id, opts.onProgress);
      try {
        checkAborted(opts.signal, `loading ${src.id}`);
        // config.json first: its absence is the clearest "model not found" (a missing tokenizer
        // file only surfaces as a TypeError inside AutoTokenizer)
        const config = await AutoConfig.from_pretrained(src.id, {
          progress_callback,
          revision: src.revision,
        });
        const tokenizer = await AutoTokenizer.from_pretrained(src.id, {
          progress_callback,
          revision: src.revision,
        }).catch((e: unknown) => {
          throw e instanceof TypeError
            ? new ModelNotFoundError(
                src.id,
                `${where} has config.json but no tokenizer (tokenizer.json, tokenizer_config.json)`,
                { cause: e },
              )
            : e;
        });
        checkAborted(opts.signal, `loading ${src.id}`);
        const model = await AutoModelForCausalLM.from_pretrained(src.id, {
          config,
          device,
          ...(src.dtype ? { dtype: src.dtype } : {}),
          progress_callback,
          revision: src.revision,
        });
        if (opts.signal?.aborted) {
          await model.dispose();
          throw new LmCancelledError(`loading ${src.id}`);
        }
        const c = model.config as unknown as Record<string, unknown>;
        const contextLength = Number(
          c.max_position_embeddings ?? c.n_positions ?? c.n_ctx ?? Infinity,
        );
        const info: LoadedInfo = {
          id: src.id,
          device,
          fallbackReason: reason,
          contextLength,
          hasChatTemplate: !!tokenizer.chat_template,
        };
        opts.onProgress?.({ kind: "ready", model: src.id, device });
        return new TransformersLanguageModel(src.id, info, model, tokenizer);
      } catch (e) {
        throw classifyLoadError(e, src, where);
      }
    });
  }

  /**
   * Prompt token ids: chat prompts through the tokenizer's chat template (with the assistant
   * turn opened), text prompts as the tokenizer encodes them (with its own special tokens).
   */
  encodePrompt(prompt: LmPrompt): number[] {
    if ("chat" in prompt) {
      if (!this.tokenizer.chat_template)
        throw new Error(
          `model "${this.id}" has no chat template: pass a text prompt (a base model?)`,
        );
      const text = this.tokenizer.apply_chat_template(prompt.chat, {
        tokenize: false,
        add_generation_prompt: true,
      }) as string;
      return this.tokenizer.encode(text, { add_special_tokens: false });
    }
    const ids = this.tokenizer.encode(prompt.text);
    if (ids.length === 0) {
      const bos = (this.tokenizer as unknown as { bos_token_id?: number }).bos_token_id;
      if (bos === undefined || bos === null)
        throw new Error("the prompt is empty and the tokenizer has no BOS token to condition on");
      return [bos];
    }
    return ids;
  }

  /** Continuation ids, tokenized on their own (no special tokens). */
  encodeContinuation(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false });
  }

  decode(ids: number[]): string {
    return this.tokenizer.decode(ids, { skip_special_tokens: true });
  }

  #eosIds(): number[] {
    const g = (this.model.generation_config ?? {}) as { eos_token_id?: number | number[] | null };
    const ids = g.eos_token_id ?? this.tokenizer.eos_token_id;
    return ids === null || ids === undefined ? [] : Array.isArray(ids) ? ids : [ids];
  }

  #padId(): number {
    return this.tokenizer.pad_token_id ?? this.#eosIds()[0] ?? 0;
  }

  #live(): void {
    if (this.#disposed) throw new Error(`model "${this.id}" was disposed`);
  }

  /**
   * Samples `n` replies (greedy when temperature is 0 or absent; then the n replies are one
   * reply repeated). Sampling uses transformers.js's generator with temperature, top-p (a
   * logits processor: transformers.js 4.3 has none) and no top-k; `seed` seeds its global
   * Mersenne Twister, so a seeded call is reproducible. Each reply's `logprob` is the sum of its
   * token log-probabilities under the model itself (temperature 1, no top-p), EOS excluded.
   */
  generate(
    prompt: LmPrompt,
    opts: GenerateOptions = {},
    control: CallControl = {},
  ): Promise<TokenGeneration[]> {
    return serial.run(async () => {
      this.#live();
      checkAborted(control.signal, "generation");
      const ids = this.encodePrompt(prompt);
      const n = opts.n ?? 1;
      if (!(Number.isInteger(n) && n >= 1))
        throw new Error(`n must be a positive integer, got ${n}`);
      const temperature = opts.temperature ?? 0;
      const topP = opts.topP ?? 1;
      if (!(temperature >= 0)) throw new Error(`temperature must be ≥ 0, got ${temperature}`);
      if (!(topP > 0 && topP <= 1)) throw new Error(`topP must be in (0, 1], got ${topP}`);
      const sample = temperature > 0;
      const room = this.info.contextLength - ids.length;
      const maxNew = Math.min(opts.maxNewTokens ?? 64, room);
      if (maxNew < 1)
        throw new ContextOverflowError(this.id, ids.length + 1, this.info.contextLength);
      const rows = sample ? n : 1;

      const input = new Tensor(
        "int64",
        BigInt64Array.from({ length: rows * ids.length }, (_, i) => BigInt(ids[i % ids.length])),
        [rows, ids.length],
      );
      const mask = new Tensor("int64", new BigInt64Array(rows * ids.length).fill(1n), [
        rows,
        ids.length,
      ]);
      if (sample) random.seed(opts.seed);
      let steps = 0;
      const stopOnAbort = (inputIds: bigint[][]) => {
        control.onToken?.(++steps);
        return inputIds.map(() => !!control.signal?.aborted);
      };
      const forward = this.model.forward;
      // one macrotask per step so a cancel message reaches the worker while the loop runs
      this.model.forward = async (inputs: Record<string, unknown>) => {
        await nextMacrotask();
        return forward.call(this.model, inputs);
      };
      let out: Tensor;
      try {
        out = (await this.model.generate({
          inputs: input,
          attention_mask: mask,
          max_new_tokens: maxNew,
          do_sample: sample,
          ...(sample ? { temperature, top_k: 0 } : {}),
          logits_processor: sample && topP < 1 ? ([topPProcessor(topP)] as never) : null,
          stopping_criteria: [stopOnAbort] as never,
        } as never)) as Tensor;
      } finally {
        this.model.forward = forward;
      }
      checkAborted(control.signal, "generation");

      const eos = new Set(this.#eosIds());
      const width = out.dims[1];
      const all = out.data as BigInt64Array;
      const replies: number[][] = [];
      for (let r = 0; r < rows; r++) {
        const gen: number[] = [];
        for (let t = ids.length; t < width; t++) {
          const tok = Number(all[r * width + t]);
          if (eos.has(tok)) break; // transformers.js keeps stepping finished rows; cut at the first EOS
          gen.push(tok);
        }
        replies.push(gen);
      }
      const scores = await this.#logprobs(
        replies.map((g) => [...ids, ...g]),
        ids.length,
        control.signal,
      );
      const gens = replies.map((g, r) => ({
        text: this.decode(g),
        tokens: g.length,
        logprob: scores[r].logprob,
        ids: g,
      }));
      return sample
        ? gens
        : Array.from({ length: n }, () => ({ ...gens[0], ids: [...gens[0].ids] }));
    });
  }

  /**
   * Exact log p(continuation | prompt), summed over the continuation's tokens. Prompt and
   * continuation are tokenized separately and their ids concatenated, so a BPE merge can never
   * straddle the boundary and each continuation is scored as exactly the tokens it is made of
   * (this is what an LM simulator's label scores need; it can differ from tokenizing the joint
   * string). All continuations go through one right-padded batched forward pass (chunked only
   * to bound memory).
   */
  score(
    prompt: LmPrompt,
    continuations: string[],
    control: CallControl = {},
  ): Promise<ContinuationScore[]> {
    return serial.run(async () => {
      this.#live();
      const ids = this.encodePrompt(prompt);
      const seqs = continuations.map((c) => {
        const cont = this.encodeContinuation(c);
        if (cont.length === 0) throw new Error(`continuation ${JSON.stringify(c)} has no tokens`);
        return [...ids, ...cont];
      });
      return this.#logprobs(seqs, ids.length, control.signal);
    });
  }

  /** Σ log p(seq[t] | seq[<t]) over t ≥ from, for each sequence (float64 log-softmax). */
  async #logprobs(
    seqs: number[][],
    from: number,
    signal?: AbortSignal,
  ): Promise<ContinuationScore[]> {
    const V = Number((this.model.config as unknown as Record<string, unknown>).vocab_size);
    const longest = Math.max(...seqs.map((s) => s.length));
    if (longest > this.info.contextLength)
      throw new ContextOverflowError(this.id, longest, this.info.contextLength);
    const perChunk = Math.max(1, Math.floor(32e6 / (longest * V))); // ≤ 128 MB of float32 logits per pass
    const results: ContinuationScore[] = [];
    for (let c0 = 0; c0 < seqs.length; c0 += perChunk) {
      checkAborted(signal, "scoring");
      const chunk = seqs.slice(c0, c0 + perChunk);
      const L = Math.max(...chunk.map((s) => s.length));
      const idData = new BigInt64Array(chunk.length * L).fill(BigInt(this.#padId()));
      const maskData = new BigInt64Array(chunk.length * L);
      chunk.forEach((s, r) =>
        s.forEach((tok, t) => {
          idData[r * L + t] = BigInt(tok);
          maskData[r * L + t] = 1n;
        }),
      );
      await nextMacrotask();
      const outputs = (await this.model({
        input_ids: new Tensor("int64", idData, [chunk.length, L]),
        attention_mask: new Tensor("int64", maskData, [chunk.length, L]),
      })) as Record<string, Tensor>;
      const logitsTensor = outputs.logits;
      const logits = logitsTensor.data as Float32Array; // logits stay on the CPU; only present.* may live on the GPU
      const Vout = logitsTensor.dims[2];
      for (const t of Object.values(outputs)) if (t.location === "gpu-buffer") t.dispose();
      chunk.forEach((s, r) => {
        let sum = 0;
        for (let t = from; t < s.length; t++) {
          const off = (r * L + t - 1) * Vout;
          let max = -Infinity;
          for (let v = 0; v < Vout; v++) max = Math.max(max, logits[off + v]);
          let z = 0;
          for (let v = 0; v < Vout; v++) z += Math.exp(logits[off + v] - max);
          sum += logits[off + s[t]] - max - Math.log(z);
        }
        results.push({ logprob: sum, tokens: s.length - from });
      });
    }
    return results;
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await this.model.dispose();
  }
}

/** Nucleus filtering (Holtzman et al. 2020): keep the smallest top set with mass ≥ p. */
function topPProcessor(p: number) {
  return (_ids: bigint[][], logits: Tensor): Tensor => {
    const data = logits.data as Float32Array;
    const V = logits.dims.at(-1)!;
    for (let off = 0; off < data.length; off += V) {
      const row = data.subarray(off, off + V);
      const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => row[b] - row[a]);
      const max = row[order[0]];
      let z = 0;
      for (let v = 0; v < V; v++) z += Math.exp(row[v] - max);
      let mass = 0;
      let k = 0;
      while (k < V && mass < p) mass += Math.exp(row[order[k++]] - max) / z;
      for (let i = k; i < V; i++) row[order[i]] = -Infinity;
    }
    return logits;
  };
}

// ---------------------------------------------------------------------------------------------
// Embeddings

export class TransformersEmbeddingModel implements EmbeddingModel {
  #disposed = false;

  private constructor(
    readonly id: string,
    readonly info: LoadedInfo,
    private readonly extractor: FeatureExtractionPipeline,
  ) {}

  static async load(src: ModelSource, opts: LoadOptions = {}): Promise<TransformersEmbeddingModel> {
    const { device, reason } = await resolveDevice(opts.device);
    return serial.run(async () => {
      const where = await configureSource(src);
      try {
        checkAborted(opts.signal, `loading ${src.id}`);
        const extractor = (await pipeline("feature-extraction", src.id, {
          device,
          ...(src.dtype ? { dtype: src.dtype } : {}),
          progress_callback: progressReporter(src.id, opts.onProgress),
          revision: src.revision,
        })) as FeatureExtractionPipeline;
        if (opts.signal?.aborted) {
          await extractor.dispose();
          throw new LmCancelledError(`loading ${src.id}`);
        }
        const c = extractor.model.config as unknown as Record<string, unknown>;
        const info: LoadedInfo = {
          id: src.id,
          device,
          fallbackReason: reason,
          contextLength: Number(c.max_position_embeddings ?? Infinity),
          hasChatTemplate: false,
        };
        opts.onProgress?.({ kind: "ready", model: src.id, device });
        return new TransformersEmbeddingModel(src.id, info, extractor);
      } catch (e) {
        throw classifyLoadError(e, src, where);
      }
    });
  }

  /** Mean-pooled (attention-masked), L2-normalised sentence vectors, one per text. */
  embed(texts: string[]): Promise<Float32Array[]> {
    return serial.run(async () => {
      if (this.#disposed) throw new Error(`model "${this.id}" was disposed`);
      if (texts.length === 0) return [];
      const out = await this.extractor(texts, { pooling: "mean", normalize: true });
      const [n, d] = out.dims;
      const data = out.data as Float32Array;
      return Array.from({ length: n }, (_, i) => data.slice(i * d, (i + 1) * d));
    });
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await this.extractor.dispose();
  }
}
