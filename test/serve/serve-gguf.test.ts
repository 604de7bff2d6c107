// `collapse-lab serve` with a real LM: SmolLM2-135M-Instruct (GGUF) on llama.cpp through
// node-llama-cpp, over real HTTP on 127.0.0.1, talked to by the official `openai` client and by
// the project's remote client and RemoteLanguageModel. Both are installed by scripts/real-lm.sh
// into .real-lm/, not by `npm ci`: without them these tests are skipped, saying so, except where
// COLLAPSE_LAB_REQUIRE_REAL_LM=1 (CI) makes that a failure.
import OpenAI from "openai";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { buildServer } from "../../src/serve/server";
import {
  loadGgufModel,
  REAL_LM_DIR,
  REAL_LM_GGUF,
  TextAbortedError,
  TextRequestError,
  type ServedTextModel,
} from "../../src/serve/gguf";
import { RemoteClient, type StreamDelta } from "../../src/remote/client";
import { RemoteError } from "../../src/remote/errors";
import { RemoteLanguageModel } from "../../src/remote/remote-lm";
import { runCli } from "../cli/harness";

const HAVE_REAL_LM =
  existsSync(REAL_LM_GGUF) &&
  existsSync(join(REAL_LM_DIR, "node_modules/node-llama-cpp/package.json"));
if (!HAVE_REAL_LM) {
  if (process.env.COLLAPSE_LAB_REQUIRE_REAL_LM === "1")
    throw new Error(
      `the real LM is not installed in ${REAL_LM_DIR} (COLLAPSE_LAB_REQUIRE_REAL_LM=1): run bash scripts/real-lm.sh`,
    );
  console.warn(
    `the real LM is not installed in ${REAL_LM_DIR}: its serve tests are skipped (bash scripts/real-lm.sh installs it)`,
  );
}

const MODEL = "SmolLM2-135M-Instruct.Q4_1";
const messages = [
  { role: "system" as const, content: "You are a careful, friendly assistant." },
  {
    role: "user" as const,
    content: "Would you give one dollar to a children's charity? Answer in one sentence.",
  },
];

describe.skipIf(!HAVE_REAL_LM)(
  "serve --gguf: a real small LM behind the OpenAI-compatible API",
  () => {
    let model: ServedTextModel;
    let app: FastifyInstance;
    let baseURL: string;
    let openai: OpenAI;
    // how each chat call of the served model ended, in order (the served model is the real one, watched)
    const ended: ("done" | "aborted" | "failed")[] = [];

    beforeAll(async () => {
      model = await loadGgufModel(REAL_LM_GGUF);
      const watched: ServedTextModel = {
        ...model,
        chat: (m, s, hooks) =>
          model.chat(m, s, hooks).then(
            (r) => (ended.push("done"), r),
            (e: unknown) => {
              ended.push(e instanceof TextAbortedError ? "aborted" : "failed");
              throw e;
            },
          ),
      };
      app = buildServer({ textModels: [watched] });
      await app.listen({ port: 0, host: "127.0.0.1" });
      baseURL = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
      openai = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 300_000 });
    }, 120_000);
    afterAll(async () => {
      await app?.close();
      await model?.dispose();
    });

    it("lists the model, with its chat template and context size", async () => {
      const ids = [];
      for await (const m of openai.models.list()) ids.push(m.id);
      expect(ids).toEqual([MODEL]);
      const m = (await openai.models.retrieve(MODEL)) as unknown as {
        description: string;
        max_model_len: number;
      };
      expect(m.description).toMatch(/node-llama-cpp 3\.21\.1, chat template ChatML/);
      expect(m.max_model_len).toBe(4096);
    });

    it("answers in English through the chat template; n choices; max_tokens ends a reply with finish_reason length", async () => {
      const r = await openai.chat.completions.create({
        model: MODEL,
        messages,
        n: 3,
        seed: 11,
        temperature: 0.8,
        max_tokens: 12,
      });
      expect(r.choices).toHaveLength(3);
      for (const c of r.choices) {
        expect(c.message.content).toMatch(/[a-z]{2,}/i);
        expect(c.message.content).not.toContain("<|im_");
      }
      expect(new Set(r.choices.map((c) => c.message.content)).size).toBeGreaterThan(1); // seeds 11, 12, 13
      expect(r.usage!.prompt_tokens).toBeGreaterThan(20);
      expect(r.usage!.completion_tokens).toBeLessThanOrEqual(36);
      const finished = r.choices.filter((c) => c.finish_reason === "length");
      for (const c of finished) expect(c.message.content!.length).toBeGreaterThan(0);
      // a reply that ends before max_tokens ends at the model's end-of-turn token
      const short = await openai.chat.completions.create({
        model: MODEL,
        messages: [{ role: "user", content: "Say only the word yes." }],
        temperature: 0,
        max_tokens: 40,
      });
      expect(short.choices[0].finish_reason).toBe("stop");
      expect(short.choices[0].message.content).toMatch(/yes/i);
    });

    it("the same seed gives the same replies, another seed others; greedy needs no seed", async () => {
      const ask = (seed?: number, temperature = 1) =>
        openai.chat.completions
          .create({
            model: MODEL,
            messages,
            n: 2,
            temperature,
            max_tokens: 10,
            ...(seed === undefined ? {} : { seed }),
          })
          .then((r) => r.choices.map((c) => c.message.content));
      const [a, b, c] = [await ask(3), await ask(3), await ask(4)];
      expect(a).toEqual(b);
      expect(c).not.toEqual(a);
      expect(await ask(undefined, 0)).toEqual(await ask(undefined, 0));
    });

    it("logprobs: one entry per reply token, the sampled token among its top alternatives, the reply unchanged", async () => {
      const req = { model: MODEL, messages, seed: 5, temperature: 1, max_tokens: 6 };
      const plain = await openai.chat.completions.create(req);
      const r = await openai.chat.completions.create({ ...req, logprobs: true, top_logprobs: 3 });
      const c = r.choices[0];
      expect(c.message.content).toBe(plain.choices[0].message.content); // asking for log-probs does not change the draw
      const toks = c.logprobs!.content!;
      expect(toks.length).toBe(r.usage!.completion_tokens);
      expect(toks.map((t) => t.token).join("")).toBe(c.message.content);
      for (const t of toks) {
        expect(t.logprob).toBeLessThanOrEqual(0);
        expect(t.top_logprobs).toHaveLength(3);
        const lps = t.top_logprobs.map((x) => x.logprob);
        expect(lps).toEqual([...lps].sort((x, y) => y - x));
        // at temperature 1 and top_p 1 these are the model's own: the sampled token, if among the top 3, has its listed log-prob
        const listed = t.top_logprobs.find((x) => x.token === t.token);
        if (listed) expect(listed.logprob).toBeCloseTo(t.logprob, 12);
        else expect(t.logprob).toBeLessThanOrEqual(lps[2]);
      }
      const mass = toks[0].top_logprobs.reduce((s, x) => s + Math.exp(x.logprob), 0); // probabilities: some mass, at most 1
      expect(mass).toBeGreaterThan(0.05);
      expect(mass).toBeLessThanOrEqual(1 + 1e-9);
    });

    it("streams the same reply as server-sent events", async () => {
      const req = { model: MODEL, messages, seed: 8, temperature: 0.7, max_tokens: 10 };
      const whole = await openai.chat.completions.create(req);
      let text = "";
      let finish: string | null = null;
      let usage: unknown = null;
      for await (const chunk of await openai.chat.completions.create({
        ...req,
        stream: true,
        stream_options: { include_usage: true },
      })) {
        text += chunk.choices[0]?.delta.content ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe(whole.choices[0].message.content);
      expect(finish).toBe(whole.choices[0].finish_reason);
      expect(usage).toEqual(whole.usage);
    });

    const story = [
      {
        role: "user" as const,
        content: "Write a long story about a cat who sails around the world.",
      },
    ];

    it("streams as the model writes: pieces arrive while the reply is still being generated", async () => {
      const client = new RemoteClient({ baseUrl: baseURL, timeoutMs: 300_000 });
      const before = ended.length;
      let early = 0; // content pieces received before the model's chat call ended
      let pieces = 0;
      let text = "";
      for await (const d of client.chatStream({
        model: MODEL,
        messages: story,
        seed: 4,
        temperature: 0.8,
        max_tokens: 40,
      })) {
        if (!d.content) continue;
        pieces++;
        text += d.content;
        if (ended.length === before) early++;
      }
      expect(ended.slice(before)).toEqual(["done"]);
      expect(pieces).toBeGreaterThan(5);
      expect(early).toBeGreaterThanOrEqual(3);
      const whole = await client.chat({
        model: MODEL,
        messages: story,
        seed: 4,
        temperature: 0.8,
        max_tokens: 40,
      });
      expect(text).toBe(whole.choices[0].message.content);
    });

    it("n = 2 streams choice 0, then choice 1, each with its index; texts, finishes and log-probs equal the unstreamed reply's", async () => {
      const client = new RemoteClient({ baseUrl: baseURL, timeoutMs: 300_000 });
      const req = {
        model: MODEL,
        messages,
        n: 2,
        seed: 31,
        temperature: 0.9,
        max_tokens: 15,
        logprobs: true,
        top_logprobs: 2,
      };
      const deltas: StreamDelta[] = [];
      for await (const d of client.chatStream(req)) deltas.push(d);
      const order = deltas.map((d) => d.index);
      expect(order).toEqual([...order].sort((a, b) => a - b)); // all of choice 0 before choice 1
      expect(new Set(order)).toEqual(new Set([0, 1]));
      const whole = await client.chat(req);
      for (const c of whole.choices) {
        const mine = deltas.filter((d) => d.index === c.index);
        expect(mine.filter((d) => d.content).length).toBeGreaterThan(1);
        expect(mine.map((d) => d.content).join("")).toBe(c.message.content);
        expect(mine.find((d) => d.finishReason)?.finishReason).toBe(c.finish_reason);
        expect(mine.flatMap((d) => d.logprobs ?? [])).toEqual(c.logprobs!.content);
      }
    });

    it("a client that leaves mid-stream stops the generation; the server answers the next request", async () => {
      const client = new RemoteClient({ baseUrl: baseURL, timeoutMs: 300_000, retries: 0 });
      const ctl = new AbortController();
      const before = ended.length;
      let pieces = 0;
      await expect(
        (async () => {
          for await (const d of client.chatStream(
            { model: MODEL, messages: story, seed: 9, temperature: 1, max_tokens: 3000 },
            ctl.signal,
          ))
            if (d.content && ++pieces === 3) ctl.abort();
        })(),
      ).rejects.toMatchObject({ kind: "cancelled" });
      await expect.poll(() => ended.length, { timeout: 120_000 }).toBe(before + 1);
      expect(ended[before]).toBe("aborted"); // not a 3000-token reply written to nobody
      const next = await openai.chat.completions.create({
        model: MODEL,
        messages,
        seed: 8,
        temperature: 0.7,
        max_tokens: 10,
      });
      expect(next.choices[0].message.content).toMatch(/[a-z]{2,}/i);
      let text = "";
      for await (const d of client.chatStream({
        model: MODEL,
        messages,
        seed: 8,
        temperature: 0.7,
        max_tokens: 10,
      }))
        text += d.content;
      expect(text).toBe(next.choices[0].message.content);
    });

    it("a prompt past the context, and vs_k, are clear 400s", async () => {
      await expect(
        openai.chat.completions.create({ model: MODEL, messages, max_tokens: 5000 }),
      ).rejects.toMatchObject({
        status: 400,
        message: expect.stringMatching(/exceed the context of 4096 tokens/),
      });
      await expect(
        openai.chat.completions.create({ model: MODEL, messages, vs_k: 5 } as never),
      ).rejects.toMatchObject({ status: 400 });
    });

    it("the project's remote client probes it, and RemoteLanguageModel samples it with the replies' log-probs", async () => {
      const client = new RemoteClient({ baseUrl: baseURL, timeoutMs: 300_000 });
      const caps = await client.probe(MODEL);
      expect(caps).toMatchObject({
        chat: true,
        n: true,
        chatLogprobs: true,
        completions: false,
        echoLogprobs: false,
        promptLogprobs: false,
        jsonSchema: true,
      });
      const lm = new RemoteLanguageModel(client, MODEL);
      const gens = await lm.generate(
        { chat: messages },
        { n: 2, seed: 21, temperature: 0.7, maxNewTokens: 8 },
      );
      expect(gens).toHaveLength(2);
      for (const g of gens) {
        expect(g.tokens).toBeGreaterThan(0);
        expect(g.logprob).toBeLessThan(0);
      }
      const again = await lm.generate(
        { chat: messages },
        { n: 2, seed: 21, temperature: 0.7, maxNewTokens: 8 },
      );
      expect(again.map((g) => g.text)).toEqual(gens.map((g) => g.text));
      await expect(lm.score({ chat: messages }, ["yes"])).rejects.toThrow(/chat template/);
    });

    it("remote-chat on the command line streams its reply; a seed makes it reproducible", async () => {
      const args = [
        "remote-chat",
        "--base-url",
        baseURL,
        "--model",
        MODEL,
        "--message",
        "Name one colour.",
        "--seed",
        "2",
        "--temperature",
        "0.9",
        "--max-tokens",
        "8",
      ];
      const [a, b] = [await runCli(args), await runCli(args)];
      expect(a.code).toBe(0);
      expect(a.stdout).toMatch(/[a-z]{2,}/i);
      expect(b.stdout).toBe(a.stdout);
    });
  },
);

describe("serve: a text model's stream that fails", () => {
  // a stand-in text model (no real LM needed) that writes a piece, then fails, or refuses the request
  const failing = (how: "midway" | "refuse"): ServedTextModel => ({
    id: "failing",
    description: "fails",
    runtime: "none",
    contextSize: 16,
    async chat(_m, _s, hooks) {
      if (how === "refuse") throw new TextRequestError("the prompt does not fit");
      hooks?.onText?.(0, "Hello", null);
      throw new Error("the model broke");
    },
    async dispose() {},
  });

  it("an error after the stream began ends it with an error event, reported by the client as a server error; one before is an HTTP error", async () => {
    for (const how of ["midway", "refuse"] as const) {
      const app = buildServer({ textModels: [failing(how)] });
      await app.listen({ port: 0, host: "127.0.0.1" });
      try {
        const client = new RemoteClient({
          baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`,
          retries: 0,
        });
        const got: string[] = [];
        const run = (async () => {
          for await (const d of client.chatStream({
            model: "failing",
            messages: [{ role: "user", content: "Hi" }],
          }))
            got.push(d.content);
        })();
        if (how === "midway") {
          await expect(run).rejects.toMatchObject({
            kind: "server-error",
            message: expect.stringContaining("the model broke"),
          });
          expect(got.join("")).toBe("Hello");
        } else {
          await expect(run).rejects.toMatchObject({
            kind: "bad-request",
            status: 400,
            message: expect.stringContaining("the prompt does not fit"),
          });
          expect(got).toEqual([]);
        }
        await expect(run).rejects.toBeInstanceOf(RemoteError);
      } finally {
        await app.close();
      }
    }
  });
});

describe("serve --gguf on the command line", () => {
  it("a missing GGUF file, or nothing to serve, is a usage error that says so", async () => {
    const missing = await runCli(["serve", "--gguf", "/nonexistent/model.gguf"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no GGUF file at /nonexistent/model.gguf");
    const nothing = await runCli(["serve"]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("give one of --preset ID and --report FILE, or --gguf FILE");
  });
});
