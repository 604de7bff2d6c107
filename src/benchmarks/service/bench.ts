// The Service benchmark object (the Benchmark interface of ../types.ts) and episode play: a
// customer (a human of the population, or a perfect operator for the "solo" setting) with an agent.
import type { Rng } from "../../engine/random";
import type { Benchmark, Dialogue, Persona } from "../types";
import { renderActs, speakerOfTurn, turnTakingFields, type TurnTakingWorld } from "../scaffold";
import type { Agent } from "./agents";
import { DEFAULT_PARAMS, ServicePopulation, type ServiceParams } from "./population";
import {
  ACTS,
  CARD_LEN,
  CLASS,
  CONFIRM,
  MASK_CLASSES,
  MAX_CONTEXT,
  R,
  REASSURE,
  TRANSFER,
  USER_ACTS,
  allResolved,
  contextFor,
  replyClass,
  turnOf,
  unfixable,
  worldMove,
  type Hidden,
} from "./world";

export type ServiceBenchmark = Benchmark & { humans: ServicePopulation; params: ServiceParams };

const hiddenOf = (d: Dialogue): Hidden => {
  if (!d.hidden) throw new Error("a service dialogue's reward and world read its hidden state");
  return d.hidden;
};

export function reward(d: Dialogue): number {
  const last = d.acts[d.acts.length - 1];
  const h = hiddenOf(d);
  if (last === TRANSFER) return unfixable(h) ? 1 : 0;
  if (last === R["confirm-ok"]) return !unfixable(h) && allResolved(h, d.acts) ? 1 : 0;
  return 0;
}

/** How a finished dialogue ended, in words. */
export function outcomeOf(d: Dialogue): string {
  const last = d.acts[d.acts.length - 1];
  const h = hiddenOf(d);
  if (last === TRANSFER)
    return unfixable(h) ? "transferred (could not be fixed)" : "transferred (fixable)";
  if (last === R["confirm-ok"]) return reward(d) === 1 ? "fixed" : "confirmed, not fixed";
  if (last === R.leave) return "customer left";
  return "not fixed (out of time)";
}

/** The parts of the Service world that make it a turn-taking benchmark (../scaffold.ts). */
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

export function createService(params: ServiceParams = DEFAULT_PARAMS): ServiceBenchmark {
  const population = new ServicePopulation(params);
  return {
    id: "service",
    title: "Service (after τ²-bench telecom, dual control)",
    ...turnTakingFields(TURN_TAKING, population, params),
    envAct: (d) => worldMove(hiddenOf(d), d.acts),
    reward,
    success: (d) => reward(d) === 1,
    bayesPredictive: (d) => population.predictive(d),
    mode(d) {
      // which kinds of trouble the customer showed, and how it ended (the toy's SCOPE cluster)
      const shown = new Set<string>();
      for (const a of d.acts)
        if (USER_ACTS.includes(a) && a !== R.ack && a !== R["did-fix"] && a !== R["confirm-ok"])
          shown.add(ACTS[a].name);
      const kinds = [...shown].sort().join("+") || "smooth";
      return `${kinds}|${d.hidden ? outcomeOf(d) : "?"}`;
    },
    render: (d, rng) =>
      renderActs(ACTS, d, rng, (prefix) => speakerOfTurn(turnOf(prefix.acts, params.maxExchanges))),
  };
}

/** Who answers the agent: a human of the population, or the agent itself at the phone ("solo": every step done, nobody leaves). */
export type Operator = "human" | "solo";

/** One episode of an agent with a persona; the world plays its own moves. */
export function playEpisode(
  bench: ServiceBenchmark,
  persona: Persona,
  agent: Agent | ((d: Dialogue) => number),
  rng: Rng,
  operator: Operator = "human",
): Dialogue {
  const d: Dialogue = { card: persona.card, acts: [], hidden: persona.hidden };
  for (let t = bench.turn(d); t !== "done"; t = bench.turn(d)) {
    if (t === "env") d.acts.push(worldMove(hiddenOf(d), d.acts));
    else if (t === "agent") d.acts.push(agent(d, rng));
    else
      d.acts.push(
        operator === "solo"
          ? soloReply(d)
          : rng.categorical(bench.humans.replyProbs(persona.type, d)),
      );
  }
  return d;
}

/** The agent operating the phone itself: every step happens, and it sees whether the phone works. */
function soloReply(d: Dialogue): number {
  const last = d.acts[d.acts.length - 1];
  if (last === REASSURE) return R.ack;
  if (last === CONFIRM) return allResolved(hiddenOf(d), d.acts) ? R["confirm-ok"] : R["not-ok"];
  return R["did-fix"];
}
