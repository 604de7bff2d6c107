// response_format over real HTTP on 127.0.0.1: `serve` hands a text model the request's JSON
// Schema (or json_object) and refuses it for the act-level models; the remote client's probe marks
// a server that honours it (its reply is the test schema's JSON), one that ignores it (a reply in
// words) and one that refuses it (a 400); RemoteLanguageModel sends the VS schema it is given.
// The text models here are fakes that write JSON only when asked to; the real one (a grammar in
// llama.cpp) is in serve-gguf-json.test.ts.
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { benchmarkFor } from "../../src/benchmarks/registry";
import type { Dialogue } from "../../src/benchmarks/types";
import { presetConfig } from "../../src/experiment/presets";
import { vsJsonSchema } from "../../src/lm/vs-schema";
import { RemoteClient } from "../../src/remote/client";
import { RemoteLanguageModel } from "../../src/remote/remote-lm";
import type { ServedTextModel, TextSampling } from "../../src/serve/gguf";
import type { ServedWorld } from "../../src/serve/models";
import { buildServer } from "../../src/serve/server";

const config = presetConfig("persuasion-smoke");
const bench = benchmarkFor(config);
const V = bench.acts.length;
const world: ServedWorld = {
  bench,
  names: { agent: "Persuader", user: "Persuadee" },
  models: [
    {
      id: "human/skeptic",
      description: "skeptic",
      side: "user",
      distribution: async (ds: Dialogue[]) => {
        const out = new Float64Array(ds.length * V);
        ds.forEach((d, b) => out.set(bench.humans.replyProbs(0, d), b * V));
        return out;
      },
    },
  ],
  defaultCard: bench.humans.cardDistribution()[0].card,
  vs: config.vs,
  source: "test",
  dispose: () => {},
};

/** A text model that writes the first enum value of each property when asked for JSON (or ignores the format). */
function fakeText(id: string, honours: boolean, seen: TextSampling[]): ServedTextModel {
  const write = (s: TextSampling) => {
    if (!honours || !s.format) return "Hello there, friend.";
    if (s.format.type === "json_object") return "{}";
    const props = s.format.schema.properties as Record<string, { enum?: string[] }>;
    return JSON.stringify(
      Object.fromEntries(Object.entries(props).map(([k, v]) => [k, v.enum?.[0] ?? "x"])),
    );
  };
  return {
    id,
    description: id,
    runtime: "test",
    contextSize: 512,
    async chat(_messages, s) {
      seen.push(s);
      const text = write(s);
      return {
        promptTokens: 3,
        choices: Array.from({ length: s.n }, () => ({
          text,
          finish: "stop" as const,
          tokens: 4,
          logprobs: null,
        })),
      };
    },
    async dispose() {},
  };
}

const seen: TextSampling[] = [];
let app: FastifyInstance;
let baseUrl: string;
const post = (body: object) =>
  fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const hello = [{ role: "user", content: "Hello" }];

beforeAll(async () => {
  app = buildServer({
    world,
    textModels: [fakeText("constrains", true, seen), fakeText("ignores", false, [])],
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
});
afterAll(() => app?.close());

describe("response_format in serve", () => {
  it("a text model gets the JSON Schema or json_object; text and no format give free text", async () => {
    seen.length = 0;
    const schema = vsJsonSchema(2, 8);
    const r = await post({
      model: "constrains",
      messages: hello,
      response_format: { type: "json_schema", json_schema: schema },
    });
    expect(r.status).toBe(200);
    await post({ model: "constrains", messages: hello, response_format: { type: "json_object" } });
    await post({ model: "constrains", messages: hello, response_format: { type: "text" } });
    await post({ model: "constrains", messages: hello });
    expect(seen.map((s) => s.format)).toEqual([
      { type: "json_schema", schema: schema.schema },
      { type: "json_object" },
      null,
      null,
    ]);
  });

  it("refuses it for act-level models, and refuses formats it does not know, as 400s naming the field", async () => {
    const messages = [
      { role: "system", content: "Persona card: agreeable; caring; rational" },
      { role: "user", content: "Hi! How are you today?" },
    ];
    const act = await post({
      model: "human/skeptic:vs",
      messages,
      response_format: { type: "json_schema", json_schema: vsJsonSchema(2, 8) },
    });
    expect(act.status).toBe(400);
    expect(await act.json()).toMatchObject({
      error: {
        param: "response_format",
        message: expect.stringMatching(
          /json_schema is for text models; human\/skeptic:vs answers act texts \(in the Verbalized Sampling JSON format already\)/,
        ),
      },
    });
    expect(
      (await post({ model: "human/skeptic", messages, response_format: { type: "text" } })).status,
    ).toBe(200);
    const xml = await post({
      model: "constrains",
      messages: hello,
      response_format: { type: "xml" },
    });
    expect(xml.status).toBe(400);
    expect(((await xml.json()) as { error: { message: string } }).error.message).toBe(
      "response_format.type: type must be one of text, json_object, json_schema",
    );
    const noSchema = await post({
      model: "constrains",
      messages: hello,
      response_format: { type: "json_schema", json_schema: { name: "x" } },
    });
    expect(noSchema.status).toBe(400);
  });
});

describe("the probe's test of response_format json_schema", () => {
  const client = () => new RemoteClient({ baseUrl, retries: 0 });

  it("a server that returns the schema's JSON honours it; RemoteLanguageModel sends the VS schema it is given", async () => {
    const caps = await client().probe("constrains");
    expect(caps.jsonSchema).toBe(true);
    seen.length = 0;
    const lm = new RemoteLanguageModel(client(), "constrains", caps.jsonSchema);
    expect(lm.constrainsJson).toBe(true);
    const schema = vsJsonSchema(3, 10);
    await lm.generate({ chat: [{ role: "user", content: "Hi" }] }, { jsonSchema: schema });
    await lm.generate({ chat: [{ role: "user", content: "Hi" }] }, {});
    // each call is sent twice: first with log-probs, which this model has none of
    const vs = { type: "json_schema", schema: schema.schema };
    expect(seen.map((s) => s.format)).toEqual([vs, vs, null, null]);
  });

  it("one that answers in words, and one that refuses the format, do not; the notes say why", async () => {
    const ignores = await client().probe("ignores");
    expect(ignores.jsonSchema).toBe(false);
    expect(ignores.notes.join("\n")).toMatch(/json_schema is not honoured/);
    const refuses = await client().probe("human/skeptic");
    expect(refuses).toMatchObject({ chat: true, chatLogprobs: true, jsonSchema: false });
    expect(refuses.notes.join("\n")).toMatch(
      /response_format json_schema: .*refused the request \(400/,
    );
  });
});
