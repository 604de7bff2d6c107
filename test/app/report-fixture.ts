// A real RunReport for the page tests: the persuasion-smoke preset shrunk further (two seeds,
// three conditions, two panel members, tiny models) and run inline on the float64 reference
// backend, so the pages are tested on what the experiment actually produces.
import { createBackend } from "../../src/engine/backends/index";
import { merge, validateConfig } from "../../src/experiment/config";
import { runExperiment, type RunReport } from "../../src/experiment/experiment";
import { presetConfig } from "../../src/experiment/presets";
import { InlineExecutor } from "../../src/experiment/tasks";

const TINY = { d: 16, layers: 1, heads: 2, mlpRatio: 2 };

export const TEST_CONFIG = validateConfig(
  merge(presetConfig("persuasion-smoke"), {
    seeds: 2,
    conditions: ["base", "single", "vs"],
    corpus: { dialogues: 128 },
    simulator: { model: TINY, pretrain: { batch: 16 } },
    policy: { model: TINY, pretrain: { batch: 16 } },
    rl: { steps: 2, prompts: 2, groupSize: 4, evalEvery: 2 },
    panel: presetConfig("persuasion-smoke").panel.slice(0, 2),
    eval: { episodes: 16, curveEpisodes: 8, diagnosticSamples: 16, diagnosticSeeds: 1 },
  }),
);

export async function buildReport(): Promise<RunReport> {
  const { backend } = await createBackend("float64");
  return runExperiment(TEST_CONFIG, new InlineExecutor(backend), {
    backend: "float64",
    preset: "test",
  });
}

/** jsdom has no ResizeObserver; Svelte's bind:clientWidth (the Chart) needs one. It never fires here. */
export function stubResizeObserver(): void {
  globalThis.ResizeObserver ??= class {
    observe() {}
    unobserve() {}
    disconnect() {}
  };
}

/** Text as a reader sees it: HTML's white space (not the narrow no-break space) collapsed, as rendering does. */
export const collapsed = (text: string | null): string =>
  (text ?? "").replace(/[ \t\n\r\f]+/g, " ").trim();
