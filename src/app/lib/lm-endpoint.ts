// The LM lab's "endpoint" source: a model on an OpenAI-compatible server (vLLM, SGLang,
// llama.cpp's server, a hosted API, `collapse-lab serve`) as a LabLanguageModel. Every request goes
// through src/remote/ (RemoteClient, RemoteLanguageModel), straight from the page: the server must
// allow this page's origin (CORS). The key is handed to the client and kept nowhere else here;
// the client sends it only to the base URL it was given with.
//
// A model whose /v1/models entry carries `example_messages` reads act texts only (serve's
// simulators): the lab then sends it the dialogue itself as act-text chat messages, and asks its
// ":vs" twin for Verbalized Sampling, instead of the benchmark's free-text prompts.
import {
  RemoteClient,
  describeCapabilities,
  type Capabilities,
  type ChatRequest,
} from "../../remote/client";
import { RemoteError, remoteErrorKind } from "../../remote/errors";
import { chatReplies, RemoteLanguageModel, type OnText } from "../../remote/remote-lm";
import { dialogueMessages } from "../../simulators/act-text";
import { LmCancelledError } from "../../lm/errors";
import type { Benchmark, Dialogue } from "../../benchmarks/types";
import type { ContinuationScore, GenerateOptions, Generation, LmPrompt } from "../../lm/types";
import type { EndpointInfo, EndpointSpec, LabLanguageModel, LabModelInfo } from "./lm-contracts";

/** Requests in flight at once where the server ignores `n` (one request per reply). */
const CONCURRENCY = 4;

/** Cancels map to the lab's own cancelled error (a notice, not a failure). */
function lmError(e: unknown): unknown {
  return remoteErrorKind(e) === "cancelled" ? new LmCancelledError("the request") : e;
}

/** Runs `count` single requests, `CONCURRENCY` at a time, in order of their index. */
async function each<T>(count: number, one: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) out[i] = await one(i);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
  return out;
}

export class EndpointLanguageModel implements LabLanguageModel {
  readonly id: string;
  readonly info: LabModelInfo;
  readonly #lm: RemoteLanguageModel;

  constructor(
    readonly client: RemoteClient,
    readonly endpoint: EndpointInfo,
  ) {
    this.#lm = new RemoteLanguageModel(
      client,
      endpoint.model,
      endpoint.capabilities.jsonSchema && !endpoint.actTexts,
    );
    this.id = this.#lm.id;
    this.info = {
      id: this.id,
      device: "remote",
      contextLength: Infinity,
      hasChatTemplate: true,
      endpoint,
    };
  }

  /** Requests sent so far, retries included. */
  requestCount(): number {
    return this.client.requests;
  }

  get capabilities(): Capabilities {
    return this.endpoint.capabilities;
  }

  /** VS calls are sent the VS schema where the server's probe found response_format json_schema. */
  get constrainsJson(): boolean {
    return this.#lm.constrainsJson;
  }

  /**
   * `n` samples in one request where the server honours `n`, else one request per sample (seeds
   * seed, seed + 1, …); `onText` gets each sample's text as it streams in, by its place among the `n`.
   */
  async #sampled(
    opts: GenerateOptions,
    onText: OnText | undefined,
    ask: (o: GenerateOptions, onText: OnText | undefined) => Promise<Generation[]>,
  ): Promise<Generation[]> {
    const n = opts.n ?? 1;
    try {
      if (n === 1 || this.capabilities.n) return await ask(opts, onText);
      const rows = await each(n, (i) =>
        ask(
          { ...opts, n: 1, ...(opts.seed !== undefined ? { seed: opts.seed + i } : {}) },
          onText && ((_, text) => onText(i, text)),
        ),
      );
      return rows.flat();
    } catch (e) {
      throw lmError(e);
    }
  }

  /** `control.onText` streams the replies as they are written (chat prompts; the same replies as unstreamed). */
  async generate(
    prompt: LmPrompt,
    opts: GenerateOptions = {},
    control: { signal?: AbortSignal; onText?: OnText } = {},
  ): Promise<Generation[]> {
    if (this.endpoint.actTexts)
      throw new RemoteError(
        "not-offered",
        `${this.id} reads act texts only (a collapse-lab serve simulator): it cannot answer the lab's free-text prompts`,
      );
    return this.#sampled(opts, control.onText, (o, onText) =>
      this.#lm.generate(prompt, o, { signal: control.signal, onText }),
    );
  }

  async score(
    prompt: LmPrompt,
    continuations: string[],
    control: { signal?: AbortSignal } = {},
  ): Promise<ContinuationScore[]> {
    try {
      return await this.#lm.score(prompt, continuations, control);
    } catch (e) {
      throw lmError(e);
    }
  }

  /**
   * A reply to the dialogue itself, for a model that reads act texts: Direct asks the model, VS
   * (`vsK` candidates) asks its ":vs" twin; the replies are act texts or the VS JSON.
   */
  generateActs(
    bench: Benchmark,
    d: Dialogue,
    vsK: number | null,
    opts: GenerateOptions = {},
    control: { signal?: AbortSignal; onText?: OnText } = {},
  ): Promise<Generation[]> {
    const messages = dialogueMessages(bench, d, "user");
    return this.#sampled(opts, control.onText, async (o, onText) => {
      const req: ChatRequest & { vs_k?: number } = {
        model: vsK === null ? this.endpoint.model : `${this.endpoint.model}:vs`,
        messages,
        n: o.n ?? 1,
        temperature: o.temperature ?? 0,
        max_tokens: o.maxNewTokens ?? 128,
        ...(o.seed !== undefined ? { seed: o.seed } : {}),
        ...(vsK !== null ? { vs_k: vsK } : {}),
      };
      const replies = await chatReplies(this.client, req, { signal: control.signal, onText });
      return replies.map((c) => ({ text: c.text, tokens: 1 }));
    });
  }
}

/**
 * Connects to a model on a server: lists its models (a model not listed is a typed
 * "model-not-found" error naming those that are), probes what it offers (at most five tiny
 * requests) and returns the model. Every failure is a RemoteError with a readable message.
 */
export async function connectEndpoint(
  spec: EndpointSpec,
  signal?: AbortSignal,
): Promise<EndpointLanguageModel> {
  const model = spec.model.trim();
  if (!model)
    throw new RemoteError(
      "bad-request",
      "give the model's name as the server lists it (GET /v1/models)",
    );
  const client = new RemoteClient({
    baseUrl: spec.baseUrl.trim(),
    apiKey: spec.apiKey || undefined,
    retries: 2,
  });
  try {
    const listed = await client.models(signal);
    const entry = listed.find((m) => m.id === model);
    const actTexts = !!entry?.example_messages;
    const capabilities = await client.probe(model, {
      signal,
      ...(entry?.example_messages ? { messages: entry.example_messages, jsonSchema: false } : {}),
    });
    const summary = describeCapabilities(capabilities);
    return new EndpointLanguageModel(client, {
      baseUrl: client.baseUrl,
      model,
      capabilities,
      actTexts,
      summary,
    });
  } catch (e) {
    throw lmError(e);
  }
}
