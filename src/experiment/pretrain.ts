// Pretraining (DESIGN §3.4): a corpus of dialogues between humans and the behaviour persuader;
// maximum likelihood with role masks — the base policy learns the agent's turns, a simulator the
// user's turns given the persona card. The reference simulator should approach the exact Bayes
// predictive of the population (its KL is reported); panel simulators learn from corpora of
// differently skewed populations, smaller samples and other seeds, as LLM families differ.
import type { Benchmark, Dialogue } from "../benchmarks/types";
import { createPersuasion, DEFAULT_PARAMS, behaviourDialogue, type PersuasionParams } from "../benchmarks/persuasion/world";
import type { EngineBackend, ModelOptions } from "../engine/backend";
import { DEFAULT_OPTIM, DEFAULT_POLICY } from "../engine/backend";
import { initCheckpoint, type Checkpoint } from "../engine/checkpoint";
import type { ModelConfig } from "../engine/config";
import { Rng } from "../engine/random";
import type { ExperimentConfig } from "./config";
import { encode, type Role } from "./encode";

export function worldParams(c: ExperimentConfig, prior?: number[]): PersuasionParams {
  return {
    ...DEFAULT_PARAMS,
    cardInformativeness: c.world.cardInformativeness,
    types: DEFAULT_PARAMS.types.map((t, z) => ({ ...t, prior: prior ? prior[z] / prior.reduce((a, b) => a + b, 0) : t.prior })),
  };
}

export function benchmarkFor(c: ExperimentConfig, prior?: number[]) {
  return createPersuasion(worldParams(c, prior));
}

export function modelConfig(bench: Benchmark, size: ExperimentConfig["policy"]["model"], role: Role): ModelConfig {
  return { vocab: bench.acts.length, context: bench.context, prefixLen: role === "simulator" ? bench.cardLen : 0, ...size };
}

/** Every model of a role shares one capacity, so jitted functions compile once per role. */
export function modelOptions(bench: Benchmark, c: ExperimentConfig): ModelOptions {
  const allowed = bench.maskClasses.map((m) => {
    const row = new Array<number>(bench.acts.length).fill(0);
    for (const a of m.allowed) row[a] = 1;
    return row;
  });
  return { capacity: Math.max(c.rl.prompts * c.rl.groupSize, c.simulator.pretrain.batch, c.policy.pretrain.batch), masks: allowed };
}

export function buildCorpus(bench: ReturnType<typeof createPersuasion>, n: number, rng: Rng): Dialogue[] {
  return Array.from({ length: n }, () => behaviourDialogue(bench.population, bench.population.sample(rng), rng));
}

export interface PretrainResult {
  checkpoint: Checkpoint;
  nll: number[]; // loss every 10% of the steps
}

export async function pretrain(
  backend: EngineBackend,
  bench: Benchmark,
  dialogues: Dialogue[],
  role: Role,
  cfg: ExperimentConfig["policy"],
  opts: ModelOptions,
  seed: number,
): Promise<PretrainResult> {
  const rng = Rng.seed(seed);
  const model = backend.createModel(initCheckpoint(modelConfig(bench, cfg.model, role), rng.int(2 ** 31)), opts);
  const hyper = { ...DEFAULT_OPTIM, ...DEFAULT_POLICY, lr: cfg.pretrain.lr, klCoef: 0 };
  const nll: number[] = [];
  const every = Math.max(1, Math.floor(cfg.pretrain.steps / 10));
  try {
    for (let step = 1; step <= cfg.pretrain.steps; step++) {
      const batch = Array.from({ length: Math.min(cfg.pretrain.batch, opts.capacity) }, () => dialogues[rng.int(dialogues.length)]);
      // cosine decay to 10% keeps the final estimate close to the corpus' predictive
      const lr = cfg.pretrain.lr * (0.1 + 0.45 * (1 + Math.cos((Math.PI * (step - 1)) / cfg.pretrain.steps)));
      const s = await model.trainStep(encode(bench, batch, role), { ...hyper, lr });
      if (step % every === 0 || step === cfg.pretrain.steps) nll.push(s.nll);
    }
    return { checkpoint: await model.checkpoint(), nll };
  } finally {
    model.dispose();
  }
}

export interface PretrainedSet {
  seed: number;
  corpusSize: number;
  reference: PretrainResult; // π_ref, the single simulator's network
  ensemble: PretrainResult[]; // K reference networks (member 0 is `reference`)
  panel: { name: string; gamma: number; result: PretrainResult }[];
  basePolicy: PretrainResult;
}

/** Pretrains every model one seed needs. Deterministic given config and seed. */
export async function pretrainAll(backend: EngineBackend, c: ExperimentConfig, seed: number, onStage?: (stage: string) => void): Promise<PretrainedSet> {
  const bench = benchmarkFor(c);
  const opts = modelOptions(bench, c);
  const root = Rng.seed(seed).fork(1);
  const corpus = buildCorpus(bench, c.corpus.dialogues, root.fork(0));
  onStage?.("reference simulator");
  const reference = await pretrain(backend, bench, corpus, "simulator", c.simulator, opts, root.fork(1).int(2 ** 31));
  onStage?.("base policy");
  const basePolicy = await pretrain(backend, bench, corpus, "policy", c.policy, opts, root.fork(2).int(2 ** 31));
  const needsEnsemble = c.conditions.includes("ensemble");
  const ensemble = [reference];
  for (let k = 1; needsEnsemble && k < c.ensemble.k; k++) {
    onStage?.(`ensemble simulator ${k + 1}`);
    // another sample of the same population, another seed: same family, different checkpoint
    const other = buildCorpus(bench, c.corpus.dialogues, root.fork(10 + k));
    ensemble.push(await pretrain(backend, bench, other, "simulator", c.simulator, opts, root.fork(20 + k).int(2 ** 31)));
  }
  const panel = [];
  for (const m of c.panel) {
    onStage?.(`panel simulator ${m.name}`);
    const memberRng = Rng.seed(seed).fork(1000 + m.seedOffset);
    const world = benchmarkFor(c, m.prior);
    const data = buildCorpus(world, Math.max(64, Math.round(c.corpus.dialogues * m.corpusScale)), memberRng.fork(0));
    panel.push({ name: m.name, gamma: m.gamma, result: await pretrain(backend, bench, data, "simulator", c.simulator, opts, memberRng.fork(1).int(2 ** 31)) });
  }
  return { seed, corpusSize: corpus.length, reference, ensemble, panel, basePolicy };
}
