// The world's exact ceilings for the curves chart (reference lines on the humans panel), from a
// report when there is one, else computed from the config's world (0.1–0.2 s on the main thread, once per world).
import { ceilings, type Ceilings } from "../../benchmarks/persuasion/ceilings";
import type { ExperimentConfig } from "../../experiment/config";
import { benchmarkFor } from "../../experiment/pretrain";

const cache = new Map<string, Ceilings>();

export function ceilingsFor(config: ExperimentConfig): Ceilings {
  const key = JSON.stringify(config.world);
  let c = cache.get(key);
  if (!c) cache.set(key, (c = ceilings(benchmarkFor(config).population)));
  return c;
}

/** Reference lines for the humans facet: the modal user's best script and reading the first reply (labels of two lines). */
export function ceilingRows(c: Ceilings): { metric: string; success: number; label: string }[] {
  return [
    { metric: "humans", success: 100 * c.modalScript.humanSuccess, label: `${c.modalType}'s script\n${(100 * c.modalScript.humanSuccess).toFixed(0)} %` },
    { metric: "humans", success: 100 * c.adaptOnce.humanSuccess, label: `reading replies\n${(100 * c.adaptOnce.humanSuccess).toFixed(0)} %` },
  ];
}
