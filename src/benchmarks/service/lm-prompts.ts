// Prompts that make a real LM play the customer of the Service world (docs/architecture.md#service, #the-lm-tier): the
// persona card in words, the problem the customer called about and what their phone's screens
// have shown so far, the call rendered with the world's act templates (agent = "Agent", user =
// "You", the world's own moves — the ticket, a screen, an account look-up — = "System"), then
//   (a) Direct — chat messages asking for the customer's next reply only,
//   (b) VS — the same, asking for k replies with probabilities as JSON, in the same format as
//       Persuasion's (the Verbalized Sampling dialogue-simulation prompt, Zhang et al. 2025,
//       arXiv 2510.01171), which src/lm/vs-parse.ts reads,
//   (c) a plain-text third-person transcript for base models ending in "Customer:",
//   (d) the act-label prompt of the LM simulator: one label per user act the world allows at this
//       point (its reply class: a step's outcomes, an acknowledgement, a confirmation), whose
//       log-likelihoods give a distribution over those acts.
// Like every simulator, the LM never sees the phone's hidden faults: only the card and the acts.
// Everything is deterministic (the first template of each act), so equal dialogues give equal
// prompts and scores can be cached.
import type { Dialogue } from "../types";
import { userPrompts } from "../lm-scaffold";
import {
  ACTS,
  CARD_ACTS,
  CARD_SLOTS,
  CLASS,
  MASK_CLASSES,
  TICKET,
  replyClass,
  turnOf,
} from "./world";

export { baseContinuation, type ActLabelPrompt } from "../lm-scaffold";

export const AGENT_NAME = "Agent";
export const USER_NAME = "You"; // in chat prompts, where the model is the customer
export const BASE_USER_NAME = "Customer"; // in third-person transcripts for base models
export const ENV_NAME = "System";

const TASK =
  "You are a customer calling your phone company's support line because something on your phone does not work. " +
  "Only you can see and touch your phone: the support agent asks you to look at settings and to change them, and you do it (or not) and say what happened. " +
  "The agent can look up and change your account. Lines from System show what your phone's screen showed when you looked, and what the agent's account tools returned.";

// ─────────────────────────────────────────────────────────────────────────────────────────────
// The persona and the visible state

const CARD_WORDS: Record<string, string> = {
  young: "young",
  "middle-aged": "middle-aged",
  senior: "a senior",
  "tech-low": "not at ease with phone settings",
  "tech-high": "at ease with phone settings",
  calm: "calm",
  stressed: "stressed",
  hurried: "in a hurry",
};

/** The persona card in words, e.g. "a senior, not at ease with phone settings and stressed". */
export function describeCard(card: readonly number[]): string {
  if (card.length !== CARD_SLOTS.length)
    throw new Error(
      `describeCard: a service card has ${CARD_SLOTS.length} tokens (age, tech, mood), got ${card.length}`,
    );
  const words = card.map((t, j) => {
    const v = CARD_ACTS[j].indexOf(t);
    if (v < 0)
      throw new Error(`describeCard: token ${t} is not a service card ${CARD_SLOTS[j][0]} value`);
    return CARD_WORDS[CARD_SLOTS[j][1][v]];
  });
  return `${words[0]}, ${words[1]} and ${words[2]}`;
}

const speakerOf = (act: number, names: { agent: string; user: string }) => {
  const kind = ACTS[act]?.kind;
  if (kind === "agent") return names.agent;
  if (kind === "user") return names.user;
  if (kind === "env") return ENV_NAME;
  throw new Error(`renderTranscript: act ${act} is not a service dialogue act`);
};

/** The call as "Speaker: text" lines, each act said with its first template. */
export function renderTranscript(
  d: Dialogue,
  names: { agent: string; user: string } = { agent: AGENT_NAME, user: USER_NAME },
): string {
  return d.acts.map((a) => `${speakerOf(a, names)}: ${ACTS[a].templates[0]}`).join("\n");
}

/** Why the customer called: the ticket's text without its "[Ticket]" tag. */
function problem(d: Dialogue): string {
  const t = TICKET.indexOf(d.acts[0]);
  if (t < 0) throw new Error("a service dialogue starts with the ticket");
  return ACTS[d.acts[0]].templates[0].replace(/^\[Ticket\]\s*/, "");
}

/** What the phone's screens have shown so far (the "(screen)" lines), in order; the account look-ups are the agent's. */
function screensSeen(d: Dialogue): string[] {
  return d.acts.flatMap((a) =>
    ACTS[a].name.startsWith("see:") ? [ACTS[a].templates[0].replace(/^\(screen\)\s*/, "")] : [],
  );
}

/** True when the customer's next reply says whether the phone works (the agent asked them to try it). */
export const decisionDue = (d: Dialogue) =>
  d.acts.length > 0 && replyClass(d.acts) === CLASS.confirmReply;

function systemPrompt(d: Dialogue): string {
  const seen = screensSeen(d);
  const lines = [
    TASK,
    `About you: you are ${describeCard(d.card)}.`,
    `Your problem: ${problem(d)}`,
    seen.length
      ? `What your phone has shown so far: ${seen.join(" ")}`
      : "You have not looked at any settings yet.",
    "Stay in character and answer as this person would, in one or two short sentences.",
  ];
  if (decisionDue(d)) lines.push("The agent asks you to try your phone: say whether it works now.");
  return lines.join("\n");
}

const conversation = (d: Dialogue) => `The call so far:\n\n${renderTranscript(d)}`;

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Act labels for the LM simulator

/** The phrase that stands for a user act: its first template ("Done.", "Yes, it works now!", …). */
export function actLabel(act: number): string {
  const a = ACTS[act];
  if (!a || a.kind !== "user") throw new Error(`actLabel: act ${act} is not a customer act`);
  return a.templates[0];
}

/**
 * The prompts, built from these parts (../lm-scaffold.ts): (a) Direct and (b) Verbalized Sampling
 * chat messages, (c) the base-model transcript ending in "Customer:", (d) the act-label prompt.
 */
export const { directPrompt, vsPrompt, baseTextPrompt, actLabelPrompt } = userPrompts({
  agentName: AGENT_NAME,
  baseUserName: BASE_USER_NAME,
  allowedActs: (d) => MASK_CLASSES[replyClass(d.acts)].allowed,
  actLabel,
  systemPrompt,
  conversation,
  renderTranscript,
  checkUserTurn(d, fn) {
    // the customer's turn never depends on the episode's length limit: it follows an agent act the world does not answer
    const t = d.acts.length === 0 ? "env" : turnOf(d.acts, Infinity);
    if (t !== "user")
      throw new Error(
        `${fn}: the dialogue (${d.acts.length} acts) is ${t === "done" ? "over" : t === "agent" ? "at the agent's turn" : "at the system's turn"}, not the customer's`,
      );
  },
  // the base-model transcript's opening: the scene in the third person
  baseHeader: (d) =>
    "The following is a call to a phone company's support line. The Customer's phone does not work properly; only the Customer can see and change its settings, " +
    `and System lines show what the phone's screen or the account look-up showed. The Customer is ${describeCard(d.card)}.`,
});

// ─────────────────────────────────────────────────────────────────────────────────────────────
// The LM lab's preset persona cards and dialogue states

const cardOf = (age: string, tech: string, mood: string) =>
  [age, tech, mood].map((v, j) => CARD_ACTS[j][(CARD_SLOTS[j][1] as readonly string[]).indexOf(v)]);

/** Six of the 18 cards, from the one the accurate customer most often has to those of the other types. */
export const LM_CARDS: readonly { id: string; card: number[]; label: string }[] = (
  [
    ["young", "tech-high", "calm"],
    ["senior", "tech-low", "calm"],
    ["senior", "tech-low", "stressed"],
    ["middle-aged", "tech-high", "stressed"],
    ["young", "tech-high", "hurried"],
    ["middle-aged", "tech-low", "hurried"],
  ] as const
).map(([age, tech, mood]) => {
  const card = cardOf(age, tech, mood);
  if (card.some((t) => t === undefined))
    throw new Error(`LM lab: ${age}.${tech}.${mood} is not a service card`);
  return { id: `${age}.${tech}.${mood}`, card, label: describeCard(card) };
});

/** Preset dialogue states (act names), each ending at the customer's turn. */
export const LM_STATES: readonly { id: string; label: string; acts: string[] }[] = [
  {
    id: "first-step",
    label: "asked to switch mobile data on, first thing",
    acts: ["ticket:mobile-data", "fix:toggle-data"],
  },
  {
    id: "blind-hard-step",
    label: "asked, without looking first, to grant the messaging app a permission",
    acts: ["ticket:mms", "query-account", "account:ok", "fix:grant-permission"],
  },
  {
    id: "guided-step",
    label: "asked to reset the APN right after reading it out",
    acts: [
      "ticket:mobile-data",
      "query-account",
      "account:ok",
      "check:apn",
      "see:apn-bad",
      "fix:reset-apn",
    ],
  },
  {
    id: "risky-step",
    label: "asked to reseat the SIM, not reassured",
    acts: [
      "ticket:no-service",
      "query-account",
      "account:ok",
      "check:sim",
      "see:sim-bad",
      "fix:reseat-sim",
    ],
  },
  {
    id: "reassured",
    label: "reassured before a risky step",
    acts: ["ticket:no-service", "check:sim", "see:sim-bad", "reassure"],
  },
  {
    id: "confirm-after-checks",
    label: "asked whether it works after a checked fix",
    acts: [
      "ticket:mobile-data",
      "query-account",
      "account:ok",
      "check:data",
      "see:data-bad",
      "fix:toggle-data",
      "did-fix",
      "confirm",
    ],
  },
  {
    id: "confirm-blind",
    label: "asked whether it works after two blind fixes",
    acts: [
      "ticket:mms",
      "query-account",
      "account:ok",
      "fix:grant-permission",
      "did-fix",
      "fix:set-network-mode",
      "did-fix",
      "confirm",
    ],
  },
  {
    id: "confirm-after-trouble",
    label: "asked again whether it works after a failed step and “still not working”",
    acts: [
      "ticket:no-service",
      "fix:toggle-airplane",
      "did-fix",
      "confirm",
      "not-ok",
      "fix:reseat-sim",
      "failed-fix",
      "fix:reboot",
      "did-fix",
      "confirm",
    ],
  },
  {
    id: "fifth-chore",
    label: "asked for a fifth blind fix",
    acts: [
      "ticket:mms",
      "fix:toggle-data",
      "did-fix",
      "fix:saver-off",
      "did-fix",
      "fix:toggle-airplane",
      "did-fix",
      "fix:grant-permission",
      "did-fix",
      "fix:toggle-wifi-calling",
    ],
  },
];
