// Service (after τ²-bench telecom, Barres et al. 2025, dual control): a support agent helps a
// customer whose phone does not work. The phone's faults are the episode's hidden state; only the
// customer can read and change the phone, when the agent asks; the agent can query and change the
// account itself. Reward 1 iff every fault is fixed and the customer confirms it works, or the agent
// transfers a task that cannot be fixed (a PIN-locked SIM, an ended contract).
//
// Design choices where docs/architecture.md#service is silent, and why:
// * The phone is the environment, not the user. What a check shows is an env act (a "System" line:
//   the screen the customer reads out), a deterministic function of the hidden faults and the acts so
//   far; so is the opening ticket (why the customer calls) and what an account look-up returns. A
//   user simulator never sees the hidden faults (only the card and the acts), so if it produced
//   readings it would invent a phone unrelated to the one the reward checks, and a check would teach
//   a policy nothing. As in τ², where phone tools return the device's state, the simulator plays the
//   customer's behaviour only: doing or failing a step, refusing, getting confused, leaving, and
//   confirming (the one reply that reads the phone: "does it work now?").
// * Every agent act gets exactly one reply (user or env), so an exchange is two tokens and the
//   context is card 3 + <bos> + ticket + 2 · maxExchanges ≤ 64 (maxExchanges ≤ 29).
// * Faults are independent per component given the intent (a factorised prior, conditioned on at
//   least one fault), so the exact posterior over tasks is a product of per-component factors times
//   one correction term (population.ts' `taskPosterior`): exact without enumerating tasks.
//   Intents nest as in τ² (MMS needs mobile data needs service), so MMS tasks draw from every layer
//   and are the longest; no-service tasks the shortest.
// * Latent types differ in how they carry out steps, not in what they report: accurate & quick (the
//   mode), low-skill (fails hard steps unless the agent has just had them look at that screen),
//   anxious (refuses risky steps — reboot, reseat SIM, reset APN — until reassured), impatient
//   (leaves after too many chores or failures). Every type reports the phone truthfully, so the type
//   posterior and the task posterior factorise (a confirm's likelihood splits into a type part,
//   leaving or not, and a task part, fixed or not).
// * A check costs one exchange and a blind fix costs one: against the accurate type, fixing every
//   likely fault blindly is the cheaper script; checking first is what low-skill, anxious and
//   impatient customers need. That tension is the benchmark (docs/architecture.md#models trap 2).
import type { ActDef, MaskClass, Turn } from "../types";

// ---------------------------------------------------------------------------------------------
// The phone: components the customer can check, steps that fix them, the account

export const INTENTS = ["no-service", "mobile-data", "mms"] as const;
export type Intent = (typeof INTENTS)[number];

/** Device components: [name, check templates, ok screen, bad screen]. Index = component id. */
const COMPONENTS = [
  [
    "airplane",
    [
      "Can you pull down the status bar: is airplane mode on?",
      "Please look at the top of your screen: do you see a plane icon?",
    ],
    "Airplane mode is off.",
    "Airplane mode is ON.",
  ],
  [
    "sim",
    [
      "Could you open Settings → SIM and tell me its status?",
      "Please check what your SIM status says.",
    ],
    "SIM: active.",
    "SIM: not detected.",
  ],
  [
    "data",
    ["Is mobile data switched on in your settings?", "Please check the mobile data toggle."],
    "Mobile data: on.",
    "Mobile data: OFF.",
  ],
  [
    "apn",
    [
      "Could you open the APN settings and read me the entry?",
      "Please check the access point name under mobile networks.",
    ],
    "APN: carrier default.",
    "APN: custom entry, invalid.",
  ],
  [
    "roaming",
    [
      "Are you abroad? Please check whether data roaming is on.",
      "Please look at the roaming setting.",
    ],
    "Roaming: as needed.",
    "Roaming: OFF while abroad.",
  ],
  [
    "saver",
    ["Is data saver turned on?", "Please check the data saver setting."],
    "Data saver: off.",
    "Data saver: ON.",
  ],
  [
    "wifi-calling",
    ["Please check the Wi-Fi calling setting.", "Is Wi-Fi calling turned on?"],
    "Wi-Fi calling: as it should be.",
    "Wi-Fi calling: misconfigured.",
  ],
  [
    "permission",
    [
      "Does your messaging app have its permissions? Settings → Apps → Messages.",
      "Please check the messaging app's permissions.",
    ],
    "Messages: SMS and storage allowed.",
    "Messages: storage permission denied.",
  ],
  [
    "network",
    [
      "Which network mode is selected: 2G, 3G/4G or 5G?",
      "Please check the preferred network type.",
    ],
    "Network mode: 4G/5G.",
    "Network mode: 2G only.",
  ],
] as const;
export const COMPONENT_NAMES: string[] = COMPONENTS.map(([n]) => n);
export const NC = COMPONENTS.length;
export const COMPONENT = Object.fromEntries(COMPONENT_NAMES.map((n, i) => [n, i])) as Record<
  (typeof COMPONENTS)[number][0],
  number
>;

export interface StepDef {
  name: string;
  by: "user" | "agent"; // user steps are instructed (fix:…), agent steps are the agent's own account tools (account:…)
  component: number; // the screen a check of which guides a low-skill customer through it; −1: none
  guide?: string; // an agent step that guides it instead (the payment request guides paying)
  hard: boolean; // low-skill customers fail it unless guided
  risky: boolean; // anxious customers refuse it until reassured
  templates: string[];
}

export const STEPS: StepDef[] = [
  {
    name: "toggle-airplane",
    by: "user",
    component: COMPONENT.airplane,
    hard: false,
    risky: false,
    templates: [
      "Please turn airplane mode off.",
      "Tap the plane icon to switch airplane mode off.",
    ],
  },
  {
    name: "reseat-sim",
    by: "user",
    component: COMPONENT.sim,
    hard: true,
    risky: true,
    templates: [
      "Please take the SIM card out and put it back in firmly.",
      "Could you remove the SIM tray and reseat the card?",
    ],
  },
  {
    name: "toggle-data",
    by: "user",
    component: COMPONENT.data,
    hard: false,
    risky: false,
    templates: ["Please switch mobile data on.", "Turn on the mobile data toggle, please."],
  },
  {
    name: "reset-apn",
    by: "user",
    component: COMPONENT.apn,
    hard: true,
    risky: true,
    templates: [
      "Please reset the APN settings to default.",
      "In the APN menu, choose 'Reset to default'.",
    ],
  },
  {
    name: "toggle-roaming",
    by: "user",
    component: COMPONENT.roaming,
    hard: true,
    risky: false,
    templates: ["Please turn data roaming on.", "Switch roaming on under mobile network settings."],
  },
  {
    name: "saver-off",
    by: "user",
    component: COMPONENT.saver,
    hard: false,
    risky: false,
    templates: ["Please turn data saver off.", "Switch off data saver, please."],
  },
  {
    name: "toggle-wifi-calling",
    by: "user",
    component: COMPONENT["wifi-calling"],
    hard: true,
    risky: false,
    templates: ["Please toggle Wi-Fi calling.", "Switch Wi-Fi calling to the setting I describe."],
  },
  {
    name: "grant-permission",
    by: "user",
    component: COMPONENT.permission,
    hard: true,
    risky: false,
    templates: [
      "Please allow the messaging app to use storage.",
      "Grant the Messages app its storage permission.",
    ],
  },
  {
    name: "set-network-mode",
    by: "user",
    component: COMPONENT.network,
    hard: true,
    risky: false,
    templates: ["Please set the network mode to 4G/5G.", "Choose 4G/5G as preferred network type."],
  },
  {
    name: "pay-bill",
    by: "user",
    component: -1,
    guide: "request-payment",
    hard: true,
    risky: false,
    templates: [
      "Please open the payment request I sent and pay it.",
      "You should have a payment link now; please complete it.",
    ],
  },
  {
    name: "reboot",
    by: "user",
    component: -1,
    hard: false,
    risky: true,
    templates: ["Please restart your phone.", "Could you power the phone off and on again?"],
  },
  {
    name: "request-payment",
    by: "agent",
    component: -1,
    hard: false,
    risky: false,
    templates: [
      "I am sending you a payment request for the overdue bill.",
      "Let me send a payment link for the balance.",
    ],
  },
  {
    name: "resume-line",
    by: "agent",
    component: -1,
    hard: false,
    risky: false,
    templates: ["I am resuming your line now.", "Let me reactivate your suspended line."],
  },
  {
    name: "enable-roaming",
    by: "agent",
    component: -1,
    hard: false,
    risky: false,
    templates: [
      "I am enabling roaming on your account.",
      "Let me switch roaming on for your line.",
    ],
  },
  {
    name: "refuel-data",
    by: "agent",
    component: -1,
    hard: false,
    risky: false,
    templates: ["I am adding a data top-up to your plan.", "Let me refuel your data allowance."],
  },
];
export const STEP = Object.fromEntries(STEPS.map((s, i) => [s.name, i])) as Record<string, number>;

/**
 * Hidden factors: the nine components and the account, each a categorical value (0 = fine).
 * `steps[v]` fixes value v in order ([] = unfixable); `reading[v]` names its screen for value v.
 */
export interface FactorDef {
  name: string;
  values: string[];
  steps: (number[] | null)[]; // per value: the steps that fix it in order, null = cannot be fixed (transfer)
}

const s = (...names: string[]) => names.map((n) => STEP[n]);
export const FACTORS: FactorDef[] = [
  { name: "airplane", values: ["off", "on"], steps: [[], s("toggle-airplane")] },
  {
    name: "sim",
    values: ["active", "unseated", "pin-locked"],
    steps: [[], s("reseat-sim", "reboot"), null],
  },
  { name: "data", values: ["on", "off"], steps: [[], s("toggle-data")] },
  { name: "apn", values: ["ok", "broken"], steps: [[], s("reset-apn", "reboot")] },
  { name: "roaming", values: ["ok", "off-abroad"], steps: [[], s("toggle-roaming")] },
  { name: "saver", values: ["off", "on"], steps: [[], s("saver-off")] },
  { name: "wifi-calling", values: ["ok", "misconfigured"], steps: [[], s("toggle-wifi-calling")] },
  { name: "permission", values: ["ok", "denied"], steps: [[], s("grant-permission")] },
  { name: "network", values: ["ok", "2g-only"], steps: [[], s("set-network-mode", "reboot")] },
  {
    name: "account",
    values: ["ok", "bill-overdue", "data-exhausted", "roaming-disabled", "contract-ended"],
    steps: [
      [],
      s("request-payment", "pay-bill", "resume-line", "reboot"),
      s("refuel-data"),
      s("enable-roaming"),
      null,
    ],
  },
];
export const NF = FACTORS.length;
export const ACCOUNT = NF - 1; // factor index of the account; factors 0 … NC−1 are the components

const ACCOUNT_SCREENS = [
  "The account is in good standing.",
  "Line suspended: bill overdue.",
  "Data allowance used up.",
  "Roaming not enabled on the line.",
  "Contract ended: line deactivated.",
];

// ---------------------------------------------------------------------------------------------
// Acts

const USER_REPLIES = [
  ["did-fix", ["Done.", "Okay, I did that."]],
  ["failed-fix", ["I tried, but I can't find it.", "It won't let me do that."]],
  ["did-something-else", ["I pressed something… was that it?", "I turned something off, I think."]],
  ["confused", ["Sorry, where is that?", "I don't understand what you mean."]],
  ["refuse", ["I'd rather not do that, I might lose everything.", "No, I'm scared to do that."]],
  ["ack", ["Okay.", "Alright, thanks."]],
  ["confirm-ok", ["Yes, it works now!", "Great, it's working."]],
  ["not-ok", ["No, it still doesn't work.", "Still nothing, sorry."]],
  ["leave", ["I don't have time for this. Bye.", "Forget it, I'll go to the shop."]],
] as const;
export type Reply = (typeof USER_REPLIES)[number][0];

const TICKETS: Record<Intent, string[]> = {
  "no-service": [
    "[Ticket] My phone says 'No service'.",
    "[Ticket] I can't make calls, there's no signal.",
  ],
  "mobile-data": [
    "[Ticket] My mobile data doesn't work.",
    "[Ticket] I can't browse without Wi-Fi.",
  ],
  mms: ["[Ticket] I can't send picture messages.", "[Ticket] MMS won't go through."],
};

export const CARD_SLOTS = [
  ["age", ["young", "middle-aged", "senior"]],
  ["tech", ["tech-low", "tech-high"]],
  ["mood", ["calm", "stressed", "hurried"]],
] as const;

function buildActs(): ActDef[] {
  const acts: ActDef[] = [{ name: "<bos>", kind: "special", templates: [""] }];
  for (const [name, templates] of COMPONENTS)
    acts.push({ name: `check:${name}`, kind: "agent", templates: [...templates] });
  for (const st of STEPS)
    acts.push({
      name: `${st.by === "user" ? "fix" : "account"}:${st.name}`,
      kind: "agent",
      templates: st.templates,
    });
  acts.push({
    name: "query-account",
    kind: "agent",
    templates: [
      "Let me look up your account.",
      "One moment, I am checking your line in our system.",
    ],
  });
  acts.push({
    name: "reassure",
    kind: "agent",
    templates: [
      "Don't worry: nothing on your phone will be lost, and I will guide you through every step.",
      "This is safe, your photos and contacts stay where they are.",
    ],
  });
  acts.push({
    name: "confirm",
    kind: "agent",
    templates: [
      "Could you try now: does it work?",
      "Please test it once more: is the problem solved?",
    ],
  });
  acts.push({
    name: "transfer",
    kind: "agent",
    templates: [
      "I am transferring you to a specialist who can help with this.",
      "This needs a colleague in the store team; I'm transferring you now.",
    ],
  });
  for (const [name, templates] of USER_REPLIES)
    acts.push({ name, kind: "user", templates: [...templates] });
  // the world's own moves
  for (const intent of INTENTS)
    acts.push({ name: `ticket:${intent}`, kind: "env", templates: TICKETS[intent] });
  for (const [name, , ok, bad] of COMPONENTS) {
    acts.push({ name: `see:${name}-ok`, kind: "env", templates: [`(screen) ${ok}`] });
    acts.push({ name: `see:${name}-bad`, kind: "env", templates: [`(screen) ${bad}`] });
  }
  acts.push({
    name: "see:sim-locked",
    kind: "env",
    templates: ["(screen) SIM: PIN locked (PUK required)."],
  });
  FACTORS[ACCOUNT].values.forEach((v, i) =>
    acts.push({
      name: `account:${v}`,
      kind: "env",
      templates: [`(account) ${ACCOUNT_SCREENS[i]}`],
    }),
  );
  acts.push({
    name: "done",
    kind: "env",
    templates: ["(account) Done.", "(account) Change applied."],
  });
  for (const [slot, values] of CARD_SLOTS)
    for (const v of values)
      acts.push({ name: `card:${v}`, kind: "card", templates: [`${slot}: ${v}`] });
  return acts;
}

export const ACTS = buildActs();
export const VOCAB = ACTS.length;
export function actId(name: string): number {
  const i = ACTS.findIndex((a) => a.name === name);
  if (i < 0) throw new Error(`unknown service act ${name}`);
  return i;
}
export const CHECK = COMPONENT_NAMES.map((n) => actId(`check:${n}`)); // by component
export const DO = STEPS.map((st) => actId(`${st.by === "user" ? "fix" : "account"}:${st.name}`)); // by step
export const QUERY = actId("query-account");
export const REASSURE = actId("reassure");
export const CONFIRM = actId("confirm");
export const TRANSFER = actId("transfer");
export const R = Object.fromEntries(USER_REPLIES.map(([n]) => [n, actId(n)])) as Record<
  Reply,
  number
>;
export const TICKET = INTENTS.map((i) => actId(`ticket:${i}`));
export const SEE_OK = COMPONENT_NAMES.map((n) => actId(`see:${n}-ok`));
export const SEE_BAD = COMPONENT_NAMES.map((n) => actId(`see:${n}-bad`));
export const SEE_SIM_LOCKED = actId("see:sim-locked");
export const ACCOUNT_SCREEN = FACTORS[ACCOUNT].values.map((v) => actId(`account:${v}`));
export const DONE = actId("done");
export const CARD_ACTS = CARD_SLOTS.map(([, values]) => values.map((v) => actId(`card:${v}`)));
export const CARD_LEN = CARD_SLOTS.length;

export const AGENT_ACTS = ACTS.flatMap((a, i) => (a.kind === "agent" ? [i] : []));
export const USER_ACTS = ACTS.flatMap((a, i) => (a.kind === "user" ? [i] : []));
export const ENV_ACTS = ACTS.flatMap((a, i) => (a.kind === "env" ? [i] : []));
const stepOfAct = new Int32Array(VOCAB).fill(-1);
DO.forEach((a, k) => (stepOfAct[a] = k));
const checkOfAct = new Int32Array(VOCAB).fill(-1);
CHECK.forEach((a, c) => (checkOfAct[a] = c));
export const stepOf = (act: number) => stepOfAct[act]; // −1 if not a fix or account step
export const checkOf = (act: number) => checkOfAct[act]; // −1 if not a check

/** Acts whose reply is the world's (env); the others but transfer are answered by the customer. */
export const isEnvAsk = (act: number) =>
  checkOf(act) >= 0 || act === QUERY || (stepOf(act) >= 0 && STEPS[stepOf(act)].by === "agent");

export const CLASS = {
  all: 0,
  agent: 1,
  fixReply: 2,
  ackReply: 3,
  confirmReply: 4,
  env: 5,
} as const;
export const FIX_REPLIES = [
  R["did-fix"],
  R["failed-fix"],
  R["did-something-else"],
  R.confused,
  R.refuse,
  R.leave,
];
export const MASK_CLASSES: MaskClass[] = [
  { name: "all", allowed: ACTS.map((_, i) => i) },
  { name: "agent", allowed: AGENT_ACTS },
  { name: "reply to a step", allowed: FIX_REPLIES },
  { name: "reply to reassurance", allowed: [R.ack, R.leave] },
  { name: "reply to confirm", allowed: [R["confirm-ok"], R["not-ok"], R.leave] },
  { name: "world", allowed: ENV_ACTS },
];

// ---------------------------------------------------------------------------------------------
// Episode rules

export const MAX_CONTEXT = 64; // the engine's longest sequence
export const contextFor = (maxExchanges: number) => CARD_LEN + 2 + 2 * maxExchanges; // card, <bos>, ticket, exchanges

export const agentTurns = (acts: number[]) =>
  acts.reduce((n, a) => n + (ACTS[a].kind === "agent" ? 1 : 0), 0);

/** Whose turn: the world opens (the ticket); every agent act gets one reply; done after transfer, confirm-ok, leave or the last exchange. */
export function turnOf(acts: number[], maxExchanges: number): Turn {
  const n = acts.length;
  if (n === 0) return "env";
  const last = acts[n - 1];
  if (last === TRANSFER || last === R["confirm-ok"] || last === R.leave) return "done";
  if (ACTS[last].kind === "agent") return isEnvAsk(last) ? "env" : "user";
  return agentTurns(acts) >= maxExchanges ? "done" : "agent";
}

/** Mask class of the next non-agent act (a reply or the world's move), from the agent act it answers. */
export function replyClass(acts: number[]): number {
  const last = acts[acts.length - 1];
  if (acts.length === 0 || isEnvAsk(last) || ACTS[last].kind !== "agent") return CLASS.env;
  if (last === REASSURE) return CLASS.ackReply;
  if (last === CONFIRM) return CLASS.confirmReply;
  return CLASS.fixReply;
}

// ---------------------------------------------------------------------------------------------
// The device state: a deterministic function of the hidden faults and the acts

/** Hidden state of an episode: [intent, value of factor 0, …, value of factor NF−1]. */
export type Hidden = number[];

/** Steps completed by the acts, in order: a user step when the customer answered "did-fix", an agent step at once. */
export function completedSteps(acts: number[]): { step: number; at: number }[] {
  const out: { step: number; at: number }[] = [];
  for (let i = 0; i < acts.length; i++) {
    const k = stepOf(acts[i]);
    if (k < 0) continue;
    if (STEPS[k].by === "agent") out.push({ step: k, at: i });
    else if (acts[i + 1] === R["did-fix"]) out.push({ step: k, at: i + 1 });
  }
  return out;
}

/** Index into the fix sequence reached by the completed steps (a step counts only in its turn: a reboot before the APN reset does not finish it). */
export function progress(
  sequence: number[],
  done: { step: number; at: number }[],
  before = Infinity,
): number {
  let j = 0;
  for (const { step, at } of done) {
    if (at >= before) break;
    if (j < sequence.length && sequence[j] === step) j++;
  }
  return j;
}

/** Is factor f with value v fixed (or fine) after the completed steps (those at acts index < before)? */
export function resolved(
  f: number,
  v: number,
  done: { step: number; at: number }[],
  before = Infinity,
): boolean {
  const seq = FACTORS[f].steps[v];
  if (seq === null) return false;
  return progress(seq, done, before) === seq.length;
}

export const unfixable = (h: Hidden) => FACTORS.some((f, i) => f.steps[h[1 + i]] === null);
export function allResolved(h: Hidden, acts: number[], before = Infinity): boolean {
  const done = completedSteps(acts);
  return FACTORS.every((_, f) => resolved(f, h[1 + f], done, before));
}

/** The user actions the shortest fix needs (τ²'s "number of required actions"): the user steps of every fault, one reboot for all. */
export function fixLength(h: Hidden): number {
  const steps = new Set<number>();
  FACTORS.forEach((f, i) =>
    (f.steps[h[1 + i]] ?? []).forEach((k) => STEPS[k].by === "user" && steps.add(k)),
  );
  return steps.size;
}

/** What the screen (or the account look-up) shows: value v of the factor after the completed steps. */
export function screenOf(
  f: number,
  v: number,
  done: { step: number; at: number }[],
  before = Infinity,
): number {
  if (f === ACCOUNT) return ACCOUNT_SCREEN[v === 0 || resolved(f, v, done, before) ? 0 : v];
  if (f === COMPONENT.sim && v === 2) return SEE_SIM_LOCKED;
  return v === 0 || resolved(f, v, done, before) ? SEE_OK[f] : SEE_BAD[f];
}

/** The world's move: the ticket first, then the screen of what the agent asked to check, the account look-up, or "done" for an account tool. */
export function worldMove(h: Hidden, acts: number[]): number {
  if (acts.length === 0) return TICKET[h[0]];
  const last = acts[acts.length - 1];
  const done = completedSteps(acts);
  const c = checkOf(last);
  if (c >= 0) return screenOf(c, h[1 + c], done);
  if (last === QUERY) return screenOf(ACCOUNT, h[1 + ACCOUNT], done);
  if (stepOf(last) >= 0) return DONE;
  throw new Error(`no world move after ${ACTS[last].name}`);
}

/** The factor an env act observes, and the agent act it answers: for the task posterior. */
export function observedFactor(askAct: number): number {
  const c = checkOf(askAct);
  if (c >= 0) return c;
  return askAct === QUERY ? ACCOUNT : -1;
}
