// The run cache's folders, keys and pruning on real files: a folder is named by everything a run's
// numbers depend on (config, seeds, backend, code), the app's sources are not part of the code,
// and pruning by age, by total size and by hand removes exactly the folders it says.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { presetConfig } from "../../src/experiment/presets";
import {
  autoPrune,
  codeFingerprint,
  listRuns,
  markFinished,
  pruneRuns,
  runCacheRoot,
  runFolder,
} from "../../src/experiment/node-run-cache";
import { fileTaskCache } from "../../src/experiment/node-task-cache";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-run-cache-unit-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const DAY = 86_400_000;
const config = presetConfig("persuasion-smoke");

/** A run folder with `bytes` of task data, last used `daysAgo` days ago. */
function fakeRun(root: string, name: string, daysAgo: number, bytes = 10, finished = false) {
  const dir = join(root, name);
  fileTaskCache(dir, config, "wasm", { preset: "persuasion-smoke" });
  writeFileSync(join(dir, "unit~3a~base~3a~0.task"), Buffer.alloc(bytes));
  if (finished) markFinished(dir, null);
  const t = new Date(Date.now() - daysAgo * DAY);
  utimesSync(join(dir, "run.json"), t, t);
  return dir;
}

describe("the run cache's folders", () => {
  it("is named by the preset and a hash of the config, seeds, backend and code", () => {
    const a = runFolder("/r", "persuasion-smoke", config, "wasm", "code-1");
    expect(a).toMatch(/^\/r\/persuasion-smoke-[0-9a-f]{12}$/);
    expect(runFolder("/r", "persuasion-smoke", { ...config }, "wasm", "code-1")).toBe(a);
    expect(
      runFolder("/r", "persuasion-smoke", { ...config, seedBase: 1 }, "wasm", "code-1"),
    ).not.toBe(a);
    expect(runFolder("/r", "persuasion-smoke", { ...config, seeds: 2 }, "wasm", "code-1")).not.toBe(
      a,
    );
    expect(runFolder("/r", "persuasion-smoke", config, "float64", "code-1")).not.toBe(a);
    expect(runFolder("/r", "persuasion-smoke", config, "wasm", "code-2")).not.toBe(a);
  });

  it("lives in $COLLAPSE_LAB_CACHE, else .collapse-lab/runs here, and is off when asked", () => {
    expect(runCacheRoot({}, "/p")).toBe("/p/.collapse-lab/runs");
    expect(runCacheRoot({ COLLAPSE_LAB_CACHE: "c" }, "/p")).toBe("/p/c");
    expect(runCacheRoot({ COLLAPSE_LAB_CACHE: "off" }, "/p")).toBeNull();
  });

  it("takes the code as every source file but the app's, and the lock file", () => {
    const root = join(tmp, "project");
    mkdirSync(join(root, "src", "app"), { recursive: true });
    mkdirSync(join(root, "src", "engine"), { recursive: true });
    writeFileSync(join(root, "src", "engine", "a.ts"), "export const a = 1;");
    writeFileSync(join(root, "src", "app", "page.svelte"), "<p>1</p>");
    const first = codeFingerprint(root);
    writeFileSync(join(root, "src", "app", "page.svelte"), "<p>2</p>");
    expect(codeFingerprint(root)).toBe(first);
    writeFileSync(join(root, "src", "engine", "a.ts"), "export const a = 2;");
    const edited = codeFingerprint(root);
    expect(edited).not.toBe(first);
    writeFileSync(join(root, "package-lock.json"), "{}");
    expect(codeFingerprint(root)).not.toBe(edited);
    expect(codeFingerprint()).toMatch(/^[0-9a-f]{64}$/); // this project's
  });
});

describe("pruning", () => {
  it("at a run's start: folders unused for the age limit, then the least recently used beyond the size limit", () => {
    const root = join(tmp, "auto");
    const now = Date.now();
    fakeRun(root, "old", 40);
    fakeRun(root, "big-older", 5, 100_000);
    fakeRun(root, "big-newer", 2, 100_000);
    const current = fakeRun(root, "current", 10, 100_000);
    const removed = autoPrune(root, current, { maxAgeDays: 30, maxTotalBytes: 250_000, now });
    // "old" by age; then "big-older" (the least recently used) brings the total under 250 kB (each run.json adds a few kB);
    // the starting run's own folder is never removed, though it is older than both that remain
    expect(removed.map((r) => r.name)).toEqual(["old", "big-older"]);
    expect(
      listRuns(root)
        .map((r) => r.name)
        .sort(),
    ).toEqual(["big-newer", "current"]);
  });

  it("by hand: finished runs, --all for unfinished ones too, --older-than for age", () => {
    const root = join(tmp, "manual");
    const now = Date.now();
    fakeRun(root, "done-new", 1, 10, true);
    fakeRun(root, "done-old", 9, 10, true);
    fakeRun(root, "open-old", 9);
    expect(pruneRuns(root, { olderThanDays: 7, now }).map((r) => r.name)).toEqual(["done-old"]);
    expect(pruneRuns(root, { now }).map((r) => r.name)).toEqual(["done-new"]);
    expect(listRuns(root).map((r) => r.name)).toEqual(["open-old"]);
    expect(listRuns(root)[0]).toMatchObject({
      preset: "persuasion-smoke",
      backend: "wasm",
      seeds: "1 from 0",
      tasks: 1,
      finished: false,
    });
    expect(pruneRuns(root, { all: true, now }).map((r) => r.name)).toEqual(["open-old"]);
    expect(listRuns(root)).toEqual([]);
  });
});

describe("a task folder", () => {
  it("says, and does not refuse, a folder started by other code; --fresh reads no task", async () => {
    const dir = join(tmp, "code");
    const first = fileTaskCache(dir, config, "wasm", { code: "one" });
    await first.put("unit:base:0", { x: 1 });
    const notes: string[] = [];
    const other = fileTaskCache(dir, config, "wasm", { code: "two", onNote: (m) => notes.push(m) });
    expect(notes).toEqual([
      `${dir} was started by other code (the sources or dependencies changed since); its tasks are used as they are (--fresh runs every task again)`,
    ]);
    expect(await other.get("unit:base:0")).toEqual({ x: 1 });
    const fresh = fileTaskCache(dir, config, "wasm", { code: "one", fresh: true });
    expect(fresh.kept).toBe(0);
    expect(fresh.count()).toBe(1);
    expect(await fresh.get("unit:base:0")).toBeUndefined();
  });

  it("is started again when it is pruned while its run goes on", async () => {
    const dir = join(tmp, "pruned");
    const cache = fileTaskCache(dir, config, "wasm");
    rmSync(dir, { recursive: true });
    await cache.put("unit:base:0", { x: 2 });
    expect(await fileTaskCache(dir, config, "wasm").get("unit:base:0")).toEqual({ x: 2 });
  });
});
