// Neural user simulators: the reference (π_ref, pretrained on the human corpus with the card as
// prefix), the aligned simulator (logits × γ: π_ref^γ, the closed-form RLHF optimum of docs/architecture.md#the-science),
// co-trained simulators and their pool snapshots, and the held-out panel. A frozen simulator
// caches distributions per dialogue prefix and skips the model when every row is cached (the
// first user turn of a batch usually is).
import type { Benchmark, Dialogue, Persona } from "../benchmarks/types";
import type { EngineModel } from "../engine/backend";
import type { Checkpoint } from "../engine/checkpoint";
import { paramSpecs } from "../engine/config";
import type { Rng } from "../engine/random";
import { nextActLogprobs } from "../benchmarks/encode";
import { cardPersonas, drawRows, type UserSimulator } from "./simulator";

export class NeuralSimulator implements UserSimulator {
  readonly #caches: Map<number, Map<string, Float64Array>> | null; // per logit scale

  /**
   * @param gamma logit scale at sampling time (1: the reference itself)
   * @param frozen the model will not change, so distributions may be cached
   */
  constructor(
    readonly name: string,
    readonly bench: Benchmark,
    readonly model: EngineModel,
    readonly gamma: number,
    frozen: boolean,
  ) {
    this.#caches = frozen ? new Map() : null;
  }

  personas(n: number, rng: Rng): Persona[] {
    return cardPersonas(this.bench, n, rng);
  }

  /** p(next user act) under this simulator, at logit scale `gamma` (default: the simulator's own γ). */
  async distribution(
    dialogues: Dialogue[],
    _personas?: Persona[],
    gamma = this.gamma,
  ): Promise<Float64Array> {
    const V = this.bench.acts.length;
    const out = new Float64Array(dialogues.length * V);
    let cache = this.#caches?.get(gamma);
    if (this.#caches && !cache) this.#caches.set(gamma, (cache = new Map()));
    const keys = cache ? dialogues.map((d) => `${d.card.join(",")}|${d.acts.join(",")}`) : [];
    if (cache && keys.every((k) => cache.has(k))) {
      keys.forEach((k, b) => out.set(cache.get(k)!, b * V));
      return out;
    }
    // Every row, not only the missing ones: the incremental decoder then feeds each dialogue one
    // turn at a time instead of catching up over the turns it was served from the cache.
    const lp = await nextActLogprobs(this.bench, this.model, dialogues, "simulator", {
      logitScale: gamma,
    });
    for (let i = 0; i < out.length; i++) out[i] = Math.exp(lp[i]);
    keys.forEach((k, b) => cache!.set(k, out.slice(b * V, (b + 1) * V)));
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

/** A checkpoint whose output logits are multiplied by γ: sampling it at scale 1 is π_ref^γ. */
export function bakeGamma(ck: Checkpoint, gamma: number): Checkpoint {
  const names = new Set(["head.w", "head.b"]);
  const specs = paramSpecs(ck.config);
  return {
    format: ck.format,
    config: { ...ck.config },
    tensors: ck.tensors.map((t, i) => ({
      name: t.name,
      shape: [...t.shape],
      data: names.has(specs[i].name) ? t.data.map((x) => x * gamma) : t.data.slice(),
    })),
  };
}
