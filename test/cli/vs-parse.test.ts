// `collapse-lab vs-parse [--k N]` through the real command (`node bin/collapse-lab.mjs`, cwd = the
// project root): raw model output on stdin, `{"candidates":[{"text","probability"}],"warnings":[…]}`
// on stdout, exit 0 even when nothing can be read; a bad flag exits 2 with one clear line.
import { describe, expect, it } from "vitest";
import { parseVs } from "../../src/lm/vs-parse";
import { runCli } from "./harness";

const vsParse = (args: string[], stdin: string) =>
  runCli(["vs-parse", ...args], { timeoutMs: 60_000, stdin });

const TRUNCATED = `{"responses": [{"text": "I'll give $1.", "probability": 0.5}, {"text": "No tha`;
const TAGS =
  "<response><text>Sure, $0.50.</text><probability>60%</probability></response><response><text>Not today.</text><probability>40%</probability></response>";

describe("collapse-lab vs-parse", () => {
  it(
    "prints the candidates and warnings as JSON, the same as parseVs, and exits 0",
    { timeout: 120_000 },
    async () => {
      const runs = await Promise.all([
        vsParse(["--k", "3"], TRUNCATED),
        vsParse([], TAGS),
        vsParse(["--k", "5"], "I'm not really sure what you mean. 🤔"), // nothing parseable
        vsParse([], ""), // empty
      ]);
      const expected = [
        parseVs(TRUNCATED, { k: 3 }),
        parseVs(TAGS),
        parseVs("I'm not really sure what you mean. 🤔", { k: 5 }),
        parseVs(""),
      ];
      runs.forEach((r, i) => {
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toBe("");
        const out = JSON.parse(r.stdout);
        expect(Object.keys(out)).toEqual(["candidates", "warnings"]);
        expect(out).toEqual({ candidates: expected[i].candidates, warnings: expected[i].warnings });
      });
      const [truncated, tags, raw] = runs.map((r) => JSON.parse(r.stdout));
      expect(truncated.candidates).toEqual([{ text: "I'll give $1.", probability: 1 }]);
      expect(truncated.warnings.length).toBe(4);
      expect(tags.candidates).toEqual([
        { text: "Sure, $0.50.", probability: 0.6 },
        { text: "Not today.", probability: 0.4 },
      ]);
      expect(raw.candidates).toEqual([
        { text: "I'm not really sure what you mean. 🤔", probability: 1 },
      ]);
    },
  );

  it("a bad flag prints one clear line and exits 2", { timeout: 120_000 }, async () => {
    const runs = await Promise.all([
      vsParse(["--k", "0"], "x"),
      vsParse(["--k", "many"], "x"),
      vsParse(["--bogus"], "x"),
    ]);
    for (const r of runs) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(runs[0].stderr).toMatch(/--k.*integer ≥ 1/);
    expect(runs[2].stderr).toMatch(/unknown option '--bogus'/);
  });
});
