// The default experiment config of each benchmark: the common defaults below, with the benchmark's
// own `world` and `corpus` sections and its defaults for the shared sections
// (BenchmarkModule.configDefaults) merged over them. Every benchmark gives its held-out panel and
// its ensemble's families there, since their type mixtures name its latent types.
import { benchmarkModule, type BenchmarkId } from "../benchmarks/registry";
import { CONDITIONS, type ExperimentConfig } from "./config-schema";
import { merge } from "./config-set";
import { validateConfig } from "./config-validate";

/** The sections every benchmark shares, but for the panel and the ensemble (each benchmark's own). */
type CommonDefaults = Omit<
  ExperimentConfig,
  "benchmark" | "world" | "corpus" | "ensemble" | "panel"
>;

const COMMON_DEFAULTS: CommonDefaults = {
  version: 1,
  seeds: 3,
  seedBase: 0,
  conditions: [...CONDITIONS],
  // Two layers and 1,500 steps: a one-layer simulator attends over a bag of tokens and cannot pair
  // a reply with the act it answers, so it cannot infer the latent type the way the Bayes predictive
  // does. Its replies are then furthest from the Bayes predictive exactly in the states an adaptive
  // policy reaches (in Persuasion, the donation decision), and VS, which samples it, teaches little
  // that transfers to humans (docs/architecture.md#models).
  simulator: {
    gamma: 10,
    model: { d: 32, layers: 2, heads: 4, mlpRatio: 4 },
    pretrain: { steps: 1500, batch: 128, lr: 3e-3 },
  },
  policy: {
    model: { d: 32, layers: 1, heads: 4, mlpRatio: 4 },
    pretrain: { steps: 150, batch: 128, lr: 3e-3 },
  },
  // 400 steps: compare at convergence (docs/architecture.md#models, trap 3). The collapsed simulator's
  // low-variance reward makes `single` converge first, while `vs` and the co-trained conditions keep
  // rising for longer, so a short budget favours `single`; `vs` converges last.
  rl: {
    steps: 400,
    prompts: 8,
    groupSize: 16,
    lr: 3e-3,
    klCoef: 0.05,
    epsLow: 0.2,
    epsHigh: 0.28,
    temperature: 1,
    evalEvery: 50,
  },
  vs: { k: 5, selection: "random", fidelity: 1 },
  // The forward (mass-covering) anchor: it brings the co-trained simulator back to the reference far
  // sooner than the reverse one, under which early `population` snapshots stay collapsed.
  cotrain: { reward: "adversarial", lr: 1e-3, klCoef: 3, anchor: "forward" },
  population: { poolSize: 10, snapshotEvery: 8, selection: "random", draw: "batch" },
  eval: { episodes: 512, curveEpisodes: 128, diagnosticSamples: 1024, diagnosticSeeds: 1 },
};

/** The default config of a benchmark: the common defaults with its own sections and overrides. */
export function defaultConfig(benchmark: BenchmarkId): ExperimentConfig {
  const m = benchmarkModule(benchmark);
  return validateConfig(
    merge(
      { ...COMMON_DEFAULTS, benchmark, world: m.defaultWorld, corpus: m.defaultCorpus },
      m.configDefaults,
    ),
  );
}

/** Persuasion's default config. */
export const DEFAULT_CONFIG: ExperimentConfig = defaultConfig("persuasion");
