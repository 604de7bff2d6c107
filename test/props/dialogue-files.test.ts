// Dialogue corpora, property-based (fast-check with a fixed seed): a good corpus with one line
// spoiled, in any of the ways people spoil files, is either still good or refused with one
// DialogueFileError that names exactly that line; any text at all is read or refused so, never
// thrown past; and importing a bad file after a good one keeps the store as it was.
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DialogueFileError, parseDialogueFile } from "../../src/benchmarks/dialogue-file";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { presetConfig } from "../../src/experiment/presets";
import { validateConfig } from "../../src/experiment/config";
import { importCorpus } from "../../src/app/lib/corpus-import";
import { MemoryCorpusStore } from "../../src/app/lib/corpus-store";

const RUNS = { seed: 20261243, numRuns: 300 };
const config = validateConfig(presetConfig("persuasion-smoke"));
const bench = benchmarkFor(config);
const ACT_NAMES = bench.acts.map((a) => a.name);
const SAMPLE = readFileSync(
  resolve(import.meta.dirname, "../../examples/dialogues/p4g-sample.jsonl"),
  "utf8",
);
// the sample's dialogues without ids, so that no spoiled line can repeat another line's id
const [HEADER, ...DIALOGUES] = SAMPLE.trim()
  .split("\n")
  .map((l) => JSON.parse(l) as Record<string, unknown>);
for (const d of DIALOGUES) delete d.id;
const enc = (s: string) => new TextEncoder().encode(s);

/** Reads a file; a refusal must be one DialogueFileError on one line. */
function readOrRefusal(text: string, file = "c.jsonl") {
  try {
    return { ok: parseDialogueFile(enc(text), file, config) };
  } catch (e) {
    expect(e).toBeInstanceOf(DialogueFileError);
    expect((e as Error).message).not.toContain("\n");
    return { error: e as DialogueFileError };
  }
}

const spoil = fc.oneof(
  fc.record({ kind: fc.constant("act"), at: fc.nat(), value: fc.string({ maxLength: 12 }) }),
  fc.record({ kind: fc.constant("known act"), at: fc.nat(), value: fc.constantFrom(...ACT_NAMES) }),
  fc.record({ kind: fc.constant("drop act"), at: fc.nat() }),
  fc.record({
    kind: fc.constant("insert act"),
    at: fc.nat(),
    value: fc.constantFrom(...ACT_NAMES),
  }),
  fc.record({ kind: fc.constant("key"), name: fc.string({ minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant("outcome"), value: fc.oneof(fc.double(), fc.jsonValue()) }),
  fc.record({
    kind: fc.constant("traits"),
    value: fc.array(fc.constantFrom(...ACT_NAMES, "kind-high"), { maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant("text"), value: fc.string({ maxLength: 40 }) }),
  fc.record({ kind: fc.constant("truncate"), at: fc.nat() }),
);
type Spoil = typeof spoil extends fc.Arbitrary<infer T> ? T : never;

function spoiled(d: Record<string, unknown>, s: Spoil): string {
  const line = structuredClone(d);
  const acts = [...(line.acts as string[])];
  const i = "at" in s ? s.at % (acts.length + 1) : 0;
  switch (s.kind) {
    case "act":
    case "known act":
      acts[Math.min(i, acts.length - 1)] = s.value as string;
      break;
    case "drop act":
      acts.splice(Math.min(i, acts.length - 1), 1);
      break;
    case "insert act":
      acts.splice(i, 0, s.value as string);
      break;
    case "key":
      line[s.name === "__proto__" ? "x__proto__" : s.name] = 1;
      break;
    case "outcome":
      line.outcome = s.value;
      break;
    case "traits":
      line.traits = s.value;
      break;
    case "text":
      return s.value.replace(/[\r\n]/g, " ");
    case "truncate": {
      const text = JSON.stringify(line);
      return text.slice(0, s.at % text.length);
    }
  }
  line.acts = acts;
  return JSON.stringify(line);
}

describe("dialogue files, property-based", () => {
  it("a file with one spoiled line is read, or refused naming exactly that line", () => {
    fc.assert(
      fc.property(fc.nat({ max: DIALOGUES.length - 1 }), spoil, fc.boolean(), (k, s, header) => {
        const lines = DIALOGUES.map((d, j) => (j === k ? spoiled(d, s) : JSON.stringify(d)));
        const text = [...(header ? [JSON.stringify(HEADER)] : []), ...lines].join("\n");
        const r = readOrRefusal(text);
        if (r.error) {
          expect(r.error.line).toBe(k + 1 + (header ? 1 : 0));
        } else {
          // still a whole, good file (a line spoiled into a blank one is skipped, as blank lines are)
          const blank = lines[k].trim() === "";
          expect(r.ok!.dialogues).toHaveLength(DIALOGUES.length - (blank ? 1 : 0));
          for (const d of r.ok!.dialogues)
            expect(bench.turn({ card: d.card ?? [], acts: d.acts })).toBe("done");
        }
      }),
      RUNS,
    );
  });

  it("any text, as JSONL or as CSV, is read or refused with one DialogueFileError", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc
            .array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 })
            .map((xs) => xs.map((x) => JSON.stringify(x)).join("\n")),
          fc
            .array(fc.array(fc.string({ maxLength: 10 }), { minLength: 1, maxLength: 4 }), {
              maxLength: 4,
            })
            .map((rows) => ["acts,outcome", ...rows.map((r) => r.join(","))].join("\n")),
        ),
        fc.constantFrom("c.jsonl", "c.csv", "c.txt"),
        (text, file) => {
          readOrRefusal(text, file);
        },
      ),
      RUNS,
    );
  });

  it("a bad file after a good one changes nothing that is stored", async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: DIALOGUES.length - 1 }), spoil, async (k, s) => {
        const store = new MemoryCorpusStore();
        const good = await importCorpus(store, { name: "good.jsonl", bytes: enc(SAMPLE) }, config);
        const lines = DIALOGUES.map((d, j) => (j === k ? spoiled(d, s) : JSON.stringify(d)));
        const bad = enc(lines.join("\n"));
        let refused = false;
        await importCorpus(store, { name: "good.jsonl", bytes: bad }, config).catch((e) => {
          expect(e).toBeInstanceOf(DialogueFileError);
          refused = true;
        });
        const kept = await store.list();
        expect(await store.get(good.sha256)).toEqual(good);
        expect(kept.length).toBe(refused ? 1 : 2);
      }),
      { ...RUNS, numRuns: 100 },
    );
  });
});
