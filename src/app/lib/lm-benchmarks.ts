// The benchmarks the LM lab can play (docs/architecture.md#the-lm-tier): every one whose module
// has an lm part, in the registry's order, the first being the default. Each is seen through that
// part (preset persona cards and dialogue states, prompts, outcomes) and its world at the default
// config, built once; a preset state under a card becomes the dialogue the LM answers.
import { BENCHMARK_IDS, benchmarkModule } from "../../benchmarks/registry";
import type { Benchmark, BenchmarkLm, BenchmarkModule, Dialogue } from "../../benchmarks/types";

export interface CardChoice {
  id: string; // e.g. "agreeable-high.caring-low.rational-high"
  card: number[];
  label: string; // the card in words, as the prompt says it
}

export interface StateChoice {
  id: string;
  label: string;
  acts: string[]; // act names; the user speaks next
}

/** A benchmark the lab can play: its module, lm part and world (default config). */
export interface LabBenchmark {
  id: string;
  module: BenchmarkModule;
  lm: BenchmarkLm;
  bench: Benchmark;
}

/** The benchmarks whose module has an lm part, in the registry's order; the first is the default. */
export const LAB_BENCHMARKS: readonly { id: string; title: string }[] = BENCHMARK_IDS.flatMap(
  (id) => {
    const m = benchmarkModule(id);
    return m.lm ? [{ id, title: m.title }] : [];
  },
);
export const LAB_BENCHMARK = LAB_BENCHMARKS[0].id;

const labs = new Map<string, LabBenchmark>();
/** The lab's view of a benchmark (built once). @throws on an unknown id or a benchmark without an lm part. */
export function labBenchmark(id: string): LabBenchmark {
  let b = labs.get(id);
  if (!b) {
    const m = benchmarkModule(id);
    if (!m.lm) throw new Error(`LM lab: the ${m.title} benchmark has no prompts for real LMs`);
    b = { id, module: m, lm: m.lm, bench: m.create(m.defaultWorld) };
    labs.set(id, b);
  }
  return b;
}

/** The default benchmark's preset persona cards. */
export const LM_CARDS: readonly CardChoice[] = labBenchmark(LAB_BENCHMARK).lm.cards;
/** The default benchmark's preset dialogue states (act names), each ending at the user's turn. */
export const LM_STATES: readonly StateChoice[] = labBenchmark(LAB_BENCHMARK).lm.states;

/** The state a benchmark's lab opens on: its first preset state where the user must state the outcome (else its first). */
export function defaultState(benchmark: string): string {
  const { lm } = labBenchmark(benchmark);
  const card = lm.cards[0].id;
  return (lm.states.find((s) => lm.decisionDue(labDialogue(card, s.id, benchmark))) ?? lm.states[0])
    .id;
}

export const DEFAULT_CARD = LM_CARDS[0].id;
export const DEFAULT_STATE = defaultState(LAB_BENCHMARK);

/** The dialogue of a preset state under a card. @throws on an unknown id or a state that is not the user's turn. */
export function labDialogue(
  cardId: string,
  stateId: string,
  benchmark: string = LAB_BENCHMARK,
): Dialogue {
  const { lm, bench, module } = labBenchmark(benchmark);
  const card = lm.cards.find((c) => c.id === cardId);
  const state = lm.states.find((s) => s.id === stateId);
  if (!card) throw new Error(`LM lab: no card ${JSON.stringify(cardId)}`);
  if (!state) throw new Error(`LM lab: no dialogue state ${JSON.stringify(stateId)}`);
  const actId = (name: string) => {
    const i = bench.acts.findIndex((a) => a.name === name);
    if (i < 0) throw new Error(`LM lab: unknown act ${name}`);
    return i;
  };
  const d: Dialogue = { card: [...card.card], acts: state.acts.map(actId) };
  if (bench.turn(d) !== "user")
    throw new Error(
      `LM lab: in state ${state.id} the ${module.roles.user.toLowerCase()} does not speak next`,
    );
  return d;
}
