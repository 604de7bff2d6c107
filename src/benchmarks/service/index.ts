// The Service benchmark as a plug-in (../types.ts' BenchmarkModule): its config sections, world,
// corpus, calibration against τ²-bench telecom, reference agents, probe states, outcomes, and the
// prompts that let a real LM play its customer (lm-prompts.ts, lm-measures.ts).
import { z } from "zod";
import { pct } from "../../util/format";
import { benchmarkLm } from "../lm-scaffold";
import {
  agentActSet,
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
import { behaviourAgent, carefulAgent, goldAgent, modalScript, type Agent } from "./agents";
import { createService, outcomeOf, playEpisode, type ServiceBenchmark } from "./bench";
import { calibrate } from "./calibration";
import { compareResolved, parseResolved } from "./lm-measures";
import * as prompts from "./lm-prompts";
import { DEFAULT_PARAMS, type ServiceParams } from "./population";
import { CARD_LEN, MAX_CONTEXT } from "./world";

const MAX_EXCHANGES = (MAX_CONTEXT - CARD_LEN - 2) / 2; // 29: card, <bos>, ticket and two acts an exchange fit the engine's 64 positions

export const ServiceWorldSchema = z.strictObject({
  maxExchanges: z.number().int().min(4).max(MAX_EXCHANGES), // agent turns per episode (context = 5 + 2 × this)
  cardInformativeness: z.number().min(0).max(1), // κ: 0 = cards say nothing about the type, 1 = the types' own card probabilities
  typePrior: z.array(z.number().min(0)).length(DEFAULT_PARAMS.types.length).optional(), // accurate, low-skill, anxious, impatient (normalised); default the population's
  noise: z.number().min(0).max(0.2), // P(a uniformly random reply) for every type: slips
});
export type ServiceWorld = z.infer<typeof ServiceWorldSchema>;

export const ServiceCorpusSchema = z.strictObject({
  dialogues: z.number().int().min(1), // customers of the population with the behaviour agent
});
export type ServiceCorpus = z.infer<typeof ServiceCorpusSchema>;

export const DEFAULT_WORLD: ServiceWorld = {
  maxExchanges: DEFAULT_PARAMS.maxExchanges,
  cardInformativeness: DEFAULT_PARAMS.cardInformativeness,
  noise: DEFAULT_PARAMS.noise,
};
export const DEFAULT_CORPUS: ServiceCorpus = { dialogues: 20000 };

export function serviceParams(world: ServiceWorld, prior?: number[]): ServiceParams {
  return worldParams(DEFAULT_PARAMS, world, prior ?? world.typePrior);
}

const asService = narrowTo<ServiceBenchmark>("service");

export const REFERENCE_EPISODES = 10000; // Monte Carlo episodes per reference agent (standard error ≤ 0.005)
const REFERENCE_SEED = 1;

/** Success with humans (and with the modal type alone) of an agent, by Monte Carlo with a fixed seed. */
export function successWith(
  bench: ServiceBenchmark,
  agent: Agent,
  episodes = REFERENCE_EPISODES,
  onlyType?: number,
  seed = REFERENCE_SEED,
): number {
  return monteCarloSuccess(
    bench,
    (persona, rng) => playEpisode(bench, persona, agent, rng),
    episodes,
    onlyType,
    seed,
  );
}

const referenceLines = oncePerBenchmark((b): ReferenceLine[] => {
  const bench = asService(b);
  const { faultPrior, maxExchanges: E } = bench.params;
  const { index: modal, name: modalName } = modalType(bench.humans);
  const script = modalScript(faultPrior, E);
  const careful = carefulAgent(faultPrior, E);
  const gold = goldAgent(E);
  const scriptModal = successWith(bench, script, REFERENCE_EPISODES, modal);
  const carefulModal = successWith(bench, careful, REFERENCE_EPISODES, modal);
  const lines: ReferenceLine[] = [
    {
      id: "modal-script",
      label: `${modalName} customer's script`,
      description: `Skips checks, fixes every likely fault blindly, restarts once, confirms: the best script for the ${modalName} customer (${pct(scriptModal)} with them; careful checking gets ${pct(carefulModal)}).`,
      humanSuccess: successWith(bench, script),
      onFigure: true,
    },
    {
      id: "careful",
      label: "careful agent",
      description:
        "Checks each likely screen before fixing it, reassures before risky steps, walks a struggling customer back to the screen, re-checks after “still not working”.",
      humanSuccess: successWith(bench, careful),
      onFigure: true,
    },
    {
      id: "gold-plan",
      label: "gold plan",
      description:
        "Told the faults: instructs exactly the needed steps and asks again what did not happen (τ²'s agent given the plan).",
      humanSuccess: successWith(bench, (d) => gold(d)),
      onFigure: false,
    },
    {
      id: "behaviour",
      label: "behaviour agent",
      description: "The pretraining corpus' agent in dual control (the toy's gpt-4.1 of τ²).",
      humanSuccess: successWith(bench, behaviourAgent(faultPrior, E)),
      onFigure: false,
    },
  ];
  return lines;
});

/**
 * The panel of families whose corpora lean to other customers (type weights: accurate, low-skill,
 * anxious, impatient) but keep the accurate one as their mode, so every member collapses onto the
 * same overly cooperative customer as the training simulator: the simulator-to-real gap of LLM
 * customers, shared by every vendor.
 */
const SHARED_MODE_PANEL = heldOutPanel({
  b: [0.35, 0.25, 0.2, 0.2],
  c: [0.4, 0.15, 0.3, 0.15],
  d: [0.4, 0.2, 0.15, 0.25],
});

/**
 * The panel whose families collapse onto customers of their own (docs/science.md#the-held-out-panels):
 * families a and e, and one family per minority type with the rule's weight p on it (the
 * smallest of 0.5 … 0.9 at which its exact simulator plays the type on half the humans' card mass:
 * `ownModesRule`, printed by scripts/panel-rule.ts). Each takes the γ and corpus size of the
 * shared-mode family that leaned to its type (b, c, d), and a seed offset of its own.
 */
const OWN_MODES_PANEL = ownModesPanel(
  DEFAULT_PARAMS.types.map((t) => t.prior),
  [
    { type: 1, p: 0.9, name: "family-low-skill", gamma: 8, corpusScale: 1, seedOffset: 106 },
    { type: 2, p: 0.7, name: "family-anxious", gamma: 6, corpusScale: 0.5, seedOffset: 107 },
    { type: 3, p: 0.7, name: "family-impatient", gamma: 3, corpusScale: 0.5, seedOffset: 108 },
  ],
);

/** States at the customer's turn where simulators' replies are compared (the collapsed one answers every one cooperatively). */
export const PROBE_STATES: ProbeState[] = [
  {
    id: "blind-hard-step",
    label: "asked, without looking first, to grant the messaging app a permission",
    acts: ["ticket:mms", "query-account", "account:ok", "fix:grant-permission"],
  },
  {
    id: "guided-step",
    label: "asked to reset the APN right after reading it out",
    acts: [
      "ticket:mobile-data",
      "query-account",
      "account:ok",
      "check:apn",
      "see:apn-bad",
      "fix:reset-apn",
    ],
  },
  {
    id: "risky-step",
    label: "asked to reseat the SIM, not reassured",
    acts: [
      "ticket:no-service",
      "query-account",
      "account:ok",
      "check:sim",
      "see:sim-bad",
      "fix:reseat-sim",
    ],
  },
  {
    id: "reassured-risky",
    label: "asked to restart after a reassurance",
    acts: ["ticket:mobile-data", "query-account", "account:ok", "reassure", "ack", "fix:reboot"],
  },
  {
    id: "fifth-chore",
    label: "asked for a fifth blind fix",
    acts: [
      "ticket:mms",
      "fix:toggle-data",
      "did-fix",
      "fix:saver-off",
      "did-fix",
      "fix:toggle-airplane",
      "did-fix",
      "fix:grant-permission",
      "did-fix",
      "fix:toggle-wifi-calling",
    ],
  },
  {
    id: "confirm-blind",
    label: "asked whether it works after two blind fixes",
    acts: [
      "ticket:mms",
      "query-account",
      "account:ok",
      "fix:grant-permission",
      "did-fix",
      "fix:set-network-mode",
      "did-fix",
      "confirm",
    ],
  },
];

export const service: BenchmarkModule<ServiceWorld, ServiceCorpus> = {
  id: "service",
  title: "Service (after τ²-bench telecom)",
  roles: { agent: "Agent", user: "Customer", env: "System" },
  calibratedOn: "τ²-bench telecom's published results (gpt-4.1, dual control) and its 114 tasks",
  success: "the phone fixed and the customer confirming it, or a transfer when it cannot be fixed",
  worldSchema: ServiceWorldSchema,
  corpusSchema: ServiceCorpusSchema,
  defaultWorld: DEFAULT_WORLD,
  defaultCorpus: DEFAULT_CORPUS,
  typeNames: DEFAULT_PARAMS.types.map((t) => t.name),
  configDefaults: {
    // The base policy imitates the behaviour agent over calls three times longer than Persuasion's
    // dialogues, with more acts to choose from: it needs several times Persuasion's pretraining to
    // leave the near-uniform start, and GRPO from a near-uniform policy finds no script to sharpen.
    policy: { pretrain: { steps: 800 } },
    // the ensemble as before SCOPE's families: the single simulator and two more networks of its
    // family (ensemble.members lists other families instead; Persuasion's presets use those)
    ensemble: { k: 3, members: [] },
    // the held-out panel: other families (type mixtures, corpus sizes, seeds) and sharpness, as for Persuasion
    panel: SHARED_MODE_PANEL,
  },
  panels: { "shared-mode": SHARED_MODE_PANEL, "own-modes": OWN_MODES_PANEL },
  passK: 4,
  create: (world, prior) => createService(serviceParams(world, prior)),
  parameters: (bench) => asService(bench).params,
  corpusDialogue(b, _corpus, rng) {
    const bench = asService(b);
    const agent = behaviourAgent(bench.params.faultPrior, bench.params.maxExchanges);
    return playEpisode(bench, bench.humans.sample(rng), agent, rng);
  },
  calibration: (bench, _corpus, rng) => calibrate(asService(bench), rng),
  referenceLines,
  probeStates: PROBE_STATES,
  strategy: {
    task: openingActs, // the ticket: the customer's intent
    signature: agentActSet,
    description:
      "the set of the agent's acts (which screens it checked, which fixes and account steps, reassured, confirmed, transferred); given the intent (the ticket)",
  },
  adaptiveProbe(b) {
    const bench = asService(b);
    const act = carefulAgent(bench.params.faultPrior, bench.params.maxExchanges);
    return {
      description: "the careful agent: checks before fixing, reassures, guides",
      act: (d: Dialogue) => act(d),
    };
  },
  separationAgents(b) {
    const bench = asService(b);
    const { faultPrior, maxExchanges: E } = bench.params;
    const script = modalScript(faultPrior, E);
    const careful = carefulAgent(faultPrior, E);
    return {
      script: {
        id: "modal-script",
        label: `${modalType(bench.humans).name} customer's script`,
        act: (d) => script(d),
      },
      adaptive: { id: "careful", label: "careful agent", act: (d) => careful(d) },
    };
  },
  lm: benchmarkLm(prompts, {
    outcomeName: "verdict", // whether the phone works: 1 the customer says it does; 0 it does not, or the call ends without a fix (lm-measures.ts)
    parseOutcome: (text) => parseResolved(text),
    compareOutcomes: (values) => compareResolved(values),
    outcomeView: {
      stated: "verdicts stated",
      mean: "share saying it works",
      format: (v) => (v === 1 ? "works" : v === 0 ? "not working" : pct(v)),
      reference: null,
      due: "The agent asks whether the phone works now.",
      note:
        "A reply's verdict is whether it says the phone works (1) or not, or ends the call unresolved (0); replies that say neither have none. " +
        "τ²-bench telecom publishes agents' success rates, not what its customers say, so there are no real replies to compare the histogram with.",
    },
  }),
  outcome: (_bench, d) => outcomeOf(d),
};
