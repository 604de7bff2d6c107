// Where two experiment configs differ, leaf by leaf, as "path: a → b" lines: a figure says so
// when the run it shows was made with settings other than the ones in the URL and the controls.
import type { ExperimentConfig } from "./config";

/** Settings that do not change what a run computes (only how many workers run it). */
const IGNORED = new Set(["parallel"]);

function leaves(x: unknown, path: string, out: Map<string, string>): void {
  if (x !== null && typeof x === "object" && !Array.isArray(x)) {
    for (const [k, v] of Object.entries(x))
      if (!(path === "" && IGNORED.has(k))) leaves(v, path ? `${path}.${k}` : k, out);
  } else if (x !== undefined) {
    out.set(path, JSON.stringify(x));
  }
}

/** Every leaf (arrays whole) whose value differs, in the shown config's order, then the other's. */
export function configDifferences(
  shown: ExperimentConfig,
  wanted: ExperimentConfig,
): { path: string; shown: string; wanted: string }[] {
  const a = new Map<string, string>();
  const b = new Map<string, string>();
  leaves(shown, "", a);
  leaves(wanted, "", b);
  const paths = [...new Set([...a.keys(), ...b.keys()])];
  return paths
    .filter((p) => a.get(p) !== b.get(p))
    .map((p) => ({ path: p, shown: a.get(p) ?? "(unset)", wanted: b.get(p) ?? "(unset)" }));
}
