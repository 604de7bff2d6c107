// `collapse-lab run --resume DIR` through the real command: finished tasks are kept as files, a
// later run with the same config continues from them to the same numbers, a run with another
// config or backend is refused by name and changes nothing, and an unreadable task runs again.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/experiment/experiment";
import { runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-resume-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// two cheap units of the smoke preset, no diagnostics: two task files
const SMALL = [
  "run",
  "--preset",
  "persuasion-smoke",
  "--set",
  'conditions=["base","single"]',
  "--set",
  "eval.diagnosticSeeds=0",
  "--parallel",
  "1",
];
const numbers = (file: string) => {
  const r = JSON.parse(readFileSync(file, "utf8")) as RunReport;
  return { conditions: r.conditions, comparisons: r.comparisons };
};

describe("collapse-lab run --resume", () => {
  const dir = join(tmp, "tasks");

  it(
    "keeps each finished task, and a later run continues from them to the same numbers",
    { timeout: 300_000 },
    async () => {
      const first = await runCli([...SMALL, "--resume", dir, "--out", join(tmp, "first.json")]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain(`tasks kept in ${dir}: 0 finished before`);
      const tasks = readdirSync(dir).filter((f) => f.endsWith(".task"));
      expect(tasks).toHaveLength(2);

      // as if the run had stopped before `single` finished
      rmSync(
        join(
          dir,
          tasks.find((f) => f.includes("single"))!,
        ),
      );
      const second = await runCli([...SMALL, "--resume", dir, "--out", join(tmp, "second.json")]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toContain(`tasks kept in ${dir}: 1 finished before`);
      expect(numbers(join(tmp, "second.json"))).toEqual(numbers(join(tmp, "first.json")));
      // `base` was not trained again: its unit's timing is the first run's, to the last digit; `single`'s is new
      const evalMs = (file: string, c: string) =>
        (JSON.parse(readFileSync(join(tmp, file), "utf8")) as RunReport).timing.units?.find(
          (u) => u.condition === c,
        )?.evalMs;
      expect(evalMs("second.json", "base")).toBeDefined();
      expect(evalMs("second.json", "base")).toBe(evalMs("first.json", "base"));
      expect(evalMs("second.json", "single")).not.toBe(evalMs("first.json", "single"));

      // an unreadable task file is named and computed again, to the same numbers
      const base = join(
        dir,
        tasks.find((f) => f.includes("base"))!,
      );
      writeFileSync(base, "not a task");
      const third = await runCli([...SMALL, "--resume", dir, "--out", join(tmp, "third.json")]);
      expect(third.code, third.stderr).toBe(0);
      expect(third.stderr).toContain(`${base} is unreadable`);
      expect(numbers(join(tmp, "third.json"))).toEqual(numbers(join(tmp, "first.json")));
    },
  );

  it(
    "says which models came from the run's earlier sittings rather than pretraining them again",
    { timeout: 300_000 },
    async () => {
      // a corpus size no stored model was pretrained on: every model pretrains live, then is kept
      const args = [
        "run",
        "--preset",
        "persuasion-smoke",
        "--set",
        'conditions=["base"]',
        "--set",
        "eval.diagnosticSeeds=0",
        "--set",
        "corpus.dialogues=200",
        "--parallel",
        "1",
      ];
      const folder = join(tmp, "live-models");
      const first = await runCli([
        ...args,
        "--resume",
        folder,
        "--out",
        join(tmp, "live-first.json"),
      ]);
      expect(first.code, first.stderr).toBe(0);
      const jobs = readdirSync(folder).filter((f) => f.startsWith("pretrain")).length;
      expect(jobs).toBeGreaterThan(1);
      expect(first.stderr).toMatch(
        new RegExp(
          `pretraining: 0 of ${jobs} models from the store \\([^)]*\\), ${jobs} pretrained live`,
        ),
      );
      const second = await runCli([
        ...args,
        "--resume",
        folder,
        "--out",
        join(tmp, "live-second.json"),
      ]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toMatch(
        new RegExp(
          `pretraining: 0 of ${jobs} models from the store \\([^)]*\\), ${jobs} from the run's earlier sittings\n`,
        ),
      );
      // the report does not depend on the sitting
      expect(numbers(join(tmp, "live-second.json"))).toEqual(numbers(join(tmp, "live-first.json")));
    },
  );

  it(
    "refuses a folder of a run with another config or backend, naming what differs, and changes nothing in it",
    { timeout: 120_000 },
    async () => {
      const before = readFileSync(join(dir, "run.json"), "utf8");
      const files = readdirSync(dir).sort();
      const other = await runCli([...SMALL, "--set", "rl.steps=3", "--resume", dir]);
      expect(other.code).not.toBe(0);
      expect(other.stderr).toContain(
        "holds the tasks of a run with another config: rl.steps is 4 there, 3 here",
      );
      const cpu = await runCli([...SMALL, "--backend", "float64", "--resume", dir]);
      expect(cpu.code).not.toBe(0);
      expect(cpu.stderr).toContain("holds the tasks of a run on wasm, not float64");
      expect(readFileSync(join(dir, "run.json"), "utf8")).toBe(before);
      expect(readdirSync(dir).sort()).toEqual(files);
    },
  );

  it("refuses a folder that is not a run's task folder", { timeout: 120_000 }, async () => {
    const foreign = join(tmp, "foreign");
    mkdirSync(foreign);
    writeFileSync(join(foreign, "run.json"), "{ not json");
    const r = await runCli([...SMALL, "--resume", foreign]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("run.json is not readable JSON");
    expect(existsSync(join(foreign, "run.json"))).toBe(true);
  });
});
