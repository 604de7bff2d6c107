// What a persuader can reach with humans, computed exactly from the population (no models): how
// much room there is above the script that wins the modal user (DESIGN §3.4, trap 2). A policy
// that only learned the modal user's script is held near `modalScript`; one that reads replies can
// approach `adaptOnce`; `typeKnown` is the bound for a persuader told the latent type.
// Every plan uses all five exchanges and asks in the last one (asking earlier never helps here:
// a strategy that does not help one type can always be one that does not hurt it).
import type { Dialogue } from "../types";
import { ACTS, ASK, GREETING, STRATEGY_ACTS, USER_ACTS, type PersuasionPopulation } from "./world";

export interface Ceilings {
  modalType: string;
  modalScript: { acts: string[]; humanSuccess: number }; // the modal type's best script, with all humans
  bestScript: { acts: string[]; humanSuccess: number }; // the best fixed script, with all humans
  adaptOnce: { first: string; humanSuccess: number }; // open with `first`, read the reply (and card), then a fixed plan
  typeKnown: number; // each type gets its own best script
}

const OPENERS = [GREETING, ...STRATEGY_ACTS];

/** Success probability (donation ≥ $1) of one type for a script of agent acts ending in "ask". */
function success(pop: PersuasionPopulation, type: number, script: number[]): number {
  const acts: number[] = [];
  for (const a of script.slice(0, -1)) acts.push(a, USER_ACTS[0]); // replies do not move willingness
  acts.push(script[script.length - 1]);
  const p = pop.amountProbs(pop.willingness(type, { card: [], acts }));
  return p[2] + p[3] + p[4]; // $1, $1.5, $2
}

/** Every plan after the opener: three strategies, then ask. */
function allPlans(): number[][] {
  const S = STRATEGY_ACTS.length;
  const plans: number[][] = [];
  for (let i = 0; i < S ** 3; i++) plans.push([STRATEGY_ACTS[i % S], STRATEGY_ACTS[Math.floor(i / S) % S], STRATEGY_ACTS[Math.floor(i / S ** 2)], ASK]);
  return plans;
}

/** succ[o][p][z]: success of type z under opener o followed by plan p. */
function successTable(pop: PersuasionPopulation, plans: number[][]): Float64Array[][] {
  return OPENERS.map((o) => plans.map((p) => Float64Array.from(pop.types, (_, z) => success(pop, z, [o, ...p]))));
}

/** A persuader that opens with `first`, reads the reply and the card, then follows a fixed plan. */
export interface AdaptOncePersuader {
  first: number;
  value: number; // its exact success with humans
  act(d: Dialogue): number; // the next agent act of a dialogue it has played so far
}

function adaptOnce(pop: PersuasionPopulation, succ: Float64Array[][], plans: number[][]): AdaptOncePersuader {
  let best = { o: 0, v: -1, choice: new Map<string, number>() };
  for (let o = 0; o < OPENERS.length; o++) {
    let v = 0;
    const choice = new Map<string, number>(); // "card|reply" → plan index
    for (const card of pop.cardDistribution()) {
      const post = pop.posterior({ card: card.card, acts: [] });
      for (const u of USER_ACTS) {
        const joint = post.map((w, z) => w * pop.replyProbs(z, { card: card.card, acts: [OPENERS[o]] })[u]);
        let bv = 0;
        let bp = 0;
        succ[o].forEach((row, p) => {
          const x = joint.reduce((s, j, z) => s + j * row[z], 0);
          if (x > bv) [bv, bp] = [x, p];
        });
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
      if (p === undefined) throw new Error(`adapt-once persuader: no plan for card ${d.card.join(",")} and reply ${d.acts[1]}`);
      return plans[p][d.acts.length / 2 - 1];
    },
  };
}

/** The adapt-once persuader of a population (≈ 0.3 s: it searches every opener and plan). */
export function adaptOncePersuader(pop: PersuasionPopulation): AdaptOncePersuader {
  const plans = allPlans();
  return adaptOnce(pop, successTable(pop, plans), plans);
}

export function ceilings(pop: PersuasionPopulation): Ceilings {
  const T = pop.types.length;
  const plans = allPlans();
  const succ = successTable(pop, plans);
  const names = (o: number, p: number) => [ACTS[OPENERS[o]].name, ...plans[p].map((a) => ACTS[a].name)];
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
