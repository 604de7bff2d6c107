// A request's JSON Schema (OpenAI's `response_format` of type `json_schema`) as the schema that
// node-llama-cpp turns into a grammar (its GbnfJsonSchema), for `serve --gguf`. That grammar
// enforces a subset of JSON Schema, with two defaults of its own: every listed property is written
// and no other is, unless `additionalProperties` says so. Both only narrow what the model may
// write to replies that are valid under the request's schema. Keywords the grammar cannot enforce
// (number bounds, patterns, allOf, …) are refused with the keyword and where it is, rather than
// dropped, so a constrained reply is always valid under the schema it was asked for. Annotations
// (title, description, …) are dropped; unknown keywords are ignored, as JSON Schema says.

/** A schema the grammar cannot enforce, with where and why. */
export class UnsupportedSchemaError extends Error {}

type Schema = Record<string, unknown>;

const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$anchor",
  "$comment",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentMediaType",
  "contentEncoding",
]);
// Keywords with a meaning the grammar cannot enforce.
const UNENFORCEABLE = new Set([
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "pattern",
  "uniqueItems",
  "contains",
  "minContains",
  "maxContains",
  "patternProperties",
  "propertyNames",
  "dependentRequired",
  "dependentSchemas",
  "dependencies",
  "unevaluatedItems",
  "unevaluatedProperties",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$dynamicRef",
  "$recursiveRef",
]);
const FORMATS = new Set(["date-time", "time", "date"]); // the string formats the grammar writes
const BASIC = new Set(["string", "number", "integer", "boolean", "null"]);
const isSchema = (v: unknown): v is Schema =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** What the grammar supports, for error messages. */
export const GRAMMAR_KEYWORDS =
  "type, enum, const, properties, required, additionalProperties, min/maxProperties, items, prefixItems, min/maxItems, min/maxLength, anyOf/oneOf, $ref into $defs, and the formats date-time, date and time";

/**
 * The grammar's schema for a JSON Schema (draft 2020-12, or draft 7's `definitions`).
 * @throws UnsupportedSchemaError naming the first keyword it cannot enforce and its place
 */
export function grammarSchema(schema: unknown): Schema {
  if (!isSchema(schema))
    throw new UnsupportedSchemaError("the schema must be a JSON object (a JSON Schema)");
  const defs = isSchema(schema.$defs)
    ? schema.$defs
    : isSchema(schema.definitions)
      ? schema.definitions
      : undefined;
  const out = convert(schema, "");
  if (!defs) return out;
  const $defs = Object.fromEntries(
    Object.entries(defs).map(([k, v]) => [k, convert(v, `/$defs/${k}`)]),
  );
  // node-llama-cpp reads $defs on the schema that holds the $ref, so the root's are handed down
  return { ...out, $defs };
}

function convert(s: unknown, at: string): Schema {
  const where = at || "/";
  if (s === true) return anyJson();
  if (s === false) throw new UnsupportedSchemaError(`the schema at ${where} is false (no value)`);
  if (!isSchema(s)) throw new UnsupportedSchemaError(`the schema at ${where} is not an object`);
  for (const key of Object.keys(s))
    if (UNENFORCEABLE.has(key))
      throw new UnsupportedSchemaError(
        `the grammar cannot enforce "${key}" (at ${where}); it enforces ${GRAMMAR_KEYWORDS}`,
      );
  const own = Object.fromEntries(
    Object.entries(s).filter(([k]) => !ANNOTATIONS.has(k) && k !== "$defs" && k !== "definitions"),
  );

  if (typeof own.$ref === "string") {
    const m = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(own.$ref);
    if (!m)
      throw new UnsupportedSchemaError(
        `the grammar follows $ref only into $defs ("#/$defs/NAME"), got ${JSON.stringify(own.$ref)} (at ${where})`,
      );
    const others = Object.keys(own).filter((k) => k !== "$ref");
    if (others.length)
      throw new UnsupportedSchemaError(
        `the grammar cannot combine $ref with ${others.map((k) => `"${k}"`).join(", ")} (at ${where})`,
      );
    return { $ref: `#/$defs/${m[1]}` };
  }
  const union = own.anyOf ?? own.oneOf;
  if (union !== undefined) {
    if (!Array.isArray(union) || union.length === 0)
      throw new UnsupportedSchemaError(`anyOf/oneOf at ${where} must be a non-empty list`);
    const key = own.anyOf !== undefined ? "anyOf" : "oneOf";
    const others = Object.keys(own).filter((k) => k !== key);
    if (others.length)
      throw new UnsupportedSchemaError(
        `the grammar cannot combine ${key} with ${others.map((k) => `"${k}"`).join(", ")} (at ${where}); move them into each alternative`,
      );
    return { oneOf: union.map((u, i) => convert(u, `${at}/${key}/${i}`)) };
  }
  if ("const" in own) return { const: literal(own.const, `${where}/const`) };
  if (Array.isArray(own.enum))
    return { enum: own.enum.map((v, i) => literal(v, `${at}/enum/${i}`)) };

  const type = own.type;
  if (Array.isArray(type)) {
    if (type.length === 0) throw new UnsupportedSchemaError(`"type" at ${where} is an empty list`);
    if (type.every((t) => BASIC.has(t as string)) && !hasTypeKeywords(own)) return { type };
    return { oneOf: type.map((t) => convert({ ...own, type: t }, at)) };
  }
  if (type === undefined) return hasTypeKeywords(own) ? inferred(own, at) : anyJson();
  switch (type) {
    case "object":
      return object(own, at);
    case "array":
      return array(own, at);
    case "string":
      return string(own);
    case "number":
    case "integer":
    case "boolean":
    case "null":
      return { type };
    default:
      throw new UnsupportedSchemaError(`unknown type ${JSON.stringify(type)} (at ${where})`);
  }
}

const OBJECT_KEYS = ["properties", "additionalProperties", "minProperties", "maxProperties"];
const ARRAY_KEYS = ["items", "prefixItems", "minItems", "maxItems"];
const STRING_KEYS = ["minLength", "maxLength", "format"];
const hasTypeKeywords = (s: Schema) =>
  [...OBJECT_KEYS, ...ARRAY_KEYS, ...STRING_KEYS].some((k) => k in s);

/** A schema without `type` whose keywords name one. */
function inferred(s: Schema, at: string): Schema {
  if (OBJECT_KEYS.some((k) => k in s)) return object(s, at);
  if (ARRAY_KEYS.some((k) => k in s)) return array(s, at);
  return string(s);
}

function object(s: Schema, at: string): Schema {
  const props = isSchema(s.properties) ? s.properties : {};
  const out: Schema = {
    type: "object",
    properties: Object.fromEntries(
      Object.entries(props).map(([k, v]) => [k, convert(v, `${at}/properties/${k}`)]),
    ),
  };
  const required = Array.isArray(s.required) ? s.required : [];
  const missing = required.filter((r) => typeof r !== "string" || !(r in props));
  if (missing.length)
    throw new UnsupportedSchemaError(
      `"required" names ${missing.map((r) => JSON.stringify(r)).join(", ")}, which "properties" does not define (at ${at || "/"})`,
    );
  const extra = s.additionalProperties;
  // absent: JSON Schema allows other properties; the grammar writes none, which is still valid
  if (extra === true || (isSchema(extra) && Object.keys(extra).length === 0))
    out.additionalProperties = true;
  else if (isSchema(extra)) out.additionalProperties = convert(extra, `${at}/additionalProperties`);
  for (const k of ["minProperties", "maxProperties"]) if (typeof s[k] === "number") out[k] = s[k];
  return out;
}

function array(s: Schema, at: string): Schema {
  const out: Schema = { type: "array" };
  if (s.items !== undefined) {
    if (Array.isArray(s.items))
      // draft 7's tuple form
      out.prefixItems = s.items.map((x, i) => convert(x, `${at}/items/${i}`));
    else if (s.items !== false) out.items = convert(s.items, `${at}/items`);
  }
  if (Array.isArray(s.prefixItems))
    out.prefixItems = s.prefixItems.map((x, i) => convert(x, `${at}/prefixItems/${i}`));
  for (const k of ["minItems", "maxItems"]) if (typeof s[k] === "number") out[k] = s[k];
  if (s.items === false && Array.isArray(s.prefixItems)) out.maxItems = s.prefixItems.length;
  return out;
}

function string(s: Schema): Schema {
  // other formats are annotations in JSON Schema 2020-12: any string is valid under them
  if (typeof s.format === "string" && FORMATS.has(s.format))
    return { type: "string", format: s.format };
  const out: Schema = { type: "string" };
  for (const k of ["minLength", "maxLength"]) if (typeof s[k] === "number") out[k] = s[k];
  return out;
}

function literal(v: unknown, where: string): string | number | boolean | null {
  if (v === null || ["string", "number", "boolean"].includes(typeof v))
    return v as string | number | boolean | null;
  throw new UnsupportedSchemaError(
    `the grammar writes only strings, numbers, booleans and null as enum or const values (at ${where})`,
  );
}

/** Any JSON value. */
const anyJson = (): Schema => ({
  oneOf: [
    { type: ["string", "number", "boolean", "null"] },
    { type: "object", additionalProperties: true },
    { type: "array" },
  ],
});
