// Presets: small overrides of a benchmark's default config, each with a one-line purpose.
import type { BenchmarkId } from "../benchmarks/registry";
import { defaultConfig, merge, validateConfig, type ExperimentConfig } from "./config";

export interface Preset {
  id: string;
  benchmark: BenchmarkId;
  scale: "paper" | "quick" | "smoke"; // the paper's comparison, the same at a budget that runs live, or plumbing only
  title: string;
  description: string;
  overrides: unknown;
}

/**
 * The paper's models and world (the two-layer simulators pretrained for 1,500 steps, loaded from the
 * store of pretrained models for these seeds), the four conditions the claim is about, and a smaller
 * RL budget: 300 GRPO steps of 8 prompts × 8 rollouts instead of 400 × 128.
 */
const QUICK = {
  seeds: 3,
  conditions: ["base", "single", "vs", "population"],
  rl: { steps: 300, prompts: 8, groupSize: 8, evalEvery: 50 },
  eval: { episodes: 256, curveEpisodes: 64, diagnosticSamples: 256, diagnosticSeeds: 1 },
};

/**
 * A base model's users instead of the humans: the reference simulator learns from a population with
 * the type prior reversed (the study's minority types are the base model's majority), persona
 * cards half as telling (κ 0.5) and replies half as sharp (1 instead of 2). VS at φ = 1 then samples
 * those users, not the humans it is evaluated on (docs/science.md#a-reference-that-is-not-the-humans).
 */
export const SHIFTED_USERS = {
  typePrior: [0.12, 0.18, 0.24, 0.46],
  cardInformativeness: 0.5,
  replySharpness: 1,
};

/**
 * Service at the paper's model sizes with smaller budgets: the customer-service world's dialogues
 * are three times longer than Persuasion's (context 45), so every step costs several times more.
 */
const SERVICE_QUICK = {
  seeds: 2,
  corpus: { dialogues: 4096 },
  simulator: { pretrain: { steps: 400, batch: 64 } },
  policy: { pretrain: { batch: 64 } },
  rl: { steps: 150, prompts: 8, groupSize: 8, evalEvery: 25 },
  population: { snapshotEvery: 4 },
  eval: { episodes: 128, curveEpisodes: 32, diagnosticSamples: 128, diagnosticSeeds: 1 },
};

/** Small models and budgets: the plumbing of every condition in seconds (the tests' preset). */
const SMALL = {
  seeds: 3,
  corpus: { dialogues: 2048 },
  simulator: {
    model: { d: 24, layers: 1, heads: 4, mlpRatio: 4 },
    pretrain: { steps: 200, batch: 64, lr: 5e-3 },
  },
  policy: {
    model: { d: 16, layers: 1, heads: 2, mlpRatio: 4 },
    pretrain: { steps: 100, batch: 64, lr: 5e-3 },
  },
  rl: { steps: 100, prompts: 4, groupSize: 16, lr: 1e-2, evalEvery: 50 },
  eval: { episodes: 256, curveEpisodes: 32, diagnosticSamples: 128, diagnosticSeeds: 1 },
};

/** Every condition for a few steps on the small models: the plumbing only. */
const SMOKE = merge(SMALL, {
  seeds: 1,
  corpus: { dialogues: 256 },
  simulator: { pretrain: { steps: 10 } },
  policy: { pretrain: { steps: 10 } },
  rl: { steps: 4, evalEvery: 2 },
  population: { snapshotEvery: 2 },
  eval: { episodes: 32, curveEpisodes: 16, diagnosticSamples: 64 },
});

export const PRESETS: Preset[] = [
  {
    id: "persuasion-paper",
    benchmark: "persuasion",
    scale: "paper",
    title: "Persuasion — the paper's figure",
    description:
      "all six conditions, 20 seeds (1000–1019, far from the seeds the world was tuned on), full budgets; its models are in the store, and training takes about 50 minutes on two idle cores",
    overrides: { seeds: 20, seedBase: 1000 },
  },
  {
    id: "persuasion-quick",
    benchmark: "persuasion",
    scale: "quick",
    title: "Persuasion — quick",
    description:
      "base, single, vs and population (ensemble and cotrain left out), 3 seeds, the paper's models, 300 RL steps of 64 rollouts; about 2 minutes on two cores",
    overrides: QUICK,
  },
  {
    id: "persuasion-shifted-paper",
    benchmark: "persuasion",
    scale: "paper",
    title: "Persuasion — a reference that is not the humans",
    description:
      "persuasion-quick's conditions and budget on 20 far seeds (1000–1019), with the reference simulator pretrained on a base model's users instead of the humans (type prior reversed, cards and replies half as telling), so that VS is no oracle for the humans; its models are in the store, and training takes 16–45 minutes on two cores, idle to busy",
    overrides: merge(QUICK, {
      seeds: 20,
      seedBase: 1000,
      simulator: { referenceWorld: SHIFTED_USERS },
    }),
  },
  {
    id: "persuasion-smoke",
    benchmark: "persuasion",
    scale: "smoke",
    title: "Persuasion — smoke test",
    description:
      "every condition for a few steps on tiny budgets; checks the plumbing, not the science",
    overrides: SMOKE,
  },
  {
    id: "service-paper",
    benchmark: "service",
    scale: "paper",
    title: "Service — the paper's comparison",
    description:
      "all six conditions on the customer-service world, 5 seeds, full budgets and 1,200 RL steps of 128 rollouts (at 600, vs only starts to lead with humans); many hours on two cores, meant for WebGPU or the remote tier",
    overrides: { seeds: 5, rl: { steps: 1200 } },
  },
  {
    id: "service-quick",
    benchmark: "service",
    scale: "quick",
    title: "Service — quick",
    description:
      "all six conditions on the customer-service world, 2 seeds, the paper's models (pretrained, from the store) and 150 RL steps of 64 rollouts (single overfits; vs and population are still learning at this budget); about 16 minutes on two cores: an RL step of this world costs about eight times Persuasion's",
    overrides: SERVICE_QUICK,
  },
  {
    id: "service-smoke",
    benchmark: "service",
    scale: "smoke",
    title: "Service — smoke test",
    description:
      "every condition for a few steps on tiny budgets; checks the plumbing of the customer-service world, not the science",
    overrides: SMOKE,
  },
  {
    id: "cooperation-paper",
    benchmark: "cooperation",
    scale: "paper",
    title: "Cooperation — the paper's comparison",
    description:
      "all six conditions on the two-agent coding world, 5 seeds, 800 RL steps of 128 rollouts (at 400, vs and population are still rising); its 45 models are in the store, and training takes about an hour on two cores",
    overrides: { seeds: 5, rl: { steps: 800 } },
  },
  {
    id: "cooperation-quick",
    benchmark: "cooperation",
    scale: "quick",
    title: "Cooperation — quick",
    description:
      "base, single, vs and population on the two-agent coding world, 3 seeds, the paper's models (pretrained, from the store) and 300 RL steps of 64 rollouts (single overfits; vs and population do not beat it yet); about 5 minutes on two cores",
    overrides: QUICK,
  },
  {
    id: "cooperation-smoke",
    benchmark: "cooperation",
    scale: "smoke",
    title: "Cooperation — smoke test",
    description:
      "every condition for a few steps on tiny budgets; checks the plumbing of the two-agent coding world, not the science",
    overrides: SMOKE,
  },
];

/** The preset of a benchmark at a scale (each benchmark has one of each), e.g. the quick version of the shown preset's benchmark. */
export function presetAt(benchmark: BenchmarkId, scale: Preset["scale"]): Preset {
  const p = PRESETS.find((x) => x.benchmark === benchmark && x.scale === scale);
  if (!p) throw new Error(`no ${scale} preset for the ${benchmark} benchmark`);
  return p;
}

export function presetConfig(id: string): ExperimentConfig {
  const p = PRESETS.find((x) => x.id === id);
  if (!p)
    throw new Error(`unknown preset "${id}"; presets: ${PRESETS.map((x) => x.id).join(", ")}`);
  return validateConfig(merge(defaultConfig(p.benchmark), p.overrides));
}
