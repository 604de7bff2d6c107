// A lost WebGPU device in the middle of a run, in real Chromium on SwiftShader WebGPU: the pool's
// worker destroys its GPUDevice (as a GPU reset would lose it); the task on it fails at once with
// "the WebGPU device was lost: …", the pool moves to wasm and runs the unfinished tasks again,
// keeping the finished ones. SwiftShader's float32 differs from wasm's in the last bits, so the
// checks are exact in the two cases that have one answer: a device lost before any task finished
// gives the wasm run's numbers (tasks running on WebGPU in other workers move to wasm too); one
// lost later keeps its finished tasks' WebGPU results and gives, for every other task, exactly
// what wasm computes from them.
import { describe, expect, it } from "vitest";
import { WebWorkerExecutor } from "../../src/app/lib/web-executor";
import {
  pretrainTaskKey,
  runExperiment,
  type RunReport,
  type TaskCache,
} from "../../src/experiment/experiment";
import { jobKey } from "../../src/experiment/store";
import { validateConfig } from "../../src/experiment/config";
import { presetConfig } from "../../src/experiment/presets";
import {
  assemblePretrained,
  pretrainJobs,
  type PretrainedSet,
  type PretrainJob,
  type PretrainResult,
} from "../../src/experiment/pretrain";
import type { SeedMetrics, UnitProgress } from "../../src/experiment/runner";
import type { Task } from "../../src/experiment/tasks";

const smoke = presetConfig("persuasion-smoke");
// one condition, one seed, one panel member: a whole run of a few tasks (three pretraining jobs, a unit, the diagnostics)
const config = validateConfig({
  ...smoke,
  seeds: 1,
  conditions: ["single"],
  panel: smoke.panel.slice(0, 1),
});
const STEPS = config.rl.steps;

class MemoryCache implements TaskCache {
  readonly map = new Map<string, unknown>(); // in the order the tasks finished
  async get(key: string) {
    return this.map.get(key);
  }
  async put(key: string, value: unknown) {
    this.map.set(key, value);
  }
}

/** Everything a unit reports except its wall times. */
const numbers = ({ timing: _, ...m }: SeedMetrics) => m;
/** Everything a report says except wall times and where it ran (the store keys it looked its models up by name the backend). */
const science = ({ timing: _t, env: _e, ...r }: RunReport) => ({
  ...r,
  pretraining: r.pretraining.map((p) => ({ ...p, models: p.models?.map(({ key: _, ...m }) => m) })),
  conditions: r.conditions.map((c) => ({
    ...c,
    seeds: c.seeds.map((s) => numbers(s as SeedMetrics)),
  })),
});

async function onPool<T>(
  backend: "wasm" | "webgpu",
  f: (pool: WebWorkerExecutor) => Promise<T>,
): Promise<T> {
  const pool = new WebWorkerExecutor(1, backend);
  try {
    if (backend === "webgpu") expect((await pool.info()).name).toBe("webgpu"); // the browser project's Chromium has SwiftShader WebGPU
    return await f(pool);
  } finally {
    await pool.close();
  }
}

let wasmRunOnce: Promise<RunReport> | null = null;
const wasmRun = () =>
  (wasmRunOnce ??= onPool("wasm", (pool) => runExperiment(config, pool, { backend: "wasm" })));

describe("a WebGPU device lost mid-run", () => {
  it("fails the running unit at once with the reason; the unit runs again on wasm from its start and gives the wasm numbers", async () => {
    const jobs = pretrainJobs(config, 0);
    const pretrained: PretrainedSet = await onPool("wasm", async (pool) => {
      const results = new Map<PretrainJob, PretrainResult>();
      for (const job of jobs) results.set(job, await pool.run({ kind: "pretrain", config, job }));
      return assemblePretrained(config, 0, results);
    });
    const task: Task = { kind: "unit", config, pretrained, condition: "single" };
    const expected = await onPool("wasm", (pool) => pool.run(task));

    const fallbacks: { reason: string; finished: number }[] = [];
    const pool = new WebWorkerExecutor(1, "webgpu", {
      onFallback: (reason, finished) => fallbacks.push({ reason, finished }),
    });
    expect((await pool.info()).name).toBe("webgpu");
    const steps: number[] = [];
    let lostAt: number | null = null;
    let losing: Promise<void> | null = null;
    const got = await pool.run(task, (p: UnitProgress) => {
      steps.push(p.step);
      if (lostAt === null && p.step >= 1) {
        lostAt = p.step; // the first RL step's report: the unit is running on WebGPU and not finished
        losing = pool.simulateDeviceLoss(0);
      }
    });
    await losing;
    expect(pool.backend).toBe("wasm");
    expect((await pool.info()).name).toBe("wasm");
    await pool.close();

    expect(lostAt).toBeLessThan(STEPS);
    expect(fallbacks).toEqual([
      { reason: expect.stringMatching(/^the WebGPU device was lost: \S/) as string, finished: 0 },
    ]);
    const restart = steps.lastIndexOf(0);
    expect(restart).toBeGreaterThan(steps.indexOf(lostAt!)); // run again from the start, on wasm
    expect(Math.max(...steps.slice(0, restart))).toBeLessThan(STEPS); // the WebGPU attempt never reached its end: it failed at once
    expect(steps.slice(restart)).toEqual(Array.from({ length: STEPS + 1 }, (_, i) => i));
    expect(numbers(got)).toEqual(numbers(expected)); // every number: curve, evaluations, samples, histogram
  });

  it("lost as the run starts (no task finished on WebGPU): the whole run comes from wasm and equals a wasm run", async () => {
    const fallbacks: { reason: string; finished: number }[] = [];
    const pool = new WebWorkerExecutor(2, "webgpu", {
      onFallback: (reason, finished) => fallbacks.push({ reason, finished }),
    });
    expect((await pool.info()).name).toBe("webgpu");
    const running = runExperiment(config, pool, { backend: "webgpu" });
    // worker 0's device only: the job worker 1 is running on its own, still working device moves to wasm too
    await pool.simulateDeviceLoss(0); // worker 0's first pretraining job is on its way there, or already running
    const report = await running;
    await pool.close();
    expect(fallbacks).toEqual([
      { reason: expect.stringMatching(/^the WebGPU device was lost: /) as string, finished: 0 },
    ]);
    expect(science(report)).toEqual(science(await wasmRun()));
  });

  it("lost after the first task finished: that task's WebGPU result is kept, and every other task equals wasm's from it", async () => {
    const fallbacks: { reason: string; finished: number }[] = [];
    const pool = new WebWorkerExecutor(1, "webgpu", {
      onFallback: (reason, finished) => fallbacks.push({ reason, finished }),
    });
    expect((await pool.info()).name).toBe("webgpu");
    const cache = new MemoryCache(); // records every task's result as the run keeps it
    let losing: Promise<void> | null = null;
    await runExperiment(config, pool, {
      backend: "webgpu",
      cache,
      onProgress: (p) => {
        if (p.phase === "pretrain" && p.done === 1) losing = pool.simulateDeviceLoss(0); // the next job is on its way to the worker
      },
    });
    await losing;
    await pool.close();
    expect(fallbacks).toEqual([
      { reason: expect.stringMatching(/^the WebGPU device was lost: /) as string, finished: 1 },
    ]);

    const jobs = pretrainJobs(config, 0);
    const keyOf = (job: PretrainJob) => pretrainTaskKey(jobKey(config, job, "webgpu"));
    const kept = (job: PretrainJob) => cache.map.get(keyOf(job)) as PretrainResult;
    const first = jobs.find((j) => keyOf(j) === [...cache.map.keys()][0])!;
    expect(first).toBeDefined();
    const [firstOnWebgpu] = await onPool("webgpu", async (pool) => [
      await pool.run({ kind: "pretrain", config, job: first }),
    ]);
    await onPool("wasm", async (pool) => {
      const firstOnWasm = await pool.run({ kind: "pretrain", config, job: first });
      expect(kept(first)).toEqual(firstOnWebgpu); // kept as WebGPU computed it
      expect(kept(first)).not.toEqual(firstOnWasm); // (SwiftShader and wasm differ in float32's last bits: "kept" is not "recomputed")
      for (const job of jobs.filter((j) => j !== first))
        expect(kept(job)).toEqual(await pool.run({ kind: "pretrain", config, job }));
      const pretrained = assemblePretrained(config, 0, new Map(jobs.map((j) => [j, kept(j)])));
      const unit = (await pool.run({
        kind: "unit",
        config,
        pretrained,
        condition: "single",
      })) as SeedMetrics;
      expect(numbers(cache.map.get("unit:single:0") as SeedMetrics)).toEqual(numbers(unit));
      expect(cache.map.get("diagnose:0")).toEqual(
        await pool.run({ kind: "diagnose", config, pretrained }),
      );
    });
  });
});
