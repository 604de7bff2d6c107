// What a persuader can reach with humans, computed exactly from the population (no models): how
// much room there is above the script that wins the modal user (DESIGN §3.4, trap 2). A policy
// that only learned the modal user's script is held near `modalScript`; one that reads replies can
// approach `adaptOnce`; `typeKnown` is the bound for a persuader told the latent type.
// Every plan uses all five exchanges and asks in the last one (asking earlier never helps here:
// a strategy that does not help one type can always be one that does not hurt it).
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

export function ceilings(pop: PersuasionPopulation): Ceilings {
  const T = pop.types.length;
  const S = STRATEGY_ACTS.length;
  const plans: number[][] = [];
  for (let i = 0; i < S ** 3; i++) plans.push([STRATEGY_ACTS[i % S], STRATEGY_ACTS[Math.floor(i / S) % S], STRATEGY_ACTS[Math.floor(i / S ** 2)], ASK]);
  // succ[o][p][z]: opener o, plan p, type z
  const succ = OPENERS.map((o) => plans.map((p) => Float64Array.from({ length: T }, (_, z) => success(pop, z, [o, ...p]))));
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

  let adapt = { o: 0, v: -1 };
  for (let o = 0; o < OPENERS.length; o++) {
    let v = 0;
    for (const card of pop.cardDistribution()) {
      const post = pop.posterior({ card: card.card, acts: [] });
      for (const u of USER_ACTS) {
        const joint = post.map((w, z) => w * pop.replyProbs(z, { card: card.card, acts: [OPENERS[o]] })[u]);
        let bv = 0;
        for (const row of succ[o]) bv = Math.max(bv, joint.reduce((s, j, z) => s + j * row[z], 0));
        v += card.p * bv;
      }
    }
    if (v > adapt.v) adapt = { o, v };
  }

  return {
    modalType: pop.types[modal].name,
    modalScript: { acts: names(m.o, m.p), humanSuccess: withHumans(succ[m.o][m.p]) },
    bestScript: { acts: names(best.o, best.p), humanSuccess: best.v },
    adaptOnce: { first: ACTS[OPENERS[adapt.o]].name, humanSuccess: adapt.v },
    typeKnown: perType.reduce((s, t, z) => s + prior[z] * t.v, 0),
  };
}
