// Prompts that make a real LM play the persuadee of the persuasion game (docs/architecture.md#persuasion, #the-lm-tier): the
// persona card in words and the dialogue so far rendered with the act templates (agent =
// "Persuader", user = "You"), then
//   (a) Direct — chat messages asking for the persuadee's next reply only,
//   (b) VS — the same, asking for k replies with probabilities as JSON, in the wording of the
//       Verbalized Sampling dialogue-simulation prompt (Zhang et al. 2025, arXiv 2510.01171;
//       CHATS-lab/verbalized-sampling: "Generate 5 different responses to your interlocutor that
//       are coherent with the chat history and aligned with your persona …"),
//   (c) a plain-text transcript for base models (no chat template) to score replies under,
//   (d) the act-label prompt of the LM simulator: its continuations are short natural phrases,
//       one per allowed user act, whose log-likelihoods give a distribution over acts.
// Everything is deterministic (the first template of each act), so equal dialogues give equal
// prompts and scores can be cached.
import type { Dialogue } from "../types";
import { userPrompts } from "../lm-scaffold";
import {
  ACTS,
  AMOUNT_ACTS,
  AMOUNTS,
  CARD_ACTS,
  CLASS,
  MASK_CLASSES,
  turn,
  userClass,
} from "./world";

export { baseContinuation, type ActLabelPrompt } from "../lm-scaffold";

export const AGENT_NAME = "Persuader";
export const USER_NAME = "You"; // in chat prompts, where the model is the persuadee
export const BASE_USER_NAME = "Persuadee"; // in third-person transcripts for base models

const TASK =
  "You are taking part in an online study. You are chatting with another participant, the Persuader, " +
  "who will try to convince you to donate some of your $2 task payment to Save the Children, a charity that helps children in need. " +
  "You may donate any amount from $0 to $2; whatever you give comes out of your payment.";

/** The persona card in words, e.g. "agreeable, not very caring and rational". */
export function describeCard(card: readonly number[]): string {
  const traits = card.map((t) => {
    if (!CARD_ACTS.includes(t))
      throw new Error(`describeCard: token ${t} is not a persuasion card trait`);
    return ACTS[t].templates[0];
  });
  return traits.length <= 1
    ? traits.join("")
    : `${traits.slice(0, -1).join(", ")} and ${traits[traits.length - 1]}`;
}

/** The dialogue as "Speaker: text" lines, each act said with its first template. */
export function renderTranscript(
  d: Dialogue,
  names: { agent: string; user: string } = { agent: AGENT_NAME, user: USER_NAME },
): string {
  return d.acts
    .map((a, i) => {
      const act = ACTS[a];
      if (!act) throw new Error(`renderTranscript: act ${a} is not a persuasion act`);
      const speaker =
        turn({ card: d.card, acts: d.acts.slice(0, i) }) === "agent" ? names.agent : names.user;
      return `${speaker}: ${act.templates[0]}`;
    })
    .join("\n");
}

/** True when the persuadee must now state a donation (after an ask, or after the last exchange). */
export const decisionDue = (d: Dialogue) => userClass(d) === CLASS.amount;

function systemPrompt(d: Dialogue): string {
  const lines = [
    TASK,
    `Your personality: you are ${describeCard(d.card)}.`,
    "Stay in character and answer as this person would, in one or two short sentences.",
  ];
  if (decisionDue(d))
    lines.push("It is time to decide: say how much you will donate, from $0 to $2.");
  return lines.join("\n");
}

function conversation(d: Dialogue): string {
  return `The conversation so far:\n\n${renderTranscript(d)}`;
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Act labels for the LM simulator

/**
 * The phrase that stands for each user act: the first template of each talk act, and the same
 * sentence for every amount ("I will donate $1.50.") so that amounts differ only in the number.
 */
export function actLabel(act: number): string {
  const a = ACTS[act];
  if (!a || (a.kind !== "user" && a.kind !== "outcome"))
    throw new Error(`actLabel: act ${act} is not a user act`);
  if (a.kind === "outcome")
    return `I will donate $${AMOUNTS[AMOUNT_ACTS.indexOf(act)].toFixed(2)}.`;
  return a.templates[0];
}

/**
 * The prompts, built from these parts (../lm-scaffold.ts): (a) Direct and (b) Verbalized Sampling
 * chat messages, (c) the base-model transcript ending in "Persuadee:", (d) the act-label prompt.
 */
export const { directPrompt, vsPrompt, baseTextPrompt, actLabelPrompt } = userPrompts({
  agentName: AGENT_NAME,
  baseUserName: BASE_USER_NAME,
  allowedActs: (d) => MASK_CLASSES[userClass(d)].allowed,
  actLabel,
  systemPrompt,
  conversation,
  renderTranscript,
  checkUserTurn(d, fn) {
    const t = turn(d);
    if (t !== "user")
      throw new Error(
        `${fn}: the dialogue (${d.acts.length} acts) is ${t === "done" ? "over" : "at the Persuader's turn"}, not the persuadee's`,
      );
  },
  // the base-model transcript's opening: the scene in the third person
  baseHeader: (d) =>
    "The following is a chat from an online study. The Persuader tries to convince the Persuadee to donate some of their " +
    `$2 task payment to Save the Children, a charity for children in need. The Persuadee is ${describeCard(d.card)}.`,
});

// ─────────────────────────────────────────────────────────────────────────────────────────────
// The LM lab's preset persona cards and dialogue states

const actId = (name: string) => {
  const i = ACTS.findIndex((a) => a.name === name);
  if (i < 0) throw new Error(`LM lab: unknown persuasion act ${name}`);
  return i;
};

/** The 8 persuasion persona cards (three traits, low or high), all-high first. */
export const LM_CARDS: readonly { id: string; card: number[]; label: string }[] = Array.from(
  { length: 8 },
  (_, i) => {
    const mask = 7 - i;
    const names = ["agreeable", "caring", "rational"].map(
      (t, j) => `${t}-${mask & (4 >> j) ? "high" : "low"}`,
    );
    const card = names.map((n) => actId(`card:${n}`));
    if (!card.every((c) => CARD_ACTS.includes(c)))
      throw new Error("LM lab: a card act is not a card trait");
    return { id: names.join("."), card, label: describeCard(card) };
  },
);

/** Preset dialogue states (act names), each ending at the persuadee's turn. */
export const LM_STATES: readonly { id: string; label: string; acts: string[] }[] = [
  { id: "after-greeting", label: "after the greeting", acts: ["greeting"] },
  { id: "after-emotion", label: "after an emotional appeal", acts: ["emotion"] },
  {
    id: "after-trust-objection",
    label: "a logical appeal after a trust objection",
    acts: ["credibility", "object-trust", "logical"],
  },
  {
    id: "ask-after-greeting",
    label: "asked to donate right after a neutral opening",
    acts: ["greeting", "neutral", "ask"],
  },
  {
    id: "ask-after-sharing",
    label: "asked to donate after sharing something personal",
    acts: ["emotion", "share-personal", "ask"],
  },
  {
    id: "ask-after-cost-objection",
    label: "asked to donate after a cost objection and a small ask",
    acts: ["greeting", "object-cost", "foot-in-the-door", "agree", "ask"],
  },
  {
    id: "final-decision",
    label: "the final decision after five exchanges",
    acts: [
      "greeting",
      "agree",
      "emotion",
      "share-personal",
      "credibility",
      "neutral",
      "logical",
      "ask-question",
      "donation-information",
      "agree",
    ],
  },
];
