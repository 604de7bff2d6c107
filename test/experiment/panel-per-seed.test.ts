// A held-out panel per seed: every seed draws and pretrains its own panel from the same
// member configs, so the seeds' spread covers the panel's randomness; seed s's panel is the one a
// run with seedBase = s drew before (seed 0's models and their store keys are unchanged). The same
// seed gives the same weights; different seeds give different ones; each seed's units and
// diagnostics are evaluated on that seed's panel. Tiny models pretrained for a few steps.
import { describe, expect, it } from "vitest";
import { createBackend } from "../../src/engine/backends/index";
import { merge, validateConfig, type ExperimentConfig } from "../../src/experiment/config";
import { runExperiment } from "../../src/experiment/experiment";
import { presetConfig } from "../../src/experiment/presets";
import {
  panelJobs,
  pretrainJobs,
  runPretrainJob,
  type PretrainedSet,
  type PretrainResult,
} from "../../src/experiment/pretrain";
import { jobKey } from "../../src/experiment/store";
import {
  InlineExecutor,
  type Executor,
  type Task,
  type TaskResult,
} from "../../src/experiment/tasks";
import type { UnitProgress } from "../../src/experiment/runner";

const TINY = { d: 16, layers: 1, heads: 2, mlpRatio: 2 };
const config: ExperimentConfig = validateConfig(
  merge(presetConfig("persuasion-smoke"), {
    seeds: 2,
    seedBase: 0,
    conditions: ["base", "single"],
    corpus: { dialogues: 64 },
    simulator: { model: TINY, pretrain: { steps: 3, batch: 16 } },
    policy: { model: TINY, pretrain: { steps: 3, batch: 16 } },
    rl: { steps: 1, prompts: 2, groupSize: 4, evalEvery: 1 },
    eval: { episodes: 16, curveEpisodes: 8, diagnosticSamples: 16, diagnosticSeeds: 2 },
    panel: [
      { name: "family-a", gamma: 4, corpusScale: 1, seedOffset: 101 },
      {
        name: "family-b",
        gamma: 8,
        prior: [0.3, 0.4, 0.15, 0.15],
        corpusScale: 0.5,
        seedOffset: 102,
      },
    ],
  }),
);

const weights = (r: PretrainResult) => r.checkpoint.tensors.map((t) => Array.from(t.data));

describe("a held-out panel per seed", () => {
  it("every seed's jobs include its own panel, keyed as seedBase = s keyed it", () => {
    for (const s of [0, 1, 7000]) {
      const jobs = pretrainJobs(config, s);
      expect(jobs.filter((j) => j.kind === "panel")).toEqual([
        { kind: "panel", seed: s, member: 0 },
        { kind: "panel", seed: s, member: 1 },
      ]);
      expect(panelJobs(config, s)).toEqual(jobs.filter((j) => j.kind === "panel"));
      // a run starting at s keys seed s's panel as one starting at 0 does
      const from = validateConfig({ ...config, seedBase: s });
      for (const j of panelJobs(config, s))
        expect(jobKey(from, j, "wasm")).toBe(jobKey(config, j, "wasm"));
    }
    expect(jobKey(config, panelJobs(config, 0)[0], "wasm")).not.toBe(
      jobKey(config, panelJobs(config, 1)[0], "wasm"),
    );
  });

  it("the same seed gives the same panel weights, another seed other weights", async () => {
    const { backend } = await createBackend("float64");
    for (const member of [0, 1]) {
      const a = await runPretrainJob(backend, config, { kind: "panel", seed: 0, member });
      const again = await runPretrainJob(backend, config, { kind: "panel", seed: 0, member });
      const b = await runPretrainJob(backend, config, { kind: "panel", seed: 1, member });
      expect(weights(again), `member ${member}`).toEqual(weights(a));
      expect(weights(b), `member ${member}`).not.toEqual(weights(a));
    }
  }, 60_000);

  it("each seed's units and diagnostics are evaluated on that seed's panel", async () => {
    const { backend } = await createBackend("float64");
    const inline = new InlineExecutor(backend);
    const seen: { kind: Task["kind"]; seed: number; panel: PretrainedSet["panel"] }[] = [];
    const pretrainedJobs: Task[] = [];
    const executor: Executor = {
      parallelism: 1,
      run<T extends Task>(task: T, onProgress?: (p: UnitProgress) => void): Promise<TaskResult<T>> {
        if (task.kind === "pretrain") pretrainedJobs.push(task);
        else
          seen.push({ kind: task.kind, seed: task.pretrained.seed, panel: task.pretrained.panel });
        return inline.run(task, onProgress);
      },
      close: async () => {},
    };
    const report = await runExperiment(config, executor, { backend: "float64" });
    // each seed pretrained its own panel: 2 seeds × (reference, policy, 2 panel members)
    expect(pretrainedJobs).toHaveLength(8);
    const live = new Map<number, PretrainResult[]>();
    for (const s of [0, 1])
      live.set(
        s,
        await Promise.all(
          [0, 1].map((member) =>
            runPretrainJob(backend, config, { kind: "panel", seed: s, member }),
          ),
        ),
      );
    expect(seen.map((x) => `${x.kind}:${x.seed}`).sort()).toEqual([
      "diagnose:0",
      "diagnose:1",
      "unit:0",
      "unit:0",
      "unit:1",
      "unit:1",
    ]);
    for (const x of seen) {
      const own = live.get(x.seed)!;
      x.panel.forEach((p, i) => {
        if (!("result" in p)) throw new Error("a network member expected");
        expect(weights(p.result), `${x.kind} seed ${x.seed} ${p.name}`).toEqual(weights(own[i]));
      });
    }
    // per-member held-out numbers stay in the report, per seed; each seed lists its own panel models
    for (const c of report.conditions)
      for (const s of c.seeds)
        expect(Object.keys(s.heldoutByMember ?? {}).sort()).toEqual(["family-a", "family-b"]);
    for (const p of report.pretraining)
      expect(
        p.models!.filter((m) => m.model.startsWith("panel simulator")).map((m) => m.model),
      ).toEqual(["panel simulator family-a", "panel simulator family-b"]);
  }, 120_000);
});
