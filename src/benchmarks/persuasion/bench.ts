// The Persuasion benchmark object (the Benchmark interface of ../types.ts) and episode play: a
// human of the population with the behaviour persuader.
import type { Rng } from "../../engine/random";
import type { Benchmark, Dialogue, Persona } from "../types";
import { renderActs } from "../scaffold";
import { behaviourAgent, DEFAULT_STYLE_CONCENTRATION, persuaderStyle } from "./agents";
import { DEFAULT_PARAMS, PersuasionPopulation, type PersuasionParams } from "./population";
import {
  ACTS,
  CARD_LEN,
  CLASS,
  CONTEXT,
  MASK_CLASSES,
  USER_ACTS,
  VOCAB,
  donation,
  reward,
  success,
  turn,
  userClass,
} from "./world";

export function createPersuasion(
  params: PersuasionParams = DEFAULT_PARAMS,
): Benchmark & { humans: PersuasionPopulation } {
  const population = new PersuasionPopulation(params);
  return {
    id: "persuasion",
    title: "Persuasion (after Persuasion for Good)",
    acts: ACTS,
    cardLen: CARD_LEN,
    context: CONTEXT,
    maskClasses: MASK_CLASSES,
    humans: population,
    userClass,
    agentClass: () => CLASS.agent,
    turn,
    reward,
    success,
    bayesPredictive(d) {
      const post = population.posterior(d);
      const p = new Float64Array(VOCAB);
      post.forEach((w, z) => {
        if (w === 0) return;
        const r = population.replyProbs(z, d);
        for (let v = 0; v < VOCAB; v++) p[v] += w * r[v];
      });
      return p;
    },
    mode(d) {
      // the user's two most frequent talk acts and the outcome: a coarse behavioural "style"
      // (the toy's analogue of SCOPE's embedding clusters)
      const counts = new Map<string, number>();
      d.acts.forEach((a, i) => {
        if (i % 2 === 1 && USER_ACTS.includes(a))
          counts.set(ACTS[a].name, (counts.get(ACTS[a].name) ?? 0) + 1);
      });
      const talk = [...counts.entries()]
        .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
        .slice(0, 2)
        .map(([n]) => n)
        .sort();
      const given = donation(d);
      return `${talk.join(">") || "-"}|${given === 0 ? "$0" : given < 1 ? "<$1" : "≥$1"}`;
    },
    render: (d, rng) =>
      renderActs(ACTS, d, rng, (prefix) => (turn(prefix) === "agent" ? "agent" : "user")),
  };
}

export function behaviourDialogue(
  population: PersuasionPopulation,
  persona: Persona,
  rng: Rng,
  styleConcentration = DEFAULT_STYLE_CONCENTRATION,
): Dialogue {
  const d: Dialogue = { card: persona.card, acts: [] };
  const style = styleConcentration > 0 ? persuaderStyle(rng, styleConcentration) : undefined;
  for (let t = turn(d); t !== "done"; t = turn(d)) {
    d.acts.push(
      t === "agent"
        ? behaviourAgent(d, rng, style)
        : rng.categorical(population.replyProbs(persona.type, d)),
    );
  }
  return d;
}
