// Persuasion as a plug-in (src/benchmarks/types.ts: BenchmarkModule): its config sections and
// defaults, its world built from them, the corpus of the behaviour persuader, the calibration
// against Persuasion for Good, the exact ceilings as reference lines, the probe states of the
// diagnostics, and outcomes.
import { z } from "zod";
import { benchmarkLm } from "../lm-scaffold";
import { agentActSet, ensembleFamilies, heldOutPanel } from "../scaffold";
import type { Benchmark, BenchmarkModule, Dialogue, ProbeState, ReferenceLine } from "../types";
import { adaptOncePersuader, ceilings, type Ceilings } from "./ceilings";
import { compareDonations, parseDonation } from "./lm-measures";
import * as prompts from "./lm-prompts";
import { behaviourDialogue, createPersuasion } from "./bench";
import { CALIBRATION_SOURCE, p4gCalibration } from "./calibration";
import { DEFAULT_PARAMS, type PersuasionParams, type PersuasionPopulation } from "./population";
import { actId, AMOUNTS, donation } from "./world";

const num = (min: number, max = Number.MAX_VALUE) => z.number().min(min).max(max);
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);

const WorldSchema = z.strictObject({
  cardInformativeness: num(0, 2), // κ: how much a persona card says about the latent type
  replySharpness: num(0, 10), // how clearly a user's replies reveal their latent type
  repeatDecay: num(0, 1), // the n-th use of one strategy moves willingness by decay^(n−1) of the first
  typePrior: z.array(num(0)).length(DEFAULT_PARAMS.types.length).optional(), // the human population's latent-type mixture (skeptic, empathetic, frugal, social); default: the fitted one
});

const CorpusSchema = z.strictObject({
  dialogues: int(64), // human–behaviour-persuader dialogues the reference simulator and base policy learn from
  persuaderStyle: num(0, 1000), // α: each corpus persuader's strategy mix ~ Dirichlet(α · P4G frequencies); 0 = every persuader uses P4G's mix
});

export type PersuasionWorld = z.infer<typeof WorldSchema>;
export type PersuasionCorpus = z.infer<typeof CorpusSchema>;

type PersuasionBenchmark = ReturnType<typeof createPersuasion>;
const population = (bench: Benchmark) =>
  (bench as PersuasionBenchmark).humans as PersuasionPopulation;

export function worldParams(world: PersuasionWorld, skew?: number[]): PersuasionParams {
  const prior = skew ?? world.typePrior;
  return {
    ...DEFAULT_PARAMS,
    cardInformativeness: world.cardInformativeness,
    replySharpness: world.replySharpness,
    repeatDecay: world.repeatDecay,
    types: DEFAULT_PARAMS.types.map((t, z) => ({
      ...t,
      prior: prior ? prior[z] / prior.reduce((a, b) => a + b, 0) : t.prior,
    })),
  };
}

/** The exact ceilings as reference lines; the figures draw the modal user's script and reading replies. */
export function ceilingLines(c: Ceilings): ReferenceLine[] {
  return [
    {
      id: "modal-script",
      label: `${c.modalType}'s script`,
      description: `the best script against the modal user, the ${c.modalType} (${c.modalScript.acts.join(" → ")})`,
      humanSuccess: c.modalScript.humanSuccess,
      onFigure: true,
    },
    {
      id: "best-script",
      label: "best fixed script",
      description: `the best fixed script (${c.bestScript.acts.join(" → ")})`,
      humanSuccess: c.bestScript.humanSuccess,
      onFigure: false,
    },
    {
      id: "adapt-once",
      label: "reading replies",
      description: `reading the first reply: open with ${c.adaptOnce.first}, then the best plan for the reply and the card`,
      humanSuccess: c.adaptOnce.humanSuccess,
      onFigure: true,
    },
    {
      id: "type-known",
      label: "knowing the type",
      description: "each latent type's own best script (a persuader told the type)",
      humanSuccess: c.typeKnown,
      onFigure: false,
    },
  ];
}

const PROBE_STATES: ProbeState[] = [
  { id: "after-greeting", label: "after the greeting", acts: ["greeting"] },
  { id: "after-emotion", label: "after an emotional appeal", acts: ["emotion"] },
  { id: "after-credibility", label: "after a credibility appeal", acts: ["credibility"] },
  { id: "after-personal-inquiry", label: "after a personal inquiry", acts: ["personal-inquiry"] },
  {
    id: "ask-after-greeting",
    label: "the donation decision, asked right after a neutral opening",
    acts: ["greeting", "neutral", "ask"],
  },
  {
    id: "after-cost-objection",
    label: "a small ask after a cost objection (reveals the frugal type)",
    acts: ["greeting", "object-cost", "foot-in-the-door"],
  },
  {
    id: "after-trust-objection",
    label: "a logical appeal after a trust objection (reveals the skeptic)",
    acts: ["credibility", "object-trust", "logical"],
  },
  {
    id: "ask-after-sharing",
    label: "the donation decision after the persuadee shared something personal",
    acts: ["emotion", "share-personal", "ask"],
  },
];

export const persuasion: BenchmarkModule<PersuasionWorld, PersuasionCorpus> = {
  id: "persuasion",
  title: "Persuasion (after Persuasion for Good)",
  roles: { agent: "Persuader", user: "Persuadee" },
  success: "a donation of at least $1",
  calibratedOn: "the Persuasion for Good corpus",
  worldSchema: WorldSchema,
  corpusSchema: CorpusSchema,
  defaultWorld: { cardInformativeness: 1, replySharpness: 2, repeatDecay: 0.3 },
  defaultCorpus: { dialogues: 4096, persuaderStyle: 1 },
  typeNames: DEFAULT_PARAMS.types.map((t) => t.name),
  configDefaults: {
    // SCOPE's ensemble of three model families and the held-out panel (../scaffold.ts), with corpora
    // that lean to other types (type weights: skeptic, empathetic, frugal, social)
    ensemble: ensembleFamilies({ f: [0.55, 0.2, 0.15, 0.1], g: [0.35, 0.3, 0.1, 0.25] }),
    panel: heldOutPanel({
      b: [0.3, 0.4, 0.15, 0.15],
      c: [0.3, 0.2, 0.35, 0.15],
      d: [0.35, 0.2, 0.15, 0.3],
    }),
  },
  create: (world, prior) => createPersuasion(worldParams(world, prior)),
  parameters: (bench) => population(bench).params,
  corpusDialogue: (bench, corpus, rng) =>
    behaviourDialogue(population(bench), bench.humans.sample(rng), rng, corpus.persuaderStyle),
  calibration: (bench, corpus, rng) =>
    p4gCalibration(population(bench), corpus.persuaderStyle, rng),
  referenceLines: (bench) => ceilingLines(ceilings(population(bench))),
  probeStates: PROBE_STATES,
  strategy: {
    task: () => "", // the persuader is given nothing at the start (the card is the simulator's)
    signature: agentActSet,
    description: "the set of the persuader's acts (which strategies it used); no task",
  },
  adaptiveProbe(bench) {
    const p = adaptOncePersuader(population(bench));
    return {
      description: `opens with ${bench.acts[p.first].name}, reads the reply and the card, follows the best plan for them`,
      act: (d: Dialogue) => p.act(d),
    };
  },
  separationAgents(bench) {
    const c = ceilings(population(bench));
    const script = c.modalScript.acts.map((name) => actId(name));
    const adapt = adaptOncePersuader(population(bench));
    return {
      // the persuader speaks first and every other act is the persuadee's
      script: {
        id: "modal-script",
        label: `${c.modalType}'s script`,
        act: (d) => script[d.acts.length / 2],
      },
      adaptive: { id: "adapt-once", label: "reading replies", act: (d) => adapt.act(d) },
    };
  },
  lm: benchmarkLm(prompts, {
    outcomeName: "donation",
    parseOutcome: (text) => parseDonation(text),
    compareOutcomes: (values) => compareDonations(values),
    outcomeView: {
      stated: "donations stated",
      mean: "mean donation",
      format: (dollars) => `$${dollars.toFixed(2)}`,
      reference: "P4G humans",
      due: "It is time to say how much to donate.",
      note: "Donations are read from the text and rounded to P4G's $0.50 grid; KS and L1 compare their histogram with the P4G participants'.",
    },
  }),
  upgradeReport(report) {
    const { world, calibration } = report;
    if (world && world.ceilings && !world.referenceLines) {
      world.referenceLines = ceilingLines(world.ceilings as Ceilings);
      delete world.ceilings;
    }
    const old = calibration?.donationHistogram as
      { amounts: number[]; real: number[]; fitted: number[] } | undefined;
    if (calibration && old && !calibration.histograms) {
      calibration.source = CALIBRATION_SOURCE;
      calibration.histograms = [
        {
          name: "donation ($)",
          bins: old.amounts.map((a) => `$${a}`),
          real: old.real,
          fitted: old.fitted,
        },
      ];
      delete calibration.donationHistogram;
    }
  },
  outcome(_bench, d) {
    const given = donation(d);
    return given > 0 ? `donated $${given.toFixed(2)}` : "no donation";
  },
  outcomeActs: {
    name: "donation in dollars",
    act(value) {
      if (!(value >= 0 && value <= AMOUNTS[AMOUNTS.length - 1]))
        return { problem: `a donation is between $0 and $2, got ${value}` };
      // the nearest point of the $0.50 grid, ties up (P4G's donations are binned so: p4g-load.ts)
      return { act: `$${AMOUNTS[Math.min(AMOUNTS.length - 1, Math.floor(value * 2 + 0.5))]}` };
    },
    value: (_bench, d) => donation(d),
  },
};
