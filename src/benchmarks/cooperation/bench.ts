// The Cooperation benchmark object (the Benchmark interface of ../types.ts), episode play with a
// partner of the population (or alone: CooperBench's solo setting), and the cause of a failed
// episode in CooperBench's failure taxonomy.
import type { Rng } from "../../engine/random";
import type { Benchmark, Dialogue, Persona } from "../types";
import { renderActs, speakerOfTurn, turnTakingFields, type TurnTakingWorld } from "../scaffold";
import type { Agent } from "./agents";
import { CooperationPopulation, DEFAULT_PARAMS, type CooperationParams } from "./population";
import {
  ACK,
  ACTS,
  CARD_LEN,
  CLASS,
  MASK_CLASSES,
  MAX_CONTEXT,
  PLANS,
  T_ACK,
  TASK,
  T_WAIT,
  claimOf,
  contextFor,
  editOf,
  giveOf,
  merge,
  outcomeWords,
  planOf,
  replyClass,
  reward,
  theirEditOf,
  theirPlanOf,
  turnOf,
  plansOf,
  type Plans,
} from "./world";

export type CooperationBenchmark = Benchmark & {
  humans: CooperationPopulation;
  params: CooperationParams;
};

const hiddenOf = (d: Dialogue): number[] => {
  if (!d.hidden)
    throw new Error("the world's opening move reads the hidden state (the agent's plan)");
  return d.hidden;
};

/** The partner's move pattern (its messages: plan, question, answers; whether it finished), the toy's behavioural mode. */
function partnerPattern(acts: number[]): string {
  const said = new Set<string>();
  for (const a of acts) {
    if (ACTS[a].kind !== "user") continue;
    if (theirPlanOf(a) >= 0) said.add("plan");
    else if (theirEditOf(a) < 0 && a !== T_WAIT) said.add(ACTS[a].name.replace("they-", ""));
  }
  return [...said].sort().join("+") || "silent";
}

/** The parts of the Cooperation world that make it a turn-taking benchmark (../scaffold.ts). */
const TURN_TAKING: TurnTakingWorld = {
  acts: ACTS,
  cardLen: CARD_LEN,
  maskClasses: MASK_CLASSES,
  agentClass: CLASS.agent,
  maxContext: MAX_CONTEXT,
  contextFor,
  turnOf,
  replyClass,
};

export function createCooperation(
  params: CooperationParams = DEFAULT_PARAMS,
): CooperationBenchmark {
  const population = new CooperationPopulation(params);
  const fields = turnTakingFields(TURN_TAKING, population, params);
  const { turn } = fields;
  return {
    id: "cooperation",
    title: "Cooperation (after CooperBench)",
    ...fields,
    // the world's only move is the opening task: the agent's own plan
    envAct: (d) => {
      if (d.acts.length !== 0) throw new Error("the world moves only at the start");
      return TASK[hiddenOf(d)[0]];
    },
    reward: (d) => reward(plansOf(d), d.acts),
    success: (d) => reward(plansOf(d), d.acts) === 1,
    bayesPredictive: (d) => population.predictive(d),
    mode: (d) =>
      `${partnerPattern(d.acts)}|${d.acts.length > 0 ? outcomeWords(plansOf(d), d.acts) : "?"}`,
    render(d, rng) {
      const lines = renderActs(ACTS, d, rng, (prefix) =>
        speakerOfTurn(turnOf(prefix.acts, params.maxExchanges)),
      );
      // the merge result, once the episode is over
      if (d.acts.length > 0 && turn(d) === "done")
        lines.push({
          speaker: "env",
          act: "merge",
          text: `(merge) ${outcomeWords(plansOf(d), d.acts)}.`,
        });
      return lines;
    },
  };
}

/** Who works with the agent: a partner of the population, or nobody (solo: the partner only waits, and the agent has both features). */
export type Operator = "partner" | "solo";

/** One episode of an agent with a persona; the world opens with the task. */
export function playEpisode(
  bench: CooperationBenchmark,
  persona: Persona,
  agent: Agent | ((d: Dialogue) => number),
  rng: Rng,
  operator: Operator = "partner",
): Dialogue {
  const d: Dialogue = { card: persona.card, acts: [], hidden: persona.hidden };
  for (let t = bench.turn(d); t !== "done"; t = bench.turn(d)) {
    if (t === "env") d.acts.push(bench.envAct!(d, rng));
    else if (t === "agent") d.acts.push(agent(d, rng));
    else
      d.acts.push(
        operator === "solo" ? T_WAIT : rng.categorical(bench.humans.replyProbs(persona.type, d)),
      );
  }
  return d;
}

export type FailureCause = "expectation" | "commitment" | "communication";
export const FAILURE_CAUSES: FailureCause[] = ["expectation", "commitment", "communication"];

/**
 * Why a failed episode failed, in CooperBench's taxonomy, from the dialogue and both plans:
 * * a merge conflict on a file that one of its two editors had agreed, before its edit, to leave to
 *   the other (acknowledged the other's claim or plan naming it, asked the other to do it, or stated
 *   a plan of its own without it): a broken **commitment**;
 * * a conflict on a file that either side had named (claimed, or put in a stated plan) before the
 *   first edit of it, with no agreement broken: an unmet **expectation** (an editor assumed the
 *   other would adapt, or that its own word would be heeded without an answer);
 * * a conflict on a file nobody had named before its first edit (the first editor went ahead
 *   without a word): missing **communication**;
 * * no conflict but a file a feature needs left unedited (each assumed the other would do it): an
 *   unmet **expectation**.
 * Returns null for a successful episode.
 */
export function failureCause(h: Plans, acts: number[]): FailureCause | null {
  const m = merge(h, acts);
  if (m.conflicts.length === 0) return m.oursPasses && m.theirsPasses ? null : "expectation";
  // the first conflict to happen: the earliest second edit
  let first: { f: number; agentAt: number; partnerAt: number } | null = null;
  for (const f of m.conflicts) {
    const agentAt = acts.findIndex((x) => editOf(x) === f);
    const partnerAt = acts.findIndex((x) => theirEditOf(x) === f);
    if (!first || Math.max(agentAt, partnerAt) < Math.max(first.agentAt, first.partnerAt))
      first = { f, agentAt, partnerAt };
  }
  const { f, agentAt, partnerAt } = first!;
  const agentNames = (x: number) =>
    (planOf(x) >= 0 && PLANS[planOf(x)].includes(f)) || claimOf(x) === f;
  const partnerNames = (x: number) => theirPlanOf(x) >= 0 && PLANS[theirPlanOf(x)].includes(f);
  // agreements to leave f, made before the side's own edit of f
  const agentAgreed = acts
    .slice(0, agentAt)
    .some(
      (x, i, pre) =>
        (partnerNames(x) && pre[i + 1] === ACK) ||
        giveOf(x) === f ||
        (planOf(x) >= 0 && !PLANS[planOf(x)].includes(f)),
    );
  const partnerAgreed = acts
    .slice(0, partnerAt)
    .some(
      (x, i, pre) =>
        (agentNames(x) && pre[i + 1] === T_ACK) ||
        (theirPlanOf(x) >= 0 && !PLANS[theirPlanOf(x)].includes(f)),
    );
  if (agentAgreed || partnerAgreed) return "commitment";
  const named = acts
    .slice(0, Math.min(agentAt, partnerAt))
    .some((x) => agentNames(x) || partnerNames(x));
  return named ? "expectation" : "communication";
}
