// Strategy diversity (docs/science.md#metrics): what a policy did over whole dialogues, beside the
// paper's per-turn policy entropy, which counts randomness that changes nothing (the order of the
// same fixes) and is 0 for a deterministic agent however much it adapts. A strategy is an
// order-invariant signature of a dialogue (each benchmark defines it: BenchmarkModule.strategy), a
// task what the agent is given at the start. Three measures, over one evaluation's dialogues:
//  * H(S | T): the plug-in entropy of strategies given the task, in nats (biased low when there are
//    many strategies for the dialogues; compare conditions at the same number of dialogues);
//  * I(S; U | T) of strategy and the user's latent type given the task, bias-corrected by
//    subtracting the mean of its permutation null (types shuffled among the dialogues of each task,
//    a fixed-seed generator): with few dialogues per strategy the plug-in MI is mostly bias, which
//    the Miller–Madow term (cells − 1) / 2n corrects only in part;
//  * modes: the strategies that occur at least SCOPE_MODE_MIN times (SCOPE's coverage rule:
//    CHATS-lab/scope_usim counts a mode as covered at ≥ 5 samples).
import { Rng } from "../engine/random";

/** SCOPE's rule: a mode (here a strategy) counts once it occurs this many times. */
export const SCOPE_MODE_MIN = 5;

/** Permutations of the types for the MI's null. */
export const NULL_DRAWS = 200;

/** One finished dialogue as the strategy measures see it. */
export interface StrategyObservation {
  strategy: string; // the benchmark's signature of what the agent did
  task: string; // what the agent was given at the start ("" where it is given nothing)
  type: number; // the user's latent type
}

export interface StrategyMeasures {
  entropy: number; // H(S | T), plug-in, nats
  typeInformation: number; // I(S; U | T) − the mean of its permutation null, nats (may be < 0 by noise)
  typeInformationPlugIn: number; // I(S; U | T), plug-in, nats
  modes: number; // strategies seen ≥ SCOPE_MODE_MIN times
  distinct: number; // strategies seen at all
  dialogues: number;
}

/** Each value's index among the distinct values, in order of first appearance. */
function codes(values: readonly (string | number)[]): { code: Int32Array; size: number } {
  const index = new Map<string | number, number>();
  const code = Int32Array.from(values, (v) => {
    let i = index.get(v);
    if (i === undefined) index.set(v, (i = index.size));
    return i;
  });
  return { code, size: index.size };
}

/** The codes of the pairs (a_i, b_i), b of `bSize` values. */
function pairCodes(a: Int32Array, b: Int32Array, bSize: number): Int32Array {
  return codes(Array.from(a, (ai, i) => ai * bSize + b[i])).code;
}

/** Σ −(c/n) log(c/n) over the counts of the codes, in nats. */
function plugInEntropy(code: Int32Array): number {
  const counts = new Map<number, number>();
  for (const c of code) counts.set(c, (counts.get(c) ?? 0) + 1);
  const n = code.length;
  let h = 0;
  for (const c of counts.values()) h -= (c / n) * Math.log(c / n);
  return Math.max(0, h);
}

/** H(X | Z) = H(X, Z) − H(Z), plug-in, in nats. */
export function conditionalEntropy(x: readonly string[], z: readonly string[]): number {
  check(x.length, z.length, "conditionalEntropy");
  const cz = codes(z);
  return Math.max(
    0,
    plugInEntropy(pairCodes(codes(x).code, cz.code, cz.size)) - plugInEntropy(cz.code),
  );
}

/** The parts of I(X; Y | Z) = H(X, Z) + H(Y, Z) − H(X, Y, Z) − H(Z) that do not move when Y is shuffled within Z. */
function miParts(
  x: readonly (string | number)[],
  y: readonly (string | number)[],
  z: readonly (string | number)[],
) {
  const cx = codes(x);
  const cy = codes(y);
  const cz = codes(z);
  const xz = codes(Array.from(cx.code, (xi, i) => xi * cz.size + cz.code[i]));
  const fixed =
    plugInEntropy(xz.code) +
    plugInEntropy(pairCodes(cy.code, cz.code, cz.size)) -
    plugInEntropy(cz.code);
  /** I(X; Y | Z) with Y's codes `yCode` (a permutation of Y's within each Z keeps `fixed`). */
  const mi = (yCode: Int32Array) =>
    Math.max(0, fixed - plugInEntropy(pairCodes(xz.code, yCode, cy.size))); // I ≥ 0; rounding can leave −1e-16
  return { mi, y: cy.code, z: cz.code };
}

/** I(X; Y | Z) = H(X, Z) + H(Y, Z) − H(X, Y, Z) − H(Z), plug-in, in nats. */
export function conditionalMutualInformation(
  x: readonly string[],
  y: readonly (string | number)[],
  z: readonly string[],
): number {
  check(x.length, y.length, "conditionalMutualInformation");
  check(x.length, z.length, "conditionalMutualInformation");
  const parts = miParts(x, y, z);
  return parts.mi(parts.y);
}

/**
 * The mean plug-in I(X; Y | Z) when Y is shuffled among the observations of each value of Z
 * (Fisher–Yates, `draws` times, from a fixed seed): what the plug-in MI is under independence
 * with these margins.
 */
export function permutationNullMI(
  x: readonly string[],
  y: readonly (string | number)[],
  z: readonly string[],
  draws = NULL_DRAWS,
  seed = 1,
): number {
  check(x.length, y.length, "permutationNullMI");
  check(x.length, z.length, "permutationNullMI");
  const parts = miParts(x, y, z);
  const strata = new Map<number, number[]>();
  parts.z.forEach((zi, i) => {
    const rows = strata.get(zi);
    if (rows) rows.push(i);
    else strata.set(zi, [i]);
  });
  const rng = Rng.seed(seed);
  const shuffled = Int32Array.from(parts.y);
  let sum = 0;
  for (let d = 0; d < draws; d++) {
    for (const rows of strata.values())
      for (let k = rows.length - 1; k > 0; k--) {
        const j = rng.int(k + 1);
        const t = shuffled[rows[k]];
        shuffled[rows[k]] = shuffled[rows[j]];
        shuffled[rows[j]] = t;
      }
    sum += parts.mi(shuffled);
  }
  return sum / draws;
}

/** The strategy measures of one evaluation's dialogues. @throws when there are none. */
export function strategyMeasures(
  obs: readonly StrategyObservation[],
  draws = NULL_DRAWS,
): StrategyMeasures {
  if (obs.length === 0) throw new Error("strategyMeasures: no dialogues");
  const s = obs.map((o) => o.strategy);
  const t = obs.map((o) => o.task);
  const u = obs.map((o) => o.type);
  const plugIn = conditionalMutualInformation(s, u, t);
  const counts = new Map<string, number>();
  for (const k of s) counts.set(k, (counts.get(k) ?? 0) + 1);
  return {
    entropy: conditionalEntropy(s, t),
    typeInformation: plugIn - permutationNullMI(s, u, t, draws),
    typeInformationPlugIn: plugIn,
    modes: [...counts.values()].filter((c) => c >= SCOPE_MODE_MIN).length,
    distinct: counts.size,
    dialogues: obs.length,
  };
}

function check(a: number, b: number, what: string): void {
  if (a !== b) throw new Error(`${what}: ${a} observations against ${b}`);
}
