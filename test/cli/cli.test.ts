// The CLI contract (docs/architecture.md#contracts), through the real command (`node bin/collapse-lab.mjs`, cwd = the
// project root): `presets` lists the presets; `run --preset persuasion-smoke` exits 0, prints the
// paper-style table with the six conditions and writes a RunReport whose numbers agree with the
// table; the same command twice gives identical condition metrics; bad flags exit 2 with one clear
// line on stderr. The two smoke runs go side by side (each about 15 s on its own).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CONDITIONS } from "../../src/experiment/config";
import { presetConfig } from "../../src/experiment/presets";
import { runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cli = (args: string[], timeoutMs?: number) => runCli(args, { timeoutMs });

interface Summary {
  mean: number;
  lo: number;
  hi: number;
  n: number;
}
interface Report {
  schema: string;
  preset: string | null;
  config: unknown;
  conditions: {
    id: string;
    seeds: ({ seed: number } & Record<string, unknown>)[];
    summary: Record<string, Summary>;
  }[];
}

/** Condition metrics: wall-clock times live under `timing`, so these must repeat exactly. */
const numbersOf = (r: Report) => r.conditions;

describe("collapse-lab presets", () => {
  it("lists persuasion-quick, persuasion-paper and persuasion-smoke, one per line with a description", async () => {
    const r = await cli(["presets"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    for (const id of ["persuasion-quick", "persuasion-paper", "persuasion-smoke"]) {
      const line = lines.find((l) => l.split(/\s+/)[0] === id);
      expect(line, `${id} in:\n${r.stdout}`).toBeDefined();
      expect(line!.slice(id.length).trim().length).toBeGreaterThan(10);
    }
  });
});

describe("collapse-lab run", () => {
  it(
    "runs the smoke preset: exit 0, the six-row table, a RunReport that matches it, and the same numbers twice",
    { timeout: 400_000 },
    async () => {
      const out = [join(tmp, "a.json"), join(tmp, "b.json")];
      const args = (file: string) => [
        "run",
        "--preset",
        "persuasion-smoke",
        "--seeds",
        "1",
        "--parallel",
        "1",
        "--quiet",
        "--out",
        file,
      ];
      const [a, b] = await Promise.all(out.map((f) => cli(args(f), 360_000)));
      for (const r of [a, b]) expect(r.code, r.stderr).toBe(0);
      expect(a.stderr).toBe(""); // --quiet: only the table, on stdout

      // the table: a header and one row per condition, in order, with three success % and an entropy
      const lines = a.stdout.split("\n");
      const header = lines.findIndex((l) =>
        /^condition\s+train-sim success %\s+held-out success %\s+human success %\s+policy entropy/.test(
          l,
        ),
      );
      expect(header, a.stdout).toBeGreaterThanOrEqual(0);
      const rows = lines
        .slice(header + 2, header + 2 + CONDITIONS.length)
        .map((l) => l.trim().split(/\s+/));
      expect(rows.map((r) => r[0])).toEqual([...CONDITIONS]);
      for (const r of rows) {
        expect(r).toHaveLength(5);
        for (const x of r.slice(1, 4))
          expect(Number(x) >= 0 && Number(x) <= 100, r.join(" ")).toBe(true);
        expect(Number(r[4])).toBeGreaterThanOrEqual(0);
      }

      const report = JSON.parse(readFileSync(out[0], "utf8")) as Report;
      expect(report.schema).toBe("collapse-lab/run-report@1");
      expect(report.preset).toBe("persuasion-smoke");
      expect(report.config).toEqual({ ...presetConfig("persuasion-smoke"), seeds: 1 });
      expect(report.conditions.map((c) => c.id)).toEqual([
        "base",
        "single",
        "ensemble",
        "vs",
        "cotrain",
        "population",
      ]);
      report.conditions.forEach((c, i) => {
        expect(c.seeds.map((s) => s.seed)).toEqual([0]);
        for (const metric of ["trainSuccess", "heldoutSuccess", "humanSuccess"]) {
          const s = c.summary[metric];
          expect(s, `${c.id}.${metric}`).toMatchObject({
            mean: expect.any(Number),
            lo: expect.any(Number),
            hi: expect.any(Number),
          });
          for (const x of [s.mean, s.lo, s.hi])
            expect(x >= 0 && x <= 1, `${c.id}.${metric} = ${JSON.stringify(s)}`).toBe(true);
          expect(s.lo).toBeLessThanOrEqual(s.mean);
          expect(s.hi).toBeGreaterThanOrEqual(s.mean);
          expect(s.mean).toBe(c.seeds[0][metric]); // one seed: the summary is that seed
        }
        const e = c.summary.policyEntropy;
        for (const x of [e.mean, e.lo, e.hi])
          expect(Number.isFinite(x) && x >= 0, `${c.id}.policyEntropy`).toBe(true);
        // the printed table shows the report's numbers
        expect(rows[i][1]).toBe((100 * c.summary.trainSuccess.mean).toFixed(1));
        expect(rows[i][2]).toBe((100 * c.summary.heldoutSuccess.mean).toFixed(1));
        expect(rows[i][3]).toBe((100 * c.summary.humanSuccess.mean).toFixed(1));
        expect(rows[i][4]).toBe(e.mean.toFixed(2));
      });

      // determinism: same config, seed and backend ⇒ identical numbers (wall-clock times aside)
      const again = JSON.parse(readFileSync(out[1], "utf8")) as Report;
      expect(numbersOf(again)).toEqual(numbersOf(report));
      expect(b.stdout.split("\n").slice(header, header + 2 + CONDITIONS.length)).toEqual(
        lines.slice(header, header + 2 + CONDITIONS.length),
      );
    },
  );

  it("bad flags exit 2 with one clear line on stderr", async () => {
    const cases: [string[], RegExp][] = [
      [["run", "--preset", "nope"], /unknown preset "nope".*persuasion-smoke/],
      [["run", "--preset", "persuasion-smoke", "--set", "rl.steps=abc"], /rl\.steps/],
      [["run", "--preset", "persuasion-smoke", "--set", "nosuch.key=1"], /nosuch/],
      [["run", "--preset", "persuasion-smoke", "--set", "rl.stepz=3"], /stepz/],
      [["run", "--preset", "persuasion-smoke", "--set", "foo"], /expected path=value/],
      [["run", "--preset", "persuasion-smoke", "--seeds", "0"], /--seeds.*0/],
      [["run", "--preset", "persuasion-smoke", "--bogus"], /unknown option '--bogus'/],
      [["run", "--preset", "persuasion-smoke", "--backend", "tpu"], /--backend.*tpu/],
      [["run"], /--preset/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args, 60_000)));
    results.forEach((r, i) => {
      const [args, pattern] = cases[i];
      const what = `collapse-lab ${args.join(" ")}`;
      expect(r.code, `${what}\nstderr: ${r.stderr}`).toBe(2);
      const lines = r.stderr.trim().split("\n");
      expect(lines, what).toHaveLength(1);
      expect(lines[0], what).toMatch(pattern);
      expect(lines[0], what).not.toMatch(/^\s+at /); // a message, not a stack trace
      expect(r.stdout, what).toBe("");
    });
  });
});
