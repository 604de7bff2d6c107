// A model on a remote server as the lm tier's LanguageModel (src/lm/types.ts), so that code
// written against transformers.js models — LmSimulator, γ of a real LM, the LM lab's procedures —
// can run on a vLLM or SGLang server too. `generate` sends chat prompts to /chat/completions and
// text prompts to /completions; `score` reads a continuation's log-likelihood from /completions
// with `echo` (every continuation of a prompt in one request), for text prompts only: a chat
// prompt would need the model's chat template, which only the server knows.
import type {
  ContinuationScore,
  GenerateOptions,
  Generation,
  LanguageModel,
  LmPrompt,
} from "../lm/types";
import {
  promptTokenLogprobs,
  sleep,
  type ChatRequest,
  type RemoteClient,
  type StreamDelta,
} from "./client";
import { RemoteError, remoteErrorKind } from "./errors";

/** A reply's whole text so far, as it streams in; `index` is its place among the replies the call returns. */
export type OnText = (index: number, text: string) => void;

/** One chat choice: its text and, where the server gave them, its tokens' log-probs. */
export interface ChatReply {
  text: string;
  logprobs: NonNullable<StreamDelta["logprobs"]> | null;
}

/**
 * The choices of one chat request — streamed when `onText` is given, so a page can show the text
 * as it is written — with what the same request unstreamed returns: the same texts, and log-probs
 * only where every choice has them (chat() refuses a reply where one lacks them).
 *
 * Streaming is only a way of receiving the reply: the request, its `n` and seed are unchanged, so
 * a server samples the same (vLLM, SGLang, serve and OpenAI stream each of `n` choices under its
 * index). Where a stream does not bring every one of the `n` choices (a server that streams only
 * the first), the request is sent again unstreamed, so the lab never takes a different set of
 * replies from streaming. A stream that breaks after it began is sent again from the start (the
 * live text restarts) up to the client's retry count, then ends in the client's typed error: a
 * cut-off reply is never returned.
 */
export async function chatReplies(
  client: RemoteClient,
  req: ChatRequest,
  control: { signal?: AbortSignal; onText?: OnText } = {},
): Promise<ChatReply[]> {
  const { signal, onText } = control;
  if (!onText) {
    const r = await client.chat(req, signal);
    return r.choices.map((c) => ({
      text: c.message.content ?? "",
      logprobs: c.logprobs?.content ?? null,
    }));
  }
  const n = req.n ?? 1;
  for (let attempt = 0; ; attempt++) {
    const texts: string[] = [];
    const logprobs: NonNullable<ChatReply["logprobs"]>[] = [];
    let began = false;
    try {
      for await (const d of client.chatStream(req, signal)) {
        began = true;
        if (!(Number.isInteger(d.index) && d.index >= 0 && d.index < n))
          throw new RemoteError(
            "malformed-reply",
            `${client.baseUrl} (model ${req.model}): a streamed choice has index ${d.index}, outside the ${n} asked for`,
          );
        texts[d.index] = (texts[d.index] ?? "") + d.content;
        if (d.logprobs) (logprobs[d.index] ??= []).push(...d.logprobs);
        if (d.content) onText(d.index, texts[d.index]);
      }
    } catch (e) {
      const kind = remoteErrorKind(e);
      // a stream cut off or ended by the server's error event after it began: sent again, as a 5xx before it would be
      if (
        !began ||
        attempt >= client.retries ||
        !(
          kind === "malformed-reply" ||
          kind === "timeout" ||
          kind === "unreachable" ||
          kind === "server-error"
        )
      )
        throw e;
      for (let i = 0; i < n; i++) onText(i, "");
      client.retried++;
      await sleep(Math.min(client.maxWaitMs, client.backoffMs * 2 ** attempt), signal);
      continue;
    }
    const got = Array.from({ length: n }, (_, i) => texts[i]);
    if (got.some((t) => t === undefined)) {
      const r = await client.chat(req, signal);
      return r.choices.map((c) => ({
        text: c.message.content ?? "",
        logprobs: c.logprobs?.content ?? null,
      }));
    }
    const all = req.logprobs && got.every((_, i) => logprobs[i]?.length);
    return got.map((text, i) => ({ text: text!, logprobs: all ? logprobs[i] : null }));
  }
}

export class RemoteLanguageModel implements LanguageModel {
  readonly id: string;

  /** `constrainsJson`: the server honours response_format json_schema (its probe's `jsonSchema`). */
  constructor(
    readonly client: RemoteClient,
    readonly model: string,
    readonly constrainsJson = false,
  ) {
    this.id = `${model} @ ${client.baseUrl}`;
  }

  /**
   * `control.signal` cancels the request (a RemoteError of kind "cancelled"); `control.onText`
   * streams a chat prompt's replies as they are written (chatReplies: the same replies).
   * `opts.jsonSchema` is sent as response_format to chat prompts, whatever `constrainsJson` says.
   */
  async generate(
    prompt: LmPrompt,
    opts: GenerateOptions = {},
    control: { signal?: AbortSignal; onText?: OnText } = {},
  ): Promise<Generation[]> {
    const signal = control.signal;
    const sampling = {
      model: this.model,
      n: opts.n ?? 1,
      temperature: opts.temperature ?? 0,
      ...(opts.topP !== undefined ? { top_p: opts.topP } : {}),
      ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
      max_tokens: opts.maxNewTokens ?? 128,
    };
    if ("chat" in prompt) {
      const chat = {
        ...sampling,
        messages: prompt.chat,
        ...(opts.jsonSchema
          ? { response_format: { type: "json_schema" as const, json_schema: opts.jsonSchema } }
          : {}),
      };
      // with the replies' log-probs where the server gives them, without where not
      const replies = await chatReplies(this.client, { ...chat, logprobs: true }, control).catch(
        (e: unknown) => {
          if (e instanceof RemoteError && (e.kind === "no-logprobs" || e.kind === "bad-request"))
            return chatReplies(this.client, chat, control);
          throw e;
        },
      );
      return replies.map((c) => {
        const toks = c.logprobs ?? [];
        return {
          text: c.text,
          tokens: toks.length,
          ...(toks.length ? { logprob: toks.reduce((s, t) => s + t.logprob, 0) } : {}),
        };
      });
    }
    const r = await this.client.completions(
      { ...sampling, prompt: prompt.text, logprobs: 0 },
      signal,
    );
    return r.choices.map((c) => {
      const lps = (c.logprobs?.token_logprobs ?? []).filter((x): x is number => x !== null);
      return {
        text: c.text,
        tokens: c.logprobs?.tokens.length ?? 0,
        ...(lps.length ? { logprob: lps.reduce((a, b) => a + b, 0) } : {}),
      };
    });
  }

  /**
   * Exact log p(continuation | prompt) from the echoed prompt log-probs, or from vLLM's
   * prompt_logprobs where echo gives no token offsets (found once, then used for every call);
   * tokens that straddle the boundary count with the continuation.
   */
  async score(
    prompt: LmPrompt,
    continuations: string[],
    control: { signal?: AbortSignal } = {},
  ): Promise<ContinuationScore[]> {
    const signal = control.signal;
    if (!("text" in prompt))
      throw new RemoteError(
        "not-offered",
        `${this.id}: scoring a chat prompt needs the model's chat template, which a remote server does not expose; use a text prompt (promptStyle "text")`,
      );
    if (continuations.length === 0) return [];
    if (this.#way === "echo") {
      try {
        return await this.#scoreEcho(prompt, continuations, signal);
      } catch (e) {
        if (!(
          e instanceof RemoteError &&
          (e.kind === "no-logprobs" || (e.kind === "bad-request" && /echo/i.test(e.message)))
        ))
          throw e;
        this.#way = "prompt_logprobs";
      }
    }
    return this.#scorePromptLogprobs(prompt.text, continuations, signal);
  }

  #way: "echo" | "prompt_logprobs" = "echo";

  async #scorePromptLogprobs(
    text: string,
    continuations: string[],
    signal?: AbortSignal,
  ): Promise<ContinuationScore[]> {
    const r = await this.client.completions(
      {
        model: this.model,
        prompt: continuations.map((c) => text + c),
        prompt_logprobs: 0,
        max_tokens: 1,
        temperature: 0,
      },
      signal,
    );
    if (r.choices.length !== continuations.length)
      throw new RemoteError(
        "malformed-reply",
        `${this.id}: ${r.choices.length} completions for ${continuations.length} prompts`,
      );
    const out: ContinuationScore[] = new Array(continuations.length);
    for (const c of r.choices) {
      if (
        !Number.isInteger(c.index) ||
        c.index < 0 ||
        c.index >= continuations.length ||
        out[c.index]
      )
        throw new RemoteError(
          "malformed-reply",
          `${this.id}: completion index ${c.index} is out of range or repeated`,
        );
      const toks = promptTokenLogprobs(c.prompt_logprobs);
      if (!toks)
        throw new RemoteError(
          "no-logprobs",
          `${this.id}: the server gives no prompt log-probs (neither echo with offsets nor prompt_logprobs)`,
        );
      // walk back from the end over the continuation's characters (the first prompt token has no entry)
      let need = continuations[c.index].length;
      let logprob = 0;
      let tokens = 0;
      for (let j = toks.length - 1; j >= 0 && need > 0; j--) {
        logprob += toks[j].logprob;
        tokens++;
        need -= toks[j].text.length;
      }
      if (need > 0 || tokens === 0)
        throw new RemoteError(
          "malformed-reply",
          `${this.id}: the prompt log-probs do not cover continuation ${c.index}`,
        );
      out[c.index] = { logprob, tokens };
    }
    return out;
  }

  async #scoreEcho(
    prompt: { text: string },
    continuations: string[],
    signal?: AbortSignal,
  ): Promise<ContinuationScore[]> {
    const from = prompt.text.length;
    const r = await this.client.completions(
      {
        model: this.model,
        prompt: continuations.map((c) => prompt.text + c),
        echo: true,
        logprobs: 0,
        max_tokens: 1,
        temperature: 0,
      },
      signal,
    );
    if (r.choices.length !== continuations.length)
      throw new RemoteError(
        "malformed-reply",
        `${this.id}: ${r.choices.length} completions for ${continuations.length} prompts`,
      );
    const out: ContinuationScore[] = new Array(continuations.length);
    for (const c of r.choices) {
      if (
        !Number.isInteger(c.index) ||
        c.index < 0 ||
        c.index >= continuations.length ||
        out[c.index]
      )
        throw new RemoteError(
          "malformed-reply",
          `${this.id}: completion index ${c.index} is out of range or repeated`,
        );
      const lp = c.logprobs!;
      const offsets = lp.text_offset;
      if (
        !offsets ||
        offsets.length !== lp.tokens.length ||
        lp.token_logprobs.length !== lp.tokens.length
      )
        throw new RemoteError(
          "no-logprobs",
          `${this.id}: /completions with echo gives no token offsets, so a continuation's tokens cannot be found`,
        );
      const to = from + continuations[c.index].length;
      let logprob = 0;
      let tokens = 0;
      lp.tokens.forEach((tok, j) => {
        if (offsets[j] + tok.length <= from || offsets[j] >= to) return;
        const v = lp.token_logprobs[j];
        if (v === null || !Number.isFinite(v))
          throw new RemoteError(
            "no-logprobs",
            `${this.id}: token ${JSON.stringify(tok)} of continuation ${c.index} has no log-prob`,
          );
        logprob += v;
        tokens++;
      });
      if (tokens === 0)
        throw new RemoteError(
          "malformed-reply",
          `${this.id}: the echoed prompt does not contain continuation ${c.index}`,
        );
      out[c.index] = { logprob, tokens };
    }
    return out;
  }
}
