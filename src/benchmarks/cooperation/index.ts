// The Cooperation benchmark as a plug-in (../types.ts' BenchmarkModule): its config sections, world,
// corpus, calibration against CooperBench, reference agents, probe states and outcomes.
import { z } from "zod";
import { pct } from "../../util/format";
import {
  agentActSet,
  ensembleFamilies,
  heldOutPanel,
  modalType,
  monteCarloSuccess,
  narrowTo,
  oncePerBenchmark,
  openingActs,
  ownModesPanel,
  worldParams,
} from "../scaffold";
import type { BenchmarkModule, Dialogue, ProbeState, ReferenceLine } from "../types";
import { adaptiveAgent, behaviourAgent, modalScript, soloAgent, type Agent } from "./agents";
import { createCooperation, playEpisode, type CooperationBenchmark, type Operator } from "./bench";
import { calibrate } from "./calibration";
import { DEFAULT_PARAMS, type CooperationParams } from "./population";
import { CARD_LEN, MAX_CONTEXT, outcomeWords, plansOf } from "./world";

const MAX_EXCHANGES = Math.floor((MAX_CONTEXT - CARD_LEN - 2) / 2); // 29: card, <bos>, task and both sides' moves fit the engine's 64 positions

export const CooperationWorldSchema = z.strictObject({
  maxExchanges: z.number().int().min(3).max(MAX_EXCHANGES), // moves per side (context = 4 + 2 × this)
  cardInformativeness: z.number().min(0).max(1), // κ: 0 = cards say nothing about the partner's type, 1 = the types' own card probabilities
  typePrior: z.array(z.number().min(0)).length(DEFAULT_PARAMS.types.length).optional(), // dutiful, silent, ignorer, breaker, passive, deferrer (normalised); default the population's
  noise: z.number().min(0).max(0.2), // P(a uniformly random partner move of the allowed class): slips
});
export type CooperationWorld = z.infer<typeof CooperationWorldSchema>;

export const CooperationCorpusSchema = z.strictObject({
  dialogues: z.number().int().min(1), // partners of the population with the behaviour agent
});
export type CooperationCorpus = z.infer<typeof CooperationCorpusSchema>;

export const DEFAULT_WORLD: CooperationWorld = {
  maxExchanges: DEFAULT_PARAMS.maxExchanges,
  cardInformativeness: DEFAULT_PARAMS.cardInformativeness,
  noise: DEFAULT_PARAMS.noise,
};
export const DEFAULT_CORPUS: CooperationCorpus = { dialogues: 20000 };

export function cooperationParams(world: CooperationWorld, prior?: number[]): CooperationParams {
  const weights = prior ?? world.typePrior;
  if (weights && weights.length !== DEFAULT_PARAMS.types.length)
    throw new Error(
      `a type prior needs ${DEFAULT_PARAMS.types.length} weights, got ${weights.length}`,
    );
  return worldParams(DEFAULT_PARAMS, world, weights);
}

const asCooperation = narrowTo<CooperationBenchmark>("cooperation");

export const REFERENCE_EPISODES = 20000; // Monte Carlo episodes per reference agent (standard error ≤ 0.0035)
const REFERENCE_SEED = 1;

/** Success with partners of the population (or of one type alone) of an agent, by Monte Carlo with a fixed seed. */
export function successWith(
  bench: CooperationBenchmark,
  agent: Agent | ((d: Dialogue) => number),
  episodes = REFERENCE_EPISODES,
  onlyType?: number,
  operator: Operator = "partner",
  seed = REFERENCE_SEED,
): number {
  return monteCarloSuccess(
    bench,
    (persona, rng) => playEpisode(bench, persona, agent, rng, operator),
    episodes,
    onlyType,
    seed,
  );
}

const referenceLines = oncePerBenchmark((b): ReferenceLine[] => {
  const bench = asCooperation(b);
  const E = bench.params.maxExchanges;
  const { index: modal, name: modalName } = modalType(bench.humans);
  const script = modalScript(E);
  const adaptive = adaptiveAgent(E);
  const scriptModal = successWith(bench, script, REFERENCE_EPISODES, modal);
  const adaptiveModal = successWith(bench, adaptive, REFERENCE_EPISODES, modal);
  const lines: ReferenceLine[] = [
    {
      id: "modal-script",
      label: `${modalName} partner's script`,
      description: `Waits for the partner's plan and edits its own files the plan does not name, without a single message, claim or check: it wins the ${modalName} partner as well as anything does (${pct(scriptModal)} with them; the adaptive agent ${pct(adaptiveModal)}).`,
      humanSuccess: successWith(bench, script),
      onFigure: true,
    },
    {
      id: "adaptive",
      label: "adaptive agent",
      description:
        "Asks for the partner's plan, answers its questions, states its own plan when none comes, skips files the partner edited, and picks up what the partner left undone.",
      humanSuccess: successWith(bench, adaptive),
      onFigure: true,
    },
    {
      id: "solo",
      label: "solo agent",
      description:
        "One agent with both features and no partner edits every file they need (CooperBench's solo setting: the reference for the curse of coordination).",
      humanSuccess: successWith(bench, soloAgent(), REFERENCE_EPISODES, undefined, "solo"),
      onFigure: false,
    },
    {
      id: "behaviour",
      label: "behaviour agent",
      description:
        "The pretraining corpus' agent with a partner (the toy's coding agent of CooperBench).",
      humanSuccess: successWith(bench, behaviourAgent(E)),
      onFigure: false,
    },
  ];
  return lines;
});

/**
 * The panel of families whose corpora lean to other partners (type weights: dutiful, silent,
 * ignorer, breaker, passive, deferrer); most of their members still play the dutiful partner's
 * replies, as the training simulator does.
 */
const SHARED_MODE_PANEL = heldOutPanel({
  b: [0.2, 0.1, 0.1, 0.35, 0.1, 0.15],
  c: [0.2, 0.35, 0.1, 0.1, 0.1, 0.15],
  d: [0.25, 0.1, 0.1, 0.15, 0.3, 0.1],
});

/**
 * The panel whose families collapse onto partners of their own (docs/science.md#the-held-out-panels):
 * families a and e, and one family per minority type with the rule's weight p on it (the
 * smallest of 0.5 … 0.9 at which its exact simulator plays the type on half the humans' card mass:
 * `ownModesRule`, printed by scripts/panel-rule.ts). The families of silent, breaker and passive
 * partners take the γ and corpus size of the shared-mode family that leaned to that type (c, b,
 * d); ignorer and deferrer, which none leaned to, the panel's median (γ 6, half the corpus). Each
 * has a seed offset of its own.
 */
const OWN_MODES_PANEL = ownModesPanel(
  DEFAULT_PARAMS.types.map((t) => t.prior),
  [
    { type: 1, p: 0.5, name: "family-silent", gamma: 6, corpusScale: 0.5, seedOffset: 106 },
    { type: 2, p: 0.5, name: "family-ignorer", gamma: 6, corpusScale: 0.5, seedOffset: 107 },
    { type: 3, p: 0.7, name: "family-breaker", gamma: 8, corpusScale: 1, seedOffset: 108 },
    { type: 4, p: 0.5, name: "family-passive", gamma: 3, corpusScale: 0.5, seedOffset: 109 },
    { type: 5, p: 0.6, name: "family-deferrer", gamma: 6, corpusScale: 0.5, seedOffset: 110 },
  ],
);

/** States at the partner's turn where simulators' replies are compared (the collapsed one answers each as the dutiful partner). */
export const PROBE_STATES: ProbeState[] = [
  {
    id: "opening-wait",
    label: "the agent waits at the start",
    acts: ["task:models+views", "wait"],
  },
  {
    id: "opening-ask",
    label: "asked for its plan at the start",
    acts: ["task:models+views", "ask"],
  },
  {
    id: "opening-plan",
    label: "told the agent's plan at the start",
    acts: ["task:models+views", "plan:models+views"],
  },
  {
    id: "claim-after-plan",
    label: "the agent claims a file of its stated plan",
    acts: ["task:models+views", "wait", "they-plan:views+utils", "claim:views"],
  },
  {
    id: "after-edit",
    label: "the agent edits after its plan was stated",
    acts: ["task:models+views", "ask", "they-plan:views+utils", "edit:models"],
  },
  {
    id: "silent-then-told",
    label: "edited without a word, then told the agent's plan",
    acts: ["task:models+views", "wait", "they-edit:views", "plan:models+views"],
  },
  {
    id: "edit-after-agreeing",
    label: "its first edit after agreeing to the agent's plan",
    acts: [
      "task:models+views",
      "plan:models+views",
      "they-ack",
      "wait",
      "they-plan:models+utils",
      "wait",
    ],
  },
  {
    id: "after-one-edit",
    label: "the agent waits after the partner's first edit",
    acts: [
      "task:models+views",
      "wait",
      "they-plan:utils+config",
      "wait",
      "they-edit:utils",
      "wait",
    ],
  },
];

export const cooperation: BenchmarkModule<CooperationWorld, CooperationCorpus> = {
  id: "cooperation",
  title: "Cooperation (after CooperBench)",
  roles: { agent: "Agent", user: "Partner", env: "System" },
  calibratedOn:
    "CooperBench's published results (solo vs cooperative success, conflicts, failure causes)",
  success: "both features passing after the merge",
  worldSchema: CooperationWorldSchema,
  corpusSchema: CooperationCorpusSchema,
  defaultWorld: DEFAULT_WORLD,
  defaultCorpus: DEFAULT_CORPUS,
  typeNames: DEFAULT_PARAMS.types.map((t) => t.name),
  configDefaults: {
    // the partner shares the team's success (CooperBench is cooperative; there is no opponent to beat)
    cotrain: { reward: "cooperative" },
    // SCOPE's ensemble: the single simulator's family and two others whose corpora lean to other
    // partner types (type weights: dutiful, silent, ignorer, breaker, passive, deferrer), none of
    // them a panel member's
    ensemble: ensembleFamilies({
      f: [0.2, 0.1, 0.1, 0.1, 0.15, 0.35],
      g: [0.25, 0.1, 0.35, 0.1, 0.1, 0.1],
    }),
    // the held-out panel: other families, as other LLMs would be: corpora whose most common partner
    // is another type (breaker, silent, passive), other corpus sizes, seeds and sharpness
    panel: SHARED_MODE_PANEL,
  },
  panels: { "shared-mode": SHARED_MODE_PANEL, "own-modes": OWN_MODES_PANEL },
  create: (world, prior) => createCooperation(cooperationParams(world, prior)),
  parameters: (bench) => asCooperation(bench).params,
  corpusDialogue(b, _corpus, rng) {
    const bench = asCooperation(b);
    return playEpisode(
      bench,
      bench.humans.sample(rng),
      behaviourAgent(bench.params.maxExchanges),
      rng,
    );
  },
  calibration: (bench, _corpus, rng) => calibrate(asCooperation(bench), rng),
  referenceLines,
  probeStates: PROBE_STATES,
  strategy: {
    task: openingActs, // the task act: the agent's own plan
    signature: agentActSet,
    description:
      "the set of the agent's acts (plans, claims, messages, edits); given its task (its plan)",
  },
  adaptiveProbe(b) {
    const act = adaptiveAgent(asCooperation(b).params.maxExchanges);
    return {
      description:
        "the adaptive agent: asks, answers, claims when nobody states a plan, picks up what is left",
      act: (d: Dialogue) => act(d),
    };
  },
  separationAgents(b) {
    const bench = asCooperation(b);
    const script = modalScript(bench.params.maxExchanges);
    const adaptive = adaptiveAgent(bench.params.maxExchanges);
    return {
      script: {
        id: "modal-script",
        label: `${modalType(bench.humans).name} partner's script`,
        act: (d) => script(d),
      },
      adaptive: { id: "adaptive", label: "adaptive agent", act: (d) => adaptive(d) },
    };
  },
  outcome: (_bench, d) => outcomeWords(plansOf(d), d.acts),
};
