// The human population of Service: latent customer types × hidden tasks (the phone's faults), the
// persona cards, each type's replies, and the exact posterior over both given a dialogue.
//
// Exactness without enumerating tasks: every type reports the phone truthfully, so a user act's
// likelihood is a type part (how it carries out a step, whether it leaves) times a task part (at a
// confirm: fixed or not), and env acts depend on the task only. The posterior over (type, task)
// therefore factorises into a type posterior and a task posterior. The task prior is a product over
// factors (components and account) given the intent, conditioned on at least one fault; each
// screen observes one factor; a "not ok" at time t says "not everything resolved at t". Fixes only
// progress, so the latest "not ok" implies every earlier one and also implies "some fault". The task
// posterior is then Π_f w_f − Π_f w_f·[resolved at t] (two product terms), and P(fixed now) is a
// ratio of such terms — O(factors × acts).
import type { Rng } from "../../engine/random";
import type { Dialogue, HumanPopulation, Persona } from "../types";
import {
  ACTS,
  CARD_ACTS,
  CARD_SLOTS,
  CONFIRM,
  FACTORS,
  INTENTS,
  NF,
  R,
  REASSURE,
  STEP,
  STEPS,
  VOCAB,
  CHECK,
  DO,
  MASK_CLASSES,
  allResolved,
  completedSteps,
  observedFactor,
  replyClass,
  resolved,
  screenOf,
  stepOf,
  type Hidden,
} from "./world";

/** How one latent type behaves. Reply distributions are over [did-fix, failed-fix, did-something-else, confused]. */
export interface TypeParams {
  name: string;
  prior: number;
  description: string;
  card: number[][]; // per card slot, P(value | type) at full informativeness
  easy: number[]; // an easy step (toggle airplane / data / data saver, reboot)
  hard: number[]; // a hard step without guidance
  guided: number[]; // a hard step right after the agent had the customer check that screen (or sent the payment request)
  refuse: number; // P(refuse) a risky step (reboot, reseat SIM, reset APN) before any reassurance
  refuseReassured: number; // … after the agent reassured them
  patience: number; // steps they carry out before they may leave (chores)
  tolerance: number; // failed, refused or confused steps and "still not working" before they may leave
  leave: number; // P(leave) at each reply once past patience or tolerance
}

export interface ServiceParams {
  types: TypeParams[];
  cardInformativeness: number; // κ ∈ [0, 1]: card slot probabilities sit κ of the way from uniform to the type's
  noise: number; // every type picks a uniformly random reply of the allowed class with this probability (slips; makes every reply possible)
  intentPrior: number[]; // no service, mobile data, MMS
  faultPrior: number[][][]; // [intent][factor][value]: independent given the intent, then conditioned on ≥ 1 fault
  maxExchanges: number; // agent turns per episode
}

const COOPERATIVE: TypeParams = {
  name: "accurate",
  prior: 0.48,
  description: "accurate and quick: does each step as told, never refuses, stays",
  card: [
    [0.4, 0.4, 0.2],
    [0.3, 0.7],
    [0.6, 0.25, 0.15],
  ],
  easy: [0.97, 0.03, 0, 0],
  hard: [0.95, 0.05, 0, 0],
  guided: [0.97, 0.03, 0, 0],
  refuse: 0,
  refuseReassured: 0,
  patience: 99,
  tolerance: 99,
  leave: 0,
};

export const DEFAULT_TYPES: TypeParams[] = [
  COOPERATIVE,
  {
    name: "low-skill",
    prior: 0.2,
    description: "little tech knowledge: fails hard steps unless walked to the right screen first",
    card: [
      [0.1, 0.3, 0.6],
      [0.8, 0.2],
      [0.45, 0.4, 0.15],
    ],
    easy: [0.85, 0.1, 0.05, 0],
    hard: [0.15, 0.25, 0.25, 0.35],
    guided: [0.85, 0.1, 0, 0.05],
    refuse: 0,
    refuseReassured: 0,
    patience: 99,
    tolerance: 4, // after four failed steps they give up
    leave: 0.5,
  },
  {
    name: "anxious",
    prior: 0.17,
    description: "afraid of losing data: refuses reboots, SIM and APN resets until reassured",
    card: [
      [0.2, 0.35, 0.45],
      [0.55, 0.45],
      [0.2, 0.65, 0.15],
    ],
    easy: [0.95, 0.05, 0, 0],
    hard: [0.9, 0.07, 0, 0.03],
    guided: [0.95, 0.05, 0, 0],
    refuse: 0.85,
    refuseReassured: 0.05,
    patience: 99,
    tolerance: 2, // pushed through refusals, they hang up
    leave: 0.6,
  },
  {
    name: "impatient",
    prior: 0.15,
    description: "in a hurry: leaves after a few chores or a couple of failures",
    card: [
      [0.5, 0.35, 0.15],
      [0.35, 0.65],
      [0.2, 0.3, 0.5],
    ],
    easy: [0.95, 0.05, 0, 0],
    hard: [0.9, 0.1, 0, 0],
    guided: [0.95, 0.05, 0, 0],
    refuse: 0,
    refuseReassured: 0,
    patience: 4,
    tolerance: 2,
    leave: 0.85,
  },
];

// [intent][factor] → P(value); factors: airplane, sim, data, apn, roaming, saver, wifi-calling, permission, network, account
const fine = [1, 0];
export const DEFAULT_FAULT_PRIOR: number[][][] = [
  // no service: airplane mode, an unseated or PIN-locked SIM, an overdue bill, an ended contract
  [
    [0.4, 0.6],
    [0.45, 0.4, 0.15],
    fine,
    fine,
    fine,
    fine,
    fine,
    fine,
    fine,
    [0.58, 0.3, 0, 0, 0.12],
  ],
  // mobile data: the data layer, plus service faults now and then
  [
    [0.65, 0.35],
    [0.85, 0.15, 0],
    [0.3, 0.7],
    [0.35, 0.65],
    [0.45, 0.55],
    [0.35, 0.65],
    fine,
    fine,
    fine,
    [0.6, 0.06, 0.14, 0.05, 0.15],
  ],
  // MMS: the MMS layer on top of the data and service layers (the longest fixes)
  [
    [0.75, 0.25],
    [0.9, 0.1, 0],
    [0.45, 0.55],
    [0.5, 0.5],
    [0.65, 0.35],
    [0.55, 0.45],
    [0.3, 0.7],
    [0.25, 0.75],
    [0.35, 0.65],
    [0.69, 0.06, 0.06, 0.04, 0.15],
  ],
];

export const DEFAULT_PARAMS: ServiceParams = {
  types: DEFAULT_TYPES,
  cardInformativeness: 1,
  noise: 0.005,
  intentPrior: [0.25, 0.32, 0.43], // τ² telecom: 29 / 36 / 49 of 114 tasks
  faultPrior: DEFAULT_FAULT_PRIOR,
  maxExchanges: 20,
};

const REPLY_ACTS = [R["did-fix"], R["failed-fix"], R["did-something-else"], R.confused];
const FAILURES = new Set([
  R["failed-fix"],
  R["did-something-else"],
  R.confused,
  R.refuse,
  R["not-ok"],
]);

/** What a customer's reply depends on, read off the dialogue (the last act is the agent's). */
export interface ReplyContext {
  step: number; // the step instructed, −1 for reassure / confirm
  guided: boolean; // the agent act before it checked that step's screen (or was its guide step)
  reassured: boolean; // a reassurance earlier in the dialogue
  chores: number; // steps instructed so far, this one included
  failures: number; // the customer's failed / confused / refused steps and "not ok"s so far
}

export function replyContext(acts: number[]): ReplyContext {
  const n = acts.length;
  const last = acts[n - 1];
  const step = stepOf(last);
  let prevAgent = -1;
  for (let i = n - 2; i >= 0 && prevAgent < 0; i--)
    if (ACTS[acts[i]].kind === "agent") prevAgent = acts[i];
  let guided = false;
  if (step >= 0) {
    const st = STEPS[step];
    guided =
      (st.component >= 0 && prevAgent === CHECK[st.component]) ||
      (st.guide !== undefined && prevAgent === DO[STEP[st.guide]]);
  }
  let reassured = false;
  let chores = 0;
  let failures = 0;
  for (let i = 0; i < n; i++) {
    const a = acts[i];
    if (a === REASSURE && i < n - 1) reassured = true;
    const k = stepOf(a);
    if (k >= 0 && STEPS[k].by === "user") chores++;
    if (FAILURES.has(a)) failures++;
  }
  return { step, guided, reassured, chores, failures };
}

/** The card slots' probabilities for a type at informativeness κ. */
function slotProbs(t: TypeParams, kappa: number): number[][] {
  return t.card.map((p) => p.map((q) => (1 - kappa) / p.length + kappa * q));
}

export class ServicePopulation implements HumanPopulation {
  readonly params: ServiceParams;
  readonly types: { name: string; prior: number; description: string }[];
  readonly #slots: number[][][]; // [type][slot][value]
  readonly #cards: { card: number[]; p: number; likelihood: Float64Array }[];

  constructor(params: ServiceParams = DEFAULT_PARAMS) {
    const total = params.types.reduce((a, t) => a + t.prior, 0);
    if (Math.abs(total - 1) > 1e-9) throw new Error(`type priors sum to ${total}, expected 1`);
    const intents = params.intentPrior.reduce((a, b) => a + b, 0);
    if (params.intentPrior.length !== INTENTS.length || Math.abs(intents - 1) > 1e-9)
      throw new Error(`intent prior must be ${INTENTS.length} probabilities summing to 1`);
    params.faultPrior.forEach((byFactor, i) =>
      byFactor.forEach((p, f) => {
        if (
          p.length !== FACTORS[f].values.length ||
          Math.abs(p.reduce((a, b) => a + b, 0) - 1) > 1e-9
        )
          throw new Error(
            `fault prior of ${FACTORS[f].name} for ${INTENTS[i]} must be ${FACTORS[f].values.length} probabilities summing to 1`,
          );
      }),
    );
    this.params = params;
    this.types = params.types.map(({ name, prior, description }) => ({ name, prior, description }));
    this.#slots = params.types.map((t) => slotProbs(t, params.cardInformativeness));
    this.#cards = [];
    const sizes = CARD_SLOTS.map(([, v]) => v.length);
    const count = sizes.reduce((a, b) => a * b, 1);
    for (let k = 0; k < count; k++) {
      const idx: number[] = [];
      let r = k;
      for (const size of sizes) {
        idx.push(r % size);
        r = Math.floor(r / size);
      }
      const card = idx.map((v, j) => CARD_ACTS[j][v]);
      const likelihood = Float64Array.from(this.#slots, (slots) =>
        idx.reduce((p, v, j) => p * slots[j][v], 1),
      );
      const p = params.types.reduce((a, t, z) => a + t.prior * likelihood[z], 0);
      this.#cards.push({ card, p, likelihood });
    }
  }

  sample(rng: Rng): Persona {
    const type = rng.categorical(this.params.types.map((t) => t.prior));
    const card = this.#slots[type].map((p, j) => CARD_ACTS[j][rng.categorical(p)]);
    return { card, type, hidden: this.sampleTask(rng) };
  }

  /** The episode's task alone (simulators' personas: a card and no type). */
  sampleHidden(rng: Rng): Hidden {
    return this.sampleTask(rng);
  }

  /** A task from the prior: the intent, then each factor independently, redrawn until something is broken. */
  sampleTask(rng: Rng, intent = rng.categorical(this.params.intentPrior)): Hidden {
    for (;;) {
      const h = [intent, ...this.params.faultPrior[intent].map((p) => rng.categorical(p))];
      if (h.some((v, i) => i > 0 && v !== 0)) return h;
    }
  }

  cardDistribution(): { card: number[]; p: number }[] {
    return this.#cards.map(({ card, p }) => ({ card: [...card], p }));
  }

  /**
   * The reply row of a type, with the phone's part given as P(everything fixed): 1 or 0 for a human
   * who sees the phone, the posterior probability for the Bayes predictive.
   */
  replyRow(type: number, d: Dialogue, pFixed: number): Float64Array {
    const t = this.params.types[type];
    const row = new Float64Array(VOCAB);
    const cls = replyClass(d.acts);
    const last = d.acts[d.acts.length - 1];
    const cx = replyContext(d.acts);
    const l = cx.chores > t.patience || cx.failures >= t.tolerance ? t.leave : 0;
    if (last === REASSURE) {
      row[R.ack] = 1 - l;
      row[R.leave] = l;
    } else if (last === CONFIRM) {
      row[R["confirm-ok"]] = (1 - l) * pFixed;
      row[R["not-ok"]] = (1 - l) * (1 - pFixed);
      row[R.leave] = l;
    } else if (cx.step >= 0 && STEPS[cx.step].by === "user") {
      const st = STEPS[cx.step];
      const base = !st.hard ? t.easy : cx.guided ? t.guided : t.hard;
      const r = st.risky ? (cx.reassured ? t.refuseReassured : t.refuse) : 0;
      const z = base.reduce((a, b) => a + b, 0);
      REPLY_ACTS.forEach((a, i) => (row[a] = ((1 - l) * (1 - r) * base[i]) / z));
      row[R.refuse] = (1 - l) * r;
      row[R.leave] = l;
    } else {
      throw new Error(`not the customer's turn after ${ACTS[last]?.name ?? "the start"}`);
    }
    // slips: a uniformly random reply of the class (at a confirm only leaving: the phone is read truthfully)
    const eps = this.params.noise;
    const allowed = last === CONFIRM ? [R.leave] : MASK_CLASSES[cls].allowed;
    for (let v = 0; v < VOCAB; v++) row[v] *= 1 - eps;
    for (const a of allowed) row[a] += eps / allowed.length;
    return row;
  }

  replyProbs(type: number, d: Dialogue): Float64Array {
    const last = d.acts[d.acts.length - 1];
    if (last !== CONFIRM) return this.replyRow(type, d, 0);
    // a confirm reads the phone; without the hidden state (a probe state, a simulator's view) the
    // phone is marginalised over the task posterior, which does not depend on the type
    if (!d.hidden) return this.replyRow(type, d, this.taskPosterior(d).pFixed);
    return this.replyRow(type, d, allResolved(d.hidden, d.acts) ? 1 : 0);
  }

  /** p(user act at position i | type), up to a factor that does not depend on the type (a confirm's fixed / not fixed). */
  typeLikelihood(type: number, d: Dialogue, i: number): number {
    const prefix = { card: d.card, acts: d.acts.slice(0, i) };
    const row = this.replyRow(type, prefix, 1);
    const a = d.acts[i];
    return a === R["confirm-ok"] || a === R["not-ok"] ? row[R["confirm-ok"]] : row[a];
  }

  posterior(d: Dialogue): Float64Array {
    const key = d.card.join(",");
    const card = this.#cards.find((c) => c.card.join(",") === key);
    if (!card) throw new Error(`not a service card: ${key}`);
    const post = Float64Array.from(this.params.types, (t, z) => t.prior * card.likelihood[z]);
    for (let i = 1; i < d.acts.length; i++) {
      if (ACTS[d.acts[i]].kind !== "user") continue;
      for (let z = 0; z < post.length; z++) post[z] *= this.typeLikelihood(z, d, i);
    }
    const total = post.reduce((a, b) => a + b, 0);
    if (!(total > 0)) throw new Error("dialogue has probability 0 under the population");
    return post.map((x) => x / total);
  }

  /** The exact posterior over the hidden task's factors and P(everything fixed now), given the dialogue. */
  taskPosterior(d: Dialogue): TaskPosterior {
    return taskPosterior(this.params.faultPrior, d);
  }

  /** p(next user act | card, dialogue): the type posterior's mixture of reply rows, with P(fixed) from the task posterior. */
  predictive(d: Dialogue): Float64Array {
    const post = this.posterior(d);
    const pFixed = d.acts[d.acts.length - 1] === CONFIRM ? this.taskPosterior(d).pFixed : 0;
    const p = new Float64Array(VOCAB);
    post.forEach((w, z) => {
      if (w === 0) return;
      const r = this.replyRow(z, d, pFixed);
      for (let v = 0; v < VOCAB; v++) p[v] += w * r[v];
    });
    return p;
  }
}

export interface TaskPosterior {
  intent: number;
  marginals: number[][]; // [factor][value]
  pFixed: number; // P(every fault resolved by the acts so far | dialogue)
  consistent: boolean; // false: a "not ok" contradicts every task the screens allow; then the screens alone are used
}

/**
 * The exact task posterior. Per factor f, w_f(v) = prior × [every screen of f matched value v]. A
 * task x is weighted Π_f w_f(x_f) × C(x) with C = [some fault] without a "not ok", else
 * [not everything resolved at the latest "not ok"] (which implies some fault); both are 1 − [all in
 * a set S_f], so sums over tasks are Π_f Σ w_f − Π_f Σ_{S_f} w_f.
 */
export function taskPosterior(faultPrior: number[][][], d: Dialogue): TaskPosterior {
  const intent = ticketIntent(d);
  const done = completedSteps(d.acts);
  const w = faultPrior[intent].map((p) => [...p]);
  let lastNotOk = -1;
  for (let i = 1; i < d.acts.length; i++) {
    const a = d.acts[i];
    if (a === R["not-ok"]) lastNotOk = i;
    if (ACTS[a].kind !== "env") continue;
    const f = observedFactor(d.acts[i - 1]);
    if (f < 0) continue;
    for (let v = 0; v < w[f].length; v++) if (screenOf(f, v, done, i) !== a) w[f][v] = 0;
  }
  // S_f: values fine (no "not ok") or resolved at the latest "not ok"
  const inS = (f: number, v: number) => (lastNotOk < 0 ? v === 0 : resolved(f, v, done, lastNotOk));
  const nowFixed = (f: number, v: number) => resolved(f, v, done);
  const prod = (pick: (f: number, v: number) => boolean, skip = -1) => {
    let p = 1;
    for (let f = 0; f < NF; f++) {
      if (f === skip) continue;
      let q = 0;
      for (let v = 0; v < w[f].length; v++) if (pick(f, v)) q += w[f][v];
      p *= q;
    }
    return p;
  };
  const any = () => true;
  let z = prod(any) - prod(inS);
  let consistent = true;
  let useC = true;
  if (!(z > 1e-300)) {
    consistent = false;
    useC = false;
    z = prod(any);
    if (!(z > 0)) throw new Error("the screens in this dialogue contradict every task");
  }
  const marginals = w.map((wf, f) => {
    const rest = prod(any, f);
    const restS = useC ? prod(inS, f) : 0;
    return wf.map((x, v) => (x * (rest - (inS(f, v) ? restS : 0))) / z);
  });
  // P(all fixed now): Σ_x Π w · [all fixed now] · C(x); fixed-now ⊇ S, so [fixed now]·(1 − [in S]) = [fixed now] − [in S]
  const pFixed = useC ? (prod(nowFixed) - prod(inS)) / z : prod(nowFixed) / z;
  return { intent, marginals, pFixed: Math.min(1, Math.max(0, pFixed)), consistent };
}

function ticketIntent(d: Dialogue): number {
  const a = d.acts[0];
  const i = INTENTS.findIndex((_, k) => ACTS[a]?.name === `ticket:${INTENTS[k]}`);
  if (i < 0) throw new Error("a service dialogue starts with the ticket");
  return i;
}

/** Every task of an intent with its prior probability (conditioned on ≥ 1 fault): for exact sums in calibration and tests. */
export function enumerateTasks(
  params: ServiceParams,
  intent: number,
): { hidden: Hidden; p: number }[] {
  const prior = params.faultPrior[intent];
  const out: { hidden: Hidden; p: number }[] = [];
  const rec = (f: number, vals: number[], p: number) => {
    if (p === 0) return;
    if (f === NF) {
      if (vals.some((v) => v !== 0)) out.push({ hidden: [intent, ...vals], p });
      return;
    }
    for (let v = 0; v < prior[f].length; v++) rec(f + 1, [...vals, v], p * prior[f][v]);
  };
  rec(0, [], 1);
  const z = out.reduce((a, t) => a + t.p, 0);
  return out.map((t) => ({ hidden: t.hidden, p: t.p / z }));
}
