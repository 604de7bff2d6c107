// Success with the humans of each latent type: a trained policy evaluated against the hand-written
// population conditioned on one type at a time, which a run's report does not break down (its
// humans are the population's mix). The mix of the per-type rates, weighted by the types' priors,
// estimates the same success as the report's humans column, with other draws.
import type { Benchmark, Dialogue, Persona } from "../benchmarks/types";
import { Rng } from "../engine/random";
import { Humans, type UserSimulator } from "../simulators/simulator";
import { evaluate } from "./runner";

/** A population's person cannot be drawn with this type after this many tries. */
const MAX_TRIES_PER_PERSONA = 100_000;

/** The humans of one latent type: the population's people, drawn conditioned on their type. */
export class TypeHumans implements UserSimulator {
  readonly name: string;
  readonly #humans: Humans;

  constructor(
    readonly bench: Benchmark,
    readonly type: number,
  ) {
    this.#humans = new Humans(bench);
    const types = bench.humans.types;
    if (!Number.isInteger(type) || type < 0 || type >= types.length)
      throw new Error(`no latent type ${type}: the population has ${types.length}`);
    if (!(types[type].prior > 0))
      throw new Error(`latent type ${types[type].name} has prior 0: none of its people exist`);
    this.name = `humans:${types[type].name}`;
  }

  /** Rejection sampling from the population: exactly its people of this type, cards and all. */
  personas(n: number, rng: Rng): Persona[] {
    return Array.from({ length: n }, () => {
      for (let i = 0; i < MAX_TRIES_PER_PERSONA; i++) {
        const p = this.bench.humans.sample(rng);
        if (p.type === this.type) return p;
      }
      throw new Error(`no person of type ${this.name} in ${MAX_TRIES_PER_PERSONA} draws`);
    });
  }

  distribution(dialogues: Dialogue[], personas: Persona[]): Promise<Float64Array> {
    return this.#humans.distribution(dialogues, personas);
  }

  reply(dialogues: Dialogue[], personas: Persona[], rng: Rng): Promise<Int32Array> {
    return this.#humans.reply(dialogues, personas, rng);
  }
}

/** The draws of a by-type evaluation at a seed: the same for every condition of that seed. */
export function byTypeRng(seed: number): Rng {
  return Rng.seed(seed).fork(300);
}

export interface TypeSuccess {
  type: string;
  prior: number;
  dialogues: number;
  success: number;
}

/** Success of `policy` with the humans of each latent type, `perType` dialogues each. */
export async function successByType(
  bench: Benchmark,
  policy: Parameters<typeof evaluate>[1],
  perType: number,
  rng: Rng,
  temperature: number,
  capacity: number,
): Promise<{ types: TypeSuccess[]; mix: number }> {
  if (!(Number.isInteger(perType) && perType > 0))
    throw new Error(`dialogues per type must be a positive integer, not ${perType}`);
  const types: TypeSuccess[] = [];
  for (const [z, t] of bench.humans.types.entries()) {
    if (!(t.prior > 0)) continue;
    const { outcome } = await evaluate(
      bench,
      policy,
      new TypeHumans(bench, z),
      perType,
      rng.fork(z),
      temperature,
      capacity,
    );
    types.push({ type: t.name, prior: t.prior, dialogues: perType, success: outcome.success });
  }
  const mass = types.reduce((a, t) => a + t.prior, 0);
  return { types, mix: types.reduce((a, t) => a + (t.prior / mass) * t.success, 0) };
}
