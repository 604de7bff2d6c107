// Agents for Cooperation: the behaviour agent of the pretraining corpus (a mix of the habits real
// coding agents show in CooperBench: some plan first, some wait, some edit at once, they often rely
// on what the partner announced and seldom check), and the reference agents — the script that wins
// the modal dutiful partner (wait for its plan, edit the rest, never claim or check), an adaptive
// agent (ask, answer questions, claim when nobody states a plan, pick up what the partner left), and
// the solo agent that does both features itself. All but the solo agent read only what the agent sees.
import type { Rng } from "../../engine/random";
import type { Dialogue } from "../types";
import {
  AGENT_ACTS,
  ACK,
  ASK,
  CLAIM,
  DONE,
  EDIT,
  PLAN,
  PLANS,
  T_ACK,
  T_ASK,
  T_DONE,
  WAIT,
  claimOf,
  editOf,
  ownPlan,
  planOf,
  plansOf,
  sides,
  theirEditOf,
  theirPlanOf,
} from "./world";

export type Agent = (d: Dialogue, rng: Rng) => number;

/** What the agent knows from the dialogue. */
export interface Notes {
  own: number[]; // its files
  theirPlan: number; // the partner's latest stated plan, −1 if none
  theirEdits: Set<number>;
  theirDone: boolean;
  myEdits: Set<number>;
  stated: boolean; // it stated its plan or claimed a file
  statedAcked: boolean; // … and the partner acknowledged it
  askedByThem: boolean; // the partner's last act asks for its plan
  moves: number; // its moves so far
  left: number; // moves left
}

export function notes(d: Dialogue, maxExchanges: number): Notes {
  const acts = d.acts;
  const n: Notes = {
    own: PLANS[ownPlan(d)],
    theirPlan: -1,
    theirEdits: new Set(),
    theirDone: false,
    myEdits: new Set(),
    stated: false,
    statedAcked: false,
    askedByThem: acts[acts.length - 1] === T_ASK,
    moves: 0,
    left: 0,
  };
  for (let i = 1; i < acts.length; i++) {
    const a = acts[i];
    if (theirPlanOf(a) >= 0) n.theirPlan = theirPlanOf(a);
    if (theirEditOf(a) >= 0) n.theirEdits.add(theirEditOf(a));
    if (a === T_DONE) n.theirDone = true;
    if (editOf(a) >= 0) n.myEdits.add(editOf(a));
    if (planOf(a) >= 0 || claimOf(a) >= 0) {
      n.stated = true;
      if (acts[i + 1] === T_ACK) n.statedAcked = true;
    }
  }
  n.moves = sides(acts).agent;
  n.left = maxExchanges - n.moves;
  return n;
}

const edited = (n: Notes, f: number) => n.myEdits.has(f) || n.theirEdits.has(f);
/** Files nobody has edited that some known plan needs (its own, and the partner's stated one). */
const gaps = (n: Notes) =>
  [...new Set([...n.own, ...(n.theirPlan >= 0 ? PLANS[n.theirPlan] : [])])].filter(
    (f) => !edited(n, f),
  );

/**
 * The script that wins the modal dutiful partner: wait one move for its plan, edit its own files
 * that the plan does not name, say done. It relies on the announcement: it never claims, asks,
 * answers or checks what the partner actually did.
 */
export function modalScript(maxExchanges: number): (d: Dialogue) => number {
  return (d) => {
    const n = notes(d, maxExchanges);
    if (n.moves === 0) return WAIT;
    const theirs: number[] = n.theirPlan >= 0 ? PLANS[n.theirPlan] : [];
    const todo = n.own.filter((f) => !theirs.includes(f) && !n.myEdits.has(f));
    return todo.length ? EDIT[todo[0]] : DONE;
  };
}

/**
 * The adaptive agent: ask for the partner's plan first; answer its questions with its own plan;
 * when no plan came, state its own (a claim); leave shared files to a partner that stated a plan
 * unless it agreed to the agent's; skip files the partner already edited; once the partner is done,
 * edit whatever any stated plan still needs; wait while the partner still owes a shared file.
 */
export function adaptiveAgent(maxExchanges: number): (d: Dialogue) => number {
  return (d) => {
    const n = notes(d, maxExchanges);
    const ownPlanAct = PLAN[ownPlan(d)];
    if (n.moves === 0) return ASK;
    if (n.askedByThem && !n.stated) return ownPlanAct;
    if (n.theirPlan < 0 && !n.stated && !n.theirDone) return ownPlanAct;
    const theirs: number[] = n.theirPlan >= 0 && !n.statedAcked ? PLANS[n.theirPlan] : [];
    const todo = n.own.filter((f) => !theirs.includes(f) && !edited(n, f));
    if (todo.length) return EDIT[todo[0]];
    const open = gaps(n);
    if (open.length && n.theirDone) return EDIT[open[0]];
    if (open.length && n.left > 1 && !n.theirDone) return WAIT;
    return DONE;
  };
}

/** The solo agent (CooperBench's solo setting): it has both features and the whole budget, so it edits every file either plan needs; it reads the partner's feature off the card. */
export function soloAgent(): (d: Dialogue) => number {
  return (d) => {
    const h = plansOf(d);
    const done = new Set(d.acts.map(editOf).filter((f) => f >= 0));
    const need = [...new Set([...PLANS[h[0]], ...PLANS[h[1]]])].filter((f) => !done.has(f));
    return need.length ? EDIT[need[0]] : DONE;
  };
}

export interface BehaviourStyle {
  random: number; // a uniformly random agent act (not done)
  opening: { plan: number; ask: number; wait: number; edit: number }; // its first move
  answer: number; // answers the partner's question with its plan
  agree: number; // acknowledges the partner's stated plan when it arrives (then may not keep to it: rely is drawn afresh)
  rely: number; // leaves a file the partner's stated plan names to the partner (else edits it)
  claim: number; // claims such a file before editing it (else edits it without a word)
  skipTheirs: number; // skips a file the partner already edited
  pickUp: number; // once the partner is done, edits a file a stated plan still needs
}

export const DEFAULT_STYLE: BehaviourStyle = {
  random: 0.04,
  opening: { plan: 0.3, ask: 0.1, wait: 0.42, edit: 0.18 },
  answer: 0.6,
  agree: 0.35,
  rely: 0.45,
  claim: 0.5,
  skipTheirs: 0.8,
  pickUp: 0.3,
};

/** The behaviour agent: a stochastic policy of the dialogue so far with CooperBench's habits (see DEFAULT_STYLE). */
export function behaviourAgent(maxExchanges: number, style: BehaviourStyle = DEFAULT_STYLE): Agent {
  const nonDone = AGENT_ACTS.filter((a) => a !== DONE);
  return (d, rng) => {
    const n = notes(d, maxExchanges);
    const u = () => rng.uniform();
    const ownPlanAct = PLAN[ownPlan(d)];
    if (u() < style.random) return nonDone[rng.int(nonDone.length)];
    if (n.moves === 0) {
      const o = style.opening;
      const k = rng.categorical([o.plan, o.ask, o.wait, o.edit]);
      return [ownPlanAct, ASK, WAIT, EDIT[n.own[0]]][k];
    }
    if (n.askedByThem && !n.stated && u() < style.answer) return ownPlanAct;
    if (theirPlanOf(d.acts[d.acts.length - 1]) >= 0 && u() < style.agree) return ACK;
    // once it has stated its own plan it takes its word as settled, answered or not
    const theirs: number[] = n.theirPlan >= 0 && !n.stated ? PLANS[n.theirPlan] : [];
    for (const f of n.own) {
      if (n.myEdits.has(f)) continue;
      if (n.theirEdits.has(f) && u() < style.skipTheirs) continue;
      if (theirs.includes(f) && !n.theirEdits.has(f)) {
        if (u() < style.rely) continue;
        const claimed = d.acts.includes(CLAIM[f]);
        if (!claimed && u() < style.claim) return CLAIM[f];
      }
      return EDIT[f];
    }
    const open = gaps(n);
    if (open.length && n.theirDone && u() < style.pickUp) return EDIT[open[0]];
    if (!n.theirDone && n.left > 1 && u() < 0.3) return WAIT;
    return DONE;
  };
}

/** The behaviour agent alone with both features (CooperBench's solo setting): the solo agent's plan with the behaviour agent's slips. */
export function soloBehaviour(style: BehaviourStyle = DEFAULT_STYLE): Agent {
  const solo = soloAgent();
  const nonDone = AGENT_ACTS.filter((a) => a !== DONE);
  return (d, rng) => (rng.uniform() < style.random ? nonDone[rng.int(nonDone.length)] : solo(d));
}
