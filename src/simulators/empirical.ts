// An empirical population (docs/humans.md#the-empirical-population): the people of an imported
// dialogue corpus as a user simulator. At a dialogue state it answers with what the corpus' people
// said there: the frequencies of their replies at the same state (the whole history of acts) when
// at least `minCount` of them reached it. A policy goes where few or none of them went, so the
// estimate then backs off, as an n-gram model does, to shorter histories: the last exchange (the
// agent's act before, the user's reply to it, the agent's act now), the agent's last act alone,
// and the replies of that kind at any state (the act marginal; uniform if the corpus has none).
// Every reply is counted at the level that gave it, so a report can say how much backed off.
import type { Benchmark, Dialogue, Persona } from "../benchmarks/types";
import type { CorpusDialogue } from "../benchmarks/dialogue-file";
import type { Rng } from "../engine/random";
import { drawRows, type UserSimulator } from "./simulator";

/** The levels, most specific first: what a reply was conditioned on. */
export const BACKOFF_LEVELS = [
  "state",
  "last exchange",
  "last act",
  "marginal",
  "uniform",
] as const;
export type BackoffLevel = (typeof BACKOFF_LEVELS)[number];
/** How many acts of the history each level keeps (Infinity: all; 0: none). */
const SUFFIX = [Infinity, 3, 1, 0] as const;

/** User turns answered at each level (the policy's dialogues with the corpus' people). */
export interface BackoffUsage {
  turns: number;
  levels: Record<BackoffLevel, number>;
}

export function emptyUsage(): BackoffUsage {
  return {
    turns: 0,
    levels: Object.fromEntries(BACKOFF_LEVELS.map((l) => [l, 0])) as Record<BackoffLevel, number>,
  };
}

/** Sums usages (e.g. over seeds or conditions). */
export function addUsage(a: BackoffUsage, b: BackoffUsage): BackoffUsage {
  const out = emptyUsage();
  out.turns = a.turns + b.turns;
  for (const l of BACKOFF_LEVELS) out.levels[l] = a.levels[l] + b.levels[l];
  return out;
}

/** The context key of a state at a level, or null when the history is no longer than the level keeps. */
function contextKey(cls: number, acts: readonly number[], level: number): string | null {
  const keep = SUFFIX[level];
  if (level > 0 && keep > 0 && acts.length <= keep) return null; // the same as a longer level
  return `${cls}|${keep === 0 ? "" : acts.slice(-keep).join(",")}`;
}

/** Reply counts of the corpus' people at every state and every shorter context of it. */
export class EmpiricalTable {
  readonly #counts = new Map<string, { n: number; replies: Float64Array }>();
  readonly dialogues: readonly CorpusDialogue[];

  constructor(
    readonly bench: Benchmark,
    dialogues: readonly CorpusDialogue[],
  ) {
    if (dialogues.length === 0) throw new Error("an empirical population needs dialogues");
    this.dialogues = dialogues;
    const V = bench.acts.length;
    for (const d of dialogues)
      for (let i = 0; i < d.acts.length; i++) {
        const prefix: Dialogue = { card: d.card ?? [], acts: d.acts.slice(0, i) };
        if (bench.turn(prefix) !== "user") continue;
        const cls = bench.userClass(prefix);
        for (let level = 0; level < SUFFIX.length; level++) {
          const key = contextKey(cls, prefix.acts, level);
          if (key === null) continue;
          let c = this.#counts.get(key);
          if (!c) this.#counts.set(key, (c = { n: 0, replies: new Float64Array(V) }));
          c.n++;
          c.replies[d.acts[i]]++;
        }
      }
  }

  /** The reply distribution at a user-turn state and the level it came from. */
  predict(d: Dialogue, minCount: number): { p: Float64Array; level: BackoffLevel } {
    const cls = this.bench.userClass(d);
    for (let level = 0; level < SUFFIX.length; level++) {
      const key = contextKey(cls, d.acts, level);
      const c = key === null ? undefined : this.#counts.get(key);
      // the marginal needs only one reply; a longer context needs minCount people
      if (c && c.n >= (SUFFIX[level] === 0 ? 1 : minCount))
        return { p: c.replies.map((x) => x / c.n), level: BACKOFF_LEVELS[level] };
    }
    const allowed = this.bench.maskClasses[cls].allowed;
    const p = new Float64Array(this.bench.acts.length);
    for (const a of allowed) p[a] = 1 / allowed.length;
    return { p, level: "uniform" };
  }
}

/**
 * The corpus' people as a user simulator: a persona is one of them, drawn uniformly (their card, or
 * one drawn from the benchmark's cards where the corpus gives none; no latent type, −1), and every
 * reply comes from the table at `minCount`. `usage` counts the levels of the replies it gave.
 */
export class EmpiricalSimulator implements UserSimulator {
  readonly usage = emptyUsage();

  constructor(
    readonly name: string,
    readonly table: EmpiricalTable,
    readonly minCount: number,
  ) {}

  personas(n: number, rng: Rng): Persona[] {
    const people = this.table.dialogues;
    const cards = this.table.bench.humans.cardDistribution();
    const weights = cards.map((c) => c.p);
    return Array.from({ length: n }, () => {
      const person = people[rng.int(people.length)];
      const card = person.card ?? cards[rng.categorical(weights)].card;
      return { card: [...card], type: -1 };
    });
  }

  async distribution(dialogues: Dialogue[]): Promise<Float64Array> {
    const V = this.table.bench.acts.length;
    const out = new Float64Array(dialogues.length * V);
    dialogues.forEach((d, b) => {
      const { p, level } = this.table.predict(d, this.minCount);
      out.set(p, b * V);
      this.usage.turns++;
      this.usage.levels[level]++;
    });
    return out;
  }

  async reply(dialogues: Dialogue[], _personas: Persona[], rng: Rng): Promise<Int32Array> {
    const V = this.table.bench.acts.length;
    return drawRows(await this.distribution(dialogues), dialogues.length, V, rng);
  }
}
