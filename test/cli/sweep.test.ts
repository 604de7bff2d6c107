// `collapse-lab sweep` through the real command: each point's report is the report of `run` with
// the same settings, everything but timing; the summary's paired differences are the reports'; a
// model pretrained for one γ is not pretrained again for another; the same command run again
// continues from the run cache to the same numbers; and a bad grid is refused in one line before
// any work.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/experiment/experiment";
import { isEffectMetric, parseSweep } from "../../src/experiment/sweep";
import { runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-sweep-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// two cheap conditions, two seeds (seed 0's models are in the store, seed 1's pretrain live), no diagnostics
const SETTINGS = [
  "--preset",
  "persuasion-smoke",
  "--seeds",
  "2",
  "--set",
  'conditions=["base","single"]',
  "--set",
  "eval.diagnosticSeeds=0",
  "--parallel",
  "2",
];

/** A report without what depends on the sitting: its wall times and this machine's speed. */
function numbers(file: string) {
  const { timing: _t, env, ...rest } = JSON.parse(readFileSync(file, "utf8")) as RunReport;
  const { microBenchmark: _m, ...envRest } = env;
  return { ...rest, env: envRest };
}

describe("collapse-lab sweep", () => {
  const out = join(tmp, "gamma");
  const cache = join(tmp, "cache");
  const sweep = () =>
    runCli(["sweep", ...SETTINGS, "--set-grid", "simulator.gamma=1,4", "--out", out], {
      env: { COLLAPSE_LAB_CACHE: cache },
      timeoutMs: 400_000,
    });

  it(
    "writes a report per point equal to run's with the same settings, and a summary of their differences",
    { timeout: 900_000 },
    async () => {
      const r = await sweep();
      expect(r.code, r.stderr).toBe(0);
      // seed 1's seven models are pretrained for γ = 1 and stand in for γ = 4's
      expect(r.stderr).toMatch(
        /\[1\/2 simulator\.gamma=1\] done in .*: 7 model\(s\) pretrained live, 0 from earlier points/,
      );
      expect(r.stderr).toMatch(
        /\[2\/2 simulator\.gamma=4\] done in .*: 0 model\(s\) pretrained live, 7 from earlier points/,
      );
      expect(r.stdout).toContain("collapse's cost: single(γ = 1) − single");

      const summary = parseSweep(readFileSync(join(out, "sweep.json"), "utf8"));
      expect(summary.grid).toEqual([{ path: "simulator.gamma", values: [1, 4] }]);
      expect(summary.points.map((p) => p.report)).toEqual([
        "simulator.gamma=1.json",
        "simulator.gamma=4.json",
      ]);

      for (const [i, gamma] of [1, 4].entries()) {
        // the same settings as one run, computed again from nothing but the store
        const file = join(tmp, `run-${gamma}.json`);
        const run = await runCli(
          ["run", ...SETTINGS, "--set", `simulator.gamma=${gamma}`, "--out", file],
          { timeoutMs: 400_000 },
        );
        expect(run.code, run.stderr).toBe(0);
        const pointFile = join(out, summary.points[i].report);
        expect(numbers(pointFile)).toEqual(numbers(file));

        const report = JSON.parse(readFileSync(pointFile, "utf8")) as RunReport;
        expect(summary.points[i].comparisons).toEqual(
          report.comparisons
            .filter((c) => isEffectMetric(c.metric)) // the headline ones
            .map((c) => ({
              a: c.a,
              b: c.b,
              metric: c.metric,
              difference: c.difference,
            })),
        );
        expect(summary.points[i].seeds).toEqual([0, 1]);
      }

      // the collapse's cost: single at γ = 1 minus single at γ = 4, seed by seed
      const single = (gamma: number) =>
        (
          JSON.parse(readFileSync(join(out, `simulator.gamma=${gamma}.json`), "utf8")) as RunReport
        ).conditions.find((c) => c.id === "single")!.seeds;
      const cost = summary.points[1].cost!;
      expect(cost.baseline).toBe("simulator.gamma=1");
      const human = cost.effects.find((e) => e.metric === "humanSuccess")!.difference;
      const d = single(1).map((s, k) => s.humanSuccess - single(4)[k].humanSuccess);
      expect(human.mean).toBeCloseTo((d[0] + d[1]) / 2, 12);
      expect(human.n).toBe(2);
      expect(summary.points[0].cost!.effects.every((e) => e.difference.mean === 0)).toBe(true);

      // the same command again continues from the run cache: nothing pretrained or trained, the same numbers
      const before = numbers(join(out, "simulator.gamma=4.json"));
      const again = await sweep();
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(
        /: 0 model\(s\) pretrained live in all, 0 condition × seed units trained/,
      );
      expect(numbers(join(out, "simulator.gamma=4.json"))).toEqual(before);
    },
  );

  it("refuses a bad grid in one line before any work", { timeout: 300_000 }, async () => {
    const bad = join(tmp, "bad");
    const cases: [string[], RegExp][] = [
      [
        ["--set-grid", "simulator.gama=1,2"],
        /--set-grid simulator\.gama=1: .*simulator\.gama: unknown key/,
      ],
      [
        ["--set-grid", "simulator.gamma=0.5,2"],
        /--set-grid simulator\.gamma=0\.5: .*simulator\.gamma: Too small/,
      ],
      [["--set-grid", "simulator.gamma="], /--set-grid simulator\.gamma=: no values/],
      [
        ["--set-grid", "simulator.gamma=1,2,1"],
        /--set-grid simulator\.gamma=1,2,1: 1 is given twice/,
      ],
      [["--set-grid", "vs.k=1,2", "--set-grid", "vs.k=3"], /--set-grid vs\.k is given twice/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(["sweep", "--preset", "persuasion-smoke", ...args, "--out", bad]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split("\n"), r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(existsSync(bad)).toBe(false);
    }
  });
});
