// Cooperation against CooperBench's published numbers (docs/architecture.md#cooperation; arXiv 2601.13295): the curse of
// coordination (a behaviour agent with a partner vs the same agent alone with both features, on the
// same tasks), conflicts with and without a plan in the first turn, the share of feature pairs whose
// plans overlap, and the mix of failure causes. Agent rates are Monte Carlo with a fixed seed and
// the stated sample sizes; the overlap share is exact.
//
// Tolerances: the coop / solo ratio spans CooperBench's models (0.39–0.73 over four models; 0.55–0.58
// for the two strongest), so ±0.15 around 0.55; failure shares rest on a few hundred annotated
// failures, ±0.1; conflict rates ±0.12 (the paper reports them for one setting, and the toy's
// conflicts depend on how often its behaviour agent edits before talking, which nothing else pins).
import type { Rng } from "../../engine/random";
import type { Calibration, CalibrationRow, Persona } from "../types";
import { behaviourAgent, soloBehaviour } from "./agents";
import {
  FAILURE_CAUSES,
  failureCause,
  playEpisode,
  type CooperationBenchmark,
  type FailureCause,
} from "./bench";
import { overlapShare } from "./population";
import { merge, planOf, plansOf } from "./world";

export const COOPERBENCH = {
  coopOverSolo: 0.55, // GPT-5 28.0 / 48.3 = 0.58, Claude Sonnet 4.5 25.9 / 47.1 = 0.55
  solo: { gpt5: 0.483, claude: 0.471 },
  coop: { gpt5: 0.28, claude: 0.259 },
  conflictsWithPlan: 0.29, // a plan in the first turn
  conflictsWithoutPlan: 0.52,
  overlapping: 0.77, // pairs whose gold patches conflict
  failures: { expectation: 0.42, commitment: 0.32, communication: 0.26 } as Record<
    FailureCause,
    number
  >,
};

export const CALIBRATION_EPISODES = 20000;

export interface CoopMeasured {
  coop: number; // success with a partner of the population
  solo: number; // success alone with both features, on the same tasks
  conflicts: { withPlan: number; withoutPlan: number; planShare: number };
  failures: Record<FailureCause, number>; // shares over failed cooperative episodes
  byType: number[];
}

/** The behaviour agent with partners of the population and alone on the same tasks. */
export function measureBehaviour(
  bench: CooperationBenchmark,
  rng: Rng,
  episodes = CALIBRATION_EPISODES,
): CoopMeasured {
  const E = bench.params.maxExchanges;
  const agent = behaviourAgent(E);
  const solo = soloBehaviour();
  const pop = bench.humans;
  let coop = 0;
  let alone = 0;
  const plan = { n: [0, 0], conflicts: [0, 0] };
  const causes: Record<FailureCause, number> = { expectation: 0, commitment: 0, communication: 0 };
  let failed = 0;
  const wins = new Array<number>(pop.types.length).fill(0);
  const seen = new Array<number>(pop.types.length).fill(0);
  const coopRng = rng.split();
  const soloRng = rng.split();
  for (let i = 0; i < episodes; i++) {
    const persona: Persona = pop.sample(rng);
    const d = playEpisode(bench, persona, agent, coopRng);
    const ok = bench.success(d);
    coop += ok ? 1 : 0;
    wins[persona.type] += ok ? 1 : 0;
    seen[persona.type]++;
    const first = planOf(d.acts[1]) >= 0 ? 1 : 0;
    plan.n[first]++;
    if (merge(plansOf(d), d.acts).conflicts.length) plan.conflicts[first]++;
    const cause = failureCause(plansOf(d), d.acts);
    if (cause) {
      causes[cause]++;
      failed++;
    }
    alone += bench.success(playEpisode(bench, persona, solo, soloRng, "solo")) ? 1 : 0;
  }
  return {
    coop: coop / episodes,
    solo: alone / episodes,
    conflicts: {
      withPlan: plan.conflicts[1] / Math.max(1, plan.n[1]),
      withoutPlan: plan.conflicts[0] / Math.max(1, plan.n[0]),
      planShare: plan.n[1] / episodes,
    },
    failures: Object.fromEntries(
      FAILURE_CAUSES.map((c) => [c, causes[c] / Math.max(1, failed)]),
    ) as Record<FailureCause, number>,
    byType: wins.map((w, z) => w / Math.max(1, seen[z])),
  };
}

export function calibrate(bench: CooperationBenchmark, rng: Rng): Calibration {
  const m = measureBehaviour(bench, rng);
  const rows: CalibrationRow[] = [
    {
      name: "success with a partner / success alone (behaviour agent, same tasks)",
      real: COOPERBENCH.coopOverSolo,
      fitted: m.coop / m.solo,
      tolerance: 0.15,
    },
    {
      name: "merge conflicts, plan stated in the first turn",
      real: COOPERBENCH.conflictsWithPlan,
      fitted: m.conflicts.withPlan,
      tolerance: 0.12,
    },
    {
      name: "merge conflicts, no plan in the first turn",
      real: COOPERBENCH.conflictsWithoutPlan,
      fitted: m.conflicts.withoutPlan,
      tolerance: 0.12,
    },
    {
      name: "feature pairs whose plans share a file (exact)",
      real: COOPERBENCH.overlapping,
      fitted: overlapShare(bench.params.planPrior),
      tolerance: 0.03,
    },
    ...FAILURE_CAUSES.map((c) => ({
      name: `failed episodes caused by ${c}`,
      real: COOPERBENCH.failures[c],
      fitted: m.failures[c],
      tolerance: 0.1,
    })),
  ];
  return {
    source:
      "CooperBench (behaviour agent × partner population, and alone on the same tasks, vs published results)",
    rows,
    histograms: [
      {
        name: "cause of a failed episode",
        bins: [...FAILURE_CAUSES],
        real: FAILURE_CAUSES.map((c) => COOPERBENCH.failures[c]),
        fitted: FAILURE_CAUSES.map((c) => m.failures[c]),
      },
    ],
  };
}
