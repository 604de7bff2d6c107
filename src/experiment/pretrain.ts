// Pretraining (docs/architecture.md#models): a corpus of dialogues between humans and the behaviour persuader;
// maximum likelihood with role masks — the base policy learns the agent's turns, a simulator the
// user's turns given the persona card. The reference simulator should approach the exact Bayes
// predictive of the population (its KL is reported); panel simulators, and the ensemble's other
// families, learn from corpora of differently skewed populations, smaller samples and other seeds,
// as LLM families differ. Every seed pretrains its own models, its held-out panel included.
// Panel members that are real LMs (`lm` in the config) are not pretrained (lm-simulators.ts).
import type { Benchmark, Dialogue } from "../benchmarks/types";
import { benchmarkFor, benchmarkModule } from "../benchmarks/registry";
import type { EngineBackend, ModelOptions } from "../engine/backend";
import { DEFAULT_OPTIM, DEFAULT_POLICY } from "../engine/backend";
import { initCheckpoint, type Checkpoint } from "../engine/checkpoint";
import type { ModelConfig } from "../engine/config";
import { Rng } from "../engine/random";
import type {
  CorpusRefConfig,
  EnsembleMemberConfig,
  ExperimentConfig,
  PanelMemberConfig,
} from "./config";
import { encode, type Role } from "../benchmarks/encode";
import { corpusAt, type Corpora } from "./corpora";

export function modelConfig(
  bench: Benchmark,
  size: ExperimentConfig["policy"]["model"],
  role: Role,
): ModelConfig {
  return {
    vocab: bench.acts.length,
    context: bench.context,
    prefixLen: role === "simulator" ? bench.cardLen : 0,
    ...size,
  };
}

/** The allowed tokens of each mask class, as 0/1 rows over the vocabulary. */
function allowedMasks(bench: Benchmark): number[][] {
  return bench.maskClasses.map((m) => {
    const row = new Array<number>(bench.acts.length).fill(0);
    for (const a of m.allowed) row[a] = 1;
    return row;
  });
}

/**
 * The models of a run (RL, evaluation, diagnostics) share one capacity, the RL batch, so jitted
 * functions compile once per role and no call pads a batch beyond the rollouts it plays
 * (pretraining has its own: `pretrainOptions`).
 */
export function modelOptions(bench: Benchmark, c: ExperimentConfig): ModelOptions {
  return { capacity: c.rl.prompts * c.rl.groupSize, masks: allowedMasks(bench) };
}

/**
 * A pretraining model holds exactly one batch of its role, so a pretraining job depends only on
 * what it reads (not on the RL settings) and its result can be stored (store.ts). Checkpoints
 * carry no capacity: the result loads into a model of any capacity.
 */
export function pretrainOptions(bench: Benchmark, cfg: ExperimentConfig["policy"]): ModelOptions {
  return { capacity: cfg.pretrain.batch, masks: allowedMasks(bench) };
}

/** n dialogues of the benchmark's behaviour agent with humans of `bench`'s population. */
export function buildCorpus(
  c: ExperimentConfig,
  bench: Benchmark,
  n: number,
  rng: Rng,
): Dialogue[] {
  const m = benchmarkModule(c.benchmark);
  const corpus = { ...c.corpus, dialogues: n };
  return Array.from({ length: n }, () => m.corpusDialogue(bench, corpus, rng));
}

export interface PretrainResult {
  // The base policy keeps its Adam moments: RL continues from them (runner.ts creates the policy
  // from this checkpoint). Simulators are only ever loaded frozen or re-initialised (bakeGamma),
  // so theirs are dropped, which keeps stored files small.
  checkpoint: Checkpoint;
  nll: number[]; // loss every 10% of the steps
}

export async function pretrain(
  backend: EngineBackend,
  bench: Benchmark,
  dialogues: Dialogue[],
  role: Role,
  cfg: ExperimentConfig["policy"],
  seed: number,
): Promise<PretrainResult> {
  const rng = Rng.seed(seed);
  const opts = pretrainOptions(bench, cfg);
  const model = backend.createModel(
    initCheckpoint(modelConfig(bench, cfg.model, role), rng.int(2 ** 31)),
    opts,
  );
  const hyper = { ...DEFAULT_OPTIM, ...DEFAULT_POLICY, lr: cfg.pretrain.lr, klCoef: 0 };
  const nll: number[] = [];
  const every = Math.max(1, Math.floor(cfg.pretrain.steps / 10));
  try {
    for (let step = 1; step <= cfg.pretrain.steps; step++) {
      const batch = Array.from(
        { length: cfg.pretrain.batch },
        () => dialogues[rng.int(dialogues.length)],
      );
      // cosine decay to 10% keeps the final estimate close to the corpus' predictive
      const lr =
        cfg.pretrain.lr *
        (0.1 + 0.45 * (1 + Math.cos((Math.PI * (step - 1)) / cfg.pretrain.steps)));
      const s = await model.trainStep(encode(bench, batch, role), { ...hyper, lr });
      if (!Number.isFinite(s.gradNorm))
        throw new Error(
          `pretraining the ${role} diverged at step ${step} (gradient norm ${s.gradNorm}); lower the learning rate`,
        );
      if (step % every === 0 || step === cfg.pretrain.steps) nll.push(s.nll);
    }
    const { optimizer, ...weights } = await model.checkpoint();
    return { checkpoint: role === "policy" ? { ...weights, optimizer } : weights, nll };
  } finally {
    model.dispose();
  }
}

/** A held-out panel member, in config order: a pretrained network (collapsed to π^γ), a real LM, a remote model or a corpus. */
export type PanelEntry =
  | { name: string; gamma: number; result: PretrainResult }
  | { name: string; lm: NonNullable<PanelMemberConfig["lm"]> } // loaded by lm-simulators.ts where it is used
  | { name: string; remote: NonNullable<PanelMemberConfig["remote"]> } // a remote server's model (lm-simulators.ts)
  | { name: string; corpus: CorpusRefConfig; minCount: number }; // an imported corpus' empirical population (corpus-simulators.ts)

/** The default back-off threshold of a corpus panel member (config `panel[i].minCount`). */
export const PANEL_MIN_COUNT = 5;

/** An ensemble member: a network and the γ it is collapsed with (null: the run's simulator.gamma, as the single simulator). */
export interface EnsembleEntry {
  name: string;
  gamma: number | null;
  result: PretrainResult;
}

export interface PretrainedSet {
  seed: number;
  reference: PretrainResult; // π_ref, the single simulator's network
  // k members; member 0 is `reference` at simulator.gamma, the others are its family's networks at
  // simulator.gamma (ensemble.members empty) or the other families at their own γ
  ensemble: EnsembleEntry[];
  panel: PanelEntry[]; // this seed's

  basePolicy: PretrainResult;
}

/** One model to pretrain; jobs are independent, so they can run in parallel workers. */
export type PretrainJob =
  | { kind: "reference"; seed: number }
  | { kind: "policy"; seed: number }
  | { kind: "ensemble"; seed: number; member: number } // member ≥ 1: its place in the ensemble (ensemble.members[member − 1] when listed)
  | { kind: "panel"; seed: number; member: number }; // member: the index in c.panel

/** The role a job's model learns: the base policy, or a simulator (reference, ensemble, panel). */
export function jobRole(job: PretrainJob): Role {
  return job.kind === "policy" ? "policy" : "simulator";
}

/** Every model one seed needs: its reference, base policy, ensemble members and held-out panel. */
export function pretrainJobs(c: ExperimentConfig, seed: number): PretrainJob[] {
  const jobs: PretrainJob[] = [
    { kind: "reference", seed },
    { kind: "policy", seed },
  ];
  if (c.conditions.includes("ensemble"))
    for (let k = 1; k < c.ensemble.k; k++) jobs.push({ kind: "ensemble", seed, member: k });
  return [...jobs, ...panelJobs(c, seed)];
}

/**
 * The held-out panel of one seed: the same member configs (other "families", like SCOPE's panel
 * of LLM simulators) drawn and pretrained from that seed, so the seeds' spread covers the panel's
 * randomness too. Seed s's panel is what a single panel drawn from seedBase = s was. LM and
 * remote members need no job; `member` stays the index in `c.panel`.
 */
export function panelJobs(c: ExperimentConfig, seed: number): PretrainJob[] {
  return c.panel.flatMap((m, i): PretrainJob[] =>
    m.lm || m.remote || m.corpus ? [] : [{ kind: "panel", seed, member: i }],
  );
}

/** A network member's pretraining settings (validateConfig requires them when `lm` is absent). */
function networkMember(
  c: ExperimentConfig,
  i: number,
): { name: string; gamma: number; prior?: number[]; corpusScale: number; seedOffset: number } {
  const { name, gamma, prior, corpusScale, seedOffset, lm, remote, corpus } = c.panel[i];
  if (
    lm ||
    remote ||
    corpus ||
    gamma === undefined ||
    corpusScale === undefined ||
    seedOffset === undefined
  )
    throw new Error(`panel member ${name} is not a pretrained network`);
  return { name, gamma, prior, corpusScale, seedOffset };
}

/** The family ensemble member `member` (≥ 1) stands for, when the ensemble lists its families. */
export function ensembleFamily(
  c: ExperimentConfig,
  member: number,
): EnsembleMemberConfig | undefined {
  return c.ensemble.members[member - 1];
}

export function describeJob(c: ExperimentConfig, job: PretrainJob): string {
  switch (job.kind) {
    case "reference":
      return "reference simulator";
    case "policy":
      return "base policy";
    case "ensemble": {
      const f = ensembleFamily(c, job.member);
      return f ? `ensemble simulator ${f.name}` : `ensemble simulator ${job.member + 1}`;
    }
    case "panel":
      return `panel simulator ${c.panel[job.member].name}`;
  }
}

/**
 * A network of another family: a corpus of `prior`'s population (the humans' when absent) of
 * corpusScale × the reference's size, drawn and pretrained from seed and seedOffset.
 */
function pretrainFamily(
  backend: EngineBackend,
  c: ExperimentConfig,
  bench: Benchmark,
  seed: number,
  f: { prior?: number[]; corpusScale: number; seedOffset: number },
): Promise<PretrainResult> {
  const rng = Rng.seed(seed).fork(1000 + f.seedOffset);
  const world = benchmarkFor(c, f.prior); // a differently skewed population
  const corpus = buildCorpus(
    c,
    world,
    Math.max(64, Math.round(c.corpus.dialogues * f.corpusScale)),
    rng.fork(0),
  );
  return pretrain(backend, bench, corpus, "simulator", c.simulator, rng.fork(1).int(2 ** 31));
}

/**
 * The world whose humans the reference simulator's corpus is drawn from: `world` with
 * simulator.referenceWorld merged over it (validateConfig checked it), or the humans' own.
 */
export function referenceWorld(c: ExperimentConfig): unknown {
  const over = c.simulator.referenceWorld;
  return over
    ? benchmarkModule(c.benchmark).worldSchema.parse({ ...(c.world as object), ...over })
    : c.world;
}

/**
 * An imported corpus' dialogues as pretraining dialogues: a dialogue without traits gets a card
 * drawn from the benchmark's cards (the simulator reads one), from `rng`.
 */
export function importedDialogues(
  bench: Benchmark,
  corpora: Corpora,
  ref: CorpusRefConfig,
  rng: Rng,
): Dialogue[] {
  const cards = bench.humans.cardDistribution();
  const weights = cards.map((x) => x.p);
  return corpusAt(corpora, ref, "simulator.corpus").dialogues.map((d) => ({
    card: [...(d.card ?? cards[rng.categorical(weights)].card)],
    acts: [...d.acts],
  }));
}

/**
 * The corpus a reference, base-policy or same-family ensemble job learns from (a family's, panel
 * or ensemble, is drawn in pretrainFamily). The reference's family learns from the imported corpus
 * where the config names one (simulator.corpus), else draws its users from referenceWorld(c); the
 * base policy always learns from the humans.
 */
export function jobCorpus(
  c: ExperimentConfig,
  job: Extract<PretrainJob, { kind: "reference" | "policy" | "ensemble" }>,
  corpora: Corpora = {},
): Dialogue[] {
  const root = Rng.seed(job.seed).fork(1);
  const rng = root.fork(job.kind === "ensemble" ? 10 + job.member : 0); // the reference and the policy share a sample
  if (job.kind === "policy") return buildCorpus(c, benchmarkFor(c), c.corpus.dialogues, rng);
  if (c.simulator.corpus)
    return importedDialogues(benchmarkFor(c), corpora, c.simulator.corpus, rng);
  const users = benchmarkFor({ benchmark: c.benchmark, world: referenceWorld(c) }); // a shifted population plays the same game
  return buildCorpus(c, users, c.corpus.dialogues, rng);
}

/** Pretrains one model. Deterministic given the inputs store.ts keys it by (jobInputs). */
export async function runPretrainJob(
  backend: EngineBackend,
  c: ExperimentConfig,
  job: PretrainJob,
  corpora: Corpora = {},
): Promise<PretrainResult> {
  const bench = benchmarkFor(c);
  const root = Rng.seed(job.seed).fork(1);
  switch (job.kind) {
    case "reference":
      return pretrain(
        backend,
        bench,
        jobCorpus(c, job, corpora),
        "simulator",
        c.simulator,
        root.fork(1).int(2 ** 31),
      );
    case "policy":
      return pretrain(
        backend,
        bench,
        jobCorpus(c, job),
        "policy",
        c.policy,
        root.fork(2).int(2 ** 31),
      );
    case "ensemble": {
      const family = ensembleFamily(c, job.member);
      if (family) return pretrainFamily(backend, c, bench, job.seed, family);
      // another sample of the reference's population and another seed: same family, another checkpoint
      return pretrain(
        backend,
        bench,
        jobCorpus(c, job, corpora),
        "simulator",
        c.simulator,
        root.fork(20 + job.member).int(2 ** 31),
      );
    }
    case "panel":
      return pretrainFamily(backend, c, bench, job.seed, networkMember(c, job.member));
  }
}

/** Seed `seed`'s models from the results of its jobs (pretrainJobs). */
export function assemblePretrained(
  c: ExperimentConfig,
  seed: number,
  results: Map<PretrainJob, PretrainResult>,
): PretrainedSet {
  const find = (pred: (j: PretrainJob) => boolean) => {
    for (const [j, r] of results) if (j.seed === seed && pred(j)) return r;
    throw new Error(`missing pretrained model for seed ${seed}`);
  };
  const reference = find((j) => j.kind === "reference");
  const ensemble: EnsembleEntry[] = [{ name: "aligned simulator", gamma: null, result: reference }];
  if (c.conditions.includes("ensemble"))
    for (let k = 1; k < c.ensemble.k; k++) {
      const f = ensembleFamily(c, k);
      const result = find((j) => j.kind === "ensemble" && j.member === k);
      ensemble.push(
        f
          ? { name: f.name, gamma: f.gamma, result }
          : { name: `ensemble simulator ${k + 1}`, gamma: null, result },
      );
    }
  return {
    seed,
    reference,
    ensemble,
    panel: c.panel.map((m, i): PanelEntry =>
      m.lm
        ? { name: m.name, lm: m.lm }
        : m.remote
          ? { name: m.name, remote: m.remote }
          : m.corpus
            ? { name: m.name, corpus: m.corpus, minCount: m.minCount ?? PANEL_MIN_COUNT }
            : {
                name: m.name,
                gamma: networkMember(c, i).gamma,
                result: find((j) => j.kind === "panel" && j.member === i),
              },
    ),
    basePolicy: find((j) => j.kind === "policy"),
  };
}
