// The experiment page's state class, with the real experiment on an inline executor (the float64
// reference backend) and with a controllable fake executor for pause / step / resume / stop.
import { describe, expect, it } from "vitest";
import { flushSync } from "svelte";
import {
  ExperimentState,
  type ControlledExecutor,
  type ExperimentDeps,
} from "../../src/app/state/experiment.svelte";
import { createBackend } from "../../src/engine/backends/index";
import { InlineExecutor, type Task } from "../../src/experiment/tasks";
import type { BackendDecision } from "../../src/app/lib/backend-choice";
import { parseUrlState } from "../../src/app/lib/url-state";
import type { TaskCache } from "../../src/experiment/experiment";
import { TEST_CONFIG } from "./report-fixture";

const decide = async (): Promise<BackendDecision> => ({
  requested: "auto",
  name: "wasm",
  reason: "test",
});

/** The TEST_CONFIG as URL overrides of the smoke preset. */
function tinyUrl(exp: ExperimentState) {
  exp.setUrl(parseUrlState("?preset=persuasion-smoke").state);
  for (const key of [
    "seeds",
    "conditions",
    "corpus",
    "simulator",
    "policy",
    "rl",
    "panel",
    "eval",
  ] as const)
    exp.set(key, TEST_CONFIG[key]);
}

class MemoryCache implements TaskCache {
  readonly map = new Map<string, unknown>();
  async get(key: string) {
    return this.map.get(key);
  }
  async put(key: string, value: unknown) {
    this.map.set(key, structuredClone(value));
  }
}

describe("ExperimentState", () => {
  it("resolves the URL state to a config and names a bad override", () => {
    const exp = new ExperimentState({
      createExecutor: () => null as never,
      decideBackend: decide,
      parallelism: 1,
    });
    exp.setUrl(parseUrlState("?preset=persuasion-smoke&seeds=2").state);
    flushSync();
    expect(exp.resolved.config?.seeds).toBe(2);
    exp.set("simulator.gamma", 3);
    expect(exp.get("simulator.gamma")).toBe(3);
    expect(exp.shareUrl).toContain("set=simulator.gamma%3D3");
    exp.set("rl.steps", -1);
    expect(exp.resolved.config).toBeNull();
    expect(exp.resolved.error).toMatch(/rl\.steps/);
  });

  it("runs an experiment, fills live curves from progress, and ends with a report", async () => {
    const { backend } = await createBackend("float64");
    const created: number[] = [];
    const exp = new ExperimentState({
      createExecutor: (n) => (created.push(n), new InlineExecutor(backend)),
      decideBackend: decide,
      parallelism: 4,
    });
    tinyUrl(exp);
    const report = await exp.run();
    expect(exp.status).toBe("done");
    expect(exp.error).toBeNull();
    expect(report?.conditions.map((c) => c.id)).toEqual(["base", "single", "vs"]);
    expect(created).toEqual([4]); // min(parallelism, conditions × seeds)
    // every RL unit reported its curve points live (step 0 and the last step)
    for (const id of ["single", "vs"])
      for (const seed of [0, 1])
        expect(exp.curves[`${id}:${seed}`].map((p) => p.step)).toEqual([0, 2]);
    expect(exp.curveRows.length).toBeGreaterThan(0);
  }, 120_000);

  it("resumes from finished tasks with the same numbers", async () => {
    const { backend } = await createBackend("float64");
    const cache = new MemoryCache();
    let runs = 0;
    const counting = () => {
      const inner = new InlineExecutor(backend);
      return {
        parallelism: 1,
        run: (t: Task, p?: never) => (runs++, inner.run(t, p)),
        close: () => inner.close(),
      } as ControlledExecutor;
    };
    const store = {
      put: async () => {},
      get: async () => undefined,
      taskCache: () => cache,
    } as unknown as ExperimentDeps["store"];
    const first = new ExperimentState({
      createExecutor: counting,
      decideBackend: decide,
      parallelism: 1,
      store,
    });
    tinyUrl(first);
    const a = await first.run();
    const fresh = runs;
    const second = new ExperimentState({
      createExecutor: counting,
      decideBackend: decide,
      parallelism: 1,
      store,
    });
    tinyUrl(second);
    const b = await second.run();
    expect(runs).toBe(fresh); // nothing recomputed
    expect(b?.conditions.map((c) => c.summary)).toEqual(a?.conditions.map((c) => c.summary));
  }, 120_000);

  it("pauses, steps, resumes and stops through the executor", async () => {
    const calls: string[] = [];
    let release: (() => void) | undefined;
    const fake: ControlledExecutor = {
      parallelism: 1,
      run: () =>
        new Promise((_, reject) => (release = () => reject(new Error("the run was stopped")))),
      close: async () => (calls.push("close"), release?.()),
      pause: async () => void calls.push("pause"),
      resume: async () => void calls.push("resume"),
      step: async () => void calls.push("step"),
    };
    const exp = new ExperimentState({
      createExecutor: () => fake,
      decideBackend: decide,
      parallelism: 1,
    });
    exp.setUrl(parseUrlState("?preset=persuasion-smoke").state);
    const done = exp.run();
    await expect.poll(() => exp.status).toBe("running");
    await exp.pause();
    expect(exp.status).toBe("paused");
    await exp.step();
    expect(exp.status).toBe("paused");
    await exp.resume();
    expect(exp.status).toBe("running");
    await exp.stop();
    await done;
    expect(exp.status).toBe("stopped");
    expect(exp.error).toBeNull();
    expect(calls).toEqual(["pause", "step", "resume", "close", "close"]);
  });

  it("stops the clock while paused (pretraining included) and starts it again on Resume", async () => {
    let release: (() => void) | undefined;
    const fake: ControlledExecutor = {
      parallelism: 1,
      run: () =>
        new Promise((_, reject) => (release = () => reject(new Error("the run was stopped")))),
      close: async () => release?.(),
      pause: async () => undefined,
      resume: async () => undefined,
    };
    const exp = new ExperimentState({
      createExecutor: () => fake,
      decideBackend: decide,
      parallelism: 1,
    });
    exp.setUrl(parseUrlState("?preset=persuasion-smoke").state);
    const done = exp.run();
    await expect.poll(() => exp.status).toBe("running");
    exp.startedAt = Date.now() - 20_000; // as if it had run twenty seconds
    const t0 = exp.startedAt;
    await exp.pause();
    const frozen = exp.elapsedMs(Date.now());
    expect(exp.elapsedMs(Date.now() + 60_000)).toBe(frozen); // a minute later, the same reading
    exp.pausedAt = Date.now() - 10_000; // as if the pause had lasted ten seconds
    await exp.resume();
    const now = Date.now();
    expect(Math.abs(exp.elapsedMs(now) - (now - t0 - 10_000))).toBeLessThan(50); // the pause left out
    expect(exp.elapsedMs(now + 1000) - exp.elapsedMs(now)).toBe(1000); // running again
    await exp.stop();
    await done;
    const end = exp.elapsedMs(Date.now() + 60_000);
    expect(exp.elapsedMs(Date.now() + 120_000)).toBe(end); // stopped: the clock no longer moves
  });

  it("never makes a run wait for the backend measurement, and drops a measurement a run overlapped", async () => {
    const calls: { measure?: boolean; valid?: () => boolean }[] = [];
    let finishMeasuring: (() => void) | undefined;
    const deps: ExperimentDeps = {
      createExecutor: () => ({
        parallelism: 1,
        run: () => new Promise(() => undefined),
        close: async () => undefined,
      }),
      decideBackend: (_choice, _model, _rows, options = {}) => {
        calls.push(options);
        if (!options.measure) return decide();
        return new Promise(
          (resolve) =>
            (finishMeasuring = () =>
              resolve({ requested: "auto", name: "wasm", reason: "measured" })),
        );
      },
      parallelism: 1,
    };
    const exp = new ExperimentState(deps);
    exp.setUrl(parseUrlState("?preset=persuasion-smoke").state);
    const measuring = exp.prepareBackend(); // the page is idle: measure
    expect(calls).toHaveLength(1);
    expect(calls[0].measure).toBe(true);
    expect(calls[0].valid?.()).toBe(true);
    void exp.run(); // a run starts before the measurement ends: it does not wait, and the measurement is void
    await expect.poll(() => exp.status).toBe("running");
    expect(calls[1].measure).toBe(false);
    expect(calls[0].valid?.()).toBe(false);
    finishMeasuring?.();
    await measuring;
    await exp.stop();
  });
});
