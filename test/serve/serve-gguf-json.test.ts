// `serve --gguf` constrains a real small LM to a JSON Schema: SmolLM2-135M-Instruct (GGUF) on
// llama.cpp, asked through the official `openai` client for Verbalized Sampling with the VS schema
// as response_format, returns JSON that parses and fits the schema on every one of 20 calls at
// temperature 1 (unconstrained, this model rarely writes the format at all); streamed, the same text arrives without the
// grammar's closing newlines; a keyword the grammar cannot enforce is a 400 that names it. Needs
// the real LM (scripts/real-lm.sh); skipped without it, saying so, unless
// COLLAPSE_LAB_REQUIRE_REAL_LM=1.
import OpenAI from "openai";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { parseVs } from "../../src/lm/vs-parse";
import { vsInstruction } from "../../src/lm/vs-prompt";
import {
  vsConstrainedMaxTokens,
  vsJsonSchema,
  vsReplySchema,
  VS_CHARS_PER_TOKEN,
} from "../../src/lm/vs-schema";
import { buildServer } from "../../src/serve/server";
import {
  loadGgufModel,
  REAL_LM_DIR,
  REAL_LM_GGUF,
  type ServedTextModel,
} from "../../src/serve/gguf";

const HAVE_REAL_LM =
  existsSync(REAL_LM_GGUF) &&
  existsSync(join(REAL_LM_DIR, "node_modules/node-llama-cpp/package.json"));
if (!HAVE_REAL_LM) {
  if (process.env.COLLAPSE_LAB_REQUIRE_REAL_LM === "1")
    throw new Error(
      `the real LM is not installed in ${REAL_LM_DIR} (COLLAPSE_LAB_REQUIRE_REAL_LM=1): run bash scripts/real-lm.sh`,
    );
  console.warn(
    `the real LM is not installed in ${REAL_LM_DIR}: its JSON-schema tests are skipped (bash scripts/real-lm.sh installs it)`,
  );
}

const MODEL = "SmolLM2-135M-Instruct.Q4_1";
const K = 2; // candidates per call
const REPLY_TOKENS = 5; // a candidate's text: at most 4 characters per token of it
const CALLS = 20;

// a short persuadee persona and the VS instruction (a short prompt keeps the calls quick)
const messages = [
  {
    role: "system" as const,
    content: `You are asked to donate some of your $2 task payment to a children's charity.\n${vsInstruction({ k: K }).text}`,
  },
  { role: "user" as const, content: "Would you like to donate some of your payment?" },
];

describe.skipIf(!HAVE_REAL_LM)("serve --gguf with response_format json_schema", () => {
  let model: ServedTextModel;
  let app: FastifyInstance;
  let openai: OpenAI;

  beforeAll(async () => {
    model = await loadGgufModel(REAL_LM_GGUF);
    app = buildServer({ textModels: [model] });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const baseURL = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
    openai = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 300_000 });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await model?.dispose();
  });

  const request = (seed: number) => ({
    model: MODEL,
    messages,
    seed,
    temperature: 1,
    max_tokens: vsConstrainedMaxTokens(K, REPLY_TOKENS),
    response_format: {
      type: "json_schema" as const,
      json_schema: vsJsonSchema(K, REPLY_TOKENS),
    },
  });

  it(`returns VS JSON that parses and fits the schema on every one of ${CALLS} calls`, async () => {
    const schema = vsReplySchema(K, REPLY_TOKENS * VS_CHARS_PER_TOKEN);
    const texts: string[] = [];
    for (let seed = 0; seed < CALLS; seed++) {
      const r = await openai.chat.completions.create(request(seed));
      const text = r.choices[0].message.content!;
      texts.push(text);
      expect(r.choices[0].finish_reason, text).toBe("stop");
      expect(schema.safeParse(JSON.parse(text)).success, text).toBe(true);
      const read = parseVs(text, { k: K });
      expect(read.format, text).toBe("json");
      expect(read.candidates.length).toBeGreaterThan(0); // fewer than K where two texts repeat (merged)
      expect(text).toBe(text.trimEnd()); // the grammar's closing newlines are not part of the text
    }
    expect(new Set(texts).size).toBeGreaterThan(CALLS / 2); // sampled, not one reply repeated
  }, 900_000);

  it("streamed, the same text arrives", async () => {
    const whole = await openai.chat.completions.create(request(3));
    const stream = await openai.chat.completions.create({ ...request(3), stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toBe(whole.choices[0].message.content);
  }, 300_000);

  it("a keyword the grammar cannot enforce is a 400 naming it and where it is", async () => {
    const format = vsJsonSchema(K, REPLY_TOKENS);
    const items = (format.schema.properties as Record<string, Record<string, unknown>>).responses
      .items as { properties: Record<string, object> };
    items.properties.probability = { type: "number", minimum: 0, maximum: 1 };
    await expect(
      openai.chat.completions.create({
        ...request(0),
        response_format: { type: "json_schema", json_schema: format },
      }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(
        /cannot enforce "minimum" \(at \/properties\/responses\/items\/properties\/probability\)/,
      ),
    });
  });
});
