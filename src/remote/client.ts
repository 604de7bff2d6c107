// The remote LM client: the only module that speaks HTTP to model servers (vLLM, SGLang,
// llama.cpp, Ollama, OpenAI, `collapse-lab serve`) over the OpenAI-compatible API —
// `/models`, `/chat/completions` (also streamed as server-sent events) and `/completions`.
//
// Every request has a timeout per attempt and is retried with exponential backoff on 429, 5xx,
// timeouts, dropped connections and truncated or unreadable bodies, at most `retries` times, waiting
// what `Retry-After` asks (capped). Anything else ends in a typed RemoteError with a readable
// message; a reply is checked against the API's shapes (zod) before a number is read from it.
//
// The API key lives in a private field, is sent only as an Authorization header and only to the
// base URL it was given with (requests are built from that URL alone), and is redacted from error
// messages; a base URL with credentials or a query string is refused.
import { createParser, type ParseError } from "eventsource-parser";
import { z } from "zod";
import type { JsonSchemaFormat } from "../lm/vs-schema";
import { redact, RemoteError } from "./errors";

export interface RemoteClientOptions {
  /** What the OpenAI client calls baseURL, e.g. http://127.0.0.1:8000/v1 (vLLM, SGLang, serve). */
  baseUrl: string;
  apiKey?: string;
  timeoutMs?: number; // per attempt; default 60 s
  retries?: number; // further attempts after the first; default 4
  backoffMs?: number; // the first wait, doubled each retry; default 250 ms
  maxWaitMs?: number; // cap on one wait, Retry-After included; default 20 s
  /** Called before each retry (for logs and tests); never sees the key. */
  onRetry?: (info: { attempt: number; waitMs: number; reason: string }) => void;
}

// ── request and reply shapes (the subset of the API this project uses) ─────────────────────────

export interface ChatMessageIn {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface SamplingParams {
  n?: number;
  seed?: number;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  stop?: string[];
}

/** OpenAI's response_format: free text, any JSON object, or JSON valid under a JSON Schema. */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: JsonSchemaFormat };

export interface ChatRequest extends SamplingParams {
  model: string;
  messages: ChatMessageIn[];
  logprobs?: boolean;
  top_logprobs?: number;
  /** Send json_schema only where the probe found `jsonSchema`: other servers ignore or refuse it. */
  response_format?: ResponseFormat;
}

export interface CompletionRequest extends SamplingParams {
  model: string;
  prompt: string | string[];
  logprobs?: number; // legacy completions: top log-probs per token (0 = only the sampled token's)
  echo?: boolean; // return the prompt's tokens (with their log-probs) before the completion
  prompt_logprobs?: number; // vLLM's extension
}

const TopLogprob = z.object({ token: z.string(), logprob: z.number() });
const TokenLogprob = z.object({
  token: z.string(),
  logprob: z.number(),
  top_logprobs: z.array(TopLogprob).nullish(),
});
const ChatChoice = z.object({
  index: z.number().int(),
  message: z.object({ role: z.string(), content: z.string().nullable() }),
  finish_reason: z.string().nullish(),
  logprobs: z.object({ content: z.array(TokenLogprob).nullable() }).nullish(),
});
const Usage = z
  .object({
    prompt_tokens: z.number(),
    completion_tokens: z.number().optional(),
    total_tokens: z.number().optional(),
  })
  .nullish();
export const ChatCompletionSchema = z.object({
  id: z.string(),
  object: z.string().optional(),
  model: z.string(),
  choices: z.array(ChatChoice).min(1),
  usage: Usage,
});
export type ChatCompletion = z.infer<typeof ChatCompletionSchema>;

const CompletionChoice = z.object({
  index: z.number().int(),
  text: z.string(),
  finish_reason: z.string().nullish(),
  logprobs: z
    .object({
      tokens: z.array(z.string()),
      token_logprobs: z.array(z.number().nullable()),
      text_offset: z.array(z.number()).optional(),
      top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullish(),
    })
    .nullish(),
  prompt_logprobs: z.array(z.unknown()).nullish(),
});
export const CompletionSchema = z.object({
  id: z.string(),
  model: z.string(),
  choices: z.array(CompletionChoice).min(1),
  usage: Usage,
});
export type Completion = z.infer<typeof CompletionSchema>;

// example_messages: a valid chat turn for the model, offered by `collapse-lab serve` (whose models read only act texts)
const ModelList = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      owned_by: z.string().optional(),
      example_messages: z
        .array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() }))
        .optional(),
    }),
  ),
});
export type ModelInfo = z.infer<typeof ModelList>["data"][number];

const ChatChunk = z.object({
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({ content: z.string().nullish() }).passthrough(),
      finish_reason: z.string().nullish(),
      logprobs: z.object({ content: z.array(TokenLogprob).nullable() }).nullish(),
    }),
  ),
});
const StreamError = z.object({ error: z.object({ message: z.string() }) });
export interface StreamDelta {
  index: number;
  content: string;
  finishReason?: string;
  /** The log-probs of this piece's tokens, where the server sends them (asked with `logprobs`). */
  logprobs?: z.infer<typeof TokenLogprob>[];
}

/** What a server was found to offer (probe), shown to people before a run uses it. */
export interface Capabilities {
  baseUrl: string;
  models: string[];
  model: string;
  chat: boolean;
  chatLogprobs: boolean; // chat replies carry logprobs.content with top_logprobs
  n: boolean; // `n` > 1 returns n choices (llama.cpp refuses it, Ollama ignores it)
  completions: boolean;
  echoLogprobs: boolean; // /completions with echo returns the prompt's token log-probs with offsets
  promptLogprobs: boolean; // /completions offers vLLM's prompt_logprobs (used where echo has no offsets)
  jsonSchema: boolean; // chat with response_format json_schema returns JSON valid under the schema
  notes: string[];
}

export function describeCapabilities(c: Capabilities): string {
  const yes = (b: boolean) => (b ? "yes" : "no");
  return [
    `${c.baseUrl}: model ${c.model} (${c.models.length} listed)`,
    `chat ${yes(c.chat)}, chat log-probs ${yes(c.chatLogprobs)}, n > 1 ${yes(c.n)}, completions ${yes(c.completions)}, prompt log-probs (echo) ${yes(c.echoLogprobs)}, prompt_logprobs ${yes(c.promptLogprobs)}, JSON schema ${yes(c.jsonSchema)}`,
    ...c.notes.map((n) => `  – ${n}`),
  ].join("\n");
}

// ── the client ────────────────────────────────────────────────────────────────────────────────

// The probe's test of response_format json_schema: a reply that must be {"answer": "yes" | "no"}.
// A server that constrains its output returns exactly that; one that ignores the format answers
// the chat turn in words (or in the act text of a `serve` simulator).
const PROBE_SCHEMA: JsonSchemaFormat = {
  name: "probe",
  strict: true,
  schema: {
    type: "object",
    properties: { answer: { type: "string", enum: ["yes", "no"] } },
    required: ["answer"],
    additionalProperties: false,
  },
};

/** Whether a reply is the probe schema's JSON: an object with only an answer of yes or no. */
function answersProbe(content: string | null): boolean {
  const v = safeJson((content ?? "").trim()) as Record<string, unknown> | undefined;
  return (
    typeof v === "object" &&
    v !== null &&
    Object.keys(v).length === 1 &&
    (v.answer === "yes" || v.answer === "no")
  );
}

/** Checks and normalises a base URL: http(s), no credentials, no query or fragment, no trailing slash. */
export function normaliseBaseUrl(baseUrl: string): string {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new RemoteError(
      "bad-request",
      `base URL ${JSON.stringify(baseUrl)} is not a URL; write it as http://host:port/v1`,
    );
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw new RemoteError("bad-request", `base URL ${u.origin}: only http and https are supported`);
  if (u.username || u.password)
    throw new RemoteError(
      "bad-request",
      `base URL ${u.host}: credentials in a URL are refused; give the API key separately (an environment variable, or the app's key field)`,
    );
  if (u.search || u.hash)
    throw new RemoteError(
      "bad-request",
      `base URL ${u.origin}${u.pathname}: a query string or fragment is refused (an API key never goes in a URL)`,
    );
  return `${u.origin}${u.pathname}`.replace(/\/+$/, "");
}

/** One server-sent event may hold this many characters (a chunk with every token's log-probs is far smaller). */
const MAX_EVENT_CHARS = 8 * 1024 * 1024;

const RETRY_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
/** Waits ms, or rejects with a `cancelled` RemoteError when the signal aborts first. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new RemoteError("cancelled", "the request was cancelled"));
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new RemoteError("cancelled", "the request was cancelled"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Retry-After in ms (seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  const s = Number(header);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const t = Date.parse(header);
  return Number.isNaN(t) ? null : Math.max(0, t - now);
}

/** A transient failure inside one attempt: retried, and reported as `kind` once retries run out. */
class Transient extends Error {
  constructor(
    readonly kind: "unreachable" | "timeout" | "malformed-reply" | "rate-limited" | "server-error",
    message: string,
    readonly status?: number,
    readonly waitMs?: number | null,
  ) {
    super(message);
  }
}

export class RemoteClient {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly backoffMs: number;
  readonly maxWaitMs: number;
  readonly #onRetry: RemoteClientOptions["onRetry"];
  /** Requests sent, retries included (for the report's cost line). */
  requests = 0;
  retried = 0;

  constructor(opts: RemoteClientOptions) {
    this.baseUrl = normaliseBaseUrl(opts.baseUrl);
    this.#apiKey = opts.apiKey || undefined;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.retries = opts.retries ?? 4;
    this.backoffMs = opts.backoffMs ?? 250;
    this.maxWaitMs = opts.maxWaitMs ?? 20_000;
    this.#onRetry = opts.onRetry;
    if (!(this.timeoutMs > 0))
      throw new RemoteError("bad-request", `timeout must be > 0 ms, got ${this.timeoutMs}`);
    if (!(Number.isInteger(this.retries) && this.retries >= 0))
      throw new RemoteError("bad-request", `retries must be an integer ≥ 0, got ${this.retries}`);
  }

  /** The client as text or JSON shows its URL only. */
  toJSON() {
    return { baseUrl: this.baseUrl, hasApiKey: this.#apiKey !== undefined };
  }

  async models(signal?: AbortSignal): Promise<ModelInfo[]> {
    return this.#json("GET", "/models", undefined, ModelList, signal).then((r) => r.data);
  }

  async chat(req: ChatRequest, signal?: AbortSignal): Promise<ChatCompletion> {
    const r = await this.#json(
      "POST",
      "/chat/completions",
      { ...req, stream: false },
      ChatCompletionSchema,
      signal,
      req.model,
    );
    if (req.logprobs) {
      const missing = r.choices.find((c) => !c.logprobs?.content);
      if (missing)
        throw new RemoteError(
          "no-logprobs",
          `${this.baseUrl} (model ${req.model}): the reply has no log-probs although they were asked for (choice ${missing.index}); this server does not offer them for chat`,
        );
    }
    return r;
  }

  async completions(req: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    const r = await this.#json(
      "POST",
      "/completions",
      { ...req, stream: false },
      CompletionSchema,
      signal,
      req.model,
    );
    if (req.logprobs !== undefined) {
      const missing = r.choices.find((c) => !c.logprobs);
      if (missing)
        throw new RemoteError(
          "no-logprobs",
          `${this.baseUrl} (model ${req.model}): the completion reply has no log-probs although they were asked for (choice ${missing.index})`,
        );
    }
    return r;
  }

  /**
   * A chat completion streamed as server-sent events: yields each choice's text as it arrives.
   * Connecting is retried like any request; a stream that breaks after its first event is an error
   * (the text so far was already handed out), and so is one that goes quiet for `timeoutMs`.
   */
  async *chatStream(req: ChatRequest, signal?: AbortSignal): AsyncGenerator<StreamDelta> {
    // the stream's own controller: the caller's signal and an idle timer both end it
    const ctl = new AbortController();
    let silent = false;
    const onAbort = () => ctl.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        silent = true;
        ctl.abort();
      }, this.timeoutMs);
    };
    let reader: ReadableStreamDefaultReader<string> | undefined;
    try {
      const res = await this.#attempts(
        (s) => this.#fetchOnce("POST", "/chat/completions", { ...req, stream: true }, s, req.model),
        ctl.signal,
        false,
      );
      if (!res.body)
        throw new RemoteError("malformed-reply", `${this.baseUrl}: the streamed reply has no body`);
      reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      // eventsource-parser splits the frames (every line ending the spec allows: \r\n, \n, \r;
      // comments; multi-line data); events are queued per chunk and handled here, where this
      // generator can yield and throw
      const events: string[] = [];
      let parseError: ParseError | undefined;
      const parser = createParser({
        onEvent: (e) => events.push(e.data),
        onError: (e) => {
          if (e.type === "max-buffer-size-exceeded") parseError ??= e;
        },
        maxBufferSize: MAX_EVENT_CHARS,
      });
      let done = false;
      let endsWithCr = false;
      while (!done) {
        arm();
        let chunk: ReadableStreamReadResult<string>;
        try {
          chunk = await reader.read();
        } catch (e) {
          if (signal?.aborted)
            throw new RemoteError("cancelled", `stream from ${this.baseUrl} cancelled`);
          if (silent)
            throw new RemoteError(
              "timeout",
              `the stream from ${this.baseUrl} was silent for ${this.timeoutMs} ms`,
            );
          throw new RemoteError(
            "malformed-reply",
            `${this.baseUrl}: the stream broke off (${redact((e as Error)?.message ?? String(e), this.#apiKey)})`,
            undefined,
            { cause: e },
          );
        }
        if (chunk.done) {
          // the parser holds a final \r back, waiting to see whether \n follows: at the end
          // it was a whole line ending, and a \n after it ends no further line
          if (endsWithCr) parser.feed("\n");
        } else {
          parser.feed(chunk.value);
          if (chunk.value) endsWithCr = chunk.value.endsWith("\r");
        }
        if (parseError)
          throw new RemoteError(
            "malformed-reply",
            `${this.baseUrl}: a streamed event grew past ${MAX_EVENT_CHARS} characters without ending`,
          );
        for (const raw of events.splice(0)) {
          const data = raw.trim();
          if (!data) continue;
          if (data === "[DONE]") {
            done = true;
            break;
          }
          const json = safeJson(data);
          // a server that fails after the stream began ends it with an error event (OpenAI's shape)
          const failed = StreamError.safeParse(json);
          if (failed.success)
            throw new RemoteError(
              "server-error",
              `${this.baseUrl}: the stream ended with the server's error: ${redact(clip(failed.data.error.message), this.#apiKey)}`,
            );
          const parsed = ChatChunk.safeParse(json);
          if (!parsed.success)
            throw new RemoteError(
              "malformed-reply",
              `${this.baseUrl}: a streamed event is in no known format: ${clip(data)}`,
            );
          for (const c of parsed.data.choices)
            yield {
              index: c.index,
              content: c.delta.content ?? "",
              ...(c.finish_reason ? { finishReason: c.finish_reason } : {}),
              ...(c.logprobs?.content ? { logprobs: c.logprobs.content } : {}),
            };
        }
        if (chunk.done) break;
      }
      if (!done)
        throw new RemoteError(
          "malformed-reply",
          `${this.baseUrl}: the stream ended without its closing [DONE] event (connection dropped?)`,
        );
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener("abort", onAbort);
      reader?.cancel().catch(() => {});
      ctl.abort();
    }
  }

  /**
   * Finds out once what the server offers for `model`: whether it is listed, chat log-probs, n > 1,
   * response_format json_schema, and prompt log-probs on /completions (echo). Costs at most five
   * tiny requests. `messages` is the chat turn to try (a server that checks its input, like
   * `serve`, needs a valid dialogue). `jsonSchema: false` skips that test, for a model that reads
   * act texts (a `serve` simulator), which is never asked for JSON.
   */
  async probe(
    model: string,
    opts: { messages?: ChatMessageIn[]; signal?: AbortSignal; jsonSchema?: boolean } = {},
  ): Promise<Capabilities> {
    const signal = opts.signal;
    const listed = await this.models(signal);
    const models = listed.map((m) => m.id);
    if (!models.includes(model))
      throw new RemoteError(
        "model-not-found",
        `${this.baseUrl} has no model ${JSON.stringify(model)}; it lists ${models.length ? models.map((m) => JSON.stringify(m)).join(", ") : "none"}`,
      );
    const caps: Capabilities = {
      baseUrl: this.baseUrl,
      models,
      model,
      chat: false,
      chatLogprobs: false,
      n: false,
      completions: false,
      echoLogprobs: false,
      promptLogprobs: false,
      jsonSchema: false,
      notes: [],
    };
    const messages: ChatMessageIn[] = opts.messages ??
      listed.find((m) => m.id === model)?.example_messages ?? [{ role: "user", content: "Hello" }];
    try {
      const r = await this.chat(
        { model, messages, max_tokens: 1, n: 2, temperature: 1, seed: 0 },
        signal,
      );
      caps.chat = true;
      caps.n = r.choices.length === 2;
      if (!caps.n) caps.notes.push("n > 1 is ignored: sampling n replies costs n requests");
    } catch (e) {
      if (!(e instanceof RemoteError) || e.kind === "cancelled" || e.kind === "unauthorised")
        throw e;
      caps.notes.push(`chat with n = 2: ${e.message}`);
      try {
        await this.chat({ model, messages, max_tokens: 1 }, signal);
        caps.chat = true;
      } catch (e2) {
        if (!(e2 instanceof RemoteError) || e2.kind === "cancelled") throw e2;
        caps.notes.push(`chat: ${e2.message}`);
      }
    }
    if (caps.chat) {
      try {
        const r = await this.chat(
          { model, messages, max_tokens: 1, logprobs: true, top_logprobs: 2 },
          signal,
        );
        caps.chatLogprobs = !!r.choices[0].logprobs?.content?.[0]?.top_logprobs?.length;
      } catch (e) {
        if (!(e instanceof RemoteError) || e.kind === "cancelled") throw e;
        caps.notes.push(`chat log-probs: ${e.message}`);
      }
      if (opts.jsonSchema !== false) {
        const js = await this.probeJsonSchema(model, messages, signal);
        caps.jsonSchema = js.supported;
        if (js.note) caps.notes.push(js.note);
      }
    }
    try {
      const prompt = "Hello there";
      const r = await this.completions(
        { model, prompt, max_tokens: 1, echo: true, logprobs: 0, temperature: 0 },
        signal,
      );
      caps.completions = true;
      const lp = r.choices[0].logprobs;
      caps.echoLogprobs =
        !!lp?.text_offset &&
        lp.tokens.join("").startsWith(prompt) &&
        lp.token_logprobs.length === lp.text_offset.length;
    } catch (e) {
      if (!(e instanceof RemoteError) || e.kind === "cancelled") throw e;
      caps.notes.push(`/completions with echo: ${e.message}`);
    }
    if (caps.completions && !caps.echoLogprobs) {
      try {
        const r = await this.completions(
          { model, prompt: "Hello there", max_tokens: 1, prompt_logprobs: 0, temperature: 0 },
          signal,
        );
        caps.promptLogprobs = promptTokenLogprobs(r.choices[0].prompt_logprobs) !== null;
      } catch (e) {
        if (!(e instanceof RemoteError) || e.kind === "cancelled") throw e;
      }
      if (!caps.promptLogprobs)
        caps.notes.push(
          "/completions gives no prompt log-probs (neither echo with offsets nor prompt_logprobs): act labels cannot be scored there",
        );
    }
    return caps;
  }

  /**
   * Whether the server constrains chat replies to a JSON Schema (response_format json_schema): one
   * tiny request whose reply must be the probe schema's JSON. A server that refuses the format, or
   * answers anything else, does not.
   */
  async probeJsonSchema(
    model: string,
    messages: ChatMessageIn[],
    signal?: AbortSignal,
  ): Promise<{ supported: boolean; note?: string }> {
    try {
      const r = await this.chat(
        {
          model,
          messages,
          max_tokens: 24,
          temperature: 0,
          seed: 0,
          response_format: { type: "json_schema", json_schema: PROBE_SCHEMA },
        },
        signal,
      );
      if (answersProbe(r.choices[0].message.content)) return { supported: true };
      return {
        supported: false,
        note: "response_format json_schema is not honoured (the reply is not the schema's JSON): VS replies are read by the tolerant parser alone",
      };
    } catch (e) {
      if (!(e instanceof RemoteError) || e.kind === "cancelled" || e.kind === "unauthorised")
        throw e;
      return { supported: false, note: `response_format json_schema: ${e.message}` };
    }
  }

  // ── plumbing ──────────────────────────────────────────────────────────────────────────────

  async #json<T>(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    schema: z.ZodType<T>,
    signal?: AbortSignal,
    model?: string,
  ): Promise<T> {
    return this.#attempts(async (attemptSignal) => {
      const res = await this.#fetchOnce(method, path, body, attemptSignal, model);
      let text: string;
      try {
        text = await res.text();
      } catch (e) {
        throw this.#connectionProblem(e, attemptSignal, "while reading the reply");
      }
      const json = safeJson(text);
      if (json === undefined)
        throw new Transient(
          "malformed-reply",
          `${this.baseUrl}${path}: the reply is not JSON (truncated?): ${clip(text)}`,
        );
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new Transient(
          "malformed-reply",
          `${this.baseUrl}${path}: the reply is in no known format (${issue.path.join(".") || "(root)"}: ${issue.message}): ${clip(text)}`,
        );
      }
      return parsed.data;
    }, signal);
  }

  /**
   * Runs `attempt` with a per-attempt timeout, retrying transient failures with backoff. With
   * `unlink` false the attempt stays tied to `signal` after it returns (a stream's body is read later).
   */
  async #attempts<T>(
    attempt: (signal: AbortSignal) => Promise<T>,
    signal?: AbortSignal,
    unlink = true,
  ): Promise<T> {
    for (let i = 0; ; i++) {
      if (signal?.aborted)
        throw new RemoteError("cancelled", `request to ${this.baseUrl} cancelled`);
      const controller = new AbortController();
      const onAbort = () =>
        controller.abort(new RemoteError("cancelled", `request to ${this.baseUrl} cancelled`));
      signal?.addEventListener("abort", onAbort, { once: true });
      const timer = setTimeout(
        () =>
          controller.abort(
            new Transient("timeout", `no reply from ${this.baseUrl} within ${this.timeoutMs} ms`),
          ),
        this.timeoutMs,
      );
      try {
        return await attempt(controller.signal);
      } catch (e) {
        const t =
          e instanceof Transient
            ? e
            : controller.signal.aborted && controller.signal.reason instanceof Transient
              ? controller.signal.reason
              : null;
        if (signal?.aborted)
          throw new RemoteError("cancelled", `request to ${this.baseUrl} cancelled`);
        if (!t)
          throw e instanceof RemoteError
            ? e
            : new RemoteError(
                "malformed-reply",
                `${this.baseUrl}: ${redact((e as Error)?.message ?? String(e), this.#apiKey)}`,
                undefined,
                { cause: e },
              );
        if (i >= this.retries) {
          const tries = this.retries + 1;
          throw new RemoteError(
            t.kind,
            `${redact(t.message, this.#apiKey)} (gave up after ${tries} attempt${tries > 1 ? "s" : ""})`,
            t.status,
          );
        }
        const backoff = Math.min(this.maxWaitMs, this.backoffMs * 2 ** i); // no jitter: nothing outside the UI draws unseeded randomness
        const waitMs = t.waitMs != null ? Math.min(this.maxWaitMs, t.waitMs) : backoff;
        this.retried++;
        this.#onRetry?.({ attempt: i + 1, waitMs, reason: redact(t.message, this.#apiKey) });
        await sleep(waitMs, signal);
      } finally {
        clearTimeout(timer);
        if (unlink) signal?.removeEventListener("abort", onAbort);
      }
    }
  }

  async #fetchOnce(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    signal: AbortSignal,
    model?: string,
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    this.requests++;
    let res: Response;
    try {
      // the URL is the base URL given with the key and a fixed path: the key goes nowhere else
      res = await fetch(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        redirect: "error",
      });
    } catch (e) {
      if (
        !signal.aborted &&
        /redirect/i.test(String((e as { cause?: { message?: string } })?.cause?.message ?? ""))
      )
        throw new RemoteError(
          "bad-request",
          `${this.baseUrl}${path} answered with a redirect, which this client never follows (a key must not travel to another server): give the final URL as the base URL`,
        );
      throw this.#connectionProblem(e, signal, "");
    }
    if (res.ok) return res;
    const text = await res.text().catch(() => "");
    const detail = redact(serverMessage(text), this.#apiKey);
    const where = `${this.baseUrl}${path}${model ? ` (model ${model})` : ""}`;
    if (RETRY_STATUS.has(res.status)) {
      const kind = res.status === 429 ? "rate-limited" : "server-error";
      throw new Transient(
        kind,
        `${where} answered ${res.status}${detail ? `: ${detail}` : ""}`,
        res.status,
        retryAfterMs(res.headers.get("retry-after")),
      );
    }
    if (res.status === 401 || res.status === 403)
      throw new RemoteError(
        "unauthorised",
        `${where} refused the request (${res.status}${detail ? `: ${detail}` : ""}); check the API key given for this server`,
        res.status,
      );
    if (res.status === 404) {
      if (
        model &&
        (detail.includes(model) ||
          /model\b[^.]*(not found|does not exist|unknown)|(unknown|no such) model/i.test(detail))
      )
        throw new RemoteError(
          "model-not-found",
          `${where}: model not found${detail ? ` (${detail})` : ""}; \`collapse-lab remote-probe\` lists the server's models`,
          404,
        );
      throw new RemoteError(
        "not-offered",
        `${where}: the server does not offer this endpoint (404${detail ? `: ${detail}` : ""})`,
        404,
      );
    }
    throw new RemoteError(
      "bad-request",
      `${where} refused the request (${res.status}${detail ? `: ${detail}` : ""})`,
      res.status,
    );
  }

  #connectionProblem(e: unknown, signal: AbortSignal, when: string): Error {
    if (signal.aborted)
      return signal.reason instanceof Error
        ? signal.reason
        : new RemoteError("cancelled", "cancelled");
    const err = e as { message?: string; cause?: { code?: string; message?: string } };
    const code = err?.cause?.code ?? "";
    const why = [code, err?.cause?.message ?? err?.message].filter(Boolean).join(" ");
    return new Transient(
      "unreachable",
      `could not reach ${this.baseUrl}${when ? ` ${when}` : ""} (${redact(why, this.#apiKey) || "connection failed"})`,
    );
  }
}

/**
 * vLLM's prompt_logprobs with 0 alternatives: one {tokenId: {logprob, decoded_token}} per prompt
 * token after the first (whose entry is null). The decoded texts and log-probs of tokens 1…, or
 * null when the entries are absent or not in that shape (or hold alternatives, which would make
 * the prompt's own token ambiguous).
 */
export function promptTokenLogprobs(entries: unknown): { text: string; logprob: number }[] | null {
  if (!Array.isArray(entries) || entries.length < 2) return null;
  const out: { text: string; logprob: number }[] = [];
  for (const e of entries.slice(1)) {
    if (typeof e !== "object" || e === null) return null;
    const values = Object.values(e as Record<string, unknown>);
    if (values.length !== 1) return null;
    const v = values[0] as { logprob?: unknown; decoded_token?: unknown };
    if (typeof v?.logprob !== "number" || typeof v.decoded_token !== "string") return null;
    out.push({ text: v.decoded_token, logprob: v.logprob });
  }
  return out;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The error message in an OpenAI-style error body ({error: {message}} or {message}), else the text, short. */
function serverMessage(text: string): string {
  const j = safeJson(text) as
    { error?: { message?: unknown } | string; message?: unknown; detail?: unknown } | undefined;
  const m = typeof j?.error === "string" ? j.error : (j?.error?.message ?? j?.message ?? j?.detail);
  return clip(typeof m === "string" ? m : text);
}

const clip = (s: string, n = 200) =>
  (s.length > n ? `${s.slice(0, n)}…` : s).replace(/\s+/g, " ").trim();
