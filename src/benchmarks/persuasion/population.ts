// The human population of Persuasion: a mixture of latent types that want different, partly
// conflicting strategies (what wins the modal skeptic puts off the empathetic donor), reveal
// themselves in their replies, and decide a donation from a willingness that the strategies used
// move. Persona cards are three noisy trait bins, as weakly tied to behaviour as real personality
// traits are to donating.
import type { Rng } from "../../engine/random";
import type { Dialogue, HumanPopulation, Persona } from "../types";
import {
  ACTS,
  AMOUNT_ACTS,
  AMOUNTS,
  CARD_ACTS,
  CARD_LEN,
  CARD_TRAITS,
  CLASS,
  USER_ACTS,
  USER_TALK,
  VOCAB,
  actId,
  userClass,
} from "./world";

/**
 * Parameters of the population. Strategy effects and reply signatures are hand-written (the
 * mechanism); initial willingness and the decision thresholds were fitted by grid search so that
 * the population talking to the behaviour persuader matches P4G's donation statistics (calibration.ts' `calibrate`).
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
      effects: {
        credibility: 0.9,
        "donation-information": 0.8,
        logical: 0.7,
        "source-inquiry": 0.2,
        emotion: -0.8,
        "personal-story": -0.7,
        "self-modeling": -0.3,
      },
      signature: { "ask-question": 1.2, "object-trust": 1.2, "object-efficacy": 0.8, neutral: 0.4 },
      traits: [0.47, 0.47, 0.58],
    },
    {
      name: "empathetic",
      prior: 0.24,
      description: "moved by stories and feelings; cold to numbers",
      w0: -0.3,
      effects: {
        emotion: 1.0,
        "personal-story": 0.9,
        "self-modeling": 0.4,
        "personal-inquiry": 0.3,
        logical: -0.7,
        credibility: -0.5,
        "donation-information": -0.2,
      },
      signature: { "share-personal": 1.4, agree: 0.9 },
      traits: [0.54, 0.56, 0.46],
    },
    {
      name: "frugal",
      prior: 0.18,
      description: "short of money; says yes to small concrete asks",
      w0: -0.8,
      effects: {
        "foot-in-the-door": 1.1,
        "donation-information": 0.6,
        "task-inquiry": 0.3,
        emotion: -0.5,
        credibility: -0.2,
        "personal-story": -0.3,
      },
      signature: { "object-cost": 1.5, neutral: 0.7 },
      traits: [0.5, 0.5, 0.52],
    },
    {
      name: "social",
      prior: 0.12,
      description: "follows what others do; likes being asked about themselves",
      w0: -0.4,
      effects: {
        "self-modeling": 1.1,
        "personal-inquiry": 0.8,
        "personal-story": 0.3,
        logical: -0.5,
        "donation-information": -0.3,
        credibility: -0.2,
      },
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
      for (const [name, v] of Object.entries(t.effects)) e[actId(name)] = v ?? 0;
      return e;
    });
    this.#talkLogits = params.types.map((t) =>
      Float64Array.from(USER_TALK, ([name]) => params.replySharpness * (t.signature[name] ?? 0)),
    );
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
      const high =
        0.5 + this.params.cardInformativeness * (this.params.types[type].traits[j] - 0.5);
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
