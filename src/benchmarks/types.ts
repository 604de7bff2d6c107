// The benchmark abstraction every toy game implements: a small vocabulary of dialogue acts with
// text templates, episode rules (who acts when, which acts are allowed, when it ends), a reward,
// a ground-truth human population with latent types and imperfect persona cards, the exact
// Bayes predictive of that population, a behaviour agent for the pretraining corpus, and
// calibration targets. Models see only act tokens; text is for people reading dialogues.
import type { Rng } from "../engine/random";

export type ActKind = "special" | "card" | "agent" | "user" | "outcome";

export interface ActDef {
  name: string;
  kind: ActKind;
  templates: string[]; // ways to say it; a dialogue renders one of them
}

/** One persona: what a simulator is told (card) and, for humans, who they really are (type). */
export interface Persona {
  card: number[]; // card tokens, length cardLen
  type: number; // latent type index; simulators never see it
  member?: number; // which simulator of a population plays this persona (drawn per episode)
}

/** A dialogue so far: the persona card and the acts in order (agent, user, agent, user, …). */
export interface Dialogue {
  card: number[];
  acts: number[];
}

export interface MaskClass {
  name: string;
  allowed: number[]; // token ids
}

export interface CalibrationRow {
  name: string; // what is compared, e.g. "mean donation ($)"
  real: number; // the published / corpus value
  fitted: number; // the toy population's value
  tolerance: number; // |fitted − real| allowed
}

export interface HumanPopulation {
  readonly types: { name: string; prior: number; description: string }[];
  sample(rng: Rng): Persona;
  /** Probability of each card (keyed by card.join(",")), for exact expectations. */
  cardDistribution(): { card: number[]; p: number }[];
  /** p(next user act | latent type, dialogue) over the whole vocabulary (0 outside the allowed class). */
  replyProbs(type: number, dialogue: Dialogue): Float64Array;
  /** Posterior over latent types given the card and the dialogue so far. */
  posterior(dialogue: Dialogue): Float64Array;
}

export interface Benchmark {
  readonly id: string;
  readonly title: string;
  readonly acts: ActDef[];
  readonly cardLen: number; // persona card tokens a simulator sees as a prefix
  readonly maxExchanges: number;
  readonly context: number; // model sequence length for both roles
  readonly maskClasses: MaskClass[];
  readonly population: HumanPopulation;

  /** Mask class of the user's next act, given the dialogue (its last act is the agent's). */
  userClass(d: Dialogue): number;
  /** Mask class of the agent's next act. */
  agentClass(d: Dialogue): number;
  /** Whose turn it is, or "done". */
  turn(d: Dialogue): "agent" | "user" | "done";
  reward(d: Dialogue): number; // in [0, 1]
  success(d: Dialogue): boolean;
  /** The exact Bayes predictive of the human population for the user's next act. */
  bayesPredictive(d: Dialogue): Float64Array;
  /** The heuristic agent whose dialogues with humans form the pretraining corpus. */
  behaviourAgent(d: Dialogue, rng: Rng): number;
  /** A behavioural mode id of a finished dialogue (for mode coverage), e.g. its user-act pattern. */
  mode(d: Dialogue): string;
  calibration(rng: Rng): CalibrationRow[];
  /** The dialogue as readable lines. */
  render(d: Dialogue, rng?: Rng): { speaker: "agent" | "user"; act: string; text: string }[];
}

/** Token sequences of a dialogue for each role: the policy sees [BOS, acts…], a simulator [card…, BOS, acts…]. */
export function policyTokens(bos: number, d: Dialogue): number[] {
  return [bos, ...d.acts];
}
export function simulatorTokens(bos: number, d: Dialogue): number[] {
  return [...d.card, bos, ...d.acts];
}
