// Bad input, everywhere, never a crash (property-based, fast-check with a fixed seed and a bounded
// number of cases): every config override, URL, imported report and VS reply either works or gets
// one message naming what is wrong — never a TypeError from deep inside, never a changed global.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applySet, ConfigError, DEFAULT_CONFIG, validateConfig } from "../../src/experiment/config";
import { configWith, formatUrlState, parseUrlState, PAGES } from "../../src/app/lib/url-state";
import { parseReport, ReportError } from "../../src/experiment/report-schema";
import { parseVs } from "../../src/lm/vs-parse";
import { PRESETS } from "../../src/experiment/presets";

const RUNS = { seed: 20261201, numRuns: 300 };

// config paths as a user might type them: real ones, their prefixes, typos and dangerous names
const leafPaths = (o: unknown, prefix = ""): string[] =>
  typeof o === "object" && o !== null && !Array.isArray(o)
    ? Object.entries(o).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k))
    : [prefix];
const REAL = leafPaths(DEFAULT_CONFIG);
const segment = fc.oneof(
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "",
    "0",
    "length",
    "toString",
    "rl",
    "steps",
    "gamma",
  ),
  fc.string({ maxLength: 8 }),
);
const path = fc.oneof(
  fc.constantFrom(...REAL),
  fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join(".")),
  fc.constantFrom(...REAL).map((p) => `${p}.x`),
);
const value = fc.oneof(
  fc.json({ maxDepth: 2 }),
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    "1e309",
    "-0",
    "NaN",
    "Infinity",
    "null",
    "[]",
    "{}",
    "true",
    '"x"',
    "1.5",
    "-3",
    "1000000000000",
  ),
);
const assignment = fc.oneof(
  fc.tuple(path, value).map(([p, v]) => `${p}=${v}`),
  fc.string({ maxLength: 30 }),
);

const polluted = () =>
  Object.keys(Object.prototype).length > 0 ||
  ({} as Record<string, unknown>).polluted !== undefined;

describe("config overrides (--set, ?set=, the knobs)", () => {
  it("either give a valid config or one ConfigError, and never touch Object.prototype", () => {
    fc.assert(
      fc.property(fc.array(assignment, { minLength: 1, maxLength: 3 }), (sets) => {
        let c: unknown = structuredClone(DEFAULT_CONFIG);
        try {
          for (const s of sets) c = applySet(c, s);
          const v = validateConfig(c);
          expect(v.rl.steps).toBeGreaterThanOrEqual(0);
        } catch (e) {
          expect(e).toBeInstanceOf(ConfigError);
          expect((e as Error).message.length).toBeGreaterThan(0);
        }
        expect(polluted()).toBe(false);
      }),
      RUNS,
    );
  });

  it("__proto__ and friends are refused by name", () => {
    for (const s of [
      "__proto__.polluted=1",
      "rl.__proto__.x=1",
      "constructor.prototype.polluted=1",
      "rl.constructor=1",
    ]) {
      expect(() => applySet(DEFAULT_CONFIG, s)).toThrow(ConfigError);
    }
    expect(polluted()).toBe(false);
  });
});

describe("URL state", () => {
  const query = fc
    .array(
      fc.tuple(
        fc.constantFrom(
          "v",
          "preset",
          "seeds",
          "seedBase",
          "set",
          "backend",
          "autorun",
          "embed",
          "present",
          "x",
        ),
        fc.oneof(
          fc.string({ maxLength: 12 }),
          assignment,
          fc.constantFrom(...PRESETS.map((p) => p.id)),
        ),
      ),
      { maxLength: 6 },
    )
    .map((pairs) => `?${new URLSearchParams(pairs).toString()}`);
  const hash = fc.oneof(
    fc.constantFrom("", ...PAGES.map((p) => `#${p}`)),
    fc.string({ maxLength: 10 }).map((s) => `#${s}`),
  );

  it("any query parses to a state that resolves to a config (what cannot be read is a problem, not a crash)", () => {
    fc.assert(
      fc.property(fc.oneof(query, fc.string({ maxLength: 40 })), hash, (q, h) => {
        const { state, problems } = parseUrlState(q, h);
        for (const p of problems) expect(typeof p).toBe("string");
        expect(() => configWith(state)).not.toThrow(); // every kept override was checked
        expect(PAGES).toContain(state.page);
        expect(polluted()).toBe(false);
      }),
      RUNS,
    );
  });

  it("format then parse gives the same state back", () => {
    fc.assert(
      fc.property(query, hash, (q, h) => {
        const { state } = parseUrlState(q, h);
        const again = parseUrlState(...(formatUrlState(state).split(/(?=#)/) as [string, string?]));
        expect(again.problems).toEqual([]);
        expect(again.state).toEqual(state);
      }),
      RUNS,
    );
  });
});

describe("RunReport import", () => {
  const text = readFileSync("public/recorded/persuasion-smoke.json", "utf8");
  const report = JSON.parse(text) as Record<string, unknown>;

  // a real report with one value replaced somewhere, or cut short, or not JSON at all
  const mutated = fc.oneof(
    fc
      .tuple(
        fc.constantFrom(
          "schema",
          "config",
          "env",
          "conditions",
          "simulators",
          "pretraining",
          "store",
        ),
        fc.json({ maxDepth: 2 }),
      )
      .map(([k, v]) => JSON.stringify({ ...report, [k]: JSON.parse(v) })),
    fc.nat({ max: text.length }).map((n) => text.slice(0, n)),
    fc.string({ maxLength: 50 }),
    fc
      .tuple(fc.constantFrom("rl", "simulator", "seeds", "conditions"), fc.json({ maxDepth: 1 }))
      .map(([k, v]) =>
        JSON.stringify({ ...report, config: { ...(report.config as object), [k]: JSON.parse(v) } }),
      ),
  );

  it("either parses or names what is wrong in one ReportError", () => {
    fc.assert(
      fc.property(mutated, (t) => {
        try {
          parseReport(t);
        } catch (e) {
          expect(e).toBeInstanceOf(ReportError);
          expect((e as Error).message).toMatch(/\S/);
        }
      }),
      { ...RUNS, numRuns: 200 },
    );
  });
});

describe("VS replies", () => {
  const reply = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.json({ maxDepth: 3 }),
    fc
      .array(
        fc.record({
          text: fc.string({ maxLength: 20 }),
          probability: fc.oneof(fc.double(), fc.string({ maxLength: 5 }), fc.constant(null)),
        }),
        { maxLength: 6 },
      )
      .map((r) => JSON.stringify({ responses: r })),
    fc
      .array(fc.tuple(fc.string({ maxLength: 20 }), fc.double({ min: -1, max: 2 })), {
        maxLength: 6,
      })
      .map((r) =>
        r
          .map(([t, p]) => `<response><text>${t}</text><probability>${p}</probability></response>`)
          .join("\n"),
      ),
  );

  it("never throw, and give candidates whose probabilities are finite, in [0, 1] and sum to 1", () => {
    fc.assert(
      fc.property(
        reply,
        fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
        (raw, k) => {
          const r = parseVs(raw, k === undefined ? {} : { k });
          for (const c of r.candidates) {
            expect(typeof c.text).toBe("string");
            expect(Number.isFinite(c.probability)).toBe(true);
            expect(c.probability).toBeGreaterThanOrEqual(0);
            expect(c.probability).toBeLessThanOrEqual(1 + 1e-12);
          }
          if (r.candidates.length > 0)
            expect(r.candidates.reduce((s, c) => s + c.probability, 0)).toBeCloseTo(1, 9);
          if (k !== undefined) expect(r.candidates.length).toBeLessThanOrEqual(k);
        },
      ),
      { ...RUNS, numRuns: 500 },
    );
  });
});
