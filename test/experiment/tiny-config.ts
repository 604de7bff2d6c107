// A preset shrunk to tiny models and budgets with every condition: the end-to-end plumbing tests'
// config (seconds on the float64 backend), two panel members kept.
import {
  CONDITIONS,
  merge,
  validateConfig,
  type ExperimentConfig,
} from "../../src/experiment/config";
import { presetConfig } from "../../src/experiment/presets";

const TINY = { d: 16, layers: 1, heads: 2, mlpRatio: 2 };

export function tinyConfig(preset: string): ExperimentConfig {
  const base = presetConfig(preset);
  return validateConfig(
    merge(base, {
      seeds: 1,
      conditions: [...CONDITIONS],
      corpus: { dialogues: 64 },
      simulator: { model: TINY, pretrain: { steps: 4, batch: 16 } },
      policy: { model: TINY, pretrain: { steps: 4, batch: 16 } },
      rl: { steps: 2, prompts: 2, groupSize: 4, evalEvery: 2 },
      population: { snapshotEvery: 1 },
      panel: base.panel.slice(0, 2),
      eval: { episodes: 16, curveEpisodes: 8, diagnosticSamples: 16, diagnosticSeeds: 1 },
    }),
  );
}
