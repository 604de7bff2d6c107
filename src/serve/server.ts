// `collapse-lab serve`: the project's simulators and policies as models behind the
// OpenAI-compatible API (fastify), so that any OpenAI client — the official SDK, the remote
// simulator of this project, a notebook — can play them. Routes: GET /v1/models,
// GET /v1/models/:id, POST /v1/chat/completions (also streamed as server-sent events).
//
// A chat turn is the dialogue so far in the act-text format (src/simulators/act-text.ts); the reply
// is one sampled act's text. With `logprobs`, each choice carries one "token" — the whole act —
// with its log-probability under the model's own distribution (temperature 1, before top_p) and
// the `top_logprobs` most likely acts. A model id ending in ":vs" answers in the Verbalized
// Sampling JSON format instead ({"responses":[{"text","probability"}]}, `vs_k` candidates, by
// default the preset's vs.k). Replies are a function of (model, messages, sampling parameters,
// seed): a request with a seed is reproducible; without one the server draws a seed.
//
// Requests for the same model that arrive together are answered from one batched distribution
// call; model calls run one at a time (several served models share one engine model).
// A real LM (`textModels`, e.g. a GGUF through gguf.ts) is served beside them, or alone: its
// chat turns are free text through the model's chat template, its replies sampled text.
//
// A text model's reply can be constrained to JSON with `response_format` (json_object, or
// json_schema with a JSON Schema), as OpenAI's API does; the act-level models refuse it (their
// replies are act texts, and their :vs twins' already the VS JSON).
//
// With `apiKey`, every request must carry it as a bearer token (compared in constant time); the
// key is never logged. CORS answers only the configured origins.
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import cors from "@fastify/cors";
import { randomInt, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { Dialogue } from "../benchmarks/types";
import { Rng } from "../engine/random";
import { verbalize } from "../simulators/vs";
import {
  actText,
  ActTextError,
  dialogueMessages,
  exampleDialogue,
  parseMessages,
} from "../simulators/act-text";
import type { ServedModel, ServedWorld } from "./models";
import {
  TextFormatError,
  TextRequestError,
  type ServedTextModel,
  type TextChoice,
  type TextMessage,
  type TextSampling,
  type TokenLogprob,
} from "./gguf";

export interface ServeOptions {
  /** The act-level simulators and policies; absent when only text models are served. */
  world?: ServedWorld;
  textModels?: ServedTextModel[];
  /** Origins a browser page may call from (exact, e.g. http://127.0.0.1:5178); empty: no CORS headers. */
  corsOrigins?: string[];
  /** When set, requests must send `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Largest `n` accepted (default 128). */
  maxN?: number;
  /** Called once per answered request with its route, model and status (never with a header). */
  onRequest?: (line: string) => void;
}

export const VS_SUFFIX = ":vs";

const Content = z.union([
  z.string(),
  z
    .array(z.looseObject({ type: z.literal("text"), text: z.string() }))
    .transform((parts) => parts.map((p) => p.text).join("")),
]);
const ChatBody = z.looseObject({
  model: z.string().min(1),
  messages: z.array(
    z.looseObject({ role: z.enum(["system", "developer", "user", "assistant"]), content: Content }),
  ),
  n: z.number().int().min(1).optional(),
  seed: z.number().int().optional(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  vs_k: z.number().int().min(1).max(64).optional(),
  response_format: z
    .discriminatedUnion(
      "type",
      [
        z.looseObject({ type: z.literal("text") }),
        z.looseObject({ type: z.literal("json_object") }),
        z.looseObject({
          type: z.literal("json_schema"),
          json_schema: z.looseObject({
            name: z.string().min(1),
            schema: z.record(z.string(), z.unknown()),
            strict: z.boolean().nullish(),
            description: z.string().nullish(),
          }),
        }),
      ],
      { error: "type must be one of text, json_object, json_schema" },
    )
    .nullish(),
});
type ChatBody = z.infer<typeof ChatBody>;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

const errorBody = (e: HttpError) => ({
  error: {
    message: e.message,
    type:
      e.status === 401
        ? "authentication_error"
        : e.status >= 500
          ? "server_error"
          : "invalid_request_error",
    param: e.param,
    code: e.code,
  },
});

/** Collects the dialogues asked of each model within one turn of the event loop into one call. */
class Batcher {
  #queue = new Map<
    ServedModel,
    { d: Dialogue; resolve: (p: Float64Array) => void; reject: (e: unknown) => void }[]
  >();
  #scheduled = false;
  #chain: Promise<void> = Promise.resolve();
  constructor(readonly V: number) {}

  row(model: ServedModel, d: Dialogue): Promise<Float64Array> {
    return new Promise((resolve, reject) => {
      const q = this.#queue.get(model) ?? [];
      q.push({ d, resolve, reject });
      this.#queue.set(model, q);
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush() {
    this.#scheduled = false;
    const batches = [...this.#queue.entries()];
    this.#queue.clear();
    for (const [model, items] of batches) {
      this.#chain = this.#chain.then(async () => {
        try {
          const p = await model.distribution(items.map((i) => i.d));
          items.forEach((it, b) => it.resolve(p.slice(b * this.V, (b + 1) * this.V)));
        } catch (e) {
          for (const it of items) it.reject(e);
        }
      });
    }
  }
}

/** The distribution sampled from: p^(1/T) (T = 0: the argmax), cut to the top_p nucleus. */
export function samplingDistribution(
  p: Float64Array,
  temperature: number,
  topP: number,
): Float64Array {
  let q: Float64Array;
  if (temperature === 0) {
    let best = -1;
    for (let i = 0; i < p.length; i++) if (p[i] > 0 && (best < 0 || p[i] > p[best])) best = i;
    q = new Float64Array(p.length);
    q[best] = 1;
    return q;
  }
  const m = Math.max(...p);
  q = p.map((x) => (x > 0 ? (x / m) ** (1 / temperature) : 0));
  if (topP < 1) {
    const z = q.reduce((a, b) => a + b, 0);
    const order = [...q.keys()].filter((i) => q[i] > 0).sort((a, b) => q[b] - q[a] || a - b);
    let cum = 0;
    const keep = new Set<number>();
    for (const i of order) {
      keep.add(i);
      cum += q[i] / z;
      if (cum >= topP) break;
    }
    q = q.map((x, i) => (keep.has(i) ? x : 0));
  }
  const z = q.reduce((a, b) => a + b, 0);
  return q.map((x) => x / z);
}

/** A valid chat turn for a model (shown in /v1/models; probes use it). */
function exampleMessages(world: ServedWorld, m: ServedModel) {
  return dialogueMessages(world.bench, exampleDialogue(world.bench, m.side), m.side);
}

/** A text model's token log-probs in the API's shape. */
function textLogprobs(ts: TokenLogprob[]): NonNullable<Choice["logprobs"]> {
  const entry = (t: { token: string; logprob: number }) => ({
    token: t.token,
    logprob: t.logprob,
    bytes: [...Buffer.from(t.token)],
  });
  return { content: ts.map((t) => ({ ...entry(t), top_logprobs: t.top.map(entry) })) };
}

function textUsage(r: { promptTokens: number; choices: TextChoice[] }) {
  const written = r.choices.reduce((a, c) => a + c.tokens, 0);
  return {
    prompt_tokens: r.promptTokens,
    completion_tokens: written,
    total_tokens: r.promptTokens + written,
  };
}

/** A request the text model cannot take (too long for its context, a format it cannot enforce) is a 400. */
const refusedText = (e: unknown) =>
  e instanceof TextFormatError
    ? new HttpError(400, e.message, "invalid_request", "response_format")
    : e instanceof TextRequestError
      ? new HttpError(400, e.message, "context_length_exceeded", "messages")
      : e;

interface Choice {
  index: number;
  content: string;
  finish?: "stop" | "length"; // default "stop"
  logprobs: {
    content: {
      token: string;
      logprob: number;
      bytes: number[];
      top_logprobs: { token: string; logprob: number; bytes: number[] }[];
    }[];
  } | null;
}

export function buildServer(opts: ServeOptions): FastifyInstance {
  const world = opts.world;
  const textModels = new Map((opts.textModels ?? []).map((m) => [m.id, m]));
  if (!world && textModels.size === 0)
    throw new Error("buildServer: nothing to serve (no world and no text models)");
  const maxN = opts.maxN ?? 128;
  const byId = new Map((world?.models ?? []).map((m) => [m.id, m]));
  const batcher = new Batcher(world?.bench.acts.length ?? 0);
  const app = Fastify({ logger: false, bodyLimit: 1 << 20 });
  const created = Math.floor(Date.now() / 1000);

  if (opts.corsOrigins?.length)
    void app.register(cors, { origin: opts.corsOrigins, methods: ["GET", "POST", "OPTIONS"] });

  const expected = opts.apiKey ? Buffer.from(`Bearer ${opts.apiKey}`) : null;
  app.addHook("onRequest", async (req) => {
    if (!expected || req.method === "OPTIONS") return;
    const got = Buffer.from(req.headers.authorization ?? "");
    if (got.length !== expected.length || !timingSafeEqual(got, expected))
      throw new HttpError(
        401,
        "a valid API key is required (Authorization: Bearer …)",
        "invalid_api_key",
      );
  });
  app.addHook("onResponse", async (req, reply) => {
    const model = (req.body as { model?: unknown } | undefined)?.model;
    opts.onRequest?.(
      `${req.method} ${req.url}${typeof model === "string" ? ` ${model}` : ""} → ${reply.statusCode}`,
    );
  });
  app.setErrorHandler((err, _req, reply) => {
    const e =
      err instanceof HttpError
        ? err
        : (err as { statusCode?: number }).statusCode &&
            (err as { statusCode: number }).statusCode < 500
          ? new HttpError(
              (err as { statusCode: number }).statusCode,
              `the request could not be read: ${(err as Error).message}`,
            )
          : new HttpError(500, `internal error: ${(err as Error).message}`);
    void reply.status(e.status).send(errorBody(e));
  });
  app.setNotFoundHandler((req, reply) => {
    void reply
      .status(404)
      .send(
        errorBody(
          new HttpError(
            404,
            `no route ${req.method} ${req.url}; this server offers GET /v1/models and POST /v1/chat/completions`,
            "not_found",
          ),
        ),
      );
  });

  const listed = (world?.models ?? []).flatMap((m) => [
    m,
    {
      ...m,
      id: m.id + VS_SUFFIX,
      description: `${m.description} — answers in the Verbalized Sampling JSON format`,
    },
  ]);
  const examples = new Map((world?.models ?? []).map((m) => [m.id, exampleMessages(world!, m)]));
  const modelObject = (m: { id: string; description: string }) => ({
    id: m.id,
    object: "model",
    created,
    owned_by: world?.source,
    description: m.description,
    example_messages: examples.get(
      m.id.endsWith(VS_SUFFIX) ? m.id.slice(0, -VS_SUFFIX.length) : m.id,
    ),
  });
  const textObject = (m: ServedTextModel) => ({
    id: m.id,
    object: "model",
    created,
    owned_by: "collapse-lab serve",
    description: m.description,
    max_model_len: m.contextSize,
  });
  const allModels = () => [...[...textModels.values()].map(textObject), ...listed.map(modelObject)];
  app.get("/v1/models", async () => ({ object: "list", data: allModels() }));
  app.get<{ Params: { id: string } }>("/v1/models/*", async (req) => {
    const id = (req.params as Record<string, string>)["*"];
    const t = textModels.get(id);
    if (t) return textObject(t);
    const m = listed.find((x) => x.id === id);
    if (!m) throw modelNotFound(id);
    return modelObject(m);
  });

  function modelNotFound(id: string) {
    return new HttpError(
      404,
      `The model \`${id}\` does not exist; GET /v1/models lists the ${listed.length + textModels.size} served models`,
      "model_not_found",
      "model",
    );
  }

  app.post("/v1/chat/completions", async (req, reply) => {
    const parsed = ChatBody.safeParse(req.body);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw new HttpError(
        400,
        `${i.path.join(".") || "body"}: ${i.message}`,
        "invalid_request",
        i.path.join(".") || null,
      );
    }
    const body = parsed.data;
    const n = body.n ?? 1;
    if (n > maxN)
      throw new HttpError(
        400,
        `n = ${n} is more than this server's limit of ${maxN}`,
        "invalid_request",
        "n",
      );
    const text = textModels.get(body.model);
    if (text) return answerText(text, body, reply);
    const vsFormat = body.model.endsWith(VS_SUFFIX);
    const model = byId.get(vsFormat ? body.model.slice(0, -VS_SUFFIX.length) : body.model);
    if (!model || !world) throw modelNotFound(body.model);
    const { bench } = world;
    const V = bench.acts.length;
    if (body.response_format && body.response_format.type !== "text")
      throw new HttpError(
        400,
        `response_format ${body.response_format.type} is for text models; ${body.model} answers act texts${vsFormat ? " (in the Verbalized Sampling JSON format already)" : ""}`,
        "invalid_request",
        "response_format",
      );
    if (vsFormat && body.logprobs)
      throw new HttpError(
        400,
        "logprobs are not offered with the Verbalized Sampling format (the reply is a JSON list of candidates); ask the model without :vs",
        "invalid_request",
        "logprobs",
      );
    const topK = body.top_logprobs ?? 0;
    if (topK > 0 && !body.logprobs)
      throw new HttpError(
        400,
        "top_logprobs needs logprobs: true",
        "invalid_request",
        "top_logprobs",
      );
    if (topK > V)
      throw new HttpError(
        400,
        `top_logprobs is at most ${V} (the number of acts)`,
        "invalid_request",
        "top_logprobs",
      );

    let d: Dialogue;
    try {
      const messages = body.messages.map((m) => ({
        role: m.role === "developer" ? ("system" as const) : m.role,
        content: m.content,
      }));
      d = parseMessages(
        bench,
        messages,
        model.side,
        world.names,
        model.side === "agent" ? world.defaultCard : undefined,
      );
    } catch (e) {
      if (e instanceof ActTextError)
        throw new HttpError(400, e.message, "invalid_messages", "messages");
      throw e;
    }
    const p = await batcher.row(model, d);
    const q = samplingDistribution(p, body.temperature ?? 1, body.top_p ?? 1);
    const seed = body.seed ?? randomInt(2 ** 31);
    const rng = Rng.seed(seed);
    const k = body.vs_k ?? world.vs.k;
    const logp = (a: number) => Math.log(p[a]);
    const entry = (a: number) => ({
      token: actText(bench, a),
      logprob: logp(a),
      bytes: [...Buffer.from(actText(bench, a))],
    });
    const ranked = [...p.keys()].filter((a) => p[a] > 0).sort((a, b) => p[b] - p[a] || a - b);
    const choices: Choice[] = Array.from({ length: n }, (_, index) => {
      if (vsFormat) {
        // candidates sharing an act are its paraphrases: its templates in turn
        const seen = new Map<number, number>();
        const cands = verbalize(q, k, rng).map((c) => {
          const j = seen.get(c.act) ?? 0;
          seen.set(c.act, j + 1);
          const t = bench.acts[c.act].templates;
          return {
            text: t.length ? t[j % t.length] : actText(bench, c.act),
            probability: Number(c.probability.toFixed(6)),
          };
        });
        const content = JSON.stringify({ responses: cands });
        return { index, content, logprobs: null };
      }
      const act = rng.categorical(q);
      return {
        index,
        content: actText(bench, act),
        logprobs: body.logprobs
          ? { content: [{ ...entry(act), top_logprobs: ranked.slice(0, topK).map(entry) }] }
          : null,
      };
    });
    const usage = {
      prompt_tokens: d.card.length + d.acts.length,
      completion_tokens: n * (vsFormat ? k : 1),
      total_tokens: d.card.length + d.acts.length + n * (vsFormat ? k : 1),
    };
    return completion(reply, body, seed, choices, usage);
  });

  /** A real LM's reply: free text through its chat template, sampled n times with seeds seed, seed + 1, … */
  async function answerText(m: ServedTextModel, body: ChatBody, reply: FastifyReply) {
    if (body.vs_k !== undefined)
      throw new HttpError(
        400,
        "vs_k is for the act-level simulators; ask a text model for Verbalized Sampling in its prompt",
        "invalid_request",
        "vs_k",
      );
    const topK = body.top_logprobs ?? 0;
    if (topK > 0 && !body.logprobs)
      throw new HttpError(
        400,
        "top_logprobs needs logprobs: true",
        "invalid_request",
        "top_logprobs",
      );
    if (topK > 20)
      throw new HttpError(400, "top_logprobs is at most 20", "invalid_request", "top_logprobs");
    const seed = body.seed ?? randomInt(2 ** 31);
    const messages = body.messages.map((x) => ({
      role: x.role === "developer" ? ("system" as const) : x.role,
      content: x.content,
    }));
    const rf = body.response_format;
    const sampling: TextSampling = {
      n: body.n ?? 1,
      seed,
      temperature: body.temperature ?? 1,
      topP: body.top_p ?? 1,
      maxTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
      topLogprobs: body.logprobs ? topK : null,
      format:
        rf?.type === "json_schema"
          ? { type: "json_schema", schema: rf.json_schema.schema }
          : rf?.type === "json_object"
            ? { type: "json_object" }
            : null,
    };
    if (body.stream) return streamText(m, body, reply, seed, messages, sampling);
    const r = await m.chat(messages, sampling).catch((e: unknown) => {
      throw refusedText(e);
    });
    const choices: Choice[] = r.choices.map((c: TextChoice, index) => ({
      index,
      content: c.text,
      finish: c.finish,
      logprobs: c.logprobs ? textLogprobs(c.logprobs) : null,
    }));
    return completion(reply, body, seed, choices, textUsage(r));
  }

  /**
   * A real LM's reply as server-sent events while it is written: per choice (one after another) a
   * role chunk, its pieces as the model writes them (each with its tokens' log-probs), a finish
   * chunk; then usage when asked, and [DONE]. The events begin with the first choice, so a refused
   * request is still an HTTP error; a failure after that ends the stream with an error event
   * (OpenAI's `{"error": …}`) and no [DONE]. A client that goes away stops the generation.
   */
  async function streamText(
    m: ServedTextModel,
    body: ChatBody,
    reply: FastifyReply,
    seed: number,
    messages: TextMessage[],
    sampling: TextSampling,
  ) {
    const res = reply.raw;
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableEnded) gone.abort();
    };
    res.on("close", onClose);
    const base = {
      id: `chatcmpl-${seed.toString(16)}-${randomInt(2 ** 31).toString(16)}`,
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
    };
    let started = false;
    const send = (o: unknown) => {
      if (!started) {
        started = true;
        reply.hijack();
        res.writeHead(200, {
          ...(reply.getHeaders() as Record<string, string>),
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          connection: "keep-alive",
        });
      }
      if (!gone.signal.aborted) res.write(`data: ${JSON.stringify(o)}\n\n`);
    };
    const chunk = (
      index: number,
      delta: object,
      logprobs: Choice["logprobs"] = null,
      finish: string | null = null,
    ) => send({ ...base, choices: [{ index, delta, logprobs, finish_reason: finish }] });
    let opened = -1;
    const open = (index: number) => {
      while (opened < index) chunk(++opened, { role: "assistant", content: "" });
    };
    try {
      const r = await m.chat(messages, sampling, {
        signal: gone.signal,
        onText(index, text, logprobs) {
          open(index);
          chunk(index, { content: text }, logprobs ? textLogprobs(logprobs) : null);
        },
        onChoice(index, c) {
          open(index);
          chunk(index, {}, null, c.finish);
        },
      });
      if (body.stream_options?.include_usage) send({ ...base, choices: [], usage: textUsage(r) });
      res.end("data: [DONE]\n\n");
      opts.onRequest?.(`POST /v1/chat/completions ${body.model} → 200 (stream)`);
    } catch (e) {
      if (gone.signal.aborted) {
        if (!started) reply.hijack();
        res.destroy();
        opts.onRequest?.(
          `POST /v1/chat/completions ${body.model} → stream stopped: the client went away`,
        );
        return;
      }
      if (!started) throw refusedText(e);
      const err =
        e instanceof HttpError
          ? e
          : new HttpError(500, `internal error: ${(e as Error)?.message ?? String(e)}`);
      res.end(`data: ${JSON.stringify(errorBody(err))}\n\n`);
      opts.onRequest?.(
        `POST /v1/chat/completions ${body.model} → 200 (stream ended by an error: ${err.message})`,
      );
    } finally {
      res.off("close", onClose);
    }
  }

  /** A chat completion of these choices: one JSON body, or server-sent events when the body asks to stream. */
  function completion(
    reply: FastifyReply,
    body: ChatBody,
    seed: number,
    choices: Choice[],
    usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number },
  ) {
    const id = `chatcmpl-${seed.toString(16)}-${randomInt(2 ** 31).toString(16)}`;
    if (body.stream)
      return stream(reply, {
        id,
        model: body.model,
        choices,
        usage: body.stream_options?.include_usage ? usage : null,
      });
    return {
      id,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      system_fingerprint: `seed-${seed}`,
      choices: choices.map((c) => ({
        index: c.index,
        message: { role: "assistant", content: c.content },
        logprobs: c.logprobs,
        finish_reason: c.finish ?? "stop",
      })),
      usage,
    };
  }

  /** Server-sent events: a role chunk, the text word by word (log-probs on the first piece), a finish chunk, [DONE]. */
  function stream(
    reply: FastifyReply,
    r: { id: string; model: string; choices: Choice[]; usage: object | null },
  ) {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const base = {
      id: r.id,
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model: r.model,
    };
    const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    for (const c of r.choices) {
      send({
        ...base,
        choices: [
          {
            index: c.index,
            delta: { role: "assistant", content: "" },
            logprobs: null,
            finish_reason: null,
          },
        ],
      });
      (c.content.match(/\S+\s*/g) ?? [c.content]).forEach((piece, j) =>
        send({
          ...base,
          choices: [
            {
              index: c.index,
              delta: { content: piece },
              logprobs: j === 0 ? c.logprobs : null,
              finish_reason: null,
            },
          ],
        }),
      );
      send({
        ...base,
        choices: [{ index: c.index, delta: {}, logprobs: null, finish_reason: c.finish ?? "stop" }],
      });
    }
    if (r.usage) send({ ...base, choices: [], usage: r.usage });
    res.end("data: [DONE]\n\n");
    opts.onRequest?.(`POST /v1/chat/completions ${r.model} → 200 (stream)`);
  }

  return app;
}
