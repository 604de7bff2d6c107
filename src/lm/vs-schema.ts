// The Verbalized Sampling reply as a schema: the JSON that vs-prompt.ts asks for,
// {"responses":[{"text","probability"}]} with exactly k candidates, as a zod schema and as the JSON
// Schema a server that constrains its output is sent (OpenAI's `response_format` of type
// `json_schema`: vLLM, SGLang, llama.cpp's server, OpenAI, `collapse-lab serve --gguf`). A
// constrained reply always parses; vs-parse.ts still reads it (and every unconstrained one), so
// the two paths give candidates the same way.
import { z } from "zod";

/** The name a json_schema response format carries. */
export const VS_SCHEMA_NAME = "verbalized_sampling";

/**
 * Characters a candidate's text may have, per new token the caller allows a reply (about four
 * characters a token in English), so a constrained reply is as long as an unconstrained one may be.
 */
export const VS_CHARS_PER_TOKEN = 4;

/**
 * Tokens of JSON around one candidate's text at most, one token per character: its keys and quotes,
 * whitespace, and a probability (a grammar allows up to 16 digits before and after the point and in
 * an exponent).
 */
const JSON_TOKENS_PER_CANDIDATE = 72;
/** Tokens of JSON around the list at most: its key and brackets, and a grammar's closing newlines. */
const JSON_TOKENS_AROUND = 24;

/** The reply's zod schema: exactly `k` candidates, each a non-empty text of at most `maxChars` characters. */
export function vsReplySchema(k: number, maxChars: number) {
  if (!(Number.isInteger(k) && k >= 1))
    throw new Error(`vsReplySchema: k must be a positive integer, got ${k}`);
  if (!(Number.isInteger(maxChars) && maxChars >= 1))
    throw new Error(`vsReplySchema: maxChars must be a positive integer, got ${maxChars}`);
  return z.strictObject({
    responses: z
      .array(
        z.strictObject({
          text: z.string().min(1).max(maxChars).describe("the reply only"),
          probability: z
            .number()
            .describe("the empirical probability of this response, from 0 to 1"),
        }),
      )
      .length(k),
  });
}

/** What a `response_format` of type json_schema carries (OpenAI's shape). */
export interface JsonSchemaFormat {
  name: string;
  schema: Record<string, unknown>;
  strict?: boolean;
}

/**
 * The response format for a VS call of `k` candidates whose texts may be as long as `maxNewTokens`
 * tokens of a Direct reply. The draft 2020-12 JSON Schema from zod, without its `$schema` line
 * (an annotation some servers refuse in a response format).
 */
export function vsJsonSchema(k: number, maxNewTokens: number): JsonSchemaFormat {
  const { $schema: _, ...schema } = z.toJSONSchema(
    vsReplySchema(k, maxNewTokens * VS_CHARS_PER_TOKEN),
  ) as Record<string, unknown>;
  return { name: VS_SCHEMA_NAME, schema, strict: true };
}

/**
 * max_tokens for a constrained VS call: room for the longest reply the schema allows at one token
 * per character (text in single-byte characters), so a grammar's reply is never cut off before its
 * closing bracket. A grammar ends the reply after k candidates, so the room is rarely used.
 */
export function vsConstrainedMaxTokens(k: number, maxNewTokens: number): number {
  return k * (maxNewTokens * VS_CHARS_PER_TOKEN + JSON_TOKENS_PER_CANDIDATE) + JSON_TOKENS_AROUND;
}
