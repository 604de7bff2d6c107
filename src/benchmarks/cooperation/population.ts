// The partner population of Cooperation: latent partner types that fail the way CooperBench's
// failure analysis says real partners do — missing communication (never states a plan), ignored
// messages, broken commitments (agrees to stay off a file and edits it anyway), unmet expectations
// (does part of its work and assumes the other will do the rest) — besides the modal dutiful partner
// that states its plan first and keeps its word. Persona cards are an imperfect signal of the type.
//
// Exactness: the partner's plan is on its card and the agent's plan (the hidden state) does not
// change what the partner does, so the exact posterior over types is prior × card likelihood × the
// product of the partner's act likelihoods. A partner reads only messages (not the agent's edits:
// they are on another branch).
import type { Rng } from "../../engine/random";
import type { Dialogue, HumanPopulation, Persona } from "../types";
import {
  ACTS,
  ASK,
  CARD_ACTS,
  CARD_SLOTS,
  FEATURE_CARD,
  FILES,
  MASK_CLASSES,
  NPLANS,
  PLANS,
  T_ACK,
  T_ASK,
  T_DONE,
  T_EDIT,
  T_PLAN,
  T_REJECT,
  T_WAIT,
  VOCAB,
  claimOf,
  giveOf,
  ownPlan,
  partnerPlan,
  planOf,
  replyClass,
  theirEditOf,
  theirPlanOf,
  wantsAnswer,
} from "./world";

/** How one partner type behaves. */
export interface PartnerType {
  name: string;
  prior: number;
  description: string;
  card: number[][]; // per card slot, P(value | type) at full informativeness
  opens: "plan" | "ask" | "none"; // its first free move: state its plan, ask for the agent's (waiting a move first with P waitFirst), or start editing
  waitFirst: number; // "ask" only: P(it waits its first move before asking)
  answers: boolean; // answers messages: its plan when asked; ack (or reject, when it already edited the file) a claim, plan or request
  reads: boolean; // stays off files the agent said it will edit, and takes the ones the agent asks it to do
  keep: number; // P(stays off such a file) at each edit it makes (1: keeps its word)
  maxEdits: number; // edits before it says done, leaving the rest to the agent
  stray: number; // P(once its own files are done, it also edits the first file outside its stated plan: "while I was at it")
}

export interface CooperationParams {
  types: PartnerType[];
  cardInformativeness: number; // κ ∈ [0, 1]
  noise: number; // P(a uniformly random act of the allowed class) at every partner move
  planPrior: number[]; // P(plan) of a feature, the same for both features, drawn independently
  maxExchanges: number; // moves per side
}

export const DEFAULT_TYPES: PartnerType[] = [
  {
    name: "dutiful",
    prior: 0.38,
    description:
      "states its plan first, answers every message, stays off files the agent claims, finishes its feature",
    card: [
      [0.6, 0.25, 0.15],
      [0.6, 0.4],
    ],
    opens: "plan",
    waitFirst: 0,
    answers: true,
    reads: true,
    keep: 1,
    maxEdits: 9,
    stray: 0,
  },
  {
    name: "silent",
    prior: 0.11,
    description:
      "never states a plan or answers, but reads the agent's claims; edits every file it needs",
    card: [
      [0.15, 0.6, 0.25],
      [0.5, 0.5],
    ],
    opens: "none",
    waitFirst: 0,
    answers: false,
    reads: true,
    keep: 1,
    maxEdits: 9,
    stray: 0,
  },
  {
    name: "ignorer",
    prior: 0.12,
    description:
      "states its plan first but ignores every message: edits all its files whatever the agent says",
    card: [
      [0.3, 0.2, 0.5],
      [0.4, 0.6],
    ],
    opens: "plan",
    waitFirst: 0,
    answers: false,
    reads: false,
    keep: 0,
    maxEdits: 9,
    stray: 0,
  },
  {
    name: "breaker",
    prior: 0.16,
    description:
      "states its plan and agrees to stay off the agent's files, then often edits them anyway",
    card: [
      [0.45, 0.2, 0.35],
      [0.35, 0.65],
    ],
    opens: "plan",
    waitFirst: 0,
    answers: true,
    reads: true,
    keep: 0.2,
    maxEdits: 9,
    stray: 0.6,
  },
  {
    name: "passive",
    prior: 0.12,
    description:
      "states its plan, edits one file and says it is done, assuming the agent will do the rest",
    card: [
      [0.4, 0.35, 0.25],
      [0.3, 0.7],
    ],
    opens: "plan",
    waitFirst: 0,
    answers: true,
    reads: true,
    keep: 1,
    maxEdits: 1,
    stray: 0,
  },
  {
    name: "deferrer",
    prior: 0.11,
    description:
      "waits for the agent to lead: waits or asks for its plan and defers to it; unanswered, edits everything it needs",
    card: [
      [0.35, 0.45, 0.2],
      [0.45, 0.55],
    ],
    opens: "ask",
    waitFirst: 0.4,
    answers: true,
    reads: true,
    keep: 1,
    maxEdits: 9,
    stray: 0,
  },
];

export const DEFAULT_PARAMS: CooperationParams = {
  types: DEFAULT_TYPES,
  cardInformativeness: 1,
  noise: 0.02,
  // models+views and utils+config (complements) are the common features: 1 − Σ_p P(p)·P(5 − p) = 77 % of pairs share a file
  planPrior: [0.31, 0.095, 0.095, 0.095, 0.095, 0.31],
  maxExchanges: 5,
};

/** P(the two features share a file), exact: one minus P(the partner's plan is the complement of the agent's). */
export function overlapShare(planPrior: number[]): number {
  return 1 - planPrior.reduce((a, p, b) => a + p * planPrior[NPLANS - 1 - b], 0);
}

/** What the partner knows from the dialogue (messages and its own moves; not the agent's edits). */
export interface PartnerView {
  announced: boolean; // it stated its plan
  asked: boolean; // it asked for the agent's plan
  stayOff: Set<number>; // files the agent said it will edit (claims, its plan)
  given: number[]; // files the agent asked it to do, in order
  edited: Set<number>; // its own edits
  edits: number;
  moves: number; // its moves so far
  message: number; // the agent's act just before, if it wants an answer; −1 otherwise
  agentStated: boolean; // the agent has stated a plan or claimed a file
}

export function partnerView(acts: number[]): PartnerView {
  const v: PartnerView = {
    announced: false,
    asked: false,
    stayOff: new Set(),
    given: [],
    edited: new Set(),
    edits: 0,
    moves: 0,
    message: -1,
    agentStated: false,
  };
  for (const a of acts) {
    if (ACTS[a].kind === "user") v.moves++;
    if (theirPlanOf(a) >= 0) v.announced = true;
    if (a === T_ASK) v.asked = true;
    if (planOf(a) >= 0) {
      PLANS[planOf(a)].forEach((f) => v.stayOff.add(f));
      v.agentStated = true;
    }
    if (claimOf(a) >= 0) {
      v.stayOff.add(claimOf(a));
      v.agentStated = true;
    }
    if (giveOf(a) >= 0 && !v.given.includes(giveOf(a))) v.given.push(giveOf(a));
    if (theirEditOf(a) >= 0) {
      v.edited.add(theirEditOf(a));
      v.edits++;
    }
  }
  const last = acts[acts.length - 1];
  if (acts.length > 0 && ACTS[last].kind === "agent" && wantsAnswer(last)) v.message = last;
  return v;
}

/** Files an agent message is about. */
function messageFiles(a: number): number[] {
  if (planOf(a) >= 0) return PLANS[planOf(a)];
  if (claimOf(a) >= 0) return [claimOf(a)];
  if (giveOf(a) >= 0) return [giveOf(a)];
  return [];
}

/** The card slots' probabilities for a type at informativeness κ. */
function slotProbs(t: PartnerType, kappa: number): number[][] {
  return t.card.map((p) => p.map((q) => (1 - kappa) / p.length + kappa * q));
}

export class CooperationPopulation implements HumanPopulation {
  readonly params: CooperationParams;
  readonly types: { name: string; prior: number; description: string }[];
  readonly #slots: number[][][];
  readonly #cards: { card: number[]; p: number; likelihood: Float64Array }[]; // likelihood: P(card | type)

  constructor(params: CooperationParams = DEFAULT_PARAMS) {
    const total = params.types.reduce((a, t) => a + t.prior, 0);
    if (Math.abs(total - 1) > 1e-9) throw new Error(`type priors sum to ${total}, expected 1`);
    if (
      params.planPrior.length !== NPLANS ||
      !params.planPrior.every((p) => p >= 0) ||
      Math.abs(params.planPrior.reduce((a, b) => a + b, 0) - 1) > 1e-9
    )
      throw new Error(`the plan prior must be ${NPLANS} probabilities summing to 1`);
    this.params = params;
    this.types = params.types.map(({ name, prior, description }) => ({ name, prior, description }));
    this.#slots = params.types.map((t) => slotProbs(t, params.cardInformativeness));
    this.#cards = [];
    const sizes = CARD_SLOTS.map(([, v]) => v.length);
    for (let i = 0; i < sizes[0]; i++)
      for (let j = 0; j < sizes[1]; j++)
        for (let b = 0; b < NPLANS; b++) {
          const likelihood = Float64Array.from(
            this.#slots,
            (s) => s[0][i] * s[1][j] * params.planPrior[b],
          );
          const p = params.types.reduce((a, t, z) => a + t.prior * likelihood[z], 0);
          if (p > 0)
            this.#cards.push({
              card: [CARD_ACTS[0][i], CARD_ACTS[1][j], FEATURE_CARD[b]],
              p,
              likelihood,
            });
        }
  }

  sample(rng: Rng): Persona {
    const type = rng.categorical(this.params.types.map((t) => t.prior));
    const card = [
      ...this.#slots[type].map((p, j) => CARD_ACTS[j][rng.categorical(p)]),
      FEATURE_CARD[rng.categorical(this.params.planPrior)],
    ];
    return { card, type, hidden: this.sampleHidden(rng) };
  }

  /** The hidden state: the agent's plan, drawn independently of the partner (simulators' personas draw it here too). */
  sampleHidden(rng: Rng): number[] {
    return [rng.categorical(this.params.planPrior)];
  }

  cardDistribution(): { card: number[]; p: number }[] {
    return this.#cards.map(({ card, p }) => ({ card: [...card], p }));
  }

  /** The partner's move distribution for a type with plan `plan`, given the acts (its turn). */
  replyRow(type: number, plan: number, acts: number[]): Float64Array {
    const t = this.params.types[type];
    const row = new Float64Array(VOCAB);
    const v = partnerView(acts);
    const mine = PLANS[plan];
    if (v.message >= 0 && t.answers) {
      if (v.message === ASK) row[T_PLAN[plan]] = 1;
      else row[messageFiles(v.message).some((f) => v.edited.has(f)) ? T_REJECT : T_ACK] = 1;
    } else if (t.opens === "plan" && !v.announced) {
      row[T_PLAN[plan]] = 1;
    } else if (t.opens === "ask" && !v.asked && !v.agentStated) {
      const wait = v.moves === 0 ? t.waitFirst : 0;
      row[T_WAIT] = wait;
      row[T_ASK] = 1 - wait;
    } else if (v.edits >= t.maxEdits) {
      row[T_DONE] = 1;
    } else {
      const todo = [...mine, ...(t.reads ? v.given : [])].filter(
        (f, i, all) => all.indexOf(f) === i && !v.edited.has(f),
      );
      let mass = 1;
      for (const f of todo) {
        const keepOff = t.reads && v.stayOff.has(f) && !v.given.includes(f) ? t.keep : 0; // asked to do it: no promise to keep
        row[T_EDIT[f]] += mass * (1 - keepOff);
        mass *= keepOff;
        if (mass === 0) break;
      }
      // a stray edit: only once everything it meant to do is done, and only once
      const outside = FILES.findIndex((_, f) => !mine.includes(f));
      if (
        t.stray > 0 &&
        todo.length === 0 &&
        outside >= 0 &&
        ![...v.edited].some((f) => !mine.includes(f))
      ) {
        row[T_EDIT[outside]] += mass * t.stray;
        mass *= 1 - t.stray;
      }
      row[T_DONE] += mass;
    }
    // slips: a uniformly random act of the allowed class
    const eps = this.params.noise;
    const allowed = MASK_CLASSES[replyClass(acts)].allowed;
    for (let a = 0; a < VOCAB; a++) row[a] *= 1 - eps;
    for (const a of allowed) row[a] += eps / allowed.length;
    return row;
  }

  /** P(card | type) per type; an unknown card is an error. */
  cardLikelihood(card: readonly number[]): Float64Array {
    const key = card.join(",");
    const c = this.#cards.find((x) => x.card.join(",") === key);
    if (!c) throw new Error(`not a cooperation card: ${key}`);
    return c.likelihood;
  }

  /** p(partner's move | type, dialogue): its plan is on the card; the agent's plan (the hidden state) does not change what it does. */
  replyProbs(type: number, d: Dialogue): Float64Array {
    return this.replyRow(type, partnerPlan(d.card), d.acts);
  }

  posterior(d: Dialogue): Float64Array {
    const plan = partnerPlan(d.card);
    ownPlan(d); // a dialogue starts with the agent's task
    const like = this.cardLikelihood(d.card);
    const post = Float64Array.from(this.params.types, (t, z) => {
      let w = t.prior * like[z];
      for (let i = 1; i < d.acts.length && w > 0; i++)
        if (ACTS[d.acts[i]].kind === "user")
          w *= this.replyRow(z, plan, d.acts.slice(0, i))[d.acts[i]];
      return w;
    });
    const total = post.reduce((a, b) => a + b, 0);
    if (!(total > 0)) throw new Error("dialogue has probability 0 under the population");
    return post.map((x) => x / total);
  }

  /** The exact Bayes predictive of the partner's next move: the type posterior's mixture of reply rows. */
  predictive(d: Dialogue): Float64Array {
    const post = this.posterior(d);
    const plan = partnerPlan(d.card);
    const p = new Float64Array(VOCAB);
    post.forEach((w, z) => {
      if (w === 0) return;
      const r = this.replyRow(z, plan, d.acts);
      for (let a = 0; a < VOCAB; a++) p[a] += w * r[a];
    });
    return p;
  }
}
