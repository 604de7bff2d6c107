// The strategy measures (src/metrics/strategy.ts) on Service's reference agents with humans: the
// modal script with its blind fixes in random order, against the careful agent. Per-turn policy
// entropy sees the script's shuffling and nothing of the careful agent's adapting; the strategy
// measures read whole dialogues, as the final evaluation of a run does (service.strategy).
import { Rng } from "../../engine/random";
import { strategyMeasures, type StrategyMeasures } from "../../metrics/strategy";
import type { Dialogue } from "../types";
import { carefulAgent, shuffledScriptChoices } from "./agents";
import { outcomeOf, playEpisode, type ServiceBenchmark } from "./bench";
import { service } from "./index";

export interface AgentStrategies {
  agent: string;
  policyEntropy: number; // mean per-turn entropy of the agent's choice, nats (the paper's metric)
  success: number;
  left: number[]; // per latent type, the share of its customers who leave the call
  measures: StrategyMeasures;
}

/**
 * Both agents with the same `dialogues` humans (drawn from `seed`): a state's choice is uniform over
 * the acts the agent draws among, so its entropy is the log of their number (0 for one act).
 */
export function referenceStrategies(
  bench: ServiceBenchmark,
  dialogues = 8000,
  seed = 1,
): AgentStrategies[] {
  const { faultPrior, maxExchanges } = bench.params;
  const careful = carefulAgent(faultPrior, maxExchanges);
  const agents: [string, (d: Dialogue) => number[]][] = [
    ["blind script, fixes in random order", shuffledScriptChoices(faultPrior, maxExchanges)],
    ["careful agent", (d) => [careful(d)]],
  ];
  return agents.map(([agent, choices]) => {
    const people = Rng.seed(seed); // the same humans for both agents
    const rng = Rng.seed(seed).fork(1); // their replies, the world's moves and the agent's draws
    let entropy = 0;
    let turns = 0;
    let wins = 0;
    const types = bench.humans.types.map(() => ({ n: 0, left: 0 }));
    const observed = Array.from({ length: dialogues }, () => {
      const persona = bench.humans.sample(people);
      const d = playEpisode(
        bench,
        persona,
        (prefix, r) => {
          const options = choices(prefix);
          entropy += Math.log(options.length);
          turns++;
          return options[r.int(options.length)];
        },
        rng,
      );
      if (bench.success(d)) wins++;
      types[persona.type].n++;
      if (outcomeOf(d) === "customer left") types[persona.type].left++;
      return {
        strategy: service.strategy.signature(bench, d),
        task: service.strategy.task(bench, d),
        type: persona.type,
      };
    });
    return {
      agent,
      policyEntropy: entropy / turns,
      success: wins / dialogues,
      left: types.map((t) => t.left / t.n),
      measures: strategyMeasures(observed),
    };
  });
}
