// A user simulator answers the agent: given dialogues so far, it gives the distribution of each
// user's next act and draws one. Humans (the ground-truth population), the exact Bayes
// predictive, neural simulators (reference, aligned, co-trained, pool snapshots, panel) and
// Verbalized Sampling all implement this one interface, so conditions differ only in which
// simulator they train against.
import type { Benchmark, Dialogue, Persona } from "../benchmarks/types";
import type { Rng } from "../engine/random";

export interface UserSimulator {
  readonly name: string;
  /** Personas for n new dialogues (humans draw latent types; simulators only get cards). */
  personas(n: number, rng: Rng): Persona[];
  /** p(next user act) for each dialogue, [rows, V] probabilities. */
  distribution(dialogues: Dialogue[], personas: Persona[]): Promise<Float64Array>;
  /** The next user act of each dialogue. */
  reply(dialogues: Dialogue[], personas: Persona[], rng: Rng): Promise<Int32Array>;
}

/** Draws one act per row from a [rows, V] probability table. */
export function drawRows(p: Float64Array, rows: number, V: number, rng: Rng): Int32Array {
  const out = new Int32Array(rows);
  for (let b = 0; b < rows; b++) out[b] = rng.categorical(p.subarray(b * V, (b + 1) * V));
  return out;
}

/** Personas for simulators: cards from the population's card distribution, type unknown (−1). */
export function cardPersonas(bench: Benchmark, n: number, rng: Rng): Persona[] {
  const cards = bench.humans.cardDistribution();
  const weights = cards.map((c) => c.p);
  const hidden = bench.humans.sampleHidden?.bind(bench.humans);
  return Array.from({ length: n }, () => {
    const card = [...cards[rng.categorical(weights)].card];
    return hidden ? { card, type: -1, hidden: hidden(rng) } : { card, type: -1 };
  });
}

/** The ground-truth human population: each dialogue has a latent type that drives it. */
export class Humans implements UserSimulator {
  readonly name = "humans";
  constructor(readonly bench: Benchmark) {}

  personas(n: number, rng: Rng): Persona[] {
    return Array.from({ length: n }, () => this.bench.humans.sample(rng));
  }

  async distribution(dialogues: Dialogue[], personas: Persona[]): Promise<Float64Array> {
    const V = this.bench.acts.length;
    const out = new Float64Array(dialogues.length * V);
    dialogues.forEach((d, b) => out.set(this.bench.humans.replyProbs(personas[b].type, d), b * V));
    return out;
  }

  async reply(dialogues: Dialogue[], personas: Persona[], rng: Rng): Promise<Int32Array> {
    return drawRows(
      await this.distribution(dialogues, personas),
      dialogues.length,
      this.bench.acts.length,
      rng,
    );
  }
}

/** The exact Bayes predictive of the population given the card and the dialogue (the oracle simulator). */
export class BayesPredictive implements UserSimulator {
  readonly name = "bayes-predictive";
  constructor(readonly bench: Benchmark) {}

  personas(n: number, rng: Rng): Persona[] {
    return cardPersonas(this.bench, n, rng);
  }

  async distribution(dialogues: Dialogue[]): Promise<Float64Array> {
    const V = this.bench.acts.length;
    const out = new Float64Array(dialogues.length * V);
    dialogues.forEach((d, b) => out.set(this.bench.bayesPredictive(d), b * V));
    return out;
  }

  async reply(dialogues: Dialogue[], personas: Persona[], rng: Rng): Promise<Int32Array> {
    return drawRows(
      await this.distribution(dialogues),
      dialogues.length,
      this.bench.acts.length,
      rng,
    );
  }
}
