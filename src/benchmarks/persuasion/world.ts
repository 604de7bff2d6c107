// Persuasion (after Persuasion for Good, Wang et al. 2019): a persuader (the agent) asks a
// persuadee (the user) to donate to a children's charity, in at most 5 exchanges. The human
// population is a mixture of latent types that want different, partly conflicting strategies
// (what wins the modal skeptic puts off the empathetic donor), reveal themselves in their replies,
// and decide a donation from a willingness that the strategies used move. Persona cards are three
// noisy trait bins, as weakly tied to behaviour as real personality traits are to donating.
//
// Sequence layout. Policy: [BOS, a1, u1, a2, u2, …]; simulator: [card ×3, BOS, a1, u1, …].
// The user answers "ask to donate" with an amount, which ends the dialogue; after the 5th
// exchange without an ask the user states the donation they make after the task (as in P4G).
import type { Rng } from "../../engine/random";
import type { ActDef, Benchmark, CalibrationRow, Dialogue, HumanPopulation, MaskClass, Persona } from "../types";
import { p4gStats, TOY_DONATION_AMOUNTS, type P4GStrategy } from "./p4g-stats";

// ---------------------------------------------------------------------------------------------
// Acts

// [toy act, P4G label, templates]
const STRATEGIES = [
  ["logical", "logical-appeal", ["Every dollar goes further there than almost anywhere else.", "It is simply the most efficient way to help."]],
  ["emotion", "emotion-appeal", ["Imagine a child going to bed hungry tonight.", "These kids are suffering, and it breaks my heart."]],
  ["credibility", "credibility-appeal", ["Save the Children has worked for a hundred years and is audited every year.", "They are a top-rated, transparent charity."]],
  ["foot-in-the-door", "foot-in-the-door", ["Even a few cents would make a difference.", "You could start with something tiny."]],
  ["self-modeling", "self-modeling", ["I am donating part of my own payment.", "I give to them myself every month."]],
  ["personal-story", "personal-story", ["A child I met through them now goes to school.", "My neighbour's family got help from them once."]],
  ["donation-information", "donation-information", ["Your donation comes straight out of your task payment.", "You can give any amount from $0 to $2."]],
  ["source-inquiry", "source-related-inquiry", ["Have you heard of Save the Children?", "Do you know what they do?"]],
  ["task-inquiry", "task-related-inquiry", ["Do you usually donate to charities?", "Have you done a task like this before?"]],
  ["personal-inquiry", "personal-related-inquiry", ["Do you have children yourself?", "What causes do you care about?"]],
] as const;

const USER_TALK = [
  ["agree", ["That sounds good.", "I agree, that matters."]],
  ["ask-question", ["How do I know the money gets there?", "What exactly do they do?"]],
  ["object-cost", ["Money is tight for me right now.", "I need this payment myself."]],
  ["object-trust", ["How do I know they are honest?", "Charities waste a lot of money."]],
  ["object-efficacy", ["Will such a small amount change anything?", "It is a drop in the ocean."]],
  ["share-personal", ["I have kids too, it gets to me.", "I volunteered at a shelter once."]],
  ["neutral", ["Okay.", "I see."]],
  ["refuse", ["I am not interested.", "Please stop."]],
] as const;

export const AMOUNTS: number[] = [...TOY_DONATION_AMOUNTS]; // dollars: the grid the P4G donations are binned to
const CARD_TRAITS = ["agreeable", "caring", "rational"] as const;

function buildActs(): ActDef[] {
  const acts: ActDef[] = [
    { name: "<bos>", kind: "special", templates: [""] },
    { name: "greeting", kind: "agent", templates: ["Hi! How are you today?", "Hello there, thanks for chatting."] },
    { name: "ask", kind: "agent", templates: ["Would you like to donate some of your payment?", "How much would you like to give?"] },
  ];
  for (const [name, , templates] of STRATEGIES) acts.push({ name, kind: "agent", templates: [...templates] });
  for (const [name, templates] of USER_TALK) acts.push({ name, kind: "user", templates: [...templates] });
  for (const a of AMOUNTS) acts.push({ name: `$${a}`, kind: "outcome", templates: [a === 0 ? "I won't donate." : `I'll donate $${a.toFixed(2)}.`] });
  for (const t of CARD_TRAITS) {
    acts.push({ name: `card:${t}-low`, kind: "card", templates: [`not very ${t}`] });
    acts.push({ name: `card:${t}-high`, kind: "card", templates: [`${t}`] });
  }
  return acts;
}

export const ACTS = buildActs();
const id = (name: string) => {
  const i = ACTS.findIndex((a) => a.name === name);
  if (i < 0) throw new Error(`unknown act ${name}`);
  return i;
};
export const BOS = id("<bos>");
export const GREETING = id("greeting");
export const ASK = id("ask");
export const AGENT_ACTS = ACTS.flatMap((a, i) => (a.kind === "agent" ? [i] : []));
export const STRATEGY_ACTS = STRATEGIES.map(([n]) => id(n));
export const USER_ACTS = ACTS.flatMap((a, i) => (a.kind === "user" ? [i] : []));
export const AMOUNT_ACTS = ACTS.flatMap((a, i) => (a.kind === "outcome" ? [i] : []));
export const CARD_ACTS = ACTS.flatMap((a, i) => (a.kind === "card" ? [i] : []));
export const VOCAB = ACTS.length;
export const CARD_LEN = CARD_TRAITS.length;
export const MAX_EXCHANGES = 5;
export const CONTEXT = 16; // card 3 + BOS + 5 × 2 + final decision = 15

export const CLASS = { all: 0, agent: 1, talk: 2, amount: 3 } as const;
export const MASK_CLASSES: MaskClass[] = [
  { name: "all", allowed: ACTS.map((_, i) => i) },
  { name: "agent", allowed: AGENT_ACTS },
  { name: "user talk", allowed: USER_ACTS },
  { name: "donation", allowed: AMOUNT_ACTS },
];

const amountOf = (act: number) => AMOUNTS[AMOUNT_ACTS.indexOf(act)];

// ---------------------------------------------------------------------------------------------
// The human population

/**
 * Parameters of the population. Strategy effects and reply signatures are hand-written (the
 * mechanism); initial willingness and the decision thresholds were fitted by grid search so that
 * the population talking to the behaviour persuader matches P4G's donation statistics (`calibrate`).
 */
export interface PersuasionParams {
  types: TypeParams[];
  cardInformativeness: number; // κ: scales how far each type's trait probabilities sit from ½
  repeatDecay: number; // the n-th use of one strategy moves willingness by decay^(n−1) of the first
  replySharpness: number; // how strongly replies show the type's signature
  reactionWeight: number; // how strongly replies show whether the last strategy landed
  thresholds: number[]; // ordered-logit cut points for $0.5, $1, $1.5, $2 on willingness
  decisionSlope: number; // ordered-logit slope: larger = decisions closer to a step function
}

export interface TypeParams {
  name: string;
  prior: number;
  description: string;
  w0: number; // initial willingness
  effects: Partial<Record<string, number>>; // willingness change per strategy (first use)
  signature: Partial<Record<string, number>>; // reply-act logits that reveal the type
  traits: [number, number, number]; // P(card trait "high" | type) at κ = 1
}

export const DEFAULT_PARAMS: PersuasionParams = {
  types: [
    {
      name: "skeptic",
      prior: 0.46,
      description: "wants facts and proof; put off by sentiment",
      w0: -0.6,
      effects: { credibility: 0.9, "donation-information": 0.8, logical: 0.7, "source-inquiry": 0.2, emotion: -0.8, "personal-story": -0.7, "self-modeling": -0.3 },
      signature: { "ask-question": 1.2, "object-trust": 1.2, "object-efficacy": 0.8, neutral: 0.4 },
      traits: [0.47, 0.47, 0.58],
    },
    {
      name: "empathetic",
      prior: 0.24,
      description: "moved by stories and feelings; cold to numbers",
      w0: -0.3,
      effects: { emotion: 1.0, "personal-story": 0.9, "self-modeling": 0.4, "personal-inquiry": 0.3, logical: -0.7, credibility: -0.5, "donation-information": -0.2 },
      signature: { "share-personal": 1.4, agree: 0.9 },
      traits: [0.54, 0.56, 0.46],
    },
    {
      name: "frugal",
      prior: 0.18,
      description: "short of money; says yes to small concrete asks",
      w0: -0.8,
      effects: { "foot-in-the-door": 1.1, "donation-information": 0.6, "task-inquiry": 0.3, emotion: -0.5, credibility: -0.2, "personal-story": -0.3 },
      signature: { "object-cost": 1.5, neutral: 0.7 },
      traits: [0.5, 0.5, 0.52],
    },
    {
      name: "social",
      prior: 0.12,
      description: "follows what others do; likes being asked about themselves",
      w0: -0.4,
      effects: { "self-modeling": 1.1, "personal-inquiry": 0.8, "personal-story": 0.3, logical: -0.5, "donation-information": -0.3, credibility: -0.2 },
      signature: { agree: 1.0, "share-personal": 0.7, "ask-question": 0.6 },
      traits: [0.56, 0.5, 0.47],
    },
  ],
  cardInformativeness: 1,
  repeatDecay: 0.3,
  replySharpness: 2,
  reactionWeight: 1.2,
  thresholds: [-0.3, 0.7, 1.7, 2.7],
  decisionSlope: 3,
};

const POSITIVE = new Set(["agree", "share-personal"]);
const NEGATIVE = new Set(["object-cost", "object-trust", "object-efficacy", "refuse"]);
const INQUIRIES = new Set(["source-inquiry", "task-inquiry", "personal-inquiry"]);

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export class PersuasionPopulation implements HumanPopulation {
  readonly params: PersuasionParams;
  readonly types: { name: string; prior: number; description: string }[];
  readonly #effects: Float64Array[]; // [type][agent act] willingness change
  readonly #talkLogits: Float64Array[]; // [type][user talk act index] signature logits
  readonly #cards: { card: number[]; p: number; likelihood: Float64Array }[];

  constructor(params: PersuasionParams = DEFAULT_PARAMS) {
    const total = params.types.reduce((s, t) => s + t.prior, 0);
    if (Math.abs(total - 1) > 1e-9) throw new Error(`type priors sum to ${total}, expected 1`);
    this.params = params;
    this.types = params.types.map(({ name, prior, description }) => ({ name, prior, description }));
    this.#effects = params.types.map((t) => {
      const e = new Float64Array(VOCAB);
      for (const [name, v] of Object.entries(t.effects)) e[id(name)] = v ?? 0;
      return e;
    });
    this.#talkLogits = params.types.map((t) => Float64Array.from(USER_TALK, ([name]) => params.replySharpness * (t.signature[name] ?? 0)));
    this.#cards = [];
    for (let bits = 0; bits < 2 ** CARD_LEN; bits++) {
      const card = CARD_TRAITS.map((_, j) => CARD_ACTS[2 * j + ((bits >> j) & 1)]);
      const likelihood = Float64Array.from(params.types, (t) =>
        t.traits.reduce((p, ph, j) => {
          const high = 0.5 + params.cardInformativeness * (ph - 0.5);
          return p * ((bits >> j) & 1 ? high : 1 - high);
        }, 1),
      );
      const p = params.types.reduce((s, t, z) => s + t.prior * likelihood[z], 0);
      this.#cards.push({ card, p, likelihood });
    }
  }

  sample(rng: Rng): Persona {
    const type = rng.categorical(this.params.types.map((t) => t.prior));
    const card = CARD_TRAITS.map((_, j) => {
      const high = 0.5 + this.params.cardInformativeness * (this.params.types[type].traits[j] - 0.5);
      return CARD_ACTS[2 * j + (rng.uniform() < high ? 1 : 0)];
    });
    return { card, type };
  }

  cardDistribution(): { card: number[]; p: number }[] {
    return this.#cards.map(({ card, p }) => ({ card: [...card], p }));
  }

  /** Willingness of a type after the agent acts in the dialogue (repeats decay). */
  willingness(type: number, d: Dialogue): number {
    const used = new Map<number, number>();
    let w = this.params.types[type].w0;
    for (let i = 0; i < d.acts.length; i += 2) {
      const a = d.acts[i];
      const n = used.get(a) ?? 0;
      w += this.#effects[type][a] * this.params.repeatDecay ** n;
      used.set(a, n + 1);
    }
    return w;
  }

  /** P(amount) for a willingness: ordered logit over $0 … $2. */
  amountProbs(w: number): number[] {
    const { thresholds, decisionSlope } = this.params;
    const atLeast = [1, ...thresholds.map((th) => sigmoid(decisionSlope * (w - th))), 0];
    return AMOUNTS.map((_, k) => Math.max(0, atLeast[k] - atLeast[k + 1]));
  }

  replyProbs(type: number, d: Dialogue): Float64Array {
    const p = new Float64Array(VOCAB);
    if (userClass(d) === CLASS.amount) {
      this.amountProbs(this.willingness(type, d)).forEach((q, k) => (p[AMOUNT_ACTS[k]] = q));
      return p;
    }
    const last = d.acts[d.acts.length - 1];
    const lastName = ACTS[last].name;
    const landed = this.#effects[type][last]; // did the last strategy please or annoy this type?
    const logits = USER_TALK.map(([name], u) => {
      let l = this.#talkLogits[type][u];
      if (POSITIVE.has(name)) l += this.params.reactionWeight * landed;
      if (NEGATIVE.has(name)) l -= this.params.reactionWeight * landed;
      if (INQUIRIES.has(lastName) && name === "share-personal") l += 0.8; // questions invite answers
      if (lastName === "greeting" && name === "neutral") l += 0.3;
      return l;
    });
    const m = Math.max(...logits);
    const e = logits.map((l) => Math.exp(l - m));
    const z = e.reduce((s, x) => s + x, 0);
    USER_ACTS.forEach((act, u) => (p[act] = e[u] / z));
    return p;
  }

  posterior(d: Dialogue): Float64Array {
    const key = d.card.join(",");
    const card = this.#cards.find((c) => c.card.join(",") === key);
    if (!card) throw new Error(`not a persuasion card: ${key}`);
    const post = Float64Array.from(this.params.types, (t, z) => t.prior * card.likelihood[z]);
    // each user act so far is evidence about the type
    for (let i = 1; i < d.acts.length; i += 2) {
      const prefix = { card: d.card, acts: d.acts.slice(0, i) };
      for (let z = 0; z < post.length; z++) post[z] *= this.replyProbs(z, prefix)[d.acts[i]];
    }
    const total = post.reduce((s, x) => s + x, 0);
    if (!(total > 0)) throw new Error("dialogue has probability 0 under the population");
    return post.map((x) => x / total);
  }
}

// ---------------------------------------------------------------------------------------------
// Episode rules

/** Whose turn: agent on even act counts, user on odd; done after an amount or the final decision. */
export function turn(d: Dialogue): "agent" | "user" | "done" {
  const n = d.acts.length;
  if (n > 0 && AMOUNT_ACTS.includes(d.acts[n - 1])) return "done";
  if (n % 2 === 1) return "user";
  return n === 2 * MAX_EXCHANGES ? "user" : "agent"; // after 5 exchanges: the final decision
}

export function userClass(d: Dialogue): number {
  const n = d.acts.length;
  return d.acts[n - 1] === ASK || n === 2 * MAX_EXCHANGES ? CLASS.amount : CLASS.talk;
}

export function donation(d: Dialogue): number {
  const last = d.acts[d.acts.length - 1];
  return AMOUNT_ACTS.includes(last) ? amountOf(last) : 0;
}

// ---------------------------------------------------------------------------------------------
// The behaviour persuader of the pretraining corpus: P4G's strategy frequencies, no adaptation.

const STRATEGY_FREQ = STRATEGIES.map(([, label]) => p4gStats.strategies.frequencies[label as P4GStrategy]);
const ASK_HAZARD = [0, 0.08, 0.15, 0.3]; // P(ask now) at exchanges 1 … 4, if not asked yet; exchange 5 never asks

function behaviourAgent(d: Dialogue, rng: Rng, style: ArrayLike<number> = STRATEGY_FREQ): number {
  const exchange = d.acts.length / 2; // 0-based
  if (exchange === 0) return rng.uniform() < 0.7 ? GREETING : STRATEGY_ACTS[rng.categorical(style)];
  if (exchange < ASK_HAZARD.length && rng.uniform() < ASK_HAZARD[exchange]) return ASK;
  return STRATEGY_ACTS[rng.categorical(style)];
}

/**
 * Real persuaders have styles: each favours a few strategies and repeats them. A corpus
 * persuader's strategy probabilities are drawn from Dirichlet(α · P4G frequencies), so the corpus
 * keeps P4G's strategy frequencies on average while covering dialogues that lean on one strategy
 * (what an RL policy does). α = 0 turns styles off (every persuader uses P4G's frequencies).
 */
export function persuaderStyle(rng: Rng, concentration: number): Float64Array {
  if (concentration === 0) return Float64Array.from(STRATEGY_FREQ);
  const g = Float64Array.from(STRATEGY_FREQ, (f) => gammaVariate(rng, concentration * f));
  const total = g.reduce((a, b) => a + b, 0);
  return total > 0 ? g.map((x) => x / total) : Float64Array.from(STRATEGY_FREQ);
}

/** Gamma(shape, 1) by Marsaglia and Tsang (2000); shape < 1 through Gamma(shape + 1) · U^(1/shape). */
function gammaVariate(rng: Rng, shape: number): number {
  if (shape < 1) return gammaVariate(rng, shape + 1) * Math.pow(1 - rng.uniform(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = rng.normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - rng.uniform();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

// ---------------------------------------------------------------------------------------------

export function createPersuasion(params: PersuasionParams = DEFAULT_PARAMS): Benchmark & { humans: PersuasionPopulation } {
  const population = new PersuasionPopulation(params);
  return {
    id: "persuasion",
    title: "Persuasion (after Persuasion for Good)",
    acts: ACTS,
    cardLen: CARD_LEN,
    context: CONTEXT,
    maskClasses: MASK_CLASSES,
    humans: population,
    userClass,
    agentClass: () => CLASS.agent,
    turn,
    reward: (d) => Math.min(donation(d) / 2, 1),
    success: (d) => donation(d) >= 1,
    bayesPredictive(d) {
      const post = population.posterior(d);
      const p = new Float64Array(VOCAB);
      post.forEach((w, z) => {
        if (w === 0) return;
        const r = population.replyProbs(z, d);
        for (let v = 0; v < VOCAB; v++) p[v] += w * r[v];
      });
      return p;
    },
    mode(d) {
      // the user's two most frequent talk acts and the outcome: a coarse behavioural "style"
      // (the toy's analogue of SCOPE's embedding clusters)
      const counts = new Map<string, number>();
      d.acts.forEach((a, i) => {
        if (i % 2 === 1 && USER_ACTS.includes(a)) counts.set(ACTS[a].name, (counts.get(ACTS[a].name) ?? 0) + 1);
      });
      const talk = [...counts.entries()]
        .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
        .slice(0, 2)
        .map(([n]) => n)
        .sort();
      const given = donation(d);
      return `${talk.join(">") || "-"}|${given === 0 ? "$0" : given < 1 ? "<$1" : "≥$1"}`;
    },
    render(d, rng) {
      return d.acts.map((a, i) => {
        const act = ACTS[a];
        const t = act.templates;
        const speaker = turn({ card: d.card, acts: d.acts.slice(0, i) }) === "agent" ? ("agent" as const) : ("user" as const);
        return { speaker, act: act.name, text: t[rng ? rng.int(t.length) : 0] };
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Calibration: the population talking to the behaviour persuader against the real corpus

/** Persuader styles in the default corpus: α of the Dirichlet around P4G's frequencies (see persuaderStyle). */
export const DEFAULT_STYLE_CONCENTRATION = 1;

export function behaviourDialogue(population: PersuasionPopulation, persona: Persona, rng: Rng, styleConcentration = DEFAULT_STYLE_CONCENTRATION): Dialogue {
  const d: Dialogue = { card: persona.card, acts: [] };
  const style = styleConcentration > 0 ? persuaderStyle(rng, styleConcentration) : undefined;
  for (let t = turn(d); t !== "done"; t = turn(d)) {
    d.acts.push(t === "agent" ? behaviourAgent(d, rng, style) : rng.categorical(population.replyProbs(persona.type, d)));
  }
  return d;
}

export function calibrate(population: PersuasionPopulation, rng: Rng, n = 20000, styleConcentration = DEFAULT_STYLE_CONCENTRATION): CalibrationRow[] {
  const amounts: number[] = [];
  const strategyCounts = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const d = behaviourDialogue(population, population.sample(rng), rng, styleConcentration);
    amounts.push(donation(d));
    for (let j = 0; j < d.acts.length; j += 2) if (STRATEGY_ACTS.includes(d.acts[j])) strategyCounts.set(d.acts[j], (strategyCounts.get(d.acts[j]) ?? 0) + 1);
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
    { name: "fraction giving ≥ $1 (success)", real: real.successFraction, fitted: amounts.filter((a) => a >= 1).length / n, tolerance: 0.05 },
  ];
}
