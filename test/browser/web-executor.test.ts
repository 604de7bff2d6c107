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
