// Imported Play results files, property-based (fast-check with a fixed seed): any text, any JSON
// and any mutation of a good file either reads as a valid file or gets one PlayFileError whose
// message is one line; merging bad files next to good ones names each bad file once, adds the good
// files' new dialogues, and never changes the set merged before.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CONDITIONS } from "../../src/experiment/config";
import {
  EMPTY_MERGE,
  mergeFiles,
  parsePlayFile,
  PLAY_FORMAT,
  PlayFileError,
  playFile,
  type MergedSet,
  type PlayRecord,
} from "../../src/app/lib/play-results";

const RUNS = { seed: 20261221, numRuns: 300 };
const KEY = "0123456789abcdef0123456789abcdef";

const record = (i: number, over: Partial<PlayRecord> = {}): PlayRecord => ({
  id: `dialogue-${i}`,
  player: `p${i % 3}`,
  study: "room",
  run: "recorded/persuasion-smoke",
  runKey: KEY,
  index: i,
  condition: CONDITIONS[i % CONDITIONS.length],
  seed: 0,
  sessionSeed: i * 7919,
  persona: {
    source: "drawn",
    card: ["card:agreeable-high", "card:caring-low", "card:rational-high"],
    type: "skeptic",
  },
  acts: ["greeting", "neutral", "ask", "$1"],
  outcome: 1,
  success: true,
  reward: 0.5,
  startedAt: 1_700_000_000_000 + i,
  finishedAt: 1_700_000_060_000 + i,
  ...over,
});
const GOOD = playFile([record(0), record(1), record(2)], new Date(0));

/** Parses, and checks the outcome is one of the two allowed ones. */
function readOrMessage(text: string): PlayRecord[] | string {
  try {
    return parsePlayFile(text).records;
  } catch (e) {
    expect(e).toBeInstanceOf(PlayFileError);
    const m = (e as Error).message;
    expect(m.length).toBeGreaterThan(0);
    expect(m).not.toContain("\n");
    return m;
  }
}

// a mutation at a path of the good file: delete it, or replace it with any JSON value
const paths = (o: unknown, prefix: (string | number)[] = []): (string | number)[][] =>
  typeof o === "object" && o !== null
    ? [
        prefix,
        ...Object.entries(o).flatMap(([k, v]) =>
          paths(v, [...prefix, Array.isArray(o) ? Number(k) : k]),
        ),
      ]
    : [prefix];
const ALL_PATHS = paths(GOOD).filter((p) => p.length > 0);
const mutation = fc.record({
  path: fc.constantFrom(...ALL_PATHS),
  value: fc.oneof(
    fc.constant(undefined),
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(-1, Number.MAX_VALUE, "", "x".repeat(500), [], {}, null, true, 1.5),
  ),
});

function mutate(file: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(file) as Record<string | number, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (value === undefined) delete at[last];
  else at[last] = value;
  return copy;
}

describe("Play results files", () => {
  it("any text or JSON reads as a valid file or gets one one-line PlayFileError", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.json({ maxDepth: 3 }),
          fc
            .jsonValue({ maxDepth: 3 })
            .map((v) => JSON.stringify({ format: PLAY_FORMAT, exportedAt: "x", records: v })),
        ),
        (text) => {
          readOrMessage(text);
        },
      ),
      RUNS,
    );
  });

  it("any mutation of a good file either still validates or names what is wrong", () => {
    fc.assert(
      fc.property(mutation, ({ path, value }) => {
        const got = readOrMessage(JSON.stringify(mutate(GOOD, path, value)));
        if (typeof got !== "string") {
          // what reads back is whole: every record has the fields the table and the CSV use
          for (const r of got) {
            expect(CONDITIONS).toContain(r.condition);
            expect(Number.isFinite(r.outcome)).toBe(true);
            expect(typeof r.success).toBe("boolean");
          }
        }
      }),
      RUNS,
    );
  });

  it("merging names each bad file once, adds the good files' new dialogues, and never changes the set before", () => {
    const base: MergedSet = mergeFiles(EMPTY_MERGE, [
      { name: "first.json", text: JSON.stringify(playFile([record(10), record(11)])) },
    ]).set;
    const bad = fc.oneof(
      fc.string({ maxLength: 80 }),
      mutation.map(({ path, value }) => JSON.stringify(mutate(GOOD, path, value))),
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            bad.map((text) => ({ text, good: false })),
            fc.constant({ text: JSON.stringify(GOOD), good: true }),
          ),
          { minLength: 1, maxLength: 5 },
        ),
        (files) => {
          const before = structuredClone(base);
          const named = files.map((f, i) => ({ name: `file-${i}.json`, text: f.text }));
          const { set, problems, messages } = mergeFiles(base, named);
          expect(base).toEqual(before); // the stored set is never changed in place
          expect(set.records.slice(0, base.records.length)).toEqual(base.records); // nothing merged before is lost
          expect(new Set(set.records.map((r) => r.id)).size).toBe(set.records.length); // no dialogue twice
          expect(problems.length + messages.length).toBe(files.length); // one line per file
          for (const p of problems) expect(p).toMatch(/^file-\d+\.json: .+ — skipped$/);
          const anyGood = files.some((f) => f.good);
          if (anyGood)
            expect(set.records.map((r) => r.id)).toEqual(
              expect.arrayContaining(GOOD.records.map((r) => r.id)),
            );
        },
      ),
      { ...RUNS, numRuns: 150 },
    );
  });
});
