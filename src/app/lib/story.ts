// The numbers the Experiment page's narrative reads aloud, taken from the shown report: how far
// `single` falls from its training simulator to humans, and where each fix lands. The sentences
// follow the numbers (a run in which a fix does not beat `single` says so).
import type { ConditionId } from "../../experiment/config";
import type { RunReport, SummaryMetric } from "../../experiment/experiment";
import { pairedDifference, type PairedSummary } from "../../experiment/stats";

/** The paper's two fixes, in the order the story names them (cotrain is population without its pool). */
export const FIXES: readonly ConditionId[] = ["vs", "population"];

export interface Headline {
  id: ConditionId;
  train: number;
  heldout: number;
  human: number;
}

export interface FixOutcome extends Headline {
  /** Mean gain over `single`, in points of success (0–100 scale). */
  heldoutGain: number;
  humanGain: number;
  /** Beats `single` on both the held-out panel and humans (by the means). */
  beats: boolean;
}

export interface Story {
  single: Headline | null;
  fixes: FixOutcome[];
  seeds: number;
}

const headline = (report: RunReport, id: ConditionId): Headline | null => {
  const c = report.conditions.find((x) => x.id === id);
  if (!c) return null;
  return {
    id,
    train: 100 * c.summary.trainSuccess.mean,
    heldout: 100 * c.summary.heldoutSuccess.mean,
    human: 100 * c.summary.humanSuccess.mean,
  };
};

export function storyOf(report: RunReport): Story {
  const single = headline(report, "single");
  const fixes: FixOutcome[] = [];
  if (single) {
    for (const id of FIXES) {
      const h = headline(report, id);
      if (!h) continue;
      const heldoutGain = h.heldout - single.heldout;
      const humanGain = h.human - single.human;
      fixes.push({ ...h, heldoutGain, humanGain, beats: heldoutGain > 0 && humanGain > 0 });
    }
  }
  return { single, fixes, seeds: report.config.seeds };
}

export interface GapRow {
  condition: ConditionId;
  /** "held-out panel" or "humans": the opponent the training-simulator success is compared with. */
  versus: "held-out panel" | "humans";
  /** Training-simulator success minus the other's, in points; with its interval over seeds. */
  gap: PairedSummary;
  /** The same difference for each seed, in points. */
  perSeed: number[];
}

/**
 * The generalisation gap of each condition: success against its own training simulator minus
 * success on the held-out panel and with humans, paired over seeds (both are measured on the same
 * trained policy), in points. `base` is left out: it did not train against anything.
 */
export function generalisationGaps(report: RunReport, level = 0.95): GapRow[] {
  const rows: GapRow[] = [];
  const versus: [GapRow["versus"], SummaryMetric][] = [
    ["held-out panel", "heldoutSuccess"],
    ["humans", "humanSuccess"],
  ];
  for (const c of report.conditions) {
    if (c.id === "base" || c.seeds.length === 0) continue;
    const train = c.seeds.map((s) => 100 * s.trainSuccess);
    for (const [name, metric] of versus) {
      const other = c.seeds.map(
        (s) => 100 * (metric === "heldoutSuccess" ? s.heldoutSuccess : s.humanSuccess),
      );
      rows.push({
        condition: c.id,
        versus: name,
        gap: pairedDifference(train, other, level),
        perSeed: train.map((t, i) => t - other[i]),
      });
    }
  }
  return rows;
}

/** "89 %" — whole points for prose. */
export const points = (x: number) => `${Math.round(x)}\u202f%`;
/** "+12" / "−3" — a signed difference in points for prose. */
export const signed = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(Math.round(x))}`;
