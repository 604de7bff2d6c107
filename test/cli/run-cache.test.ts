// The run cache through the real command: a run keeps its finished tasks without being asked, a
// run stopped by SIGINT says how many it kept and the command that continues, a run killed by
// SIGKILL loses only what it was computing, and the same command run again gives the report an
// uninterrupted run gives, everything but timing. `cache list` and `cache prune` manage it.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/experiment/experiment";
import { ROOT, runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-run-cache-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// the smoke preset with three conditions on one worker: a few seconds of tasks, one after another;
// the quoted --set checks that the printed command reads back in a shell
const ARGS = [
  "run",
  "--preset",
  "persuasion-smoke",
  "--set",
  'conditions=["base","single","vs"]',
  "--parallel",
  "1",
];

/** A report without what depends on the sitting: its wall times and this machine's speed. */
function numbers(file: string) {
  const { timing: _t, env, ...rest } = JSON.parse(readFileSync(file, "utf8")) as RunReport;
  const { microBenchmark: _m, ...envRest } = env;
  return { ...rest, env: envRest };
}

const taskFiles = (root: string) =>
  existsSync(root)
    ? readdirSync(root).flatMap((d) =>
        readdirSync(join(root, d)).filter((f) => f.endsWith(".task")),
      )
    : [];

/** Starts the command and sends `signal` once its first task is kept; resolves when it ends. */
function interrupt(root: string, out: string, signal: NodeJS.Signals) {
  return new Promise<{ code: number | null; signal: string | null; stderr: string }>(
    (done, fail) => {
      const child = spawn(process.execPath, ["bin/collapse-lab.mjs", ...ARGS, "--out", out], {
        cwd: ROOT,
        env: { ...process.env, COLLAPSE_LAB_CACHE: root, NO_COLOR: "1" },
      });
      let stderr = "";
      child.stderr.on("data", (b) => (stderr += b));
      child.stdout.resume();
      const poll = setInterval(() => {
        if (taskFiles(root).length > 0) {
          clearInterval(poll);
          child.kill(signal);
        }
      }, 20);
      child.on("error", fail);
      child.on("close", (code, sig) => {
        clearInterval(poll);
        done({ code, signal: sig, stderr });
      });
    },
  );
}

describe("the run cache", () => {
  const whole = join(tmp, "whole.json");

  it(
    "keeps a run's tasks without --resume, says where on its first line, and the same command continues from them",
    { timeout: 300_000 },
    async () => {
      const root = join(tmp, "plain");
      const env = { COLLAPSE_LAB_CACHE: root };
      const first = await runCli([...ARGS, "--out", whole], { env });
      expect(first.code, first.stderr).toBe(0);
      const [dir] = readdirSync(root);
      expect(dir).toMatch(/^persuasion-smoke-[0-9a-f]{12}$/);
      expect(first.stderr.split("\n")[0]).toBe(
        `collapse-lab run: tasks kept in ${join(root, dir)}: 0 finished before (the same command continues from them; --fresh runs them again)`,
      );
      const tasks = taskFiles(root).length;
      expect(tasks).toBe(4); // three units and the seed's diagnostics

      const again = await runCli([...ARGS, "--out", join(tmp, "again.json")], { env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`${tasks} finished before`);
      expect(numbers(join(tmp, "again.json"))).toEqual(numbers(whole));

      const fresh = await runCli([...ARGS, "--fresh", "--out", join(tmp, "fresh.json")], { env });
      expect(fresh.code, fresh.stderr).toBe(0);
      expect(fresh.stderr).toContain(`tasks kept in ${join(root, dir)}: none read (--fresh)`);
      expect(numbers(join(tmp, "fresh.json"))).toEqual(numbers(whole));
      // a run on other seeds is another folder
      const other = await runCli([...ARGS, "--seed-base", "7", "--set", 'conditions=["base"]'], {
        env,
      });
      expect(other.code, other.stderr).toBe(0);
      expect(readdirSync(root)).toHaveLength(2);
    },
  );

  it(
    "stops on SIGINT with one line naming the tasks kept and the command that continues, which gives the uninterrupted report",
    { timeout: 300_000 },
    async () => {
      const root = join(tmp, "sigint");
      const out = join(tmp, "sigint.json");
      const stopped = await interrupt(root, out, "SIGINT");
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(existsSync(out)).toBe(false);
      const line =
        /stopped by SIGINT; (\d+) finished task\(s\) kept in (\S+); to continue: (.*)$/m.exec(
          stopped.stderr,
        );
      expect(line, stopped.stderr).not.toBeNull();
      const kept = Number(line![1]);
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(4); // stopped part-way
      expect(taskFiles(root)).toHaveLength(kept);
      expect(readdirSync(line![2]).filter((f) => f.endsWith(".tmp"))).toEqual([]);
      expect(line![3]).toBe(
        `npx collapse-lab run --preset persuasion-smoke --set 'conditions=["base","single","vs"]' --parallel 1 --out ${out}`,
      );

      // the printed command, as a shell reads it, with the project's own entry point for npx's
      const again = await new Promise<{ code: number | null; stderr: string }>((done) => {
        const child = spawn(
          "bash",
          ["-c", line![3].replace(/^npx collapse-lab/, `${process.execPath} bin/collapse-lab.mjs`)],
          { cwd: ROOT, env: { ...process.env, COLLAPSE_LAB_CACHE: root, NO_COLOR: "1" } },
        );
        let stderr = "";
        child.stderr.on("data", (b) => (stderr += b));
        child.stdout.resume();
        child.on("close", (code) => done({ code, stderr }));
      });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`: ${kept} finished before`);
      expect(numbers(out)).toEqual(numbers(whole));
    },
  );

  it(
    "after SIGKILL, the same command with no flags continues to the uninterrupted report",
    { timeout: 300_000 },
    async () => {
      const root = join(tmp, "sigkill");
      const out = join(tmp, "sigkill.json");
      const killed = await interrupt(root, out, "SIGKILL");
      expect(killed.signal).toBe("SIGKILL");
      const kept = taskFiles(root).length;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(4);
      const again = await runCli([...ARGS, "--out", out], { env: { COLLAPSE_LAB_CACHE: root } });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`: ${kept} finished before`);
      expect(numbers(out)).toEqual(numbers(whole));
    },
  );

  it("`cache list` shows each run; `cache prune` removes finished ones, `--all` the rest", async () => {
    const env = { COLLAPSE_LAB_CACHE: join(tmp, "plain") };
    const list = await runCli(["cache", "list"], { env });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(`run cache: ${join(tmp, "plain")}`);
    expect(list.stdout).toMatch(
      /persuasion-smoke-[0-9a-f]{12}\s+persuasion-smoke\s+1 from 0\s+wasm\s+4\s/,
    );
    // seed 7's models are not in the store: they were pretrained live, and kept as tasks too
    expect(list.stdout).toMatch(/1 from 7\s+wasm\s+\d+\s.*finished/);
    expect(list.stdout).toContain("2 run(s)");

    const sigint = { COLLAPSE_LAB_CACHE: join(tmp, "sigint") };
    // the continued run finished: pruned; an unfinished one stays unless --all
    const unfinished = join(tmp, "unfinished");
    await interrupt(unfinished, join(tmp, "unfinished.json"), "SIGKILL");
    const prune = await runCli(["cache", "prune"], { env: sigint });
    expect(prune.stdout).toMatch(/^removed persuasion-smoke-/m);
    expect(readdirSync(join(tmp, "sigint"))).toEqual([]);
    const keep = await runCli(["cache", "prune"], { env: { COLLAPSE_LAB_CACHE: unfinished } });
    expect(keep.stdout).toContain("0 run(s) removed");
    expect(readdirSync(unfinished)).toHaveLength(1);
    const all = await runCli(["cache", "prune", "--all"], {
      env: { COLLAPSE_LAB_CACHE: unfinished },
    });
    expect(all.stdout).toContain("1 run(s) removed");
    expect(readdirSync(unfinished)).toEqual([]);

    const off = await runCli(["cache", "list"]);
    expect(off.code).toBe(2);
    expect(off.stderr).toBe("collapse-lab: the run cache is off (COLLAPSE_LAB_CACHE=off)\n");
  }, 300_000);
});
