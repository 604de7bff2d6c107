// Persuasion (after Persuasion for Good, Wang et al. 2019): a persuader (the agent) asks a
// persuadee (the user) to donate to a children's charity, in at most 5 exchanges. This file holds
// the acts, the persona cards' traits, the episode rules and the reward; the human population is
// population.ts, the behaviour persuader agents.ts, the Benchmark object bench.ts.
//
// Sequence layout. Policy: [BOS, a1, u1, a2, u2, …]; simulator: [card ×3, BOS, a1, u1, …].
// The user answers "ask to donate" with an amount, which ends the dialogue; after the 5th
// exchange without an ask the user states the donation they make after the task (as in P4G).
import type { ActDef, Dialogue, MaskClass } from "../types";
import { TOY_DONATION_AMOUNTS } from "./p4g-stats";

// ---------------------------------------------------------------------------------------------
// Acts

// [toy act, P4G label, templates]
export const STRATEGIES = [
  [
    "logical",
    "logical-appeal",
    [
      "Every dollar goes further there than almost anywhere else.",
      "It is simply the most efficient way to help.",
    ],
  ],
  [
    "emotion",
    "emotion-appeal",
    [
      "Imagine a child going to bed hungry tonight.",
      "These kids are suffering, and it breaks my heart.",
    ],
  ],
  [
    "credibility",
    "credibility-appeal",
    [
      "Save the Children has worked for a hundred years and is audited every year.",
      "They are a top-rated, transparent charity.",
    ],
  ],
  [
    "foot-in-the-door",
    "foot-in-the-door",
    ["Even a few cents would make a difference.", "You could start with something tiny."],
  ],
  [
    "self-modeling",
    "self-modeling",
    ["I am donating part of my own payment.", "I give to them myself every month."],
  ],
  [
    "personal-story",
    "personal-story",
    [
      "A child I met through them now goes to school.",
      "My neighbour's family got help from them once.",
    ],
  ],
  [
    "donation-information",
    "donation-information",
    [
      "Your donation comes straight out of your task payment.",
      "You can give any amount from $0 to $2.",
    ],
  ],
  [
    "source-inquiry",
    "source-related-inquiry",
    ["Have you heard of Save the Children?", "Do you know what they do?"],
  ],
  [
    "task-inquiry",
    "task-related-inquiry",
    ["Do you usually donate to charities?", "Have you done a task like this before?"],
  ],
  [
    "personal-inquiry",
    "personal-related-inquiry",
    ["Do you have children yourself?", "What causes do you care about?"],
  ],
] as const;

export const USER_TALK = [
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
export const CARD_TRAITS = ["agreeable", "caring", "rational"] as const;

function buildActs(): ActDef[] {
  const acts: ActDef[] = [
    { name: "<bos>", kind: "special", templates: [""] },
    {
      name: "greeting",
      kind: "agent",
      templates: ["Hi! How are you today?", "Hello there, thanks for chatting."],
    },
    {
      name: "ask",
      kind: "agent",
      templates: [
        "Would you like to donate some of your payment?",
        "How much would you like to give?",
      ],
    },
  ];
  for (const [name, , templates] of STRATEGIES)
    acts.push({ name, kind: "agent", templates: [...templates] });
  for (const [name, templates] of USER_TALK)
    acts.push({ name, kind: "user", templates: [...templates] });
  for (const a of AMOUNTS)
    acts.push({
      name: `$${a}`,
      kind: "outcome",
      templates: [a === 0 ? "I won't donate." : `I'll donate $${a.toFixed(2)}.`],
    });
  for (const t of CARD_TRAITS) {
    acts.push({ name: `card:${t}-low`, kind: "card", templates: [`not very ${t}`] });
    acts.push({ name: `card:${t}-high`, kind: "card", templates: [`${t}`] });
  }
  return acts;
}

export const ACTS = buildActs();
export function actId(name: string): number {
  const i = ACTS.findIndex((a) => a.name === name);
  if (i < 0) throw new Error(`unknown act ${name}`);
  return i;
}
export const BOS = actId("<bos>");
export const GREETING = actId("greeting");
export const ASK = actId("ask");
export const AGENT_ACTS = ACTS.flatMap((a, i) => (a.kind === "agent" ? [i] : []));
export const STRATEGY_ACTS = STRATEGIES.map(([n]) => actId(n));
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
// Episode rules and reward

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

/** The reward: the donation as a share of the $2 maximum. */
export const reward = (d: Dialogue): number => Math.min(donation(d) / 2, 1);

/** Success: a donation of at least $1. */
export const success = (d: Dialogue): boolean => donation(d) >= 1;
