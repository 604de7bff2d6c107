// "Same person, different policy": pairs the final dialogues two conditions had with humans.
// The runner draws the final evaluation's people from evalRng = Rng.seed(seed).fork(200), the
// same stream for every condition (src/experiment/runner.ts, "the same evaluation draws for every
// condition"), and `evaluate` draws the people of a batch (model capacity, rl.prompts ×
// rl.groupSize dialogues) before any turn of it is played, so the i-th recorded dialogue with
// humans of a seed is with the same person (persona card and latent type) in every condition —
// for i in the first batch. Later batches' people are drawn after the first batch was played,
// from a stream the policy's own draws have moved on, so they are not paired (with a small
// batch they may agree by chance). The pairing is also checked: a pair whose card or type differ
// is counted as unpaired and not shown.
import type { Benchmark, Dialogue, Speaker } from "../../benchmarks/types";
import { Rng } from "../../engine/random";
import type { ConditionId } from "../../experiment/config";
import type { RunReport } from "../../experiment/experiment";
import type { DialogueSample } from "../../experiment/runner";

export interface PersonPair {
  key: string; // `${seed}:${index}`
  seed: number;
  index: number; // among the seed's recorded dialogues with humans
  card: number[];
  type: number;
  a: DialogueSample;
  b: DialogueSample;
}

const humansOf = (report: RunReport, condition: ConditionId, seed: number) =>
  (
    report.conditions.find((c) => c.id === condition)?.seeds.find((s) => s.seed === seed)
      ?.samples ?? []
  ).filter((s) => s.opponent === "humans");

const samePerson = (x: DialogueSample, y: DialogueSample) =>
  x.type === y.type && x.card.length === y.card.length && x.card.every((c, i) => c === y.card[i]);

/**
 * The dialogues conditions a and b had with the same people, by (seed, index), for index below
 * `firstBatch` (the evaluation's batch size, `modelOptions(bench, config).capacity`); `later`
 * counts the recorded dialogues beyond it, `unpaired` those in it whose card or type disagree.
 */
export function pairSamples(
  report: RunReport,
  a: ConditionId,
  b: ConditionId,
  firstBatch: number,
): { pairs: PersonPair[]; unpaired: number; later: number } {
  const seeds = report.conditions.find((c) => c.id === a)?.seeds.map((s) => s.seed) ?? [];
  const pairs: PersonPair[] = [];
  let unpaired = 0;
  let later = 0;
  for (const seed of seeds) {
    const xs = humansOf(report, a, seed);
    const ys = humansOf(report, b, seed);
    const n = Math.min(xs.length, ys.length);
    for (let i = 0; i < n; i++) {
      if (i >= firstBatch) later++;
      else if (samePerson(xs[i], ys[i]))
        pairs.push({
          key: `${seed}:${i}`,
          seed,
          index: i,
          card: xs[i].card,
          type: xs[i].type,
          a: xs[i],
          b: ys[i],
        });
      else unpaired++;
    }
  }
  return { pairs, unpaired, later };
}

export interface Turn {
  speaker: Speaker;
  act: string;
  text: string;
}

/**
 * Both dialogues as text, worded with the same seeded draws (so an act said at the same turn on
 * both sides reads the same), and the first turn where the acts differ (-1: identical).
 */
export function renderPair(
  bench: Benchmark,
  pair: PersonPair,
): { a: Turn[]; b: Turn[]; firstDifference: number } {
  const words = (s: DialogueSample) =>
    bench.render(
      { card: s.card, acts: s.acts } satisfies Dialogue,
      Rng.seed(pair.seed).fork(70_000 + pair.index),
    );
  const n = Math.max(pair.a.acts.length, pair.b.acts.length);
  let firstDifference = -1;
  for (let t = 0; t < n; t++) {
    if (pair.a.acts[t] !== pair.b.acts[t]) {
      firstDifference = t;
      break;
    }
  }
  return { a: words(pair.a), b: words(pair.b), firstDifference };
}
