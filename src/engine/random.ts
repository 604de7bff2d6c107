// Seeded randomness for the engine. Every random draw in engine code goes through an Rng
// derived from a config seed; the global unseeded generator is never used.
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";

type RandomGenerator = ReturnType<typeof xoroshiro128plus>;

const WARMUP = 20;

/** MurmurHash3's 32-bit finaliser: every input bit affects every output bit. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

export class Rng {
  readonly #gen: RandomGenerator;
  #spare: number | null = null; // second Box–Muller normal

  private constructor(gen: RandomGenerator) {
    this.#gen = gen;
  }

  static seed(seed: number): Rng {
    if (!Number.isInteger(seed)) throw new Error(`seed must be an integer, got ${seed}`);
    // pure-rand fills xoroshiro's state straight from the seed's bits, so small seeds start in
    // a near-zero, structured state and neighbouring seeds give correlated streams: hash the
    // seed (murmur3's finaliser) and discard the first outputs while the state mixes
    const gen = xoroshiro128plus(fmix32(seed ^ 0x9e3779b9));
    for (let i = 0; i < WARMUP; i++) gen.next();
    return new Rng(gen);
  }

  /** A child stream; advances this one, so the order of splits is part of the seed. */
  split(): Rng {
    return Rng.seed(this.#gen.next() ^ this.#gen.next());
  }

  /** A child stream labelled by `label`, independent of how often this one was used. */
  fork(label: number): Rng {
    const g = this.#gen.clone();
    return Rng.seed(g.next() ^ Math.imul(label + 1, 0x9e3779b1));
  }

  /** Uniform in [0, 1). */
  uniform(): number {
    return uniformFloat64(this.#gen);
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.min(n - 1, Math.floor(this.uniform() * n));
  }

  normal(): number {
    if (this.#spare !== null) {
      const s = this.#spare;
      this.#spare = null;
      return s;
    }
    const u = 1 - this.uniform(); // (0, 1]
    const v = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.#spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Index drawn from the distribution with log-probabilities logp[off … off+n−1]. */
  categoricalLog(logp: ArrayLike<number>, off = 0, n = logp.length - off): number {
    let u = this.uniform();
    let last = -1;
    for (let i = 0; i < n; i++) {
      const p = Math.exp(logp[off + i]);
      if (p > 0) last = i;
      u -= p;
      if (u < 0) return i;
    }
    if (last < 0) throw new Error("categorical: every option has probability 0");
    return last; // rounding left a sliver of mass: give it to the last possible option
  }

  /** Index drawn from unnormalised non-negative weights. */
  categorical(weights: ArrayLike<number>): number {
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i];
    if (!(total > 0)) throw new Error("categorical: weights sum to 0");
    let u = this.uniform() * total;
    let last = 0;
    for (let i = 0; i < weights.length; i++) {
      if (weights[i] > 0) last = i;
      u -= weights[i];
      if (u < 0) return i;
    }
    return last;
  }
}
