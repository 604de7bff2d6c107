// The benchmark abstraction every toy game implements: a small vocabulary of dialogue acts with
// text templates, episode rules (who acts when, which acts are allowed, when it ends), a reward,
// a ground-truth human population with latent types and imperfect persona cards, the exact
// Bayes predictive of that population, a behaviour agent for the pretraining corpus, and
// calibration targets. Models see only act tokens; text is for people reading dialogues.
import type { z } from "zod";
import type { Rng } from "../engine/random";
import type { ChatMessage, LmPrompt } from "../lm/types";

export type ActKind = "special" | "card" | "agent" | "user" | "outcome" | "env"; // env: the world's own moves (a screen, a look-up result)

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
  hidden?: number[]; // the episode's hidden state (e.g. faults in a phone): the reward and humans see it, the policy and simulators do not
}

/**
 * A dialogue so far: the persona card, the acts in order (whose turn each was is `turn` of the
 * prefix before it) and the episode's hidden state, copied from the persona. Models read the card
 * (simulators) and the acts; only the world (reward, humans, env moves) reads `hidden`.
 */
export interface Dialogue {
  card: number[];
  acts: number[];
  hidden?: number[];
}

/** Who moves next: the agent (policy), the user (human or simulator), the world itself (a tool's result), or nobody. */
export type Turn = "agent" | "user" | "env" | "done";
export type Speaker = "agent" | "user" | "env";

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
  /**
   * An episode's hidden state drawn independently of the person (e.g. a task's faults), for
   * benchmarks that have one: simulators' personas (a card and no type) draw it here.
   */
  sampleHidden?(rng: Rng): number[];
  /** Probability of each card (keyed by card.join(",")), for exact expectations. */
  cardDistribution(): { card: number[]; p: number }[];
  /**
   * p(next user act | latent type, dialogue) over the whole vocabulary (0 outside the allowed
   * class); it reads `dialogue.hidden` where the benchmark has hidden state, and without it (a probe
   * state) marginalises the hidden state given the acts.
   */
  replyProbs(type: number, dialogue: Dialogue): Float64Array;
  /** Posterior over latent types given the card and the dialogue so far. */
  posterior(dialogue: Dialogue): Float64Array;
}

export interface Benchmark {
  readonly id: string;
  readonly title: string;
  readonly acts: ActDef[];
  readonly cardLen: number; // persona card tokens a simulator sees as a prefix
  readonly context: number; // model sequence length for both roles
  readonly maskClasses: MaskClass[];
  readonly humans: HumanPopulation;

  /** Mask class of the user's next act, given the dialogue (its last act is the agent's). */
  userClass(d: Dialogue): number;
  /** Mask class of the agent's next act. */
  agentClass(d: Dialogue): number;
  // turn, userClass and agentClass read only the card and the acts (never `hidden`): what a model
  // sees decides whose turn it is and which acts are allowed.
  /** Whose turn it is, or "done". */
  turn(d: Dialogue): Turn;
  /** The world's own move when `turn` is "env" (e.g. what an account look-up returns); it reads `d.hidden`. */
  envAct?(d: Dialogue, rng: Rng): number;
  reward(d: Dialogue): number; // in [0, 1]
  success(d: Dialogue): boolean;
  /** The exact Bayes predictive of the human population for the user's next act, given what a simulator sees (card and acts; `hidden` is marginalised, not read). */
  bayesPredictive(d: Dialogue): Float64Array;
  /** A behavioural mode id of a finished dialogue (for mode coverage), e.g. its user-act pattern. */
  mode(d: Dialogue): string;
  /** The dialogue as readable lines. */
  render(d: Dialogue, rng?: Rng): { speaker: Speaker; act: string; text: string }[];
}

// ---------------------------------------------------------------------------------------------
// A benchmark as a plug-in: one folder exports one BenchmarkModule, registered in registry.ts.
// Nothing outside a benchmark's folder imports the folder; the layers above see only this.

/** A reference agent's exact (or large-sample) success with humans: a level drawn on the figures. */
export interface ReferenceLine {
  id: string; // stable key, e.g. "modal-script"
  label: string; // short, for a chart's margin: "skeptic's script"
  description: string; // one sentence for captions and the report
  humanSuccess: number; // in [0, 1]
  onFigure: boolean; // drawn on the humans panel of the curves (the others are listed in the report)
}

/** A distribution the population is fitted to: the real corpus' fractions next to the toy's, per bin. */
export interface CalibrationHistogram {
  name: string; // e.g. "donation ($)"
  bins: string[];
  real: number[];
  fitted: number[];
}

export interface Calibration {
  source: string; // what the targets come from, e.g. "Persuasion for Good (behaviour persuader × population vs the real corpus)"
  rows: CalibrationRow[];
  histograms: CalibrationHistogram[];
}

/** A readable dialogue state at the user's turn, where the diagnostics compare reply distributions. */
export interface ProbeState {
  id: string; // stable key, e.g. "after-emotion"
  label: string; // the state in words
  acts: string[]; // act names from the start of the dialogue
}

/** A numeric outcome stated in LM replies (Persuasion: the donation) against the real people's, on the benchmark's grid. */
export interface OutcomeComparison {
  amounts: number[]; // the grid, e.g. $0, $0.5, $1, $1.5, $2
  counts: number[]; // parsed outcomes per grid point
  fractions: number[]; // counts / parsed (all 0 when nothing parsed)
  human: number[]; // the real people's fractions on the same grid; empty where the benchmark has none (BenchmarkLm.outcomeView.reference null)
  parsed: number; // replies with an outcome
  unparsed: number; // replies without one (null)
  mean: number | null; // mean parsed outcome (unrounded)
  ks: number | null; // max_x |F(x) − F_human(x)| over the grid; null when nothing parsed
  l1: number | null; // Σ |p − p_human|, in [0, 2]; null when nothing parsed
}

/** How the LM lab names and shows a benchmark's outcomes (the page itself names none). */
export interface OutcomeView {
  stated: string; // the count of replies that state one, e.g. "donations stated"
  mean: string; // their mean, e.g. "mean donation"
  format(value: number): string; // a grid point or a mean in words, e.g. "$1.50"
  /** Whose outcomes `OutcomeComparison.human` holds, e.g. "P4G humans"; null: no real outcomes to compare with (human empty, KS and L1 null). */
  reference: string | null;
  due: string; // what the user is asked when `decisionDue`, e.g. "It is time to say how much to donate."
  note: string; // how outcomes are read from the replies and what they are compared with, for the page
}

/**
 * A reference agent the diagnostics play against every simulator: it reads only what the agent sees
 * (never `hidden`); `rng` is there for agents that draw.
 */
export interface ReferenceAgent {
  id: string; // its reference line's id, e.g. "modal-script"
  label: string; // as on its reference line, e.g. "accurate customer's script"
  act(d: Dialogue, rng: Rng): number;
}

/**
 * The held-out panels a config can name instead of listing members (`panel: "own-modes"`):
 * "shared-mode", families whose corpora only lean to other types and so still play the training
 * simulator's modal reply; "own-modes", families that each collapse onto a user of their own (one
 * family per minority type, weighted by the rule in docs/science.md#the-held-out-panels).
 */
export const PANEL_KINDS = ["shared-mode", "own-modes"] as const;
export type PanelKind = (typeof PANEL_KINDS)[number];

/** How an act-label prompt is put to an LM: a base-model transcript (text) or the chat template. */
export type LabelPromptStyle = "text" | "chat";

/**
 * How a real LM plays the benchmark's user (the lm tier, docs/architecture.md#the-lm-tier): prompts for a dialogue state
 * at the user's turn, the labels whose likelihoods make an LM a simulator over acts, and the
 * LM lab's preset cards and states and its reading of outcomes from free text.
 */
export interface BenchmarkLm {
  /** The prompt whose continuations are the allowed user acts' labels (text: base-model transcript; chat: the Direct prompt). */
  actLabelPrompt(
    d: Dialogue,
    style?: LabelPromptStyle,
  ): { prompt: LmPrompt; acts: number[]; continuations: string[] };
  directPrompt(d: Dialogue): { chat: ChatMessage[] };
  vsPrompt(d: Dialogue, opts?: { k?: number; probabilityBelow?: number }): { chat: ChatMessage[] };
  baseTextPrompt(d: Dialogue): { text: string };
  baseContinuation(reply: string): string;
  renderTranscript(d: Dialogue): string;
  describeCard(card: readonly number[]): string;
  /** True when the user's next reply must state the outcome (e.g. a donation). */
  decisionDue(d: Dialogue): boolean;
  cards: readonly { id: string; card: number[]; label: string }[];
  states: readonly { id: string; label: string; acts: string[] }[];
  outcomeName: string; // e.g. "donation"
  parseOutcome(text: string): number | null;
  compareOutcomes(values: readonly (number | null)[]): OutcomeComparison;
  outcomeView: OutcomeView;
}

/**
 * How the strategy measures (src/metrics/strategy.ts) read a finished dialogue: what the agent is
 * given at the start (its task; "" where it is given nothing) and an order-invariant signature of
 * what it did, e.g. the set of its acts.
 */
export interface StrategyView {
  task(bench: Benchmark, d: Dialogue): string;
  signature(bench: Benchmark, d: Dialogue): string;
  description: string; // the task and the signature in words, for the report and the docs
}

/** What the benchmark's agent and user are called in transcripts. */
export interface Roles {
  agent: string; // "Persuader"
  user: string; // "Persuadee"
  env?: string; // who speaks for the world's own moves ("System"); only where turn() can be "env"
}

/**
 * One benchmark: its config sections (zod schemas with defaults), how to build its world from them,
 * the pretraining corpus, calibration, reference agents, probe states, and how to show a dialogue's
 * outcome. `World` is its `world` config section, `Corpus` its `corpus` section.
 */
export interface BenchmarkModule<
  World = unknown,
  Corpus extends { dialogues: number } = { dialogues: number },
> {
  readonly id: string;
  readonly title: string;
  readonly roles: Roles;
  /** The real data the population is calibrated on, e.g. "the Persuasion for Good corpus". */
  readonly calibratedOn: string;
  /** What "success" means, completing "Success means …", e.g. "a donation of at least $1". */
  readonly success: string;
  readonly worldSchema: z.ZodType<World>;
  readonly corpusSchema: z.ZodType<Corpus>;
  readonly defaultWorld: World;
  readonly defaultCorpus: Corpus;
  /**
   * Its defaults for the sections every benchmark shares, merged over the common ones
   * (src/experiment/config-defaults.ts): at least its held-out panel and its ensemble, whose type
   * mixtures name its latent types, and any model sizes or budgets of its own.
   */
  readonly configDefaults: Record<string, unknown>;
  /** Latent type names, in the population's order: a skewed prior (panel members) has one weight each. */
  readonly typeNames: string[];
  /** The world for a config, optionally with the human population's type mixture replaced (normalised here). */
  create(world: World, prior?: number[]): Benchmark;
  /** The population's parameters as used, for the report. */
  parameters(bench: Benchmark): unknown;
  /** One corpus dialogue: a human of the population with the behaviour agent. */
  corpusDialogue(bench: Benchmark, corpus: Corpus, rng: Rng): Dialogue;
  /** The population against the real benchmark's published statistics (the report prints it). */
  calibration(bench: Benchmark, corpus: Corpus, rng: Rng): Calibration;
  /** Reference agents' success with humans, exact where the world allows. */
  referenceLines(bench: Benchmark): ReferenceLine[];
  /** Trials per task for pass^k (τ-bench): the final evaluation with humans also plays each of its tasks this many times with the same person; absent: not reported. */
  readonly passK?: number;
  /** States where the Simulators page and the diagnostics compare reply distributions. */
  probeStates: ProbeState[];
  /** A dialogue's task and strategy, for the strategy measures of the final evaluation with humans. */
  readonly strategy: StrategyView;
  /** An adaptive agent for the diagnostics' probe: it plays humans and the reference simulator. */
  adaptiveProbe?(bench: Benchmark): { description: string; act(d: Dialogue): number };
  /**
   * The two reference agents whose success against each held-out panel member is the panel's
   * separation: the script that wins the modal user, and an agent that adapts to the user it
   * meets. A panel whose members all play the modal user scores them alike, as its training
   * simulator does; humans do not.
   */
  separationAgents?(bench: Benchmark): { script: ReferenceAgent; adaptive: ReferenceAgent };
  /**
   * Its held-out panels by kind, as member lists of the `panel` config section; `configDefaults`'
   * panel is one of them. A config may name one instead of listing its members.
   */
  readonly panels?: Partial<Record<PanelKind, readonly unknown[]>>;
  /**
   * Rewrites, in place, the parts of a report written before the plug-ins (its own old shapes of
   * `world` and `calibration`) into the generic ones; reports already generic are left alone.
   */
  upgradeReport?(report: {
    world?: Record<string, unknown>;
    calibration?: Record<string, unknown>;
  }): void;
  /** How real LMs play its user (absent: the lm tier does not support this benchmark). */
  readonly lm?: BenchmarkLm;
  /** The end of a finished dialogue in words, e.g. "$1.50", "fixed", "transferred". */
  outcome(bench: Benchmark, d: Dialogue): string;
  /**
   * An imported dialogue's outcome as a number (Persuasion: the donation in dollars) and the act
   * that states it, both ways (docs/humans.md); absent: a corpus gives its outcomes as acts only.
   */
  readonly outcomeActs?: {
    name: string; // what the number is, e.g. "donation in dollars"
    act(value: number): { act: string } | { problem: string }; // the act of a value, or why there is none
    value(bench: Benchmark, d: Dialogue): number; // the outcome of a finished dialogue
  };
}
