// A population of simulators drawn per episode (`population.draw: "episode"`): each persona is
// assigned a member when it is drawn and that member plays every one of its user turns.
import type { Persona } from "../benchmarks/types";
import type { Rng } from "../engine/random";
import type { UserSimulator } from "./simulator";

/** A population drawn per episode: each persona is played by the member it was assigned. */
export class RoutedSimulator implements UserSimulator {
  readonly name: string;
  constructor(readonly members: UserSimulator[]) {
    this.name = `per-episode draw from ${members.length} simulators`;
  }
  personas(n: number, rng: Rng): Persona[] {
    return this.members[0]
      .personas(n, rng)
      .map((p) => ({ ...p, member: rng.int(this.members.length) }));
  }
  async distribution(): Promise<Float64Array> {
    throw new Error("a per-episode population has no single distribution");
  }
  async reply(
    dialogues: Parameters<UserSimulator["reply"]>[0],
    personas: Persona[],
    rng: Rng,
  ): Promise<Int32Array> {
    const out = new Int32Array(dialogues.length);
    for (let m = 0; m < this.members.length; m++) {
      const rows = personas.flatMap((p, b) => (p.member === m ? [b] : []));
      if (rows.length === 0) continue;
      const acts = await this.members[m].reply(
        rows.map((b) => dialogues[b]),
        rows.map((b) => personas[b]),
        rng,
      );
      rows.forEach((b, j) => (out[b] = acts[j]));
    }
    return out;
  }
}
