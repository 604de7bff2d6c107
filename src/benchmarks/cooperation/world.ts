// Cooperation (after CooperBench, arXiv 2601.13295): two coding agents each implement their own
// feature in one shared repository of four files, in parallel, and may message each other; the two
// branches are then merged. The policy is one agent; the "user" is the partner agent.
//
// Design choices where docs/architecture.md#cooperation is silent, and why:
// * Each feature needs two of the four files (six possible plans), drawn independently for the two
//   features from one prior (most features touch models+views or utils+config; 77 % of pairs share
//   a file, as CooperBench's conflicting gold patches). The episode's hidden state is the agent's
//   plan, which the agent learns from the world's opening act (`task:…`, a "System" line). The
//   partner's plan is on the persona card: the partner knows its own feature (so a simulator that
//   plays it sees it too), while the agent learns it only from the partner's messages (`they-plan:…`,
//   announced or given when asked) or, too late, from its edits. The reward reads both plans from
//   the task act and the card.
// * Edits are visible to the agent (its log shows the partner's pushes) but the partner reads only
//   messages: as in CooperBench, where each agent works on its own branch, a partner cannot see the
//   agent's edits, so nothing but a message keeps it off a file the agent is already changing.
// * The merge: a file edited by both is a conflict and breaks the whole merge (reward 0). Otherwise
//   a feature passes iff every file it needs was edited by someone (one edit of a shared file carries
//   both features' changes: the toy's hard part is not colliding, not the code). Reward 1 when both
//   pass, 0.5 when only the agent's passes (SCOPE), 0 otherwise; success = both pass.
// * Turns alternate agent, partner, agent, …; a side that has said `done` is skipped; each side has
//   `maxExchanges` moves; the episode ends when both are done or out of moves. So a dialogue is the
//   task act plus at most 2 · maxExchanges acts.
import type { ActDef, Dialogue, MaskClass, Turn } from "../types";

export const FILES = ["models", "views", "utils", "config"] as const;
export const NFILES = FILES.length;
const FILE_TEXT = ["models.py", "views.py", "utils.py", "config.py"];

/** The six plans (two files each), by index; the complement of plan p is plan 5 − p. */
export const PLANS: [number, number][] = [
  [0, 1],
  [0, 2],
  [0, 3],
  [1, 2],
  [1, 3],
  [2, 3],
];
export const NPLANS = PLANS.length;
const planName = (p: number) => `${FILES[PLANS[p][0]]}+${FILES[PLANS[p][1]]}`;
const planText = (p: number) => `${FILE_TEXT[PLANS[p][0]]} and ${FILE_TEXT[PLANS[p][1]]}`;

/** Card slots that hint at the partner's type; the card's last token is the partner's own plan. */
export const CARD_SLOTS = [
  ["style", ["talkative", "quiet", "hurried"]],
  ["experience", ["senior", "junior"]],
] as const;

function buildActs(): ActDef[] {
  const acts: ActDef[] = [{ name: "<bos>", kind: "special", templates: [""] }];
  // the agent's acts
  for (let p = 0; p < NPLANS; p++)
    acts.push({
      name: `plan:${planName(p)}`,
      kind: "agent",
      templates: [
        `My plan: I'll change ${planText(p)}.`,
        `I need ${planText(p)} for my feature; I'll edit those.`,
      ],
    });
  FILES.forEach((f, i) =>
    acts.push({
      name: `claim:${f}`,
      kind: "agent",
      templates: [
        `I'll take ${FILE_TEXT[i]}; please stay off it.`,
        `${FILE_TEXT[i]} is mine, I'll put both our changes in.`,
      ],
    }),
  );
  FILES.forEach((f, i) =>
    acts.push({
      name: `give:${f}`,
      kind: "agent",
      templates: [
        `Could you do ${FILE_TEXT[i]} for both of us?`,
        `You take ${FILE_TEXT[i]}, with my part in it too.`,
      ],
    }),
  );
  acts.push({
    name: "ask",
    kind: "agent",
    templates: ["Which files will you touch?", "What's your plan? Which files do you need?"],
  });
  acts.push({ name: "ack", kind: "agent", templates: ["OK, agreed.", "Sounds good."] });
  acts.push({
    name: "reject",
    kind: "agent",
    templates: ["No, I'd rather keep that one.", "That doesn't work for me."],
  });
  FILES.forEach((f, i) =>
    acts.push({
      name: `edit:${f}`,
      kind: "agent",
      templates: [`(edits ${FILE_TEXT[i]})`, `(commits a change to ${FILE_TEXT[i]})`],
    }),
  );
  acts.push({
    name: "wait",
    kind: "agent",
    templates: ["(waits)", "Let me see what you do first."],
  });
  acts.push({
    name: "done",
    kind: "agent",
    templates: ["I'm done with my part.", "My feature is finished."],
  });
  // the partner's acts
  for (let p = 0; p < NPLANS; p++)
    acts.push({
      name: `they-plan:${planName(p)}`,
      kind: "user",
      templates: [`My plan: I'll change ${planText(p)}.`, `I need ${planText(p)}; I'll edit them.`],
    });
  acts.push({
    name: "they-ask",
    kind: "user",
    templates: ["Which files do you need?", "Before I start: what's your plan?"],
  });
  acts.push({ name: "they-ack", kind: "user", templates: ["OK, agreed.", "Fine by me."] });
  acts.push({
    name: "they-reject",
    kind: "user",
    templates: ["No, I've already done that one.", "Too late, I changed it already."],
  });
  FILES.forEach((f, i) =>
    acts.push({
      name: `they-edit:${f}`,
      kind: "user",
      templates: [`(edits ${FILE_TEXT[i]})`, `(commits a change to ${FILE_TEXT[i]})`],
    }),
  );
  acts.push({ name: "they-wait", kind: "user", templates: ["(waits)", "(is busy)"] });
  acts.push({
    name: "they-done",
    kind: "user",
    templates: ["I'm done with my part.", "My feature is finished."],
  });
  // the world's opening: the agent's own task
  for (let p = 0; p < NPLANS; p++)
    acts.push({
      name: `task:${planName(p)}`,
      kind: "env",
      templates: [`(task) Your feature needs changes to ${planText(p)}.`],
    });
  for (const [slot, values] of CARD_SLOTS)
    for (const v of values)
      acts.push({ name: `card:${v}`, kind: "card", templates: [`${slot}: ${v}`] });
  for (let p = 0; p < NPLANS; p++)
    acts.push({
      name: `card:feature:${planName(p)}`,
      kind: "card",
      templates: [`their feature: ${planText(p)}`],
    });
  return acts;
}

export const ACTS = buildActs();
export const VOCAB = ACTS.length;
export function actId(name: string): number {
  const i = ACTS.findIndex((a) => a.name === name);
  if (i < 0) throw new Error(`unknown cooperation act ${name}`);
  return i;
}
const each = <T>(xs: readonly T[], name: (x: T, i: number) => string) =>
  xs.map((x, i) => actId(name(x, i)));
const plansIdx = Array.from({ length: NPLANS }, (_, p) => p);

export const PLAN = each(plansIdx, (p) => `plan:${planName(p)}`);
export const CLAIM = each(FILES, (f) => `claim:${f}`);
export const GIVE = each(FILES, (f) => `give:${f}`);
export const ASK = actId("ask");
export const ACK = actId("ack");
export const REJECT = actId("reject");
export const EDIT = each(FILES, (f) => `edit:${f}`);
export const WAIT = actId("wait");
export const DONE = actId("done");
export const T_PLAN = each(plansIdx, (p) => `they-plan:${planName(p)}`);
export const T_ASK = actId("they-ask");
export const T_ACK = actId("they-ack");
export const T_REJECT = actId("they-reject");
export const T_EDIT = each(FILES, (f) => `they-edit:${f}`);
export const T_WAIT = actId("they-wait");
export const T_DONE = actId("they-done");
export const TASK = each(plansIdx, (p) => `task:${planName(p)}`);
export const CARD_ACTS = CARD_SLOTS.map(([, values]) => values.map((v) => actId(`card:${v}`)));
export const FEATURE_CARD = each(plansIdx, (p) => `card:feature:${planName(p)}`); // the partner's plan, the card's last token
export const CARD_LEN = CARD_SLOTS.length + 1;

export const AGENT_ACTS = ACTS.flatMap((a, i) => (a.kind === "agent" ? [i] : []));
export const USER_ACTS = ACTS.flatMap((a, i) => (a.kind === "user" ? [i] : []));

const index = (ids: number[]) => {
  const out = new Int32Array(VOCAB).fill(-1);
  ids.forEach((a, k) => (out[a] = k));
  return out;
};
const planIdx = index(PLAN);
const claimIdx = index(CLAIM);
const giveIdx = index(GIVE);
const editIdx = index(EDIT);
const tPlanIdx = index(T_PLAN);
const tEditIdx = index(T_EDIT);
const taskIdx = index(TASK);
export const planOf = (a: number) => planIdx[a]; // −1 unless the agent's plan:…
export const claimOf = (a: number) => claimIdx[a];
export const giveOf = (a: number) => giveIdx[a];
export const editOf = (a: number) => editIdx[a];
export const theirPlanOf = (a: number) => tPlanIdx[a];
export const theirEditOf = (a: number) => tEditIdx[a];
export const taskOf = (a: number) => taskIdx[a];

/** Agent acts that are messages to the partner (the partner may answer them). */
export const isAgentMessage = (a: number) =>
  planOf(a) >= 0 || claimOf(a) >= 0 || giveOf(a) >= 0 || a === ASK || a === ACK || a === REJECT;
/** Agent messages that ask the partner for an answer (a plan, a claim, a request): an ack or reject may follow. */
export const wantsAnswer = (a: number) =>
  planOf(a) >= 0 || claimOf(a) >= 0 || giveOf(a) >= 0 || a === ASK;

export const CLASS = { all: 0, agent: 1, answer: 2, move: 3, env: 4 } as const;
export const MASK_CLASSES: MaskClass[] = [
  { name: "all", allowed: ACTS.map((_, i) => i) },
  { name: "agent", allowed: AGENT_ACTS },
  { name: "partner, answering a message", allowed: USER_ACTS },
  {
    name: "partner, nothing to answer",
    allowed: USER_ACTS.filter((a) => a !== T_ACK && a !== T_REJECT),
  },
  { name: "world", allowed: TASK },
];

// ---------------------------------------------------------------------------------------------
// Episode rules

export const MAX_CONTEXT = 64;
export const contextFor = (maxExchanges: number) => CARD_LEN + 2 + 2 * maxExchanges; // card, <bos>, task, both sides' moves

/** Moves and `done` of each side so far. */
export function sides(acts: number[]): {
  agent: number;
  user: number;
  agentDone: boolean;
  userDone: boolean;
} {
  let agent = 0;
  let user = 0;
  let agentDone = false;
  let userDone = false;
  for (const a of acts) {
    const k = ACTS[a].kind;
    if (k === "agent") {
      agent++;
      if (a === DONE) agentDone = true;
    } else if (k === "user") {
      user++;
      if (a === T_DONE) userDone = true;
    }
  }
  return { agent, user, agentDone, userDone };
}

/** Whose turn: the world opens with the task; then agent and partner alternate, skipping a side that is done or out of moves. */
export function turnOf(acts: number[], maxExchanges: number): Turn {
  if (acts.length === 0) return "env";
  const s = sides(acts);
  const agentCan = !s.agentDone && s.agent < maxExchanges;
  const userCan = !s.userDone && s.user < maxExchanges;
  const lastAgent = ACTS[acts[acts.length - 1]].kind === "agent";
  if (lastAgent) return userCan ? "user" : agentCan ? "agent" : "done";
  return agentCan ? "agent" : userCan ? "user" : "done";
}

/** Mask class of a non-agent move: the task, or the partner's move (ack / reject only right after an agent message that wants an answer). */
export function replyClass(acts: number[]): number {
  if (acts.length === 0) return CLASS.env;
  return wantsAnswer(acts[acts.length - 1]) ? CLASS.answer : CLASS.move;
}

// ---------------------------------------------------------------------------------------------
// The merge

/** The two plans of an episode: [the agent's, the partner's]. */
export type Plans = number[];

export interface Merge {
  byAgent: boolean[]; // per file
  byPartner: boolean[];
  conflicts: number[]; // files edited by both
  oursPasses: boolean;
  theirsPasses: boolean;
}

export function merge(h: Plans, acts: number[]): Merge {
  const byAgent = new Array<boolean>(NFILES).fill(false);
  const byPartner = new Array<boolean>(NFILES).fill(false);
  for (const a of acts) {
    if (editOf(a) >= 0) byAgent[editOf(a)] = true;
    if (theirEditOf(a) >= 0) byPartner[theirEditOf(a)] = true;
  }
  const conflicts = FILES.flatMap((_, f) => (byAgent[f] && byPartner[f] ? [f] : []));
  const covered = (p: number) =>
    conflicts.length === 0 && PLANS[p].every((f) => byAgent[f] || byPartner[f]);
  return { byAgent, byPartner, conflicts, oursPasses: covered(h[0]), theirsPasses: covered(h[1]) };
}

export function reward(h: Plans, acts: number[]): number {
  const m = merge(h, acts);
  return m.oursPasses && m.theirsPasses ? 1 : m.oursPasses ? 0.5 : 0;
}

export function outcomeWords(h: Plans, acts: number[]): string {
  const m = merge(h, acts);
  if (m.conflicts.length)
    return `merge conflict in ${m.conflicts.map((f) => FILE_TEXT[f]).join(", ")}`;
  if (m.oursPasses && m.theirsPasses) return "both pass";
  if (m.oursPasses) return "only ours passes";
  if (m.theirsPasses) return "only theirs passes";
  return "neither passes";
}

/** The partner's plan, from the card's last token. */
export function partnerPlan(card: readonly number[]): number {
  const p = FEATURE_CARD.indexOf(card[CARD_LEN - 1]);
  if (card.length !== CARD_LEN || p < 0)
    throw new Error("a cooperation card ends with the partner's feature");
  return p;
}

/** Both plans of a dialogue: the agent's from its opening task act, the partner's from the card. */
export const plansOf = (d: Dialogue): Plans => [ownPlan(d), partnerPlan(d.card)];

/** The agent's own plan, from the task act that opens every dialogue. */
export function ownPlan(d: Dialogue): number {
  const p = taskOf(d.acts[0]);
  if (p < 0) throw new Error("a cooperation dialogue starts with the task");
  return p;
}
