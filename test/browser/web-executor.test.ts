// The app's worker pool in real Chromium: tasks run in module workers; a worker that crashes
// mid-task is replaced and the task runs again to the same result.
import { describe, expect, it } from "vitest";
import { WebWorkerExecutor } from "../../src/app/lib/web-executor";
import { presetConfig } from "../../src/experiment/presets";
import type { Task } from "../../src/experiment/tasks";
import type { PretrainResult } from "../../src/experiment/pretrain";

const config = presetConfig("persuasion-smoke");
const task: Task = { kind: "pretrain", config: { ...config, simulator: { ...config.simulator, pretrain: { ...config.simulator.pretrain, steps: 400 } } }, job: { kind: "reference", seed: 0 } };

describe("WebWorkerExecutor", () => {
  it("runs a task in a worker, and a crashed worker is replaced and its task redone identically", async () => {
    const clean = new WebWorkerExecutor(1, "wasm");
    const expected = (await clean.run(task)) as PretrainResult;
    await clean.close();

    const restarts: string[] = [];
    const pool = new WebWorkerExecutor(1, "wasm", { onRestart: (r) => restarts.push(r) });
    await pool.info();
    const running = pool.run(task);
    await new Promise((r) => setTimeout(r, 500)); // mid-task (the task takes several seconds)
    pool.simulateCrash(0);
    const got = (await running) as PretrainResult;
    await pool.close();
    expect(restarts).toHaveLength(1);
    expect(restarts[0]).toMatch(/crashed/);
    expect(got.nll).toEqual(expected.nll);
    expect(Array.from(got.checkpoint.tensors[0].data.slice(0, 8))).toEqual(Array.from(expected.checkpoint.tensors[0].data.slice(0, 8)));
  });

  it("a stopped pool rejects its tasks", async () => {
    const pool = new WebWorkerExecutor(1, "wasm");
    const running = pool.run(task);
    await pool.close();
    await expect(running).rejects.toThrow(/stopped/);
  });
});

describe("pause, step and resume inside a worker", () => {
  it("a paused unit stops between RL steps, Step lets exactly one more through, Resume finishes it", async () => {
    const { panelJobs, pretrainJobs, assemblePretrained } = await import("../../src/experiment/pretrain");
    const c = { ...config, conditions: ["single" as const], panel: config.panel.slice(0, 1), rl: { ...config.rl, steps: 12, evalEvery: 100 } };
    const pool = new WebWorkerExecutor(1, "wasm");
    const results = new Map();
    for (const job of [...panelJobs(c), ...pretrainJobs(c, 0)]) results.set(job, await pool.run({ kind: "pretrain", config: c, job }));
    const pretrained = assemblePretrained(c, 0, results);

    const steps: number[] = [];
    const unit = pool.run({ kind: "unit", config: c, pretrained, condition: "single" }, (p) => steps.push(p.step));
    await expect.poll(() => steps.length, { timeout: 60_000 }).toBeGreaterThan(2);
    await pool.pause();
    await new Promise((r) => setTimeout(r, 1500));
    const paused = Math.max(...steps);
    await new Promise((r) => setTimeout(r, 1500));
    expect(Math.max(...steps)).toBe(paused); // nothing moves while paused
    await pool.step();
    await expect.poll(() => Math.max(...steps), { timeout: 30_000 }).toBe(paused + 1);
    await new Promise((r) => setTimeout(r, 1000));
    expect(Math.max(...steps)).toBe(paused + 1); // exactly one step
    await pool.resume();
    const metrics = (await unit) as { curve: { step: number }[] };
    expect(metrics.curve[metrics.curve.length - 1].step).toBe(12);
    await pool.close();
  });

  it("pausing during pretraining lets the running job end and starts no other until Resume", async () => {
    const { panelJobs, pretrainJobs } = await import("../../src/experiment/pretrain");
    const jobs = [...panelJobs(config), ...pretrainJobs(config, 0)].slice(0, 3);
    const pool = new WebWorkerExecutor(1, "wasm");
    let done = 0;
    const all = jobs.map((job) => pool.run({ kind: "pretrain", config, job }).then(() => done++));
    await pool.pause(); // the first job is on its way to the worker; the other two are queued
    await expect.poll(() => done, { timeout: 60_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 3000));
    expect(done).toBe(1); // the queue is held
    await pool.step(); // Step lets one more job in
    await expect.poll(() => done, { timeout: 60_000 }).toBe(2);
    await new Promise((r) => setTimeout(r, 2000));
    expect(done).toBe(2);
    await pool.resume();
    await Promise.all(all);
    expect(done).toBe(3);
    await pool.close();
  });
});
