// The trend of a one-axis sweep: for each condition and metric, every seed's least-squares slope
// of the metric against the swept value (log2 of it for γ, so a slope is per doubling), and the
// mean slope over seeds with its 95 % Student-t interval and sign-flip permutation p. One slope per
// seed tests the whole dose-response at once, where each point's own interval tests one value.
//
//   npx tsx scripts/sweep-trend.ts public/recorded/sweeps/persuasion-gamma
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseReport } from "../src/experiment/report-schema";
import { pairedDifference } from "../src/experiment/stats";
import { GAMMA_PATH, parseSweep, type EffectMetric } from "../src/experiment/sweep";

const METRICS: EffectMetric[] = ["heldoutSuccess", "humanSuccess", "policyEntropy"];

function slope(x: readonly number[], y: readonly number[]): number {
  const mean = (v: readonly number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const mx = mean(x);
  const my = mean(y);
  const sxx = x.reduce((a, xi) => a + (xi - mx) ** 2, 0);
  return x.reduce((a, xi, i) => a + (xi - mx) * (y[i] - my), 0) / sxx;
}

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: npx tsx scripts/sweep-trend.ts <sweep folder>\n");
  process.exit(2);
}
const sweep = parseSweep(readFileSync(join(dir, "sweep.json"), "utf8"));
if (sweep.grid.length !== 1 || !sweep.grid[0].values.every((v) => typeof v === "number")) {
  process.stderr.write(`${dir}: a trend needs a sweep over one numeric setting\n`);
  process.exit(1);
}
const { path, values } = sweep.grid[0];
const log = path === GAMMA_PATH;
const x = (values as number[]).map((v) => (log ? Math.log2(v) : v));
const reports = sweep.points.map((p) => parseReport(readFileSync(join(dir, p.report), "utf8")));

const unit = log ? `per doubling of ${path}` : `per unit of ${path}`;
process.stdout.write(
  `${sweep.preset}, ${sweep.points[0].seeds.length} seeds: slope ${unit} (mean over seeds [95% t interval], sign-flip p; success in points, entropy in nats)\n`,
);
for (const c of reports[0].conditions) {
  for (const metric of METRICS) {
    const slopes = c.seeds.map(({ seed }) =>
      slope(
        x,
        reports.map(
          (r) =>
            r.conditions.find((d) => d.id === c.id)!.seeds.find((s) => s.seed === seed)![metric],
        ),
      ),
    );
    const d = pairedDifference(
      slopes,
      slopes.map(() => 0),
    );
    const f = (v: number) => (metric === "policyEntropy" ? v.toFixed(3) : (100 * v).toFixed(2));
    process.stdout.write(
      `${c.id.padEnd(11)} ${metric.padEnd(15)} ${f(d.mean)} [${f(d.lo)}, ${f(d.hi)}] p ${d.p === undefined ? "–" : d.p.toFixed(4)}\n`,
    );
  }
}
