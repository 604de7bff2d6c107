// The rows the sweep figure draws (components/SweepFigure.svelte): per point, each paired
// difference vs `single` and the collapse's cost, against the swept value. Success differences
// are in points, whose range is ±100 (drawn as a limit: intervals are never cut); entropy in nats.
import type { ConditionId } from "../../experiment/config";
import {
  GAMMA_PATH,
  valueText,
  type EffectMetric,
  type Json,
  type SweepEffect,
  type SweepSummary,
} from "../../experiment/sweep";

export const COST_LABEL = "collapse's cost: single(γ = 1) − single(γ)";

export const PANEL: Record<EffectMetric, string> = {
  heldoutSuccess: "held-out panel",
  humanSuccess: "humans",
  policyEntropy: "policy entropy",
};

/** The most a difference can be, in the figure's units (null: unbounded). */
export const LIMIT: Record<EffectMetric, number | null> = {
  heldoutSuccess: 100,
  humanSuccess: 100,
  policyEntropy: null,
};

const SCALE: Record<EffectMetric, number> = {
  heldoutSuccess: 100,
  humanSuccess: 100,
  policyEntropy: 1,
};

export interface EffectRow {
  series: string;
  condition: ConditionId | null; // the condition compared with single; null for the cost
  metric: EffectMetric;
  panel: string;
  x: number | string;
  point: string;
  mean: number;
  lo: number;
  hi: number;
  n: number;
  p: number | undefined;
}

/** The axis drawn along x: the first whose values are all numbers, else the first. */
export interface XAxis {
  index: number;
  path: string;
  numeric: boolean;
  /** Numbers all above 0 spanning a factor of 10 or more (γ = 1 … 30): a log scale. */
  log: boolean;
  values: Json[];
}

export function xAxis(summary: SweepSummary): XAxis {
  const numeric = summary.grid.findIndex((a) => a.values.every((v) => typeof v === "number"));
  const index = Math.max(0, numeric);
  const { path, values } = summary.grid[index];
  const xs = values as number[];
  const log = numeric >= 0 && xs.every((v) => v > 0) && Math.max(...xs) / Math.min(...xs) >= 10;
  return { index, path, numeric: numeric >= 0, log, values };
}

/** The other axes: a figure shows one value of each (a slice of the grid). */
export function otherAxes(
  summary: SweepSummary,
): { index: number; path: string; values: Json[] }[] {
  const x = xAxis(summary).index;
  return summary.grid.flatMap((a, index) => (index === x ? [] : [{ index, ...a }]));
}

/** The x-axis's name: γ for simulator.gamma, else the path. */
export const xLabel = (axis: XAxis) =>
  `${axis.path === GAMMA_PATH ? "γ (simulator.gamma)" : axis.path}${axis.log ? ", log scale" : ""}`;

/**
 * The figure's rows for the points whose other settings are `slice` (by axis index; every value
 * of an axis not given). Success in points, entropy in nats.
 */
export function effectRows(summary: SweepSummary, slice: Record<number, Json> = {}): EffectRow[] {
  const axis = xAxis(summary);
  const same = (a: Json, b: Json) => valueText(a) === valueText(b);
  const rows: EffectRow[] = [];
  for (const p of summary.points) {
    if (!Object.entries(slice).every(([i, v]) => same(p.values[Number(i)], v))) continue;
    const v = p.values[axis.index];
    const x = axis.numeric ? (v as number) : valueText(v);
    const add = (series: string, condition: ConditionId | null, e: SweepEffect) => {
      const k = SCALE[e.metric];
      rows.push({
        series,
        condition,
        metric: e.metric,
        panel: PANEL[e.metric],
        x,
        point: p.name,
        mean: k * e.difference.mean,
        lo: k * e.difference.lo,
        hi: k * e.difference.hi,
        n: e.difference.n,
        p: e.difference.p,
      });
    };
    for (const c of p.comparisons) add(`${c.a} − ${c.b}`, c.a, c);
    for (const e of p.cost?.effects ?? []) add(COST_LABEL, null, e);
  }
  return rows;
}
