// The real pipeline against the truth it was built with. A small real run (the smoke preset's
// models, pretraining, RL and diagnostics through runExperiment) is diagnosed with 256 dialogues
// per simulator; every network simulator's γ̂ (maximum likelihood against its own reference
// network, metrics/gamma.ts) must sit within 4 of its standard errors of the γ the run built it
// with: the reference (1), the aligned simulator (config γ), the ensemble's other families and each
// network panel member (their own γ). Then the γ = 1 ablation: with simulator.gamma = 1 every
// code path that builds an aligned simulator — the `single`, `ensemble`, `cotrain` and
// `population` opponents (conditions.ts) and the diagnostics — gives exactly the reference's
// distributions.
//
// Why these sizes: over seedBase 0–9 × 9 simulators with 256 dialogues the z-scores had mean 0.08,
// sd 1.05 and max |z| 3.7 (one of 90; seedBase 0, used here, 1.8); a parametric bootstrap of the
// estimator on the run's own states gave z with sd 0.95–1.02, so its standard error is honest at
// this size. Each se is 3–10 % of γ, so a γ applied wrongly (not at all, twice, to the wrong model)
// is tens of standard errors off. About 15 s on two idle cores.
import { beforeAll, describe, expect, it } from "vitest";
import type { createPersuasion } from "../../src/benchmarks/persuasion/bench";
import { JaxBackend } from "../../src/engine/backends/jax";
import {
  CONDITIONS,
  merge,
  validateConfig,
  type ConditionId,
  type ExperimentConfig,
} from "../../src/experiment/config";
import { createOpponents } from "../../src/experiment/conditions";
import type { DiagnosticsReport } from "../../src/experiment/diagnostics";
import {
  pretrainTaskKey,
  runExperiment,
  type RunReport,
  type TaskCache,
} from "../../src/experiment/experiment";
import { jobKey } from "../../src/experiment/store";
import { benchmarkFor } from "../../src/benchmarks/registry";
import {
  assemblePretrained,
  modelOptions,
  pretrainJobs,
  type PretrainedSet,
  type PretrainJob,
  type PretrainResult,
} from "../../src/experiment/pretrain";
import { presetConfig } from "../../src/experiment/presets";
import { executeTask, InlineExecutor } from "../../src/experiment/tasks";
import { NeuralSimulator } from "../../src/simulators/neural";
import { userStates } from "./behaviour-states";

const config: ExperimentConfig = validateConfig(
  merge(presetConfig("persuasion-smoke"), {
    seeds: 1,
    seedBase: 0,
    conditions: ["base", "ensemble"], // the ensemble's members are pretrained only when it runs
    eval: { diagnosticSamples: 256 },
  }),
);
const ablation: ExperimentConfig = validateConfig(merge(config, { simulator: { gamma: 1 } }));
const bench = benchmarkFor(config) as ReturnType<typeof createPersuasion>;

let jax: JaxBackend;
let report: RunReport;
let pretrained: PretrainedSet; // the run's own pretrained models, kept through its task cache

beforeAll(async () => {
  jax = await JaxBackend.create("wasm");
  const kept = new Map<string, unknown>();
  const cache: TaskCache = {
    get: async (k) => kept.get(k),
    put: async (k, v) => void kept.set(k, v),
  };
  report = await runExperiment(config, new InlineExecutor(jax), { backend: "wasm", cache });
  const results = new Map<PretrainJob, PretrainResult>();
  for (const job of pretrainJobs(config, 0))
    results.set(job, kept.get(pretrainTaskKey(jobKey(config, job, "wasm"))) as PretrainResult);
  pretrained = assemblePretrained(config, 0, results);
}, 300_000);

describe("γ̂ from a real run's diagnostics", () => {
  it("is within 4 standard errors of the true γ for the reference, the aligned simulator, the ensemble and each network panel member", () => {
    expect(
      report.simulators,
      JSON.stringify((report as { diagnosticsErrors?: unknown }).diagnosticsErrors),
    ).toHaveLength(1);
    const sims = report.simulators[0].simulators.filter(
      (s) => s.role !== "humans" && s.role !== "vs",
    );
    const expected: [string, number][] = [
      ["reference simulator", 1],
      ["aligned simulator", config.simulator.gamma],
      // the ensemble's other families (smoke lists them), each at its own γ
      ...config.ensemble.members
        .slice(0, config.ensemble.k - 1)
        .map((m): [string, number] => [m.name, m.gamma]),
      ...config.panel.map((m): [string, number] => [m.name, m.gamma!]),
    ];
    expect(config.ensemble.members.length).toBeGreaterThanOrEqual(config.ensemble.k - 1);
    expect(sims.map((s) => [s.name, s.trueGamma])).toEqual(expected);
    expect(new Set(expected.map(([, g]) => g)).size).toBeGreaterThanOrEqual(5); // γ from 1 to 15: not one value checked many times
    const z = sims.map((s) => {
      expect(s.gammaMLE, s.name).not.toBeNull();
      const { gamma, se } = s.gammaMLE!;
      expect(
        Number.isFinite(gamma) && se > 0 && Number.isFinite(se),
        `${s.name}: ${gamma} ± ${se}`,
      ).toBe(true);
      expect(se, `${s.name}: se ${se} is too wide for the check to mean much`).toBeLessThan(
        0.15 * s.trueGamma!,
      );
      return { name: s.name, truth: s.trueGamma!, gamma, se, z: (gamma - s.trueGamma!) / se };
    });
    for (const r of z)
      expect(
        Math.abs(r.z),
        `${r.name}: γ̂ = ${r.gamma.toFixed(3)} ± ${r.se.toFixed(3)}, true ${r.truth}, z = ${r.z.toFixed(2)}`,
      ).toBeLessThan(4);
  });
});

describe("the γ = 1 ablation", () => {
  it("every training condition's aligned simulator is the reference exactly", async () => {
    const ds = userStates(bench, 40, 77);
    expect(ds.length).toBeGreaterThan(100);
    const ctx = {
      backend: jax,
      bench,
      config: ablation,
      pretrained,
      opts: modelOptions(bench, ablation),
    };
    const refModel = jax.createModel(pretrained.reference.checkpoint, ctx.opts);
    const reference = await new NeuralSimulator("reference", bench, refModel, 1, true).distribution(
      ds,
    );
    refModel.dispose();
    // the reference is a real distribution on each state's allowed acts, not a constant
    const V = bench.acts.length;
    expect(
      new Set(ds.map((_, j) => Math.max(...reference.subarray(j * V, (j + 1) * V)))).size,
    ).toBeGreaterThan(10);

    const built: ConditionId[] = ["single", "ensemble", "cotrain", "population"];
    expect(CONDITIONS.filter((c) => !built.includes(c))).toEqual(["base", "vs"]); // vs samples candidates: not π_ref even at γ = 1
    for (const id of built) {
      const opponents = createOpponents(id, ctx)!;
      // the ensemble's first member is the run's reference checkpoint; the others are other families,
      // at their own γ: the ablation removes the single simulator's collapse, not theirs
      const sim = opponents.evaluationSimulators()[0];
      expect(await sim.distribution(ds, []), id).toEqual(reference);
      opponents.dispose();
    }
    // and with the run's γ they differ (the check above can fail)
    const sharp = createOpponents("single", { ...ctx, config })!;
    expect(await sharp.evaluationSimulators()[0].distribution(ds, [])).not.toEqual(reference);
    sharp.dispose();
  });

  it("the diagnostics' aligned simulator is the reference exactly", async () => {
    const d = (await executeTask(jax, {
      kind: "diagnose",
      config: ablation,
      pretrained,
    })) as DiagnosticsReport;
    const row = (name: string) => d.simulators.find((s) => s.name === name)!;
    expect(row("aligned simulator").trueGamma).toBe(1);
    expect(d.alignedKL).toBe(d.referenceKL);
    expect(d.alignedKL).toBeGreaterThan(0);
    for (const t of d.replyTables!) {
      const probs = (name: string) => t.rows.find((r) => r.name === name)!.probs;
      expect(probs("aligned simulator"), t.id).toEqual(probs("reference simulator"));
    }
    const { gamma, se } = row("aligned simulator").gammaMLE!;
    expect(Math.abs(gamma - 1) / se, `γ̂ = ${gamma} ± ${se}`).toBeLessThan(4);
  });
});
