// The app's worker pool in real Chromium: tasks run in module workers; a worker that crashes
// mid-task is replaced and the task runs again to the same result; pause / step / resume hold a
// unit between RL steps and the pretraining queue between jobs. Crashes and pauses are triggered
// from progress events, and "nothing moves" is judged over windows several times longer than a
// step (or job) measured in the same run, so these tests can neither race nor pass vacuously.
import { describe, expect, it } from "vitest";
import { WebWorkerExecutor } from "../../src/app/lib/web-executor";
import { presetConfig } from "../../src/experiment/presets";
import {
  assemblePretrained,
  pretrainJobs,
  type PretrainedSet,
} from "../../src/experiment/pretrain";
import type { SeedMetrics, UnitProgress } from "../../src/experiment/runner";
import type { Task } from "../../src/experiment/tasks";

const config = presetConfig("persuasion-smoke");
const STEPS = 12;
// one condition, one panel member, 12 RL steps: a unit of a few seconds with a progress report per step
const c = {
  ...config,
  conditions: ["single" as const],
  panel: config.panel.slice(0, 1),
  rl: { ...config.rl, steps: STEPS, evalEvery: 100 },
};
const unitTask = (pretrained: PretrainedSet): Task => ({
  kind: "unit",
  config: c,
  pretrained,
  condition: "single",
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let pretrainedOnce: Promise<PretrainedSet> | null = null;
/** c's pretrained models, made once in a pool of their own and shared by the tests below. */
function pretrained(): Promise<PretrainedSet> {
  pretrainedOnce ??= (async () => {
    const pool = new WebWorkerExecutor(1, "wasm");
    try {
      const results = new Map();
      for (const job of pretrainJobs(c, 0))
        results.set(job, await pool.run({ kind: "pretrain", config: c, job }));
      return assemblePretrained(c, 0, results);
    } finally {
      await pool.close();
    }
  })();
  return pretrainedOnce;
}

/** Everything a unit reports except its wall times. */
const numbers = ({ timing: _, ...m }: SeedMetrics) => m;

describe("WebWorkerExecutor", () => {
  it("runs a task in a worker, and a worker that crashes mid-task is replaced and the task redone identically", async () => {
    const task = unitTask(await pretrained());
    const clean = new WebWorkerExecutor(1, "wasm");
    const expected = (await clean.run(task)) as SeedMetrics;
    await clean.close();

    const restarts: string[] = [];
    const pool = new WebWorkerExecutor(1, "wasm", { onRestart: (r) => restarts.push(r) });
    const steps: number[] = [];
    let crashedAt: number | null = null;
    const got = (await pool.run(task, (p: UnitProgress) => {
      steps.push(p.step);
      if (crashedAt === null && p.step >= 1) {
        crashedAt = p.step; // the first RL step's report: the unit is running and not finished
        pool.simulateCrash(0);
      }
    })) as SeedMetrics;
    await pool.close();
    expect(crashedAt).toBeLessThan(STEPS);
    expect(restarts).toHaveLength(1);
    expect(restarts[0]).toMatch(/crashed/);
    expect(steps.at(-1)).toBe(STEPS);
    expect(steps.lastIndexOf(0)).toBeGreaterThan(steps.indexOf(crashedAt!)); // the new worker ran the unit again from the start
    expect(numbers(got)).toEqual(numbers(expected)); // every number: curve, evaluations, samples, histogram
  });

  it("a stopped pool rejects its tasks", async () => {
    const pool = new WebWorkerExecutor(1, "wasm");
    const running = pool.run({ kind: "pretrain", config, job: { kind: "reference", seed: 0 } });
    await pool.close();
    await expect(running).rejects.toThrow(/stopped/);
  });
});

describe("pause, step and resume inside a worker", () => {
  it("a paused unit stops between RL steps, Step lets exactly one more through, Resume finishes it", async () => {
    const task = unitTask(await pretrained());
    const pool = new WebWorkerExecutor(1, "wasm");
    const seen: { step: number; at: number }[] = [];
    let pausing: Promise<void> | null = null;
    let finished = false;
    const unit = pool.run(task, (p: UnitProgress) => {
      seen.push({ step: p.step, at: performance.now() });
      if (p.step === 3) pausing = pool.pause(); // from progress: the unit is known to be mid-way
    });
    void unit.then(
      () => (finished = true),
      () => (finished = true),
    );
    await expect.poll(() => pausing, { timeout: 120_000 }).not.toBeNull();
    await pausing;
    // one RL step's duration, measured here: the windows below are several steps long
    const stepMs = Math.max(seen[2].at - seen[1].at, seen[3].at - seen[2].at); // seen[0] is step 0, the initial evaluation
    const window = Math.max(5 * stepMs, 300);
    const last = () => seen.at(-1)!;
    // the step under way when Pause arrived may still report; then progress stops
    await expect
      .poll(() => performance.now() - last().at, { timeout: 60_000, interval: 50 })
      .toBeGreaterThan(window);
    const paused = last().step;
    expect(finished).toBe(false);
    expect(paused).toBeLessThan(STEPS - 1); // room for Step to show exactly one
    await sleep(window);
    expect(last().step).toBe(paused); // nothing moves while paused
    await pool.step();
    await expect.poll(() => last().step, { timeout: 60_000 }).toBe(paused + 1);
    await sleep(window);
    expect(last().step).toBe(paused + 1); // exactly one step
    expect(finished).toBe(false);
    await pool.resume();
    const metrics = (await unit) as SeedMetrics;
    expect(metrics.curve.at(-1)!.step).toBe(STEPS);
    expect(seen.map((s) => s.step)).toEqual(Array.from({ length: STEPS + 1 }, (_, i) => i)); // every step once (0: the start)
    await pool.close();
  });

  it("pausing during pretraining lets the running job end and starts no other until Resume", async () => {
    // three jobs of one size, so the first one's time bounds how soon a wrongly started next one would end
    const jobs = [0, 1, 2].map((seed) => ({ kind: "reference" as const, seed }));
    const pool = new WebWorkerExecutor(1, "wasm");
    await pool.info(); // the worker is up: the first job's time is the job's own
    const doneAt: number[] = [];
    const t0 = performance.now();
    const all = jobs.map((job) =>
      pool.run({ kind: "pretrain", config, job }).then(() => void doneAt.push(performance.now())),
    );
    await pool.pause(); // the first job is on its way to the worker; the other two are queued
    await expect.poll(() => doneAt.length, { timeout: 120_000 }).toBe(1);
    const window = 3 * (doneAt[0] - t0); // a job started meanwhile would have ended within about a third of this
    await sleep(window);
    expect(doneAt).toHaveLength(1); // the queue is held
    await pool.step(); // Step lets one more job in
    await expect.poll(() => doneAt.length, { timeout: 120_000 }).toBe(2);
    await sleep(window);
    expect(doneAt).toHaveLength(2);
    await pool.resume();
    await Promise.all(all);
    expect(doneAt).toHaveLength(3);
    await pool.close();
  });
});
