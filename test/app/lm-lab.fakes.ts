// Fakes for the LM lab tests: a scripted LanguageModel (replies by prompt kind, optional gate that
// holds a call until released or cancelled), a bag-of-words embedder and a host that "loads" them
// with file progress events, as the LM worker would.
import type { LoadProgress, LoadedInfo, ModelSource } from "../../src/lm/backend";
import type { ContinuationScore, GenerateOptions, Generation, LmPrompt } from "../../src/lm/types";
import { LmCancelledError, ModelNotFoundError } from "../../src/lm/errors";
import type {
  LabEmbeddingModel,
  LabLanguageModel,
  LmLabHost,
  LoadCall,
  ModelRole,
} from "../../src/app/lib/lm-contracts";

export const isVsPrompt = (p: LmPrompt) => "chat" in p && p.chat[0].content.includes('"responses"');
export const isBasePrompt = (p: LmPrompt) => "text" in p;

const info = (id: string, hasChatTemplate = true): LoadedInfo => ({
  id,
  device: "wasm",
  contextLength: 4096,
  hasChatTemplate,
});

export interface GenerateCall {
  prompt: LmPrompt;
  opts: GenerateOptions;
}

export class FakeLm implements LabLanguageModel {
  readonly info: LoadedInfo;
  readonly calls: GenerateCall[] = [];
  readonly scored: { prompt: LmPrompt; continuations: string[] }[] = [];
  /** While set, generate waits for release() or the call's abort signal. */
  gate: { promise: Promise<void>; release: () => void } | null = null;
  /** With a gate: an abort takes effect only when the gate is released. */
  slowCancel = false;

  constructor(
    readonly id: string,
    private readonly reply: (
      prompt: LmPrompt,
      opts: GenerateOptions,
      row: number,
      call: number,
    ) => string,
    private readonly logprob: (continuation: string) => number = (c) => -c.length,
    hasChatTemplate = true,
  ) {
    this.info = info(id, hasChatTemplate);
  }

  hold(): void {
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    this.gate = { promise, release };
  }

  async generate(
    prompt: LmPrompt,
    opts: GenerateOptions = {},
    control: { signal?: AbortSignal } = {},
  ): Promise<Generation[]> {
    const call = this.calls.length;
    this.calls.push({ prompt, opts });
    const cancelled = () =>
      Object.assign(new Error("generation was cancelled"), { name: "LmCancelledError" });
    if (this.gate) {
      const signal = control.signal;
      await new Promise<void>((resolve, reject) => {
        // a slow model notices the cancel only at its next step (release)
        if (!this.slowCancel) signal?.addEventListener("abort", () => reject(cancelled()));
        void this.gate!.promise.then(resolve);
      });
      if (signal?.aborted) throw cancelled();
    }
    return Array.from({ length: opts.n ?? 1 }, (_, row) => {
      const text = this.reply(prompt, opts, row, call);
      return { text, tokens: text.split(" ").length };
    });
  }

  async score(prompt: LmPrompt, continuations: string[]): Promise<ContinuationScore[]> {
    this.scored.push({ prompt, continuations });
    return continuations.map((c) => ({ logprob: this.logprob(c), tokens: c.split(" ").length }));
  }
}

/** Bag of words hashed into 32 dimensions: equal texts embed equally, different words differ. */
export class FakeEmbedder implements LabEmbeddingModel {
  readonly info: LoadedInfo;
  calls = 0;
  constructor(readonly id = "fake-embedder") {
    this.info = info(id, false);
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls++;
    return texts.map((t) => {
      const v = new Float32Array(32);
      for (const w of t.toLowerCase().match(/[a-z$0-9.]+/g) ?? ["_"]) {
        let h = 7;
        for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
        v[h % 32] += 1;
      }
      return v;
    });
  }
}

export interface FakeHostOptions {
  /** The models the host has, found by id. */
  models: (FakeLm | FakeEmbedder)[];
  /** Model ids the host does not have (loading them fails as the worker would). */
  missing?: string[];
  /** Hold every load until it is aborted. */
  hang?: boolean;
  /** The app's own copy of the default embedder, where the host serves one. */
  localEmbedder?: ModelSource;
}

/** A host whose loads report two files each and hand back the fake with the requested id. */
export class FakeHost implements LmLabHost {
  resets = 0;
  readonly sources: { src: ModelSource; device: string }[] = [];

  constructor(readonly opts: FakeHostOptions) {}

  async #load<T>(src: ModelSource, call: LoadCall): Promise<T> {
    this.sources.push({ src, device: call.device });
    if (this.opts.missing?.includes(src.id)) {
      // as it arrives through Comlink: a plain Error carrying the typed error's name and message
      const e = new ModelNotFoundError(src.id, "the hub has no such model or file");
      throw Object.assign(new Error(e.message), { name: e.name });
    }
    if (this.opts.hang) {
      await new Promise<void>((_, reject) =>
        call.signal.addEventListener("abort", () =>
          reject(new LmCancelledError(`loading ${src.id}`)),
        ),
      );
    }
    for (const [file, total] of [
      ["config.json", 100],
      ["onnx/model.onnx", 1000],
    ] as const) {
      const p = (status: "initiate" | "progress" | "done", loaded: number): LoadProgress => ({
        kind: "file",
        model: src.id,
        file,
        status,
        loaded,
        total,
      });
      call.onProgress(p("initiate", 0));
      call.onProgress(p("progress", total / 2));
      call.onProgress(p("done", total));
      call.onProgress({ kind: "total", model: src.id, loaded: total, total, files: 2 });
    }
    const m = this.opts.models.find((x) => x.id === src.id);
    if (!m) throw new Error(`fake host: no model ${src.id}`);
    return m as T;
  }

  loadLanguageModel(src: ModelSource, call: LoadCall): Promise<LabLanguageModel> {
    return this.#load(src, call);
  }

  loadEmbeddingModel(src: ModelSource, call: LoadCall): Promise<LabEmbeddingModel> {
    return this.#load(src, call);
  }

  async tinySources(): Promise<Record<ModelRole, ModelSource>> {
    return {
      instruct: { id: "tiny-gpt2", files: {} },
      base: { id: "tiny-gpt2-base", files: {} },
      embedder: { id: "tiny-bert", files: {} },
    };
  }

  async localEmbedder(): Promise<ModelSource | null> {
    return this.opts.localEmbedder ?? null;
  }

  reset(): void {
    this.resets++;
  }
}
