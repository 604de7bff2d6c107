// The models `collapse-lab serve` exposes for one preset and seed: the reference simulator, the
// aligned (collapsed) one, Verbalized Sampling, each pretrained panel member, each latent type of
// the human population, the exact Bayes predictive, the base policy and trained policies. Each is a distribution
// over the benchmark's acts at a dialogue state, batched over dialogues; the server samples,
// formats and streams. Pretrained networks come from the store (public/pretrained/) or, where it
// lacks one, are pretrained here first (said through onNote), exactly as `collapse-lab run` would;
// trained policies come from a folder that `collapse-lab run --policies` wrote.
import type { Benchmark, Dialogue } from "../benchmarks/types";
import { benchmarkFor, benchmarkModule } from "../benchmarks/registry";
import { nextActLogprobs } from "../benchmarks/encode";
import type { EngineBackend, EngineModel } from "../engine/backend";
import type { ConditionId, ExperimentConfig } from "../experiment/config";
import type { Checkpoint } from "../engine/checkpoint";
import { decodePolicy, parsePoliciesIndex } from "../experiment/policies";
import {
  assemblePretrained,
  describeJob,
  modelConfig,
  modelOptions,
  pretrainJobs,
  runPretrainJob,
  type PretrainJob,
  type PretrainResult,
} from "../experiment/pretrain";
import { lookUp, type PretrainStore } from "../experiment/store";
import { NeuralSimulator } from "../simulators/neural";
import { BayesPredictive } from "../simulators/simulator";
import { VerbalizedSampling } from "../simulators/vs";
import type { Side } from "../simulators/act-text";

export interface ServedModel {
  id: string;
  description: string;
  side: Side; // which side of the dialogue it plays
  /** p(next act) of each dialogue, [rows, V] (0 outside the allowed acts). */
  distribution(dialogues: Dialogue[]): Promise<Float64Array>;
}

export interface ServedWorld {
  bench: Benchmark;
  names: { agent: string; user: string };
  models: ServedModel[];
  /** The card a policy's dialogue gets when the request has none (policies do not read it). */
  defaultCard: number[];
  vs: ExperimentConfig["vs"];
  /** What is served, in words, for /v1/models' owned_by and the start-up line. */
  source: string;
  dispose(): void;
}

/** Served ids are plain path-like names; this keeps panel and type names usable in them. */
const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "-");

/**
 * Builds the served models of a config at one seed (default: its first), loading every network
 * from `store` where it is there and pretraining it on `backend` where not. With `policies` (a
 * folder written by `collapse-lab run --policies`, for this very config), the trained policies of
 * that seed are served too, as policy/<condition>.
 */
export async function loadServedWorld(opts: {
  config: ExperimentConfig;
  label: string;
  seed?: number;
  backend: EngineBackend;
  store?: PretrainStore;
  policies?: { dir: string };
  onNote?: (m: string) => void;
}): Promise<ServedWorld> {
  const config = opts.config;
  const seed = opts.seed ?? config.seedBase;
  // no ensemble members: serve exposes the reference, which is the ensemble's first member
  const c: ExperimentConfig = {
    ...config,
    conditions: config.conditions.filter((x) => x !== "ensemble"),
  };
  if (c.conditions.length === 0) c.conditions = ["single"];
  const jobs = pretrainJobs(c, seed); // its panel is this seed's
  const results = new Map<PretrainJob, PretrainResult>();
  let loaded = 0;
  for (const job of jobs) {
    const found = opts.store ? await lookUp(opts.store, c, job, opts.backend.name) : null;
    if (found?.source === "store") {
      loaded++;
      results.set(job, found.result);
      continue;
    }
    opts.onNote?.(
      `pretraining ${describeJob(c, job)} (seed ${job.seed}) live${found?.source === "trained" && (found.problem || found.unavailable) ? `: ${found.problem ?? found.unavailable}` : ": not in the store"}`,
    );
    results.set(job, await runPretrainJob(opts.backend, c, job));
  }
  opts.onNote?.(`${loaded} of ${jobs.length} models from the store`);
  const trained = opts.policies ? await readPolicies(config, seed, opts.policies) : [];
  if (opts.policies)
    opts.onNote?.(
      `${trained.length} trained polic${trained.length === 1 ? "y" : "ies"} of seed ${seed} from ${opts.policies.dir}`,
    );
  return servedWorld(
    c,
    assemblePretrained(c, seed, results),
    opts.backend,
    `${opts.label} seed ${seed}`,
    trained,
  );
}

/** The trained policies of one seed in a policies folder, checked against the config they were trained with. */
async function readPolicies(
  config: ExperimentConfig,
  seed: number,
  where: { dir: string },
): Promise<{ condition: ConditionId; checkpoint: Checkpoint }[]> {
  const { readFile } = await import("node:fs/promises");
  const { join } = await import("node:path");
  const index = parsePoliciesIndex(
    await readFile(join(where.dir, "index.json"), "utf8").catch((e: unknown) =>
      Promise.reject(new Error(`${where.dir}: no policies index (${(e as Error).message})`)),
    ),
  );
  const bench = benchmarkFor(config);
  const mc = modelConfig(bench, config.policy.model, "policy");
  const out: { condition: ConditionId; checkpoint: Checkpoint }[] = [];
  // `base` is the pretrained base policy, served already as policy/base
  for (const entry of index.policies.filter((p) => p.seed === seed && p.condition !== "base")) {
    const bytes = await readFile(join(where.dir, entry.file));
    try {
      out.push({
        condition: entry.condition,
        checkpoint: decodePolicy(bytes, config, index.backend, entry, mc),
      });
    } catch (e) {
      throw new Error(`${where.dir}/${entry.file}: ${(e as Error).message}`, { cause: e });
    }
  }
  return out;
}

/** The served models of a config and its pretrained networks (one seed's). */
export function servedWorld(
  c: ExperimentConfig,
  pretrained: ReturnType<typeof assemblePretrained>,
  backend: EngineBackend,
  source: string,
  trained: { condition: ConditionId; checkpoint: Checkpoint }[] = [],
): ServedWorld {
  const bench = benchmarkFor(c);
  const module = benchmarkModule(c.benchmark);
  const opts = modelOptions(bench, c);
  const owned: EngineModel[] = [];
  const load = (r: PretrainResult) => {
    const m = backend.createModel(r.checkpoint, opts);
    owned.push(m);
    return m;
  };
  const refModel = load(pretrained.reference);
  const reference = new NeuralSimulator("reference", bench, refModel, 1, true);
  const aligned = new NeuralSimulator("aligned", bench, refModel, c.simulator.gamma, true);
  const vs = new VerbalizedSampling(bench, aligned, c.vs);
  const user = (
    id: string,
    description: string,
    distribution: (ds: Dialogue[]) => Promise<Float64Array>,
  ): ServedModel => ({ id, description, side: "user", distribution });
  const models: ServedModel[] = [
    user("reference", "the reference simulator π_ref (pretrained on the human corpus)", (ds) =>
      reference.distribution(ds),
    ),
    user(
      "aligned",
      `the aligned, collapsed simulator π_ref^γ (γ = ${c.simulator.gamma}): what single trains against`,
      (ds) => aligned.distribution(ds),
    ),
    user(
      "vs",
      `Verbalized Sampling of the aligned simulator (fidelity φ = ${c.vs.fidelity}): its verbalized distribution q_φ`,
      (ds) => vs.distribution(ds),
    ),
  ];
  for (const m of pretrained.panel) {
    if (!("result" in m)) continue; // LM and remote members are not networks of this project
    const sim = new NeuralSimulator(m.name, bench, load(m.result), m.gamma, true);
    models.push(
      user(`panel/${slug(m.name)}`, `held-out panel member ${m.name} (γ = ${m.gamma})`, (ds) =>
        sim.distribution(ds),
      ),
    );
  }
  const V = bench.acts.length;
  bench.humans.types.forEach((t, i) =>
    models.push(
      user(
        `human/${slug(t.name)}`,
        `a person of latent type ${t.name} (prior ${t.prior.toFixed(2)}): ${t.description}`,
        async (ds) => {
          const out = new Float64Array(ds.length * V);
          ds.forEach((d, b) => out.set(bench.humans.replyProbs(i, d), b * V));
          return out;
        },
      ),
    ),
  );
  const bayes = new BayesPredictive(bench);
  models.push(
    user(
      "bayes",
      "the exact Bayes predictive of the human population given the card and the dialogue (the oracle simulator)",
      (ds) => bayes.distribution(ds),
    ),
  );
  const policy = load(pretrained.basePolicy);
  models.push({
    id: "policy/base",
    description: `the base ${module.roles.agent.toLowerCase()} policy (pretrained on the corpus, before RL)`,
    side: "agent",
    distribution: async (ds) =>
      Float64Array.from(await nextActLogprobs(bench, policy, ds, "policy"), Math.exp),
  });
  for (const t of trained) {
    const m = backend.createModel(t.checkpoint, opts);
    owned.push(m);
    models.push({
      id: `policy/${t.condition}`,
      description: `the ${module.roles.agent.toLowerCase()} policy trained by the ${t.condition} condition`,
      side: "agent",
      distribution: async (ds) =>
        Float64Array.from(await nextActLogprobs(bench, m, ds, "policy"), Math.exp),
    });
  }
  const cards = bench.humans.cardDistribution();
  return {
    bench,
    names: { agent: module.roles.agent, user: module.roles.user },
    models,
    defaultCard: cards[0].card,
    vs: c.vs,
    source,
    dispose: () => owned.forEach((m) => m.dispose()),
  };
}
