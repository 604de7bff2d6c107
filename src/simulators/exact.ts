// The exact simulator of a simulator family: the Bayes predictive of the population its corpus was
// drawn from (a type mixture of its own), collapsed to its γ as an aligned network is (p^γ over the
// allowed replies). It is what a family's network approaches with an unlimited corpus and model, so
// properties of a panel (whose users each family collapses onto, how far it separates two agents)
// can be computed from the world alone, before any network is pretrained. Personas are the
// evaluation world's cards, as a network member of the panel gets.
import type { Benchmark, Dialogue, Persona } from "../benchmarks/types";
import type { Rng } from "../engine/random";
import { cardPersonas, drawRows, type UserSimulator } from "./simulator";

export class SharpenedPredictive implements UserSimulator {
  readonly #cache = new Map<string, Float64Array>(); // per dialogue state: the distribution is fixed

  /**
   * @param bench the world the simulator plays in (its cards)
   * @param family the world of the family's corpus: `bench` with the family's type mixture
   * @param gamma the family's sharpness (1: the predictive itself)
   */
  constructor(
    readonly name: string,
    readonly bench: Benchmark,
    readonly family: Benchmark,
    readonly gamma: number,
  ) {}

  personas(n: number, rng: Rng): Persona[] {
    return cardPersonas(this.bench, n, rng);
  }

  async distribution(dialogues: Dialogue[]): Promise<Float64Array> {
    const V = this.bench.acts.length;
    const out = new Float64Array(dialogues.length * V);
    dialogues.forEach((d, b) => out.set(this.#at(d), b * V));
    return out;
  }

  async reply(dialogues: Dialogue[], _personas: Persona[], rng: Rng): Promise<Int32Array> {
    return drawRows(
      await this.distribution(dialogues),
      dialogues.length,
      this.bench.acts.length,
      rng,
    );
  }

  #at(d: Dialogue): Float64Array {
    const key = `${d.card.join(",")}|${d.acts.join(",")}`;
    let q = this.#cache.get(key);
    if (!q) this.#cache.set(key, (q = sharpen(this.family.bayesPredictive(d), this.gamma)));
    return q;
  }
}

/** p^γ renormalised (zeros stay zero), computed in log space so that large γ cannot underflow the mode. */
export function sharpen(p: ArrayLike<number>, gamma: number): Float64Array {
  let top = -Infinity;
  for (let i = 0; i < p.length; i++) if (p[i] > 0) top = Math.max(top, Math.log(p[i]));
  const q = Float64Array.from(p, (x) => (x > 0 ? Math.exp(gamma * (Math.log(x) - top)) : 0));
  const total = q.reduce((a, b) => a + b, 0);
  return q.map((x) => x / total);
}
