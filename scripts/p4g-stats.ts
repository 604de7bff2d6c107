// Prints the Persuasion for Good calibration statistics and writes them, rounded, to
// src/benchmarks/persuasion/p4g-stats.json (numbers only, no corpus rows), which the app imports.
// Usage: npx tsx scripts/p4g-stats.ts [data-dir]   (default: ../shared/data/p4g from the project root)
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadP4GStats, roundP4GStats } from "../src/benchmarks/persuasion/p4g-load";
import {
  P4G_STRATEGIES,
  P4G_TRAITS,
  type Correlation,
} from "../src/benchmarks/persuasion/p4g-stats";
import { fixed, pct, table } from "../src/util/format";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = resolve(ROOT, "src/benchmarks/persuasion/p4g-stats.json");

const args = process.argv.slice(2);
if (args.length > 1 || args[0]?.startsWith("-")) {
  process.stderr.write("usage: npx tsx scripts/p4g-stats.ts [data-dir]\n");
  process.exit(2);
}
const dir = args[0] === undefined ? resolve(ROOT, "../shared/data/p4g") : resolve(args[0]);

const stats = loadP4GStats(dir);
const clamped = loadP4GStats(dir, { outOfRange: "clamp" }); // sensitivity only; not written

const r = (x: Correlation) => (x === null ? "n/a" : (x >= 0 ? "+" : "") + fixed(x, 3));
// |r| above which a correlation differs from 0 at about p < 0.05 (two-sided, normal approximation).
const rCritical = (n: number) => 1.96 / Math.sqrt(n - 2 + 1.96 ** 2);
const log = (s = "") => process.stdout.write(s + "\n");

const d = stats.donations;
log(`Persuasion for Good statistics from ${dir}`);
log();
log(
  `Persuadee donations: n ${d.n} (dropped: ${d.droppedNonNumeric} non-numeric, ${d.outOfRangeCount} outside [0, 2])`,
);
log(
  `  mean $${fixed(d.mean, 3)} · give $0 ${pct(d.zeroFraction, 1)} · median among donors $${fixed(d.donorMedian, 2)} · success (≥ $1) ${pct(d.successFraction, 1)}`,
);
log(
  `  if the ${clamped.donations.outOfRangeCount} out-of-range records were clamped to $2 instead: mean $${fixed(clamped.donations.mean, 3)}, give $0 ${pct(clamped.donations.zeroFraction, 1)}, success ${pct(clamped.donations.successFraction, 1)}`,
);
log(
  table([
    ["toy amount", ...d.histogram.amounts.map((a) => `$${a}`)],
    ["fraction", ...d.histogram.fractions.map((f) => pct(f, 1))],
  ]),
);
log();

const sd = stats.strategyDonation;
log(
  `Persuader strategies (primary labels, ${stats.annotated.dialogues} annotated dialogues) and correlation with the donation`,
);
log(
  `  over ${sd.dialogues} dialogues with a kept donation; |r| > ${fixed(rCritical(sd.dialogues), 3)} is roughly significant at 5%`,
);
log(
  table([
    [
      "strategy",
      "sentences",
      "freq",
      "dialogues using",
      "r(sentences)",
      "r(used)",
      "r(sentences), clamped",
    ],
    ...P4G_STRATEGIES.map((s) => [
      s,
      String(stats.strategies.counts[s]),
      pct(stats.strategies.frequencies[s], 1),
      String(sd.dialoguesUsing[s]),
      r(sd.bySentences[s]),
      r(sd.byUse[s]),
      r(clamped.strategyDonation.bySentences[s]),
    ]),
  ]),
);
log(
  `  highest: by sentences ${sd.highestBySentences}, by use ${sd.highestByUse} (clamped: ${clamped.strategyDonation.highestBySentences}, ${clamped.strategyDonation.highestByUse})`,
);
log(
  `  other persuader acts: ${Object.entries(stats.strategies.otherPersuaderCounts)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ")}`,
);
log();

log(
  `Persuadee acts (${Object.values(stats.persuadeeActs.counts).reduce((a, b) => a + b, 0)} sentences)`,
);
log(
  table([
    ["act", "sentences", "freq"],
    ...Object.entries(stats.persuadeeActs.counts).map(([k, n]) => [
      k,
      String(n),
      pct(stats.persuadeeActs.frequencies[k], 1),
    ]),
  ]),
);
log();

const td = stats.traitDonating;
log(
  `Persuadee traits vs donating (> $0); |r| > ${fixed(rCritical(td.n.agreeable), 3)} is roughly significant at 5%`,
);
log(
  table([
    ["trait", "n", "r"],
    ...P4G_TRAITS.map((t) => [t, String(td.n[t]), r(td.correlations[t])]),
  ]),
);
log();

log(
  `Annotated dialogues: ${stats.annotated.dialogues}, ${stats.annotated.sentences} sentences, ${fixed(stats.annotated.meanPersuaderTurns, 2)} persuader turns on average (the toy has ≤ 5 exchanges)`,
);

writeFileSync(OUT, JSON.stringify(roundP4GStats(stats), null, 2) + "\n");
log();
log(`wrote ${OUT}`);
