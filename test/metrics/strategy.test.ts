// The strategy measures against hand-computed cases: the conditional entropy and mutual
// information of an eight-dialogue, two-task example worked out on paper, the permutation null
// against its exact value (every within-task permutation enumerated), and SCOPE's ≥ 5 rule.
import { describe, expect, it } from "vitest";
import {
  conditionalEntropy,
  conditionalMutualInformation,
  permutationNullMI,
  SCOPE_MODE_MIN,
  strategyMeasures,
  type StrategyObservation,
} from "../../src/metrics/strategy";

// Task a: strategies X X Y Y for users of types 0 0 1 1 (the strategy tells the type).
// Task b: strategies Z Z Z W for types 0 1 0 1 (W only with type 1).
const OBS: StrategyObservation[] = [
  { task: "a", strategy: "X", type: 0 },
  { task: "a", strategy: "X", type: 0 },
  { task: "a", strategy: "Y", type: 1 },
  { task: "a", strategy: "Y", type: 1 },
  { task: "b", strategy: "Z", type: 0 },
  { task: "b", strategy: "Z", type: 1 },
  { task: "b", strategy: "Z", type: 0 },
  { task: "b", strategy: "W", type: 1 },
];
const S = OBS.map((o) => o.strategy);
const T = OBS.map((o) => o.task);
const U = OBS.map((o) => o.type);
const ln = Math.log;

// By hand. Task a: H(S|a) = ln 2 and I(S;U|a) = ln 2 (S determines U, both uniform).
// Task b: H(S|b) = −(3/4 ln 3/4 + 1/4 ln 1/4); with p(Z,0) = 1/2, p(Z,1) = p(W,1) = 1/4,
// I(S;U|b) = H(S|b) + H(U|b) − H(S,U|b) = H(S|b) + ln 2 − (1/2 ln 2 + 1/2 ln 4).
// The tasks are equally likely, so each measure is the mean of the two.
const H_B = -(0.75 * ln(0.75) + 0.25 * ln(0.25));
const I_B = H_B + ln(2) - (0.5 * ln(2) + 0.5 * ln(4));
const H_GIVEN_T = (ln(2) + H_B) / 2; // 0.6277
const I_GIVEN_T = (ln(2) + I_B) / 2; // 0.4545

/** The permutation null by enumeration: the mean plug-in MI over every within-task permutation of the types. */
function exactNull(obs: StrategyObservation[]): number {
  const tasks = [...new Set(obs.map((o) => o.task))];
  const rows = tasks.map((t) => obs.flatMap((o, i) => (o.task === t ? [i] : [])));
  const perms = (xs: number[]): number[][] =>
    xs.length <= 1
      ? [xs]
      : xs.flatMap((x, i) => perms([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
  let sum = 0;
  let count = 0;
  const walk = (k: number, types: number[]) => {
    if (k === rows.length) {
      sum += conditionalMutualInformation(S, types, T);
      count++;
      return;
    }
    for (const p of perms(rows[k])) {
      const next = [...types];
      rows[k].forEach((row, j) => (next[row] = obs[p[j]].type));
      walk(k + 1, next);
    }
  };
  walk(
    0,
    obs.map((o) => o.type),
  );
  return sum / count;
}

describe("strategy measures", () => {
  it("H(S | T) and I(S; U | T) equal the hand computation", () => {
    expect(conditionalEntropy(S, T)).toBeCloseTo(H_GIVEN_T, 14);
    expect(conditionalMutualInformation(S, U, T)).toBeCloseTo(I_GIVEN_T, 14);
    // without a task, the same strategies: H(S) over X, Y, Z, W with counts 2, 2, 3, 1
    const none = T.map(() => "");
    expect(conditionalEntropy(S, none)).toBeCloseTo(
      -(2 * (2 / 8) * ln(2 / 8) + (3 / 8) * ln(3 / 8) + (1 / 8) * ln(1 / 8)),
      14,
    );
  });

  it("a strategy that never varies has no entropy and tells nothing", () => {
    const same = S.map(() => "X");
    expect(conditionalEntropy(same, T)).toBe(0);
    expect(conditionalMutualInformation(same, U, T)).toBe(0);
    expect(permutationNullMI(same, U, T, 50)).toBe(0);
  });

  it("the permutation null is the mean over within-task permutations of the types", () => {
    const exact = exactNull(OBS); // 4! × 4! = 576 permutations
    expect(exact).toBeGreaterThan(0.15); // eight dialogues: most of the plug-in MI is bias
    expect(permutationNullMI(S, U, T, 20_000)).toBeCloseTo(exact, 2);
    const m = strategyMeasures(OBS, 20_000);
    expect(m.typeInformationPlugIn).toBeCloseTo(I_GIVEN_T, 14);
    expect(m.typeInformation).toBeCloseTo(I_GIVEN_T - exact, 2);
  });

  it("two dialogues per task: every permutation gives the same MI, so all of it is bias", () => {
    // X with type 0 and Y with type 1 in each task: the plug-in says ln 2, and so does every shuffle
    const obs: StrategyObservation[] = ["a", "b"].flatMap((task) => [
      { task, strategy: "X", type: 0 },
      { task, strategy: "Y", type: 1 },
    ]);
    const m = strategyMeasures(obs, 7);
    expect(m.typeInformationPlugIn).toBeCloseTo(ln(2), 14);
    expect(m.typeInformation).toBeCloseTo(0, 14);
  });

  it("types shuffled only within a task: a type that goes with the task is not the strategy's", () => {
    // every task-a user is type 0, every task-b user type 1; the strategy varies within tasks
    const obs: StrategyObservation[] = ["X", "Y", "X", "Y"].flatMap((strategy, i) => [
      { task: "a", strategy, type: 0 },
      { task: "b", strategy: strategy + i, type: 1 },
    ]);
    const m = strategyMeasures(obs, 20);
    expect(m.typeInformationPlugIn).toBe(0);
    expect(m.typeInformation).toBe(0);
  });

  it("counts a strategy as a mode from SCOPE_MODE_MIN dialogues on", () => {
    expect(SCOPE_MODE_MIN).toBe(5);
    const obs = [
      ...Array.from({ length: 5 }, () => ({ task: "", strategy: "A", type: 0 })),
      ...Array.from({ length: 4 }, () => ({ task: "", strategy: "B", type: 1 })),
      { task: "", strategy: "C", type: 0 },
    ];
    const m = strategyMeasures(obs, 10);
    expect(m).toMatchObject({ modes: 1, distinct: 3, dialogues: 10 });
    expect(m.entropy).toBeCloseTo(-(0.5 * ln(0.5) + 0.4 * ln(0.4) + 0.1 * ln(0.1)), 14);
  });

  it("refuses no dialogues and mismatched lengths", () => {
    expect(() => strategyMeasures([])).toThrow(/no dialogues/);
    expect(() => conditionalEntropy(["X"], [])).toThrow(/1 observations against 0/);
    expect(() => conditionalMutualInformation(["X"], [0, 1], ["a"])).toThrow(/against 2/);
  });
});
