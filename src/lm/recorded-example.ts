// A recorded LM-lab run: the LM lab's Direct-vs-VS comparison made once with a real LM outside
// the browser (scripts/record-lm-example.ts: SmolLM2-135M-Instruct on llama.cpp behind
// `collapse-lab serve --gguf`) and shipped as public/recorded/lm/<name>.json, so the lab shows a
// real example before anything is loaded. The schema is checked where the file is read; the
// replies are the model's text, to be shown as text only.
import { z } from "zod";

export const RECORDED_LM_FORMAT = "collapse-lab.lm-recording/1";
/** The recordings the LM lab shows, under public/. */
export const RECORDED_LM_EXAMPLES = ["recorded/lm/smollm2-135m-instruct.json"] as const;

const Reply = z.strictObject({
  text: z.string(),
  tokens: z.number().int().min(0),
  outcome: z.number().nullable(),
});
const VsCall = z.strictObject({
  raw: z.string(),
  format: z.enum(["json", "tags", "loose-json", "list", "raw", "empty"]),
  warnings: z.array(z.string()),
  candidates: z.array(
    z.strictObject({ text: z.string(), probability: z.number(), outcome: z.number().nullable() }),
  ),
  selected: z.number().int().min(0).nullable(),
});
const Outcomes = z.strictObject({
  amounts: z.array(z.number()),
  counts: z.array(z.number()),
  fractions: z.array(z.number()),
  human: z.array(z.number()),
  parsed: z.number().int(),
  unparsed: z.number().int(),
  mean: z.number().nullable(),
  ks: z.number().nullable(),
  l1: z.number().nullable(),
});
const Measures = z.strictObject({
  label: z.string(),
  count: z.number().int(),
  uniqueShare: z.number(),
  distinct: z.strictObject({ distinct1: z.number(), distinct2: z.number(), distinct3: z.number() }),
  embedding: z.number().nullable(),
  outcomes: Outcomes,
});

export const RecordedLmExample = z.strictObject({
  format: z.literal(RECORDED_LM_FORMAT),
  model: z.strictObject({
    name: z.string(), // e.g. "SmolLM2-135M-Instruct"
    servedAs: z.string(), // the model id behind the API
    file: z.string(), // the GGUF's file name, quantisation included
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    source: z.string(), // where the weights came from, with their licence
    runtime: z.string(), // what ran them
  }),
  recordedAt: z.iso.datetime(),
  command: z.string(), // how to re-run it
  benchmark: z.string(),
  settings: z.strictObject({
    card: z.string(),
    state: z.string(),
    n: z.number().int().min(1),
    k: z.number().int().min(1),
    selection: z.enum(["random", "prob"]),
    tailThreshold: z.number(),
    temperature: z.number(),
    maxNewTokens: z.number().int(),
    seed: z.number().int(),
    /** The VS calls were sent the VS JSON Schema as response_format (absent in older recordings: no). */
    constrained: z.boolean().optional(),
  }),
  prompts: z.strictObject({
    direct: z.array(z.strictObject({ role: z.string(), content: z.string() })),
    vs: z.array(z.strictObject({ role: z.string(), content: z.string() })),
  }),
  direct: z.array(Reply),
  vs: z.array(VsCall),
  measures: z.strictObject({ direct: Measures, vsAll: Measures, vsSelected: Measures }),
  embeddingNote: z.string().nullable(),
  requests: z.number().int(),
  seconds: z.number(),
  tokensPerSecond: z.number(), // reply tokens per second of generation, on the recording machine
});
export type RecordedLmExample = z.infer<typeof RecordedLmExample>;

/** Parses a recording; throws with the first problem's path. */
export function parseRecordedLmExample(text: string): RecordedLmExample {
  const r = RecordedLmExample.safeParse(JSON.parse(text));
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`not an LM-lab recording (${i.path.join(".") || "(root)"}: ${i.message})`);
  }
  return r.data;
}
