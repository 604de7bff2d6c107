// The VS reply's schema: zod's JSON Schema of exactly k candidates, the response format a
// constraining server is sent, the room a constrained call gets; a reply the schema allows is
// valid under the zod schema and reads as clean JSON in the VS parser.
import { describe, expect, it } from "vitest";
import { parseVs } from "../../src/lm/vs-parse";
import {
  VS_SCHEMA_NAME,
  vsConstrainedMaxTokens,
  vsJsonSchema,
  vsReplySchema,
} from "../../src/lm/vs-schema";

describe("the VS reply's schema", () => {
  it("is zod's JSON Schema of k candidates with texts of at most 4 characters per token", () => {
    const f = vsJsonSchema(3, 10);
    expect(f.name).toBe(VS_SCHEMA_NAME);
    expect(f.strict).toBe(true);
    expect(f.schema).toEqual({
      type: "object",
      properties: {
        responses: {
          type: "array",
          minItems: 3,
          maxItems: 3,
          items: {
            type: "object",
            properties: {
              text: { type: "string", minLength: 1, maxLength: 40, description: "the reply only" },
              probability: {
                type: "number",
                description: "the empirical probability of this response, from 0 to 1",
              },
            },
            required: ["text", "probability"],
            additionalProperties: false,
          },
        },
      },
      required: ["responses"],
      additionalProperties: false,
    });
    expect(f.schema).not.toHaveProperty("$schema");
    expect(() => vsJsonSchema(0, 10)).toThrow(/k must be a positive integer/);
    // room for the longest reply the schema allows, one token per character
    expect(vsConstrainedMaxTokens(3, 10)).toBe(3 * (40 + 72) + 24);
  });

  it("a reply it allows parses as clean JSON; one it forbids does not pass zod", () => {
    const reply = {
      responses: [
        { text: "Sure, $1.", probability: 0.5 },
        { text: "No thanks.", probability: 0.3 },
      ],
    };
    expect(vsReplySchema(2, 40).parse(reply)).toEqual(reply);
    const read = parseVs(JSON.stringify(reply), { k: 2 });
    expect(read.format).toBe("json");
    expect(read.warnings).toEqual(["probabilities sum to 0.800; normalised to 1"]);
    expect(read.candidates.map((c) => c.text)).toEqual(["Sure, $1.", "No thanks."]);
    expect(vsReplySchema(2, 40).safeParse({ responses: reply.responses.slice(0, 1) }).success).toBe(
      false,
    );
    expect(
      vsReplySchema(2, 5).safeParse(reply).success, // "No thanks." is 10 characters
    ).toBe(false);
  });
});
