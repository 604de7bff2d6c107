// Bad input on the command line, by properties (fast-check, fixed seed, bounded cases): a `--set`
// the schema refuses is exit 2 and one line naming its path, never a stack trace; one it accepts
// runs the smoke world for a step; a truncated or tampered report given to `merge` is refused with
// its file named. Most cases run in-process; a sample of each goes through the real command.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configFromOptions } from "../../src/cli/config-options";
import { createBackend } from "../../src/engine/backends/index";
import {
  applySet,
  ConfigError,
  DEFAULT_CONFIG,
  validateConfig,
  type ExperimentConfig,
} from "../../src/experiment/config";
import { runExperiment } from "../../src/experiment/experiment";
import { InlineExecutor } from "../../src/experiment/tasks";
import { runCli } from "../cli/harness";
import { tinyConfig } from "../experiment/tiny-config";

const SEED = 20261206;

const leafPaths = (o: unknown, prefix = ""): string[] =>
  typeof o === "object" && o !== null && !Array.isArray(o)
    ? Object.entries(o).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k))
    : [prefix];
const REAL = leafPaths(DEFAULT_CONFIG);

// what a user might type: real paths, typos, sections, wrong types, out-of-range numbers
const path = fc.oneof(
  fc.constantFrom(...REAL),
  fc.constantFrom(...REAL).map((p) => p.replace(/[aeiou](?=[^.]*$)/, "")),
  fc.constantFrom("rl", "simulator.model", "eval", "vs", "panel", "seeds"),
  fc
    .array(fc.stringMatching(/^[a-zA-Z]{1,6}$/), { minLength: 1, maxLength: 3 })
    .map((s) => s.join(".")),
);
const value = fc.oneof(
  fc.json({ maxDepth: 1 }),
  fc.string({ maxLength: 10 }),
  fc.constantFrom("-1", "0", "1e309", "NaN", "null", "[]", "{}", "true", "1.5", "1e12", "\n"),
);
const assignment = fc.tuple(path, value).map(([p, v]) => ({ path: p, text: `${p}=${v}` }));

/** The CLI's own reading of the flags, with its usage error caught instead of exiting. */
function readFlags(set: string[]): { config?: ExperimentConfig; refusal?: string } {
  class Refused extends Error {}
  try {
    const config = configFromOptions({ preset: "persuasion-smoke", set }, (m) => {
      throw new Refused(m);
    });
    return { config };
  } catch (e) {
    if (e instanceof Refused) return { refusal: e.message };
    throw e; // anything else is a crash, and fails the property
  }
}

/** The path's first section, which every refusal of it must name (validation names the leaf or its section). */
const section = (p: string) => p.split(".")[0];

describe("--set the schema refuses", () => {
  it("is one line naming the path, from the CLI's own flag reading (in-process, many cases)", () => {
    let refusals = 0;
    fc.assert(
      fc.property(assignment, ({ path: p, text }) => {
        const { refusal } = readFlags([text]);
        if (refusal === undefined) return; // accepted: the next describe runs such configs
        refusals++;
        expect(refusal).not.toMatch(/\n/);
        expect(refusal).toContain(section(p));
      }),
      { seed: SEED, numRuns: 400 },
    );
    expect(refusals, "most generated assignments are wrong somewhere").toBeGreaterThan(200);
  });

  it("exits 2 with that line and no stack trace, through the real command", async () => {
    const refused = fc
      .sample(assignment, { seed: SEED, numRuns: 200 })
      .filter((a) => readFlags([a.text]).refusal !== undefined)
      .slice(0, 6);
    expect(refused.length).toBe(6);
    for (const a of refused) {
      const r = await runCli(["run", "--preset", "persuasion-smoke", "--set", a.text, "--quiet"]);
      expect(r.code, a.text).toBe(2);
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines, a.text).toEqual([`collapse-lab: ${readFlags([a.text]).refusal}`]);
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(r.stdout).toBe("");
    }
  }, 300_000);
});

// Accepted settings on the tiny world: real paths with values inside their ranges. The budget
// (seeds, steps, episodes, corpus) is the tiny config's, so every accepted value runs in seconds.
const BUDGET =
  /^(seeds|seedBase|corpus\.|rl\.(steps|prompts|groupSize|evalEvery)|eval\.|.*pretrain\.(steps|batch)|population\.(poolSize|snapshotEvery))/;
const TINY = tinyConfig("persuasion-smoke");
const TUNABLE = leafPaths(TINY).filter((p) => !BUDGET.test(p));
const leaf = (c: unknown, p: string): unknown =>
  p.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], c);
/** A value near the current one: numbers scaled, booleans flipped, strings from the same leaf kept. */
const accepted = fc
  .tuple(fc.constantFrom(...TUNABLE), fc.constantFrom(0, 0.5, 0.9, 1, 1.1, 2, 4), fc.boolean())
  .map(([p, scale, flip]) => {
    const v = leaf(TINY, p);
    const next =
      typeof v === "number"
        ? Number.isInteger(v)
          ? Math.round(v * scale)
          : v * scale
        : typeof v === "boolean"
          ? v !== flip
          : v;
    return `${p}=${JSON.stringify(next)}`;
  })
  .filter((text) => {
    try {
      validateConfig(applySet(structuredClone(TINY), text));
      return true;
    } catch (e) {
      if (e instanceof ConfigError) return false;
      throw e;
    }
  });

describe("--set the schema accepts", () => {
  it("runs the smoke world for a step without a crash", async () => {
    const { backend } = await createBackend("wasm");
    const cases = fc.sample(accepted, { seed: SEED, numRuns: 6 });
    expect(new Set(cases.map((c) => c.split("=")[0])).size, "several settings").toBeGreaterThan(3);
    for (const text of cases) {
      const config = validateConfig(applySet(structuredClone(TINY), text));
      const report = await runExperiment(
        { ...config, conditions: ["base", "single", "vs"] },
        new InlineExecutor(backend),
        { backend: "wasm", preset: "persuasion-smoke" },
      );
      expect(
        report.conditions.map((c) => c.id),
        text,
      ).toEqual(["base", "single", "vs"]);
      for (const c of report.conditions)
        for (const s of c.seeds)
          for (const v of [s.trainSuccess, s.heldoutSuccess, s.humanSuccess, s.policyEntropy])
            expect(v, text).not.toBeNaN();
    }
  }, 600_000);
});

describe("merge, given a truncated or tampered report", () => {
  const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-merge-props-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const part = (i: number) => join(tmp, `part${i}.json`);

  beforeAll(async () => {
    const { backend } = await createBackend("wasm");
    for (const seedBase of [0, 1]) {
      const config = {
        ...TINY,
        seedBase,
        conditions: ["base", "single"] as ExperimentConfig["conditions"],
      };
      const report = await runExperiment(config, new InlineExecutor(backend), {
        backend: "wasm",
        preset: "persuasion-smoke",
      });
      writeFileSync(part(seedBase), JSON.stringify(report, null, 1));
    }
  }, 300_000);

  it("is refused with the file named, through the real command", async () => {
    const text = readFileSync(part(1), "utf8");
    const report = JSON.parse(text) as Record<string, unknown>;
    const tampered = fc.oneof(
      fc.nat({ max: text.length - 1 }).map((n) => text.slice(0, n)),
      fc
        .tuple(
          fc.constantFrom("schema", "config", "env", "conditions", "timing"),
          fc.json({ maxDepth: 1 }),
        )
        .map(([k, v]) => JSON.stringify({ ...report, [k]: JSON.parse(v) })),
      fc
        .tuple(fc.constantFrom("seeds", "seedBase", "rl", "benchmark"), fc.json({ maxDepth: 1 }))
        .map(([k, v]) =>
          JSON.stringify({
            ...report,
            config: { ...(report.config as object), [k]: JSON.parse(v) },
          }),
        ),
    );
    const bad = join(tmp, "tampered.json");
    for (const t of fc.sample(tampered, { seed: SEED, numRuns: 6 })) {
      writeFileSync(bad, t);
      const r = await runCli(["merge", part(0), bad, "--out", join(tmp, "merged.json")]);
      expect(r.code, t.slice(0, 80)).toBe(2);
      expect(r.stderr).toContain(bad);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
    // the untampered pair merges, so the refusals above are the tampering's
    const ok = await runCli(["merge", part(0), part(1), "--out", join(tmp, "merged.json")]);
    expect(ok.code, ok.stderr).toBe(0);
  }, 300_000);
});
