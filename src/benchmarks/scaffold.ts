// Shapes the benchmarks share, inside src/benchmarks only: a world's population parameters from its
// config section, a checked narrowing to one benchmark's own object, the Benchmark fields and the
// rendering of a turn-taking world with a reply class, reference agents' success by Monte Carlo,
// and the families of the held-out panel and the ensemble, which differ between benchmarks only in
// their type mixtures.
import { Rng } from "../engine/random";
import type {
  ActDef,
  Benchmark,
  Dialogue,
  HumanPopulation,
  MaskClass,
  Persona,
  Speaker,
  Turn,
} from "./types";

/** The `world` settings of a benchmark whose episodes have a length, noisy persona cards and slips. */
export interface ExchangeWorld {
  maxExchanges: number;
  cardInformativeness: number;
  noise: number;
}

/**
 * A population's parameters for a `world` section: its episode length, card informativeness and
 * slips, and its types' prior replaced by `weights` (normalised) where given.
 */
export function worldParams<P extends ExchangeWorld & { types: { prior: number }[] }>(
  defaults: P,
  world: ExchangeWorld,
  weights: number[] | undefined,
): P {
  const total = weights?.reduce((a, b) => a + b, 0);
  if (weights && !(total! > 0)) throw new Error("a type prior needs some positive weight");
  return {
    ...defaults,
    maxExchanges: world.maxExchanges,
    cardInformativeness: world.cardInformativeness,
    noise: world.noise,
    types: defaults.types.map((t, z) => ({ ...t, prior: weights ? weights[z] / total! : t.prior })),
  };
}

/** The Benchmark interface narrowed to one benchmark's own object, checked by its id. */
export function narrowTo<B extends Benchmark>(id: string): (bench: Benchmark) => B {
  return (bench) => {
    if (bench.id !== id) throw new Error(`not the ${id} benchmark: ${bench.id}`);
    return bench as B;
  };
}

/** What a world of alternating turns, with a reply class that also covers the world's own moves, is made of. */
export interface TurnTakingWorld {
  acts: ActDef[];
  cardLen: number;
  maskClasses: MaskClass[];
  agentClass: number; // the mask class of every agent act
  maxContext: number; // the engine's longest sequence
  contextFor(maxExchanges: number): number;
  turnOf(acts: number[], maxExchanges: number): Turn;
  replyClass(acts: number[]): number;
}

/**
 * The Benchmark fields such a world shares for a population and its parameters: the context its
 * episode length needs (checked against the engine's), the mask classes, and whose turn it is.
 */
export function turnTakingFields<H extends HumanPopulation, P extends { maxExchanges: number }>(
  w: TurnTakingWorld,
  humans: H,
  params: P,
) {
  const context = w.contextFor(params.maxExchanges);
  if (context > w.maxContext)
    throw new Error(
      `maxExchanges ${params.maxExchanges} needs context ${context} > ${w.maxContext}`,
    );
  const turn = (d: Dialogue) => w.turnOf(d.acts, params.maxExchanges);
  return {
    acts: w.acts,
    cardLen: w.cardLen,
    context,
    maskClasses: w.maskClasses,
    humans,
    params,
    // the class of any non-agent move: the user's reply, or (turn "env") the world's
    userClass: (d: Dialogue) => w.replyClass(d.acts),
    agentClass: () => w.agentClass,
    turn,
  };
}

/** Who says an act, from whose turn it was: the agent, the user, or the world. */
export const speakerOfTurn = (who: Turn): Speaker =>
  who === "agent" ? "agent" : who === "user" ? "user" : "env";

/** A dialogue as readable lines: each act said by `speakerAt` its prefix, in a template drawn by `rng` (the first without one). */
export function renderActs(
  acts: ActDef[],
  d: Dialogue,
  rng: Rng | undefined,
  speakerAt: (prefix: Dialogue) => Speaker,
): { speaker: Speaker; act: string; text: string }[] {
  return d.acts.map((a, i) => {
    const t = acts[a].templates;
    const speaker = speakerAt({ card: d.card, acts: d.acts.slice(0, i) });
    return { speaker, act: acts[a].name, text: t[rng ? rng.int(t.length) : 0] };
  });
}

/**
 * An agent's success with humans of the population (or of one type alone), by Monte Carlo with a
 * fixed seed: `play` plays one episode with a persona.
 */
export function monteCarloSuccess(
  bench: Benchmark,
  play: (persona: Persona, rng: Rng) => Dialogue,
  episodes: number,
  onlyType: number | undefined,
  seed: number,
): number {
  const rng = Rng.seed(seed);
  let wins = 0;
  for (let i = 0; i < episodes; i++) {
    const persona = bench.humans.sample(rng);
    if (onlyType !== undefined) persona.type = onlyType;
    if (bench.success(play(persona, rng))) wins++;
  }
  return wins / episodes;
}

/** A function of a benchmark's world computed once per world (reference lines are Monte Carlo). */
export function oncePerBenchmark<T>(compute: (bench: Benchmark) => T): (bench: Benchmark) => T {
  const cache = new WeakMap<Benchmark, T>();
  return (bench) => {
    const cached = cache.get(bench);
    if (cached !== undefined) return cached;
    const value = compute(bench);
    cache.set(bench, value);
    return value;
  };
}

/** The population's most common latent type: its index and name. */
export function modalType(humans: HumanPopulation): { index: number; name: string } {
  const prior = humans.types.map((t) => t.prior);
  const index = prior.indexOf(Math.max(...prior));
  return { index, name: humans.types[index].name };
}

// the two held-out families whose corpora have the humans' mixture: in every panel
const FAMILY_A = { name: "family-a", gamma: 4, corpusScale: 1, seedOffset: 101 };
const FAMILY_E = { name: "family-e", gamma: 15, corpusScale: 0.25, seedOffset: 105 };

/**
 * The held-out panel of every benchmark: five families, as other LLMs would be, of other sharpness
 * (γ), corpus sizes and pretraining seeds; families b, c and d learn from corpora that lean to other
 * latent types, whose mixtures (in the benchmark's type order) are `priors`.
 */
export function heldOutPanel(priors: { b: number[]; c: number[]; d: number[] }) {
  return [
    { ...FAMILY_A },
    { name: "family-b", gamma: 8, prior: priors.b, corpusScale: 1, seedOffset: 102 },
    { name: "family-c", gamma: 6, prior: priors.c, corpusScale: 0.5, seedOffset: 103 },
    { name: "family-d", gamma: 3, prior: priors.d, corpusScale: 0.5, seedOffset: 104 },
    { ...FAMILY_E },
  ];
}

/**
 * SCOPE's ensemble of three model families: the single simulator's and two others, f and g, whose
 * corpora lean to other latent types (`priors`, in the benchmark's type order), sized and sharpened
 * like the panel's members but none of them (validateConfig checks).
 */
export function ensembleFamilies(priors: { f: number[]; g: number[] }) {
  return {
    k: 3,
    members: [
      { name: "family-f", gamma: 5, prior: priors.f, corpusScale: 0.75, seedOffset: 201 },
      { name: "family-g", gamma: 12, prior: priors.g, corpusScale: 0.5, seedOffset: 202 },
    ],
  };
}

/** Which acts of a dialogue were the agent's (whose turn each was is `turn` of the prefix before it). */
function agentActIndices(bench: Benchmark, d: Dialogue): number[] {
  return d.acts.flatMap((_, i) =>
    bench.turn({ card: d.card, acts: d.acts.slice(0, i), hidden: d.hidden }) === "agent" ? [i] : [],
  );
}

/**
 * The strategy signature "the set of the agent's acts": which acts it used, each once, by name in
 * vocabulary order, so neither their order nor a repeat (a retry) makes another strategy.
 */
export function agentActSet(bench: Benchmark, d: Dialogue): string {
  const used = new Set(agentActIndices(bench, d).map((i) => d.acts[i]));
  return [...used]
    .sort((a, b) => a - b)
    .map((a) => bench.acts[a].name)
    .join(" ");
}

/** The world's acts before the agent's first move (what the agent is given at the start), by name. */
export function openingActs(bench: Benchmark, d: Dialogue): string {
  const first = agentActIndices(bench, d)[0] ?? d.acts.length;
  return d.acts
    .slice(0, first)
    .map((a) => bench.acts[a].name)
    .join(" ");
}

/** A family's corpus mixture under the own-modes rule: weight p on `type`, the rest in the humans' proportions. */
export function leaningPrior(humans: readonly number[], type: number, p: number): number[] {
  if (!(p > 0 && p < 1)) throw new Error(`a family's weight on its type is in (0, 1), got ${p}`);
  const rest = 1 - humans[type];
  return humans.map((w, k) => (k === type ? p : Number((((1 - p) * w) / rest).toFixed(6))));
}

/** The settings of one own-modes family beyond its mixture: its name, sharpness, corpus size and seed offset. */
export interface OwnModesFamily {
  type: number; // the minority type it leans to, in the population's order
  p: number; // the rule's weight on that type (docs/science.md#the-held-out-panels)
  name: string;
  gamma: number;
  corpusScale: number;
  seedOffset: number;
}

/**
 * The held-out panel whose families collapse onto users of their own: families a and e of
 * `heldOutPanel` unchanged (the humans' mixture: the training model's own vendor, as SCOPE's panel
 * includes its training model's family) and one family per minority type, whose corpus puts the
 * rule's weight p on that type and the rest in the humans' proportions (`leaningPrior`).
 */
export function ownModesPanel(humans: readonly number[], families: OwnModesFamily[]) {
  return [
    { ...FAMILY_A },
    { ...FAMILY_E },
    ...families.map((f) => ({
      name: f.name,
      gamma: f.gamma,
      prior: leaningPrior(humans, f.type, f.p),
      corpusScale: f.corpusScale,
      seedOffset: f.seedOffset,
    })),
  ];
}
