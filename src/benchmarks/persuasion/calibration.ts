// Persuasion against Persuasion for Good (docs/architecture.md#persuasion): the population talking
// to the behaviour persuader, against the real corpus' donation statistics (mean, share giving $0,
// median among donors, share giving at least $1) and its donation histogram. Monte Carlo with the
// caller's generator and the stated sample sizes.
import type { Rng } from "../../engine/random";
import type { Calibration, CalibrationRow } from "../types";
import { DEFAULT_STYLE_CONCENTRATION } from "./agents";
import { behaviourDialogue } from "./bench";
import { p4gStats } from "./p4g-stats";
import type { PersuasionPopulation } from "./population";
import { AMOUNTS, STRATEGY_ACTS, donation } from "./world";

/** The calibration rows: n dialogues of the population with the behaviour persuader, against P4G's donations. */
export function calibrate(
  population: PersuasionPopulation,
  rng: Rng,
  n = 20000,
  styleConcentration = DEFAULT_STYLE_CONCENTRATION,
): CalibrationRow[] {
  const amounts: number[] = [];
  const strategyCounts = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const d = behaviourDialogue(population, population.sample(rng), rng, styleConcentration);
    amounts.push(donation(d));
    for (let j = 0; j < d.acts.length; j += 2)
      if (STRATEGY_ACTS.includes(d.acts[j]))
        strategyCounts.set(d.acts[j], (strategyCounts.get(d.acts[j]) ?? 0) + 1);
  }
  const donors = amounts.filter((a) => a > 0).sort((a, b) => a - b);
  const mean = amounts.reduce((s, a) => s + a, 0) / n;
  const zero = amounts.filter((a) => a === 0).length / n;
  const median = donors.length ? donors[Math.floor((donors.length - 1) / 2)] : 0;
  const real = p4gStats.donations;
  return [
    { name: "mean donation ($)", real: real.mean, fitted: mean, tolerance: 0.05 },
    { name: "fraction giving $0", real: real.zeroFraction, fitted: zero, tolerance: 0.05 },
    { name: "median among donors ($)", real: real.donorMedian, fitted: median, tolerance: 0.25 },
    {
      name: "fraction giving ≥ $1 (success)",
      real: real.successFraction,
      fitted: amounts.filter((a) => a >= 1).length / n,
      tolerance: 0.05,
    },
  ];
}

/** What the calibration is against, as the report names it. */
export const CALIBRATION_SOURCE =
  "Persuasion for Good (behaviour persuader × population vs the real corpus)";

/** The report's calibration: the rows and the donation histogram, for the corpus' persuader styles (α). */
export function p4gCalibration(
  pop: PersuasionPopulation,
  styleConcentration: number,
  rng: Rng,
): Calibration {
  const rows = calibrate(pop, rng, 20000, styleConcentration);
  const n = 20000;
  const counts = AMOUNTS.map(() => 0);
  for (let i = 0; i < n; i++)
    counts[
      AMOUNTS.indexOf(donation(behaviourDialogue(pop, pop.sample(rng), rng, styleConcentration)))
    ]++;
  return {
    source: CALIBRATION_SOURCE,
    rows,
    histograms: [
      {
        name: "donation ($)",
        bins: AMOUNTS.map((a) => `$${a}`),
        real: p4gStats.donations.histogram.fractions,
        fitted: counts.map((c) => c / n),
      },
    ],
  };
}
