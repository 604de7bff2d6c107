// The Service benchmark object (the Benchmark interface of ../types.ts) and episode play: a
// customer (a human of the population, or a perfect operator for the "solo" setting) with an agent.
import type { Rng } from "../../engine/random";
import type { Benchmark, Dialogue, Persona } from "../types";
import type { Agent } from "./agents";
import { DEFAULT_PARAMS, ServicePopulation, type ServiceParams } from "./population";
import { ACTS, CARD_LEN, CLASS, CONFIRM, MASK_CLASSES, MAX_CONTEXT, R, REASSURE, TRANSFER, USER_ACTS, allResolved, contextFor, replyClass, turnOf, unfixable, worldMove, type Hidden } from "./world";

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
  if (last === TRANSFER) return unfixable(h) ? "transferred (could not be fixed)" : "transferred (fixable)";
  if (last === R["confirm-ok"]) return reward(d) === 1 ? "fixed" : "confirmed, not fixed";
  if (last === R.leave) return "customer left";
  return "not fixed (out of time)";
}

export function createService(params: ServiceParams = DEFAULT_PARAMS): ServiceBenchmark {
  const context = contextFor(params.maxExchanges);
  if (context > MAX_CONTEXT) throw new Error(`maxExchanges ${params.maxExchanges} needs context ${context} > ${MAX_CONTEXT}`);
  const population = new ServicePopulation(params);
  const turn = (d: Dialogue) => turnOf(d.acts, params.maxExchanges);
  return {
    id: "service",
    title: "Service (after τ²-bench telecom, dual control)",
    acts: ACTS,
    cardLen: CARD_LEN,
    context,
    maskClasses: MASK_CLASSES,
    humans: population,
    params,
    // the class of any non-agent move: a customer's reply, or (turn "env") the world's
    userClass: (d) => replyClass(d.acts),
    agentClass: () => CLASS.agent,
    turn,
    envAct: (d) => worldMove(hiddenOf(d), d.acts),
    reward,
    success: (d) => reward(d) === 1,
    bayesPredictive: (d) => population.predictive(d),
    mode(d) {
      // which kinds of trouble the customer showed, and how it ended (the toy's SCOPE cluster)
      const shown = new Set<string>();
      for (const a of d.acts) if (USER_ACTS.includes(a) && a !== R.ack && a !== R["did-fix"] && a !== R["confirm-ok"]) shown.add(ACTS[a].name);
      const kinds = [...shown].sort().join("+") || "smooth";
      return `${kinds}|${d.hidden ? outcomeOf(d) : "?"}`;
    },
    render(d, rng) {
      return d.acts.map((a, i) => {
        const t = ACTS[a].templates;
        const who = turnOf(d.acts.slice(0, i), params.maxExchanges);
        const speaker = who === "agent" ? ("agent" as const) : who === "user" ? ("user" as const) : ("env" as const);
        return { speaker, act: ACTS[a].name, text: t[rng ? rng.int(t.length) : 0] };
      });
    },
  };
}

/** Who answers the agent: a human of the population, or the agent itself at the phone ("solo": every step done, nobody leaves). */
export type Operator = "human" | "solo";

/** One episode of an agent with a persona; the world plays its own moves. */
export function playEpisode(bench: ServiceBenchmark, persona: Persona, agent: Agent | ((d: Dialogue) => number), rng: Rng, operator: Operator = "human"): Dialogue {
  const d: Dialogue = { card: persona.card, acts: [], hidden: persona.hidden };
  for (let t = bench.turn(d); t !== "done"; t = bench.turn(d)) {
    if (t === "env") d.acts.push(worldMove(hiddenOf(d), d.acts));
    else if (t === "agent") d.acts.push(agent(d, rng));
    else d.acts.push(operator === "solo" ? soloReply(d) : rng.categorical(bench.humans.replyProbs(persona.type, d)));
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
