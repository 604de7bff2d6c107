// `collapse-lab evaluate` through the real command: a smoke run's stored policies re-scored against
// the run's own panel give the run's numbers to the last digit (train-sim success of the co-trained
// condition is the run's: its simulator is not stored); against another panel the humans' numbers
// stay and the report says what changed; settings the policies were trained with, a re-scoring's
// report and another run's policies are refused in one line.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/experiment/experiment";
import { runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-evaluate-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = (name: string) => join(tmp, name);
const read = (name: string) => JSON.parse(readFileSync(file(name), "utf8")) as RunReport;
const numbers = (r: RunReport) =>
  r.conditions.map((c) => ({
    id: c.id,
    summary: c.summary,
    seeds: c.seeds.map(({ timing: _, ...m }) => m),
  }));

describe("collapse-lab evaluate", () => {
  beforeAll(async () => {
    // a frozen-simulator condition, a co-trained one and `single` for the paired differences
    const r = await runCli([
      "run",
      "--preset",
      "persuasion-smoke",
      "--set",
      'conditions=["base","single","cotrain"]',
      "--set",
      "eval.diagnosticSeeds=0",
      "--parallel",
      "1",
      "--quiet",
      "--out",
      file("run.json"),
      "--policies",
      file("run.policies"),
    ]);
    expect(r.code, r.stderr).toBe(0);
  }, 300_000);

  it("re-scores a run's policies against its own panel to the run's numbers", async () => {
    const r = await runCli(
      ["evaluate", "--report", file("run.json"), "--parallel", "1", "--out", file("own.json")],
      { timeoutMs: 300_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("re-scoring of the policies of");
    expect(r.stdout).toContain("strategies with humans");
    const run = read("run.json");
    const own = read("own.json");
    expect(numbers(own)).toEqual(numbers(run));
    expect(own.comparisons).toEqual(run.comparisons);
    expect(own.config).toEqual(run.config);
    expect(own.conditions[0].seeds[0].strategyEntropy).toBeGreaterThan(0);
    expect(own.rescoring).toMatchObject({
      report: file("run.json"),
      policies: file("run.policies"),
      overrides: [],
      changed: [],
    });
    expect(own.rescoring!.reportSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(own.rescoring!.kept.join(" ")).toMatch(
      /train-sim success and train dialogues of cotrain/,
    );
  }, 300_000);

  it("against another panel: the humans' numbers stay, the report names the change", async () => {
    const r = await runCli(
      [
        "evaluate",
        "--report",
        file("run.json"),
        "--set",
        "panel.0.gamma=1",
        "--parallel",
        "1",
        "--quiet",
        "--out",
        file("other.json"),
      ],
      { timeoutMs: 300_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const run = read("run.json");
    const other = read("other.json");
    expect(other.config.panel[0].gamma).toBe(1);
    expect(other.rescoring!.changed.map((c) => c.path)).toEqual(["panel"]);
    for (const [i, c] of other.conditions.entries()) {
      const s = c.seeds[0];
      const was = run.conditions[i].seeds[0];
      // the humans are played first, with the same draws
      expect([s.humanSuccess, s.policyEntropy, s.strategyEntropy]).toEqual([
        was.humanSuccess,
        was.policyEntropy,
        was.strategyEntropy,
      ]);
      // the curves' held-out points were the old panel's: left out (NaN, null in JSON)
      expect(s.curve.every((p) => p.heldout === null)).toBe(true);
      expect(s.curve.map((p) => p.human)).toEqual(was.curve.map((p) => p.human));
    }
  }, 300_000);

  it("refuses what it cannot re-score, in one line, before any work", async () => {
    const trained = await runCli(["evaluate", "--report", file("run.json"), "--set", "rl.steps=1"]);
    expect(trained.code).toBe(2);
    expect(trained.stderr.trim().split("\n")).toHaveLength(1);
    expect(trained.stderr).toMatch(
      /collapse-lab: evaluate: rl\.steps is not an evaluation setting \(the policies were trained with 4, the override gives 1\); only panel, eval\.episodes/,
    );

    const again = await runCli([
      "evaluate",
      "--report",
      file("own.json"),
      "--policies",
      file("run.policies"),
    ]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /is itself a re-scoring .*give the report of the run that trained/,
    );

    // a report of another config: the stored policies were not trained by it
    const edited = read("run.json");
    edited.config.rl.lr = edited.config.rl.lr / 2;
    writeFileSync(file("another.json"), JSON.stringify(edited));
    const another = await runCli([
      "evaluate",
      "--report",
      file("another.json"),
      "--policies",
      file("run.policies"),
    ]);
    expect(another.code).toBe(2);
    expect(another.stderr).toMatch(/the policy of base, seed 0: it was trained by another run/);
  }, 120_000);
});
