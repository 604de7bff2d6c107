// Which condition (and which seed's policy) a player's n-th dialogue faces, hidden from the
// player and drawn from the study id and the player's id alone, so a class needs no server and a
// record can be checked against the scheme later. `blocks` (permuted blocks, as in clinical
// trials): every block of k dialogues shows each of the k conditions once, in a random order, so
// each player's counts differ by at most one and the class's are balanced; `random` draws each
// dialogue uniformly. The policy's sampling seed of a dialogue comes from the same inputs.
import type { ConditionId } from "../../experiment/config";
import { Rng } from "../../engine/random";
import type { Scheme } from "./play-link";

/** FNV-1a over the UTF-16 code units: a 32-bit integer seed from strings. */
export function hashSeed(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const ch of parts.join("\u0000")) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

export interface Assignment {
  condition: ConditionId;
  seed: number; // which of the run's seeds' policy of that condition plays
  sessionSeed: number; // seeds the policy's sampling in this dialogue
}

/** The assignment of dialogue `index` (0-based) of `player` in `study` (null: playing alone). */
export function assign(opts: {
  study: string | null;
  player: string;
  scheme: Scheme;
  conditions: readonly ConditionId[];
  seeds: (condition: ConditionId) => readonly number[];
  index: number;
}): Assignment {
  const { study, player, scheme, conditions, seeds, index } = opts;
  if (conditions.length === 0) throw new Error("assign: no conditions to choose from");
  const k = conditions.length;
  const tag = `${study ?? "solo"}/${player}`;
  let condition: ConditionId;
  if (scheme === "blocks") {
    const block = Math.floor(index / k);
    const rng = Rng.seed(hashSeed(tag, "block", block));
    const order = [...conditions];
    for (let i = k - 1; i > 0; i--) {
      const j = rng.int(i + 1); // Fisher–Yates
      [order[i], order[j]] = [order[j], order[i]];
    }
    condition = order[index % k];
  } else {
    condition = conditions[Rng.seed(hashSeed(tag, "draw", index)).int(k)];
  }
  const pool = seeds(condition);
  if (pool.length === 0) throw new Error(`assign: the run has no ${condition} policy`);
  const seed = pool[Rng.seed(hashSeed(tag, "seed", index)).int(pool.length)];
  return { condition, seed, sessionSeed: hashSeed(tag, "session", index) };
}
