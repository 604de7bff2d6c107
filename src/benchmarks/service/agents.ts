// Support agents for Service: the behaviour agent of the pretraining corpus (a reasonable but
// imperfect agent, the toy's gpt-4.1 of τ²), and the reference agents whose success with humans is
// drawn on the figures — the gold plan (told the faults), the script that wins the modal accurate
// customer (skip checks, fix the likely faults blindly, confirm) and a careful adaptive agent (check
// each screen before fixing it, reassure before risky steps, walk a struggling customer back to the
// screen, re-check after "still not working"). All read only what the agent sees (the ticket, screens,
// account look-ups and the customer's replies), except the gold plan, which reads `d.hidden`.
import type { Rng } from "../../engine/random";
import type { Dialogue } from "../types";
import {
  ACCOUNT,
  ACCOUNT_SCREEN,
  ACTS,
  AGENT_ACTS,
  CHECK,
  COMPONENT,
  CONFIRM,
  DO,
  FACTORS,
  NC,
  QUERY,
  R,
  REASSURE,
  SEE_OK,
  SEE_SIM_LOCKED,
  STEP,
  STEPS,
  TRANSFER,
  agentTurns,
  checkOf,
  completedSteps,
  progress,
  stepOf,
  type Hidden,
} from "./world";

export type Agent = (d: Dialogue, rng: Rng) => number;

const NEEDS_REBOOT = new Set(
  ["reseat-sim", "reset-apn", "set-network-mode", "resume-line"].map((n) => STEP[n]),
);
const REBOOT = STEP.reboot;
const FAILED = new Set([R["failed-fix"], R["did-something-else"], R.confused]);

/** What an agent knows from the dialogue. */
export interface Notes {
  intent: number;
  screen: number[]; // per component: −1 not looked at (or stale), 0 ok, 1 bad, 2 PIN-locked
  account: number; // −1 not looked up (or stale), else the account value shown (0 = ok)
  fixedSince: boolean[]; // per component: its first step was done after its last bad screen
  accountDone: number; // account fault steps done since the look-up (progress into its sequence)
  rebootPending: boolean; // a step that needs a restart was done and no restart since
  reassured: boolean;
  lastAgent: number; // −1 at the start
  lastReply: number; // the act after the last agent act (user reply or screen), −1 if none
  failedStep: number; // the step of the last agent act if its reply was a failure or refusal, else −1
  refusedStep: number; // the latest refused step not done since, −1 if none
  notOks: number;
  turnsLeft: number;
}

export function notes(d: Dialogue, maxExchanges: number): Notes {
  const acts = d.acts;
  const screen = new Array<number>(NC).fill(-1);
  const fixedSince = new Array<boolean>(NC).fill(false);
  let account = -1;
  let accountDone = 0;
  let rebootPending = false;
  let reassured = false;
  let refusedStep = -1;
  let notOks = 0;
  const done = completedSteps(acts);
  const doneAt = new Set(done.map((x) => x.at));
  for (let i = 1; i < acts.length; i++) {
    const a = acts[i];
    const prev = acts[i - 1];
    const c = checkOf(prev);
    if (c >= 0 && ACTS[a].kind === "env") {
      screen[c] = a === SEE_OK[c] ? 0 : a === SEE_SIM_LOCKED ? 2 : 1;
      fixedSince[c] = false;
    }
    if (prev === QUERY && ACTS[a].kind === "env") {
      account = ACCOUNT_SCREEN.indexOf(a);
      accountDone = 0;
    }
    if (a === REASSURE) reassured = true;
    if (a === R["not-ok"]) {
      notOks++;
      // screens that showed a fault are stale now: look again
      for (let k = 0; k < NC; k++) if (screen[k] === 1) screen[k] = -1;
      if (account > 0) account = -1;
    }
    const k = stepOf(a);
    if (k >= 0 && (STEPS[k].by === "agent" || doneAt.has(i + 1))) {
      if (NEEDS_REBOOT.has(k)) rebootPending = true;
      if (k === REBOOT) rebootPending = false;
      if (STEPS[k].component >= 0 && screen[STEPS[k].component] === 1)
        fixedSince[STEPS[k].component] = true;
      if (account > 0) {
        const seq = FACTORS[ACCOUNT].steps[account] ?? [];
        if (seq[accountDone] === k) accountDone++;
      }
      if (k === refusedStep) refusedStep = -1;
    }
    if (a === R.refuse) refusedStep = stepOf(prev);
  }
  let lastAgent = -1;
  let lastAgentAt = -1;
  for (let i = acts.length - 1; i >= 0 && lastAgent < 0; i--)
    if (ACTS[acts[i]].kind === "agent") {
      lastAgent = acts[i];
      lastAgentAt = i;
    }
  const lastReply = lastAgentAt >= 0 && lastAgentAt + 1 < acts.length ? acts[lastAgentAt + 1] : -1;
  const failedStep =
    lastAgent >= 0 && stepOf(lastAgent) >= 0 && (FAILED.has(lastReply) || lastReply === R.refuse)
      ? stepOf(lastAgent)
      : -1;
  return {
    intent:
      ACTS[acts[0]].name === "ticket:no-service"
        ? 0
        : ACTS[acts[0]].name === "ticket:mobile-data"
          ? 1
          : 2,
    screen,
    account,
    fixedSince,
    accountDone,
    rebootPending,
    reassured,
    lastAgent,
    lastReply,
    failedStep,
    refusedStep,
    notOks,
    turnsLeft: maxExchanges - agentTurns(acts),
  };
}

/** The components worth checking for an intent, most likely faulty first. */
export function candidates(faultPrior: number[][][], intent: number): number[] {
  const pFault = (c: number) => 1 - faultPrior[intent][c][0];
  return Array.from({ length: NC }, (_, c) => c)
    .filter((c) => pFault(c) > 0)
    .sort((a, b) => pFault(b) - pFault(a) || a - b);
}

const firstStep = (c: number, value: number) => (FACTORS[c].steps[value] ?? [])[0];

/** The next account act from what the look-up showed: −1 when nothing is left to do there. */
function accountNext(n: Notes): number {
  if (n.account <= 0) return -1;
  const seq = FACTORS[ACCOUNT].steps[n.account];
  if (seq === null) return TRANSFER;
  const k = seq[n.accountDone];
  if (k === undefined || k === REBOOT) return -1;
  return DO[k];
}

export interface CarefulOptions {
  reassure: "before-risky" | "on-refusal"; // reassure before the first risky step, or only once refused
  guide: boolean; // check a screen again before retrying a failed step on it
}

/** The careful adaptive agent: look up the account, check each likely screen and fix what it shows, guide and reassure, confirm, re-check after "not ok". */
export function carefulAgent(
  faultPrior: number[][][],
  maxExchanges: number,
  opts: CarefulOptions = { reassure: "before-risky", guide: true },
): (d: Dialogue) => number {
  return (d) => {
    const n = notes(d, maxExchanges);
    const instruct = (k: number) =>
      STEPS[k].risky && !n.reassured && opts.reassure === "before-risky" ? REASSURE : DO[k];
    if (n.turnsLeft <= 1) return CONFIRM;
    if (n.screen.includes(2) || n.account === 4) return TRANSFER;
    // the customer refused: reassure, then ask again
    if (n.refusedStep >= 0)
      return n.lastAgent === REASSURE || n.reassured ? DO[n.refusedStep] : REASSURE;
    // a failed step: walk them back to the screen first (a check guides the next try), else try again
    if (n.failedStep >= 0) {
      const c = STEPS[n.failedStep].component;
      const g = STEPS[n.failedStep].guide;
      if (opts.guide && c >= 0 && STEPS[n.failedStep].hard) return CHECK[c];
      if (opts.guide && g !== undefined) return DO[STEP[g]];
      return DO[n.failedStep];
    }
    if (n.account < 0) return QUERY;
    const acc = accountNext(n);
    if (acc >= 0) return acc === DO[STEP["pay-bill"]] ? instruct(STEP["pay-bill"]) : acc;
    const lastCheck = checkOf(n.lastAgent);
    if (lastCheck >= 0 && n.screen[lastCheck] === 1 && !n.fixedSince[lastCheck])
      return instruct(firstStep(lastCheck, 1));
    for (const c of candidates(faultPrior, n.intent)) {
      if (n.screen[c] < 0) return CHECK[c];
      if (n.screen[c] === 1 && !n.fixedSince[c]) return instruct(firstStep(c, 1));
    }
    if (n.rebootPending) return instruct(REBOOT);
    return CONFIRM;
  };
}

/**
 * The script that wins the modal (accurate) customer: look up the account (the only way to see a
 * bill or an ended contract), check the SIM where a locked one is possible, then instruct the fix of
 * every likely fault without checking, most likely first, one restart, confirm. A step that did not
 * happen is asked again as it was. Against an accurate customer this is at least as good as checking
 * first (a check costs the same exchange as a blind fix); it never reassures or guides.
 */
export function modalScript(
  faultPrior: number[][][],
  maxExchanges: number,
): (d: Dialogue) => number {
  return (d) => {
    const n = notes(d, maxExchanges);
    if (n.turnsLeft <= 1) return CONFIRM;
    if (n.screen.includes(2) || n.account === 4) return TRANSFER;
    if (n.failedStep >= 0) return DO[n.failedStep];
    if (n.account < 0) return QUERY;
    const acc = accountNext(n);
    if (acc >= 0) return acc;
    const done = completedSteps(d.acts);
    const instructed = new Set(d.acts.map(stepOf).filter((k) => k >= 0));
    const cands = candidates(faultPrior, n.intent);
    const locks = cands.includes(COMPONENT.sim) && faultPrior[n.intent][COMPONENT.sim][2] > 0;
    if (locks && n.screen[COMPONENT.sim] < 0) return CHECK[COMPONENT.sim];
    for (const c of cands) {
      if (n.screen[c] === 0) continue; // checked and fine
      const k = firstStep(c, 1);
      if (!instructed.has(k)) return DO[k];
    }
    const needsReboot = [...instructed].some((k) => NEEDS_REBOOT.has(k)) || n.rebootPending;
    const rebootedLast = done.length > 0 && done[done.length - 1].step === REBOOT;
    if (needsReboot && !rebootedLast && n.notOks === 0) return DO[REBOOT];
    if (n.lastReply === R["not-ok"]) return TRANSFER; // the script has nothing more to try
    return CONFIRM;
  };
}

/**
 * The modal script with its blind fixes in random order: where the script instructs the next
 * likely fault's fix, it instructs any fix it has still to give, uniformly. It has the script's
 * strategy (the same acts) and a high per-turn entropy: randomness that changes nothing. Returns
 * the acts it draws among at a state (one where it does not draw).
 */
export function shuffledScriptChoices(
  faultPrior: number[][][],
  maxExchanges: number,
): (d: Dialogue) => number[] {
  const script = modalScript(faultPrior, maxExchanges);
  return (d) => {
    const act = script(d);
    const n = notes(d, maxExchanges);
    if (n.failedStep >= 0) return [act]; // a step asked again is not a blind fix
    const instructed = new Set(d.acts.map(stepOf).filter((k) => k >= 0));
    const blind = new Set(
      candidates(faultPrior, n.intent)
        .filter((c) => n.screen[c] !== 0)
        .map((c) => firstStep(c, 1))
        .filter((k) => !instructed.has(k))
        .map((k) => DO[k]),
    );
    return blind.has(act) ? [...blind] : [act];
  };
}

/** The gold plan (τ²'s "agent given the plan"): told the faults, it instructs exactly the needed steps (account first, one restart last), asks again what did not happen, confirms, and transfers what cannot be fixed. */
export function goldAgent(maxExchanges: number): (d: Dialogue) => number {
  return (d) => {
    const h = d.hidden as Hidden;
    if (!h) throw new Error("the gold plan reads the hidden faults");
    if (FACTORS.some((f, i) => f.steps[h[1 + i]] === null)) return TRANSFER;
    if (maxExchanges - agentTurns(d.acts) <= 1) return CONFIRM;
    const done = completedSteps(d.acts);
    let reboot = false;
    for (const f of [ACCOUNT, ...Array.from({ length: NC }, (_, c) => c)]) {
      const seq = FACTORS[f].steps[h[1 + f]] ?? [];
      const j = progress(seq, done);
      if (j === seq.length) continue;
      if (seq[j] === REBOOT) reboot = true;
      else return DO[seq[j]];
    }
    return reboot ? DO[REBOOT] : CONFIRM;
  };
}

export interface BehaviourStyle {
  random: number; // a uniformly random agent act
  blind: number; // instruct the next candidate's fix without checking it
  skip: number; // pass over the next candidate (assume it fine)
  earlyConfirm: number; // confirm once something was fixed, before checking the rest
  forgetReboot: number; // confirm although a restart is pending
  retry: number; // after a failed step: try again at once (else re-check or move on)
  reassureOnRefusal: number; // after a refusal: reassure (else move on)
  giveUp: number; // after a "not ok": transfer
}

export const DEFAULT_STYLE: BehaviourStyle = {
  random: 0.06,
  blind: 0.4,
  skip: 0.2,
  earlyConfirm: 0.25,
  forgetReboot: 0.45,
  retry: 0.8,
  reassureOnRefusal: 0.2,
  giveUp: 0.45,
};

/**
 * The behaviour agent: a careful agent's plan with the mistakes real agents make (τ²'s failure
 * analysis: skipped checks, forgotten restarts, premature "is it solved?", giving up to a transfer),
 * as a stochastic policy of the dialogue so far.
 */
export function behaviourAgent(
  faultPrior: number[][][],
  maxExchanges: number,
  style: BehaviourStyle = DEFAULT_STYLE,
): Agent {
  return (d, rng) => {
    const n = notes(d, maxExchanges);
    const u = () => rng.uniform();
    if (n.turnsLeft <= 1) return CONFIRM;
    if (u() < style.random)
      return AGENT_ACTS.filter((a) => a !== TRANSFER)[rng.int(AGENT_ACTS.length - 1)];
    if (n.screen.includes(2) || n.account === 4) return TRANSFER;
    if (n.lastReply === R["not-ok"] && u() < style.giveUp) return TRANSFER;
    if (n.lastReply === R.refuse && n.refusedStep >= 0)
      return u() < style.reassureOnRefusal ? REASSURE : DO[n.refusedStep];
    if (n.lastAgent === REASSURE && n.refusedStep >= 0) return DO[n.refusedStep];
    if (n.failedStep >= 0) {
      const x = u();
      const c = STEPS[n.failedStep].component;
      if (x < style.retry) return DO[n.failedStep];
      if (x < style.retry + (1 - style.retry) / 2 && c >= 0) return CHECK[c];
    }
    if (n.account < 0 && u() < 0.6) return QUERY;
    const acc = accountNext(n);
    if (acc >= 0) return acc;
    const lastCheck = checkOf(n.lastAgent);
    if (lastCheck >= 0 && n.screen[lastCheck] === 1 && !n.fixedSince[lastCheck])
      return DO[firstStep(lastCheck, 1)];
    const anyFixed = n.fixedSince.some((x) => x);
    if (anyFixed && u() < style.earlyConfirm) return CONFIRM;
    const instructed = new Set(d.acts.map(stepOf).filter((k) => k >= 0));
    for (const c of candidates(faultPrior, n.intent)) {
      if (n.screen[c] === 0 || (n.screen[c] === 1 && n.fixedSince[c])) continue;
      if (n.screen[c] === 1) return DO[firstStep(c, 1)];
      if (instructed.has(firstStep(c, 1)) && n.notOks === 0) continue; // fixed blindly before
      const x = u();
      if (x < style.skip) continue;
      if (x < style.skip + style.blind && c !== COMPONENT.sim) return DO[firstStep(c, 1)];
      return CHECK[c];
    }
    if (n.account < 0) return QUERY;
    if (n.rebootPending && u() >= style.forgetReboot) return DO[REBOOT];
    return CONFIRM;
  };
}
