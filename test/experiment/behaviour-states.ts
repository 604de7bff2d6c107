// Shared by the γ = 1 tests: the customer-side states of Persuasion dialogues between sampled
// humans and the behaviour persuader, where the simulators' reply distributions are compared.
import { behaviourDialogue, type createPersuasion } from "../../src/benchmarks/persuasion/bench";
import type { Dialogue } from "../../src/benchmarks/types";
import { Rng } from "../../src/engine/random";

/** Every user-turn prefix (talk turns and the decision) of n such dialogues, drawn from `seed`. */
export function userStates(
  bench: ReturnType<typeof createPersuasion>,
  n: number,
  seed: number,
): Dialogue[] {
  const rng = Rng.seed(seed);
  const out: Dialogue[] = [];
  for (let i = 0; i < n; i++) {
    const d = behaviourDialogue(bench.humans, bench.humans.sample(rng), rng);
    for (let k = 1; k <= d.acts.length; k++) {
      const prefix = { card: d.card, acts: d.acts.slice(0, k) };
      if (bench.turn(prefix) === "user") out.push(prefix);
    }
  }
  return out;
}
