// A request's JSON Schema translated into node-llama-cpp's grammar schema for `serve --gguf`: the
// VS schema, a pydantic-style schema (titles, $defs, nullable fields) and draft 7's `definitions`
// translate to exactly the grammar's subset; keywords the grammar cannot enforce are refused with
// the keyword and where it is.
import { describe, expect, it } from "vitest";
import { vsJsonSchema } from "../../src/lm/vs-schema";
import { grammarSchema, UnsupportedSchemaError } from "../../src/serve/json-grammar";

describe("a JSON Schema as node-llama-cpp's grammar schema", () => {
  it("the VS schema keeps its structure and loses its annotations", () => {
    expect(grammarSchema(vsJsonSchema(2, 8).schema)).toEqual({
      type: "object",
      properties: {
        responses: {
          type: "array",
          minItems: 2,
          maxItems: 2,
          items: {
            type: "object",
            properties: {
              text: { type: "string", minLength: 1, maxLength: 32 },
              probability: { type: "number" },
            },
          },
        },
      },
    });
  });

  it("pydantic's shape (titles, $defs, Optional as anyOf with null, enums) and draft 7's definitions", () => {
    const pydantic = {
      $defs: {
        Act: { enum: ["agree", "refuse"], title: "Act", type: "string" },
      },
      properties: {
        act: { $ref: "#/$defs/Act" },
        amount: { anyOf: [{ type: "number" }, { type: "null" }], default: null, title: "Amount" },
        tags: { items: { type: "string" }, title: "Tags", type: "array" },
      },
      required: ["act", "amount", "tags"],
      title: "Reply",
      type: "object",
    };
    expect(grammarSchema(pydantic)).toEqual({
      type: "object",
      properties: {
        act: { $ref: "#/$defs/Act" },
        amount: { oneOf: [{ type: "number" }, { type: "null" }] },
        tags: { type: "array", items: { type: "string" } },
      },
      $defs: { Act: { enum: ["agree", "refuse"] } },
    });
    expect(
      grammarSchema({
        definitions: { N: { type: "integer" } },
        type: "object",
        properties: { n: { $ref: "#/definitions/N" } },
      }),
    ).toEqual({
      type: "object",
      properties: { n: { $ref: "#/$defs/N" } },
      $defs: { N: { type: "integer" } },
    });
  });

  it("type lists, open objects and the empty schema", () => {
    expect(grammarSchema({ type: ["string", "null"] })).toEqual({ type: ["string", "null"] });
    expect(
      grammarSchema({ type: ["object", "null"], properties: { a: { type: "boolean" } } }),
    ).toEqual({
      oneOf: [{ type: "object", properties: { a: { type: "boolean" } } }, { type: "null" }],
    });
    expect(grammarSchema({ type: "object", additionalProperties: {} })).toEqual({
      type: "object",
      properties: {},
      additionalProperties: true,
    });
    expect(grammarSchema({})).toEqual({
      oneOf: [
        { type: ["string", "number", "boolean", "null"] },
        { type: "object", additionalProperties: true },
        { type: "array" },
      ],
    });
    // formats the grammar writes are kept; others are annotations
    expect(grammarSchema({ type: "string", format: "date" })).toEqual({
      type: "string",
      format: "date",
    });
    expect(grammarSchema({ type: "string", format: "email", maxLength: 9 })).toEqual({
      type: "string",
      maxLength: 9,
    });
  });

  it("refuses what the grammar cannot enforce, naming the keyword and where it is", () => {
    const refused = (schema: unknown, message: RegExp) => {
      expect(() => grammarSchema(schema)).toThrow(UnsupportedSchemaError);
      expect(() => grammarSchema(schema)).toThrow(message);
    };
    refused(
      { type: "object", properties: { p: { type: "number", minimum: 0, maximum: 1 } } },
      /cannot enforce "minimum" \(at \/properties\/p\)/,
    );
    refused({ type: "string", pattern: "^a" }, /"pattern" \(at \/\)/);
    refused({ allOf: [{ type: "string" }] }, /"allOf"/);
    refused({ type: "array", items: { type: "string" }, uniqueItems: true }, /"uniqueItems"/);
    refused(
      { type: "object", properties: { a: { type: "string" } }, required: ["a", "b"] },
      /"required" names "b", which "properties" does not define/,
    );
    refused({ type: "object", anyOf: [{ type: "object" }] }, /cannot combine anyOf with "type"/);
    refused({ $ref: "https://example.com/s.json" }, /follows \$ref only into \$defs/);
    refused({ $ref: "#/$defs/A", maxLength: 3 }, /cannot combine \$ref with "maxLength"/);
    refused({ type: "tuple" }, /unknown type "tuple"/);
    refused([1, 2], /must be a JSON object/);
    refused(false, /must be a JSON object/);
    refused({ enum: [{ a: 1 }] }, /only strings, numbers, booleans and null/);
  });
});
