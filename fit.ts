import { createPersuasion, DEFAULT_PARAMS } from "./src/benchmarks/persuasion/world";
import { Rng } from "./src/engine/random";
let best: any = null;
for (const delta of [-0.3, -0.2, -0.1, 0]) for (const t0 of [-0.1, 0, 0.1, 0.2]) for (const D of [0.7, 0.8, 0.9, 1.0]) for (const slope of [2.5, 3, 4]) {
  const params = { ...DEFAULT_PARAMS, thresholds: [t0, t0 + D, t0 + 2 * D, t0 + 3 * D], decisionSlope: slope, types: DEFAULT_PARAMS.types.map((t) => ({ ...t, w0: t.w0 + delta })) };
  const rows = createPersuasion(params).calibration(Rng.seed(1), 3000);
  const loss = rows.reduce((s, r) => s + ((r.fitted - r.real) / r.tolerance) ** 2, 0);
  if (!best || loss < best.loss) best = { loss, delta, t0, D, slope, rows: rows.map((r) => [r.name, r.real, r.fitted.toFixed(3)]) };
}
console.log(JSON.stringify(best));
