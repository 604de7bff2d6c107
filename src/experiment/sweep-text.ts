// A sweep's table as text, what `collapse-lab sweep` prints: per point, each condition's paired
// difference vs `single` and the collapse's cost single(γ = 1) − single(γ), with their intervals
// and sign-flip p-values.
import { MIN_CLAIM_SEEDS, type PairedSummary } from "./stats";
import { pValue, table } from "../util/format";
import { GAMMA_PATH, type EffectMetric, type SweepEffect, type SweepSummary } from "./sweep";

const SCALE: Record<EffectMetric, { scale: number; digits: number }> = {
  heldoutSuccess: { scale: 100, digits: 1 },
  humanSuccess: { scale: 100, digits: 1 },
  policyEntropy: { scale: 1, digits: 2 },
};

function cell(effects: readonly SweepEffect[], metric: EffectMetric): string {
  const d: PairedSummary | undefined = effects.find((e) => e.metric === metric)?.difference;
  if (!d) return "–";
  const { scale, digits } = SCALE[metric];
  const f = (x: number) => (scale * x).toFixed(digits);
  if (d.n < 2) return f(d.mean);
  return `${f(d.mean)} [${f(d.lo)}, ${f(d.hi)}] p ${pValue(d.p)}${d.excludesZero ? " *" : ""}`;
}

export function formatSweep(s: SweepSummary): string {
  const seeds = s.points[0].seeds;
  const many = seeds.length > 1;
  const paths = s.grid.map((a) => a.path).join(" × ");
  const rows = [["point, comparison", "held-out", "humans", "policy entropy"]];
  for (const p of s.points) {
    const lines: string[][] = [];
    for (const a of [...new Set(p.comparisons.map((c) => c.a))]) {
      const effects = p.comparisons.filter((c) => c.a === a);
      lines.push([
        `${a} − ${effects[0].b}`,
        ...(["heldoutSuccess", "humanSuccess", "policyEntropy"] as const).map((m) =>
          cell(effects, m),
        ),
      ]);
    }
    if (p.cost)
      lines.push([
        "collapse's cost: single(γ = 1) − single",
        ...(["heldoutSuccess", "humanSuccess", "policyEntropy"] as const).map((m) =>
          cell(p.cost!.effects, m),
        ),
      ]);
    if (!lines.length) lines.push(["(no condition to compare with single)", "", "", ""]);
    rows.push([p.name, "", "", ""], ...lines.map(([label, ...cells]) => [`  ${label}`, ...cells]));
  }
  const out = [
    `sweep of ${s.preset} over ${paths}: ${s.points.length} points, ${seeds.length} seed(s) each (${seeds[0]}–${seeds[seeds.length - 1]}), backend ${s.backend}`,
    many
      ? "paired differences over seeds: mean [95% Student-t interval, not cut at the metric's range] and p, the two-sided sign-flip permutation p-value (success in points, entropy in nats)"
      : "one seed: differences without intervals (run --seeds 2 or more for intervals and p)",
    table(rows)
      .split("\n")
      .map((l) => l.trimEnd())
      .join("\n"),
  ];
  if (many)
    out.push(
      `* the interval excludes 0, said only with ${MIN_CLAIM_SEEDS} seeds or more. Each row is one point's own test: with many points, some intervals miss 0 by chance.`,
    );
  if (s.points.some((p) => p.cost))
    out.push(
      `the collapse's cost: single at ${GAMMA_PATH} = 1 (no collapse) minus single at the point's γ, paired by seed; positive: collapse costs single that much.`,
    );
  for (const n of s.costNotes ?? []) out.push(`  – ${n}`);
  return out.join("\n");
}
