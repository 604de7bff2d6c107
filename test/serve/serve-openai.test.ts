// `collapse-lab serve` over real HTTP on 127.0.0.1, talked to by the official `openai` npm client
// (models list, chat, n, seed reproducibility, logprobs, the VS format, streaming, errors, CORS)
// and by the project's own remote client (probe). The served world is persuasion-smoke's seed 0,
// every network loaded from the store of pretrained models.
import OpenAI from "openai";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { createBackend } from "../../src/engine/backends";
import { nodeStore } from "../../src/experiment/node-store";
import { parseReport } from "../../src/experiment/report-schema";
import { loadServedWorld, type ServedWorld } from "../../src/serve/models";
import { buildServer } from "../../src/serve/server";
import {
  actText,
  allowedActs,
  cardMessage,
  dialogueMessages,
  matchAct,
} from "../../src/simulators/act-text";
import { RemoteClient } from "../../src/remote/client";
import { parseVs } from "../../src/lm/vs-parse";
import type { Dialogue } from "../../src/benchmarks/types";

const KEY = "serve-test-key-0123456789";
let world: ServedWorld;
let app: FastifyInstance;
let baseURL: string;
let openai: OpenAI;
const notes: string[] = [];

beforeAll(async () => {
  const { backend } = await createBackend("wasm");
  const { config } = parseReport(readFileSync("public/recorded/persuasion-smoke.json", "utf8")); // the recording's: its policies were trained with it
  world = await loadServedWorld({
    config,
    label: "persuasion-smoke",
    backend,
    store: nodeStore(),
    policies: { dir: "public/recorded/persuasion-smoke.policies" },
    onNote: (m) => notes.push(m),
  });
  app = buildServer({ world, apiKey: KEY, corsOrigins: ["http://127.0.0.1:5178"] });
  await app.listen({ port: 0, host: "127.0.0.1" });
  baseURL = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
  openai = new OpenAI({ baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(async () => {
  await app?.close();
  world?.dispose();
});

const dialogue = (names: string[]): Dialogue => {
  const { bench } = world;
  const acts = names.map((n) => bench.acts.findIndex((a) => a.name === n));
  return { card: world.defaultCard, acts };
};
const textsOf = (d: Dialogue) => allowedActs(world.bench, d).map((a) => actText(world.bench, a));

describe("collapse-lab serve with the openai client", () => {
  it("loads every model from the store and lists the served models", async () => {
    expect(notes).toContainEqual(expect.stringMatching(/^(\d+) of \1 models from the store$/));
    expect(notes).toContain(
      "5 trained policies of seed 0 from public/recorded/persuasion-smoke.policies",
    );
    const ids = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    for (const id of [
      "reference",
      "aligned",
      "vs",
      "bayes",
      "policy/base",
      "policy/single",
      "policy/population",
      "aligned:vs",
    ])
      expect(ids).toContain(id);
    expect(ids.filter((i) => i.startsWith("panel/") && !i.endsWith(":vs"))).toHaveLength(5);
    expect(ids.filter((i) => i.startsWith("human/") && !i.endsWith(":vs"))).toHaveLength(
      world.bench.humans.types.length,
    );
    expect((await openai.models.retrieve("panel/family-a")).id).toBe("panel/family-a");
  });

  it("answers a chat turn with one allowed act's text; n gives n choices", async () => {
    const d = dialogue(["greeting"]);
    const r = await openai.chat.completions.create({
      model: "aligned",
      messages: dialogueMessages(world.bench, d, "user"),
      n: 7,
      seed: 1,
    });
    expect(r.choices).toHaveLength(7);
    for (const c of r.choices) expect(textsOf(d)).toContain(c.message.content);
    // the policy plays the other side: no card needed, and its reply is an agent act
    const p = await openai.chat.completions.create({
      model: "policy/base",
      messages: dialogueMessages(world.bench, { card: d.card, acts: [] }, "agent"),
      seed: 3,
    });
    expect(textsOf({ card: d.card, acts: [] })).toContain(p.choices[0].message.content);
  });

  it("the same seed gives the same replies; another seed other replies", async () => {
    const messages = dialogueMessages(world.bench, dialogue(["greeting"]), "user");
    const ask = (seed: number) =>
      openai.chat.completions
        .create({ model: "reference", messages, n: 24, seed })
        .then((r) => r.choices.map((c) => c.message.content));
    const [a, b, c] = [await ask(42), await ask(42), await ask(43)];
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it("logprobs are the served simulator's own distribution over the allowed acts", async () => {
    const d = dialogue(["greeting", "agree", "emotion"]);
    const r = await openai.chat.completions.create({
      model: "panel/family-b",
      messages: dialogueMessages(world.bench, d, "user"),
      logprobs: true,
      top_logprobs: 8,
      seed: 5,
    });
    const lp = r.choices[0].logprobs!.content![0];
    expect(lp.token).toBe(r.choices[0].message.content);
    const p = await world.models.find((m) => m.id === "panel/family-b")!.distribution([d]);
    const total = lp.top_logprobs.reduce((s, t) => s + Math.exp(t.logprob), 0);
    expect(total).toBeCloseTo(1, 6); // float32 log-probs of the engine
    for (const t of lp.top_logprobs) {
      const act = world.bench.acts.findIndex((a) => a.templates[0] === t.token);
      expect(Math.exp(t.logprob)).toBeCloseTo(p[act], 12);
    }
  });

  it("a model id ending in :vs answers in the Verbalized Sampling JSON format", async () => {
    const d = dialogue(["greeting"]);
    const r = await openai.chat.completions.create({
      model: "reference:vs",
      messages: dialogueMessages(world.bench, d, "user"),
      seed: 9,
      vs_k: 4,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const raw = JSON.parse(r.choices[0].message.content!) as {
      responses: { text: string; probability: number }[];
    };
    expect(raw.responses).toHaveLength(4);
    const parsed = parseVs(r.choices[0].message.content!, { k: 4 });
    expect(parsed.format).toBe("json");
    // the parser merges repeated texts (an act listed more often than it has paraphrases)
    for (const c of parsed.candidates)
      expect(matchAct(world.bench, c.text, allowedActs(world.bench, d))).not.toBeNull();
  });

  it("streams the same text as the unstreamed reply with the same seed", async () => {
    const messages = dialogueMessages(
      world.bench,
      dialogue(["greeting", "neutral", "ask"]),
      "user",
    );
    const whole = await openai.chat.completions.create({
      model: "human/" + world.bench.humans.types[0].name,
      messages,
      seed: 11,
      n: 2,
    });
    const stream = await openai.chat.completions.create({
      model: "human/" + world.bench.humans.types[0].name,
      messages,
      seed: 11,
      n: 2,
      stream: true,
      stream_options: { include_usage: true },
    });
    const texts = ["", ""];
    let pieces = 0;
    let usage = null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        texts[c.index] += c.delta.content ?? "";
        if (c.delta.content) pieces++;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(texts).toEqual(whole.choices.map((c) => c.message.content));
    expect(pieces).toBeGreaterThan(2); // word by word
    expect(usage).not.toBeNull();
  });

  it("bad requests are OpenAI-style errors the client raises as its typed errors", async () => {
    const messages = dialogueMessages(world.bench, dialogue(["greeting"]), "user");
    await expect(
      openai.chat.completions.create({ model: "no-such-model", messages }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      openai.chat.completions.create({
        model: "aligned",
        messages: [
          cardMessage(world.bench, world.defaultCard),
          { role: "user", content: "What a lovely day" },
        ],
      }),
    ).rejects.toThrow(
      /not an act the Persuader can say here; say one of: "Hi! How are you today\?"/,
    );
    await expect(
      openai.chat.completions.create({ model: "aligned", messages: messages.slice(1) }),
    ).rejects.toThrow(/needs the persona card/);
    await expect(
      openai.chat.completions.create({ model: "aligned", messages, n: 0 }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(
      openai.chat.completions.create({ model: "aligned:vs", messages, logprobs: true }),
    ).rejects.toThrow(/not offered with the Verbalized Sampling format/);
    const stranger = new OpenAI({ baseURL, apiKey: "wrong-key", maxRetries: 0 });
    await expect(stranger.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it("CORS answers the configured origin only", async () => {
    const pre = (origin: string) =>
      fetch(`${baseURL}/chat/completions`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization,content-type",
        },
      });
    expect((await pre("http://127.0.0.1:5178")).headers.get("access-control-allow-origin")).toBe(
      "http://127.0.0.1:5178",
    );
    expect(
      (await pre("http://evil.example")).headers.get("access-control-allow-origin"),
    ).toBeNull();
  });

  it("the project's remote client talks to it: n, seeds, streaming", async () => {
    const client = new RemoteClient({ baseUrl: baseURL, apiKey: KEY, retries: 0 });
    const req = {
      model: "vs",
      messages: dialogueMessages(world.bench, dialogue(["greeting", "agree", "ask"]), "user"),
      n: 5,
      seed: 21,
    };
    const [a, b] = [await client.chat(req), await client.chat(req)];
    expect(a.choices.map((c) => c.message.content)).toEqual(
      b.choices.map((c) => c.message.content),
    );
    expect(a.choices).toHaveLength(5);
    const streamed = ["", "", "", "", ""];
    for await (const d of client.chatStream(req)) streamed[d.index] += d.content;
    expect(streamed).toEqual(a.choices.map((c) => c.message.content));
  });

  it("the project's remote client probes it: chat, log-probs and n, no /completions", async () => {
    const caps = await new RemoteClient({ baseUrl: baseURL, apiKey: KEY, retries: 0 }).probe(
      "aligned",
      { messages: dialogueMessages(world.bench, dialogue(["greeting"]), "user") },
    );
    expect(caps).toMatchObject({
      chat: true,
      chatLogprobs: true,
      n: true,
      completions: false,
      echoLogprobs: false,
    });
  });
});
