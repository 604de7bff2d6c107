// What a persuader can reach with humans, computed exactly from the population (no models): how
// much room there is above the script that wins the modal user (docs/architecture.md#models, trap 2). A policy
// that only learned the modal user's script is held near `modalScript`; one that reads replies can
// approach `adaptOnce`; `typeKnown` is the bound for a persuader told the latent type.
// Every plan uses all five exchanges: the fifth is an ask or one more strategy (then the persuadee
// states a donation after the task, as in P4G). Asking earlier never helps: source-inquiry moves no
// type down, so it can fill any spare exchange.
import type { Dialogue } from "../types";
import { ACTS, ASK, GREETING, STRATEGY_ACTS, USER_ACTS } from "./world";
import type { PersuasionPopulation } from "./population";

export interface Ceilings {
  modalType: string;
  modalScript: { acts: string[]; humanSuccess: number }; // the modal type's best script, with all humans
  bestScript: { acts: string[]; humanSuccess: number }; // the best fixed script, with all humans
  adaptOnce: { first: string; humanSuccess: number }; // open with `first`, read the reply (and card), then a fixed plan
  typeKnown: number; // each type gets its own best script
}

const OPENERS = [GREETING, ...STRATEGY_ACTS];

/** Success probability (donation ≥ $1) of each type for five agent acts (the last may be "ask"). */
function successes(
  pop: PersuasionPopulation,
  effects: Float64Array[],
  script: number[],
): Float64Array {
  const { repeatDecay } = pop.params;
  return Float64Array.from(effects, (e, z) => {
    // willingness as PersuasionPopulation.willingness computes it: the n-th use of a strategy moves it by decay^(n−1)
    let w = pop.params.types[z].w0;
    for (let i = 0; i < script.length; i++) {
      let n = 0;
      for (let j = 0; j < i; j++) if (script[j] === script[i]) n++;
      w += e[script[i]] * repeatDecay ** n;
    }
    const p = pop.amountProbs(w);
    return p[2] + p[3] + p[4]; // $1, $1.5, $2
  });
}

/** Every plan after the opener: three strategies, then ask or a fourth strategy. */
function allPlans(): number[][] {
  const S = STRATEGY_ACTS.length;
  const plans: number[][] = [];
  for (const last of [ASK, ...STRATEGY_ACTS]) {
    for (let i = 0; i < S ** 3; i++)
      plans.push([
        STRATEGY_ACTS[i % S],
        STRATEGY_ACTS[Math.floor(i / S) % S],
        STRATEGY_ACTS[Math.floor(i / S ** 2)],
        last,
      ]);
  }
  return plans;
}

/** succ[o][p][z]: success of type z under opener o followed by plan p (order does not matter, so equal multisets share one row). */
function successTable(pop: PersuasionPopulation, plans: number[][]): Float64Array[][] {
  const effects = pop.params.types.map((t) =>
    Float64Array.from(ACTS, (a) => t.effects[a.name] ?? 0),
  );
  const memo = new Map<string, Float64Array>();
  return OPENERS.map((o) =>
    plans.map((p) => {
      const script = [o, ...p];
      const key = script
        .slice()
        .sort((a, b) => a - b)
        .join(",");
      let row = memo.get(key);
      if (!row) memo.set(key, (row = successes(pop, effects, script)));
      return row;
    }),
  );
}

/**
 * The plans no other plan beats for every type (one per distinct row). The best plan for any
 * mixture of types is among them, so the per-reply search needs only these. A plan that dominates
 * another has at least its total, so it comes earlier in order of decreasing total.
 */
function undominated(rows: Float64Array[]): number[] {
  const seen = new Set<Float64Array>(); // equal multisets share one row object (successTable)
  const distinct = rows.flatMap((r, p) => (seen.has(r) ? [] : (seen.add(r), [p])));
  const total = (p: number) => rows[p].reduce((a, b) => a + b, 0);
  const order = distinct.map((p) => ({ p, t: total(p) })).sort((a, b) => b.t - a.t || a.p - b.p);
  const front: number[] = [];
  for (const { p } of order) {
    const row = rows[p];
    let dominated = false;
    for (let f = 0; f < front.length && !dominated; f++) {
      const q = rows[front[f]];
      let all = true;
      for (let z = 0; z < row.length && all; z++) all = q[z] >= row[z];
      dominated = all;
    }
    if (!dominated) front.push(p);
  }
  return front;
}

/** A persuader that opens with `first`, reads the reply and the card, then follows a fixed plan. */
export interface AdaptOncePersuader {
  first: number;
  value: number; // its exact success with humans
  act(d: Dialogue): number; // the next agent act of a dialogue it has played so far
}

function adaptOnce(
  pop: PersuasionPopulation,
  succ: Float64Array[][],
  plans: number[][],
): AdaptOncePersuader {
  let best = { o: 0, v: -1, choice: new Map<string, number>() };
  for (let o = 0; o < OPENERS.length; o++) {
    let v = 0;
    const choice = new Map<string, number>(); // "card|reply" → plan index
    const front = undominated(succ[o]);
    for (const card of pop.cardDistribution()) {
      const post = pop.posterior({ card: card.card, acts: [] });
      for (const u of USER_ACTS) {
        const joint = post.map(
          (w, z) => w * pop.replyProbs(z, { card: card.card, acts: [OPENERS[o]] })[u],
        );
        let bv = 0;
        let bp = 0;
        for (const p of front) {
          const row = succ[o][p];
          let x = 0;
          for (let z = 0; z < joint.length; z++) x += joint[z] * row[z];
          if (x > bv) [bv, bp] = [x, p];
        }
        choice.set(`${card.card.join(",")}|${u}`, bp);
        v += card.p * bv;
      }
    }
    if (v > best.v) best = { o, v, choice };
  }
  const first = OPENERS[best.o];
  return {
    first,
    value: best.v,
    act(d) {
      if (d.acts.length === 0) return first;
      const p = best.choice.get(`${d.card.join(",")}|${d.acts[1]}`);
      if (p === undefined)
        throw new Error(
          `adapt-once persuader: no plan for card ${d.card.join(",")} and reply ${d.acts[1]}`,
        );
      return plans[p][d.acts.length / 2 - 1];
    },
  };
}

/** The adapt-once persuader of a population (≈ 0.1 s: every opener, the undominated plans). */
export function adaptOncePersuader(pop: PersuasionPopulation): AdaptOncePersuader {
  const plans = allPlans();
  return adaptOnce(pop, successTable(pop, plans), plans);
}

export function ceilings(pop: PersuasionPopulation): Ceilings {
  const T = pop.types.length;
  const plans = allPlans();
  const succ = successTable(pop, plans);
  const names = (o: number, p: number) => [
    ACTS[OPENERS[o]].name,
    ...plans[p].map((a) => ACTS[a].name),
  ];
  const prior = pop.types.map((t) => t.prior);
  const withHumans = (v: Float64Array) => v.reduce((s, x, z) => s + prior[z] * x, 0);

  let best = { o: 0, p: 0, v: -1 };
  const perType = Array.from({ length: T }, () => ({ o: 0, p: 0, v: -1 }));
  succ.forEach((row, o) =>
    row.forEach((v, p) => {
      const h = withHumans(v);
      if (h > best.v) best = { o, p, v: h };
      for (let z = 0; z < T; z++) if (v[z] > perType[z].v) perType[z] = { o, p, v: v[z] };
    }),
  );
  const modal = prior.indexOf(Math.max(...prior));
  const m = perType[modal];

  const adapt = adaptOnce(pop, succ, plans);
  return {
    modalType: pop.types[modal].name,
    modalScript: { acts: names(m.o, m.p), humanSuccess: withHumans(succ[m.o][m.p]) },
    bestScript: { acts: names(best.o, best.p), humanSuccess: best.v },
    adaptOnce: { first: ACTS[adapt.first].name, humanSuccess: adapt.value },
    typeKnown: perType.reduce((s, t, z) => s + prior[z] * t.v, 0),
  };
}
