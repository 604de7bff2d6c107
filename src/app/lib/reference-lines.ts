// The reference lines of the curves chart (levels on the humans panel): from a report when there
// is one, else computed from the config's world (0.1–0.2 s on the main thread, once per world).
import { benchmarkFor, benchmarkModule } from "../../benchmarks/registry";
import type { ReferenceLine } from "../../benchmarks/types";
import type { ExperimentConfig } from "../../experiment/config";
import { pct } from "../../util/format";

const cache = new Map<string, ReferenceLine[]>();

export function referenceLinesFor(config: ExperimentConfig): ReferenceLine[] {
  const key = JSON.stringify([config.benchmark, config.world]);
  let c = cache.get(key);
  if (!c)
    cache.set(key, (c = benchmarkModule(config.benchmark).referenceLines(benchmarkFor(config))));
  return c;
}

/** The lines a figure draws, each labelled with its name and level on two lines. */
export function referenceRows(
  lines: ReferenceLine[],
): { metric: string; success: number; name: string; label: string; description: string }[] {
  return lines
    .filter((l) => l.onFigure)
    .map((l) => ({
      metric: "humans",
      success: 100 * l.humanSuccess,
      name: l.label,
      label: `${l.label}\n${pct(l.humanSuccess)}`,
      description: l.description,
    }));
}
