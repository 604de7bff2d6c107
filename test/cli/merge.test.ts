// `collapse-lab merge` through the real command: two runs on seeds 0 and 1 merge into the report of
// one run on seeds 0–1, to the last digit; parts that could not be one run's (a seed twice, a
// missing seed, another config or backend) are refused by name, and nothing is written over them.
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/experiment/experiment";
import { runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-merge-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// three cheap conditions (paired differences need `single`), the diagnostics of the first seed
const SMALL = [
  "run",
  "--preset",
  "persuasion-smoke",
  "--set",
  'conditions=["base","single","vs"]',
  "--set",
  "eval.diagnosticSeeds=1",
  "--parallel",
  "1",
  "--quiet",
];
const file = (name: string) => join(tmp, name);
const read = (name: string) => JSON.parse(readFileSync(file(name), "utf8")) as RunReport;
/** A copy of a report with one change, for the refusals. */
function edited(from: string, to: string, change: (r: RunReport) => void): string {
  const r = read(from);
  change(r);
  writeFileSync(file(to), JSON.stringify(r));
  return file(to);
}

describe("collapse-lab merge", () => {
  beforeAll(async () => {
    const runs = [
      ["whole.json", "--seeds", "2", "--seed-base", "0"],
      ["part0.json", "--seeds", "1", "--seed-base", "0"],
      ["part1.json", "--seeds", "1", "--seed-base", "1"],
    ];
    for (const [out, ...seeds] of runs) {
      const r = await runCli([
        ...SMALL,
        ...seeds,
        "--out",
        file(out),
        "--policies",
        file(out.replace(".json", ".policies")),
      ]);
      expect(r.code, r.stderr).toBe(0);
    }
  }, 600_000);

  it("makes runs on seeds 0 and 1 the report of one run on seeds 0–1", async () => {
    // given in either order
    const r = await runCli([
      "merge",
      file("part1.json"),
      file("part0.json"),
      "--out",
      file("merged.json"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("paired differences vs single");
    expect(r.stderr).toMatch(
      /2 reports merged \(seeds 0–1; their wall times sum to [\d.]+ s\), written to /,
    );
    const merged = read("merged.json");
    const whole = read("whole.json");
    expect(merged.config).toEqual(whole.config);
    expect(merged.conditions).toEqual(whole.conditions);
    expect(merged.comparisons).toEqual(whole.comparisons);
    expect(merged.comparisons.length).toBeGreaterThan(0);
    // one run diagnoses its first seed only: part1's own diagnostics of seed 1 are left out
    expect(read("part1.json").simulators.map((d) => d.seed)).toEqual([1]);
    expect(merged.simulators).toEqual(whole.simulators);
    expect(merged.pretraining).toEqual(whole.pretraining);
    expect({ ...merged.store, location: null }).toEqual({ ...whole.store, location: null });
    expect(merged.parts?.map((p) => [p.seedBase, p.seeds])).toEqual([
      [0, 1],
      [1, 1],
    ]);
    expect(merged.timing.totalMs).toBeCloseTo(
      read("part0.json").timing.totalMs + read("part1.json").timing.totalMs,
      6,
    );
    expect(merged.timing.units).toHaveLength(6);
  });

  it("merges their trained policies into the folder one run would have written, byte for byte", async () => {
    const r = await runCli([
      "merge",
      file("part0.json"),
      file("part1.json"),
      "--out",
      file("merged.json"),
      "--policies",
      file("merged.policies"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`6 trained policies written to ${file("merged.policies")}`);
    const names = readdirSync(file("whole.policies")).sort();
    expect(readdirSync(file("merged.policies")).sort()).toEqual(names);
    for (const name of names)
      expect(readFileSync(join(file("merged.policies"), name)), name).toEqual(
        readFileSync(join(file("whole.policies"), name)),
      );

    // a report without its policies folder beside it: named, and nothing written
    copyFileSync(file("part1.json"), file("bare.json"));
    rmSync(file("out.policies"), { recursive: true, force: true });
    const bare = await runCli([
      "merge",
      file("part0.json"),
      file("bare.json"),
      "--out",
      file("out.json"),
      "--policies",
      file("out.policies"),
    ]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/the policies cannot be merged: .*bare\.policies/);
    expect(() => readdirSync(file("out.policies"))).toThrow();
  });

  it("refuses parts that could not be one run's, naming why, and writes nothing", async () => {
    const refused = async (files: string[], message: RegExp) => {
      const out = file("refused.json");
      rmSync(out, { force: true });
      const r = await runCli(["merge", ...files, "--out", out]);
      expect(r.code, r.stdout).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(() => readFileSync(out)).toThrow();
    };
    await refused([file("whole.json"), file("part1.json")], /both ran seed 1/);
    const far = edited("part1.json", "far.json", (r) => {
      r.config.seedBase = 3;
      for (const c of r.conditions) for (const s of c.seeds) s.seed = 3;
    });
    await refused([file("part0.json"), far], /no report ran seeds 1–2 .*consecutive/);
    const gamma = edited("part1.json", "gamma.json", (r) => (r.config.simulator.gamma = 1));
    await refused(
      [file("part0.json"), gamma],
      /gamma\.json has another config than .*part0\.json: simulator\.gamma is 1 there/,
    );
    const gpu = edited("part1.json", "gpu.json", (r) => (r.env.backend = "webgpu"));
    await refused([file("part0.json"), gpu], /gpu\.json ran on webgpu/);
    writeFileSync(file("broken.json"), "{ not json");
    await refused([file("part0.json"), file("broken.json")], /broken\.json: not JSON/);
    await refused([file("part0.json")], /two reports or more, got 1/);
  });

  it("will not write the merged report over one of its parts", async () => {
    const before = readFileSync(file("part0.json"), "utf8");
    const r = await runCli([
      "merge",
      file("part0.json"),
      file("part1.json"),
      "--out",
      file("part0.json"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is one of the reports to merge");
    expect(readFileSync(file("part0.json"), "utf8")).toBe(before);
  });
});
