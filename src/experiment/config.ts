// ExperimentConfig: plain, versioned JSON validated with zod. Unknown keys and wrong types are
// errors that name their path (e.g. `rl.steps: expected a number`). Presets are small overrides
// of DEFAULT_CONFIG; `--set path=value` applies further overrides to any leaf.
import { z } from "zod";
import { BENCHMARK_IDS, BENCHMARKS, benchmarkFor, benchmarkModule, type BenchmarkId } from "../benchmarks/registry";
import type { BenchmarkModule } from "../benchmarks/types";

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);
const num = (min: number, max = Number.MAX_VALUE) => z.number().min(min).max(max);

export const CONDITIONS = ["base", "single", "ensemble", "vs", "cotrain", "population"] as const;
export type ConditionId = (typeof CONDITIONS)[number];

const ModelSize = z.strictObject({
  d: int(16, 128), // residual width
  layers: int(1, 2), // transformer blocks
  heads: int(1, 8), // attention heads
  mlpRatio: int(1, 8), // MLP width / d
});

const Pretrain = z.strictObject({
  steps: int(1), // maximum-likelihood steps on the corpus
  batch: int(8, 512), // dialogues per step
  lr: num(0, 1),
});

/** A real language model as a panel member: LmSimulator (src/simulators/lm.ts) on transformers.js. */
const PanelLm = z.strictObject({
  model: z.string().min(1), // a local model folder in Hugging Face layout, written as a path (/abs, ./rel, ../rel), or a hub id ("HuggingFaceTB/SmolLM2-135M")
  mode: z.enum(["direct", "vs"]), // direct: sample the LM's label distribution; vs: Verbalized Sampling of it
  temperature: num(0.01, 100).optional(), // p(act) ∝ exp(label log-likelihood / T); default 1
  lengthNormalise: z.boolean().optional(), // score a label by its mean token log-likelihood; default false (the sum)
  promptStyle: z.enum(["text", "chat"]).optional(), // text: a plain prompt (any model); chat: the chat template (instruct models); default text
  k: int(1, 64).optional(), // vs only: candidates per reply; default vs.k
  selection: z.enum(["random", "prob"]).optional(), // vs only: default vs.selection
  exponent: num(0, 100).optional(), // vs only: the verbalized q ∝ p^exponent; default 1 (q is the LM's own p)
  dtype: z.enum(["fp32", "fp16", "q8", "int8", "uint8", "q4", "q4f16"]).optional(), // weight file (onnx/model_<dtype>.onnx); default: transformers.js's per-device choice
});

/**
 * A model on a server with the OpenAI-compatible API as a panel member: RemoteSimulator
 * (src/simulators/remote.ts). The API key is read from the environment variable `apiKeyEnv`
 * (or asked for by the CLI), never written in a config.
 */
const PanelRemote = z
  .strictObject({
    baseUrl: z.string().min(1), // the server's base URL, e.g. http://127.0.0.1:8000/v1
    model: z.string().min(1), // the served model id
    mode: z.enum(["direct", "vs"]), // direct: the model's own reply distribution; vs: Verbalized Sampling (its VS format or prompt)
    protocol: z.enum(["acts", "text"]).optional(), // acts: the act-text chat of collapse-lab serve (default); text: the benchmark's LM prompts (real LMs)
    scoring: z.enum(["auto", "logprobs", "sample"]).optional(), // direct: log-probs where offered (auto, default), only log-probs, or sampled replies
    samples: int(1, 256).optional(), // replies per dialogue state when sampling; default 16
    temperature: num(0, 2).optional(), // sent with sampling requests; default 1
    k: int(1, 64).optional(), // vs only: candidates asked for; default vs.k
    selection: z.enum(["random", "prob"]).optional(), // vs only: default vs.selection
    concurrency: int(1, 64).optional(), // requests in flight per worker; default 8
    timeoutMs: int(100).optional(), // per request attempt; default 60000
    retries: int(0, 10).optional(), // default 4
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable's name")
      .optional(), // the variable that holds the API key (never the key itself)
  })
  .superRefine((r, ctx) => {
    if (r.mode === "direct") for (const k of ["k", "selection"] as const) if (r[k] !== undefined) ctx.addIssue({ code: "custom", path: [k], message: 'only for mode "vs"' });
    if (r.mode === "vs" && r.scoring !== undefined) ctx.addIssue({ code: "custom", path: ["scoring"], message: 'only for mode "direct" (vs reads candidates)' });
    const u = URL.canParse(r.baseUrl) ? new URL(r.baseUrl) : null;
    if (!u || !/^https?:$/.test(u.protocol)) ctx.addIssue({ code: "custom", path: ["baseUrl"], message: "expected an http(s) URL such as http://127.0.0.1:8000/v1" });
    else if (u.username || u.password || u.search) ctx.addIssue({ code: "custom", path: ["baseUrl"], message: "no credentials or query string in the URL: give the API key through apiKeyEnv" });
  });

/**
 * Remote training simulators (optional): `single` trains against `single`, `ensemble` rotates over
 * `ensemble` per batch, `vs` trains against `vs` (mode "vs") instead of the pretrained networks.
 */
const TrainingRemote = z.strictObject({ single: PanelRemote.optional(), ensemble: z.array(PanelRemote).min(1).optional(), vs: PanelRemote.optional() }).superRefine((r, ctx) => {
  if (r.vs && r.vs.mode !== "vs") ctx.addIssue({ code: "custom", path: ["vs", "mode"], message: 'the vs condition\'s remote simulator has mode "vs"' });
});

const NETWORK_KEYS = ["gamma", "prior", "corpusScale", "seedOffset"] as const;

/**
 * A held-out panel member is either a pretrained network collapsed to π^γ (gamma, corpusScale,
 * seedOffset required, prior optional) or, with `lm`, a real LM that is not pretrained here — then
 * the network keys are errors, not silently ignored. Existing configs (no `lm`) keep their meaning.
 */
const PanelMember = z
  .strictObject({
    name: z.string().min(1),
    gamma: num(1, 1000).optional(), // its own alignment strength (network members)
    prior: z.array(num(0)).optional(), // its corpus' type mixture (a different population skew); default: the humans'
    corpusScale: num(0.05, 4).optional(), // corpus size relative to the reference's (network members)
    seedOffset: int(0).optional(), // its own pretraining seed (network members)
    lm: PanelLm.optional(), // present: an LM member
    remote: PanelRemote.optional(), // present: a model on a remote server
  })
  .superRefine((m, ctx) => {
    if (m.lm && m.remote) ctx.addIssue({ code: "custom", path: ["remote"], message: "a member is an LM (lm) or a remote model (remote), not both" });
    if (m.lm || m.remote) {
      const what = m.lm ? "an LM member (with lm)" : "a remote member (with remote)";
      for (const k of NETWORK_KEYS) if (m[k] !== undefined) ctx.addIssue({ code: "custom", path: [k], message: `${what} is not pretrained here; remove this key` });
      if (m.lm?.mode === "direct") {
        for (const k of ["k", "selection", "exponent"] as const) if (m.lm[k] !== undefined) ctx.addIssue({ code: "custom", path: ["lm", k], message: 'only for mode "vs"' });
      }
    } else {
      for (const k of ["gamma", "corpusScale", "seedOffset"] as const)
        if (m[k] === undefined) ctx.addIssue({ code: "custom", path: [k], message: "required for a pretrained panel member (one without lm or remote)" });
    }
  });

/**
 * Another simulator family of the ensemble: a network pretrained on its own corpus (type mixture
 * `prior`, default the humans'; size `corpusScale` × the reference's; pretraining seed
 * `seedOffset`) and collapsed with its own γ, as a held-out panel member is, but trained against.
 */
const EnsembleMember = z.strictObject({
  name: z.string().min(1),
  gamma: num(1, 1000),
  prior: z.array(num(0)).optional(),
  corpusScale: num(0.05, 4),
  seedOffset: int(0),
});

/** The sections every benchmark shares; `benchmark`, `world` and `corpus` come from the benchmark's module. */
const COMMON = {
  version: z.literal(1),
  seeds: int(1, 100), // independent repetitions (pretraining and RL)
  seedBase: int(0), // seeds are seedBase … seedBase + seeds − 1
  conditions: z.array(z.enum(CONDITIONS)).min(1),
  simulator: z.strictObject({
    gamma: num(1, 1000), // alignment strength γ of the aligned simulator: π_ref^γ
    model: ModelSize,
    pretrain: Pretrain,
    remote: TrainingRemote.optional(), // models on remote servers as the training simulators of single, ensemble, vs
  }),
  policy: z.strictObject({
    model: ModelSize,
    pretrain: Pretrain,
  }),
  rl: z.strictObject({
    steps: int(0), // GRPO updates of the policy
    prompts: int(1), // start states (persona cards) per batch
    groupSize: int(2), // G rollouts per start state
    lr: num(0, 1),
    klCoef: num(0), // low-variance KL to the base policy
    epsLow: num(0, 1),
    epsHigh: num(0, 10),
    temperature: num(0.05, 5), // sampling temperature of the policy (training and evaluation)
    evalEvery: int(1), // learning-curve points every n steps
  }),
  // k frozen aligned simulators, rotated per batch (SCOPE: 3 model families). With members: the
  // single simulator and the first k − 1 families listed, each collapsed with its own γ. Without
  // (or with none): the single simulator and k − 1 more networks of its family (the same corpus
  // population, other samples and seeds), all at simulator.gamma.
  ensemble: z.strictObject({
    k: int(1, 16),
    members: z.array(EnsembleMember).max(15).default([]),
  }),
  vs: z.strictObject({
    k: int(1, 64), // candidates per reply (SCOPE: 5)
    selection: z.enum(["random", "prob"]),
    fidelity: num(0, 1), // φ: 1 = the verbalized distribution is π_ref, 0 = the collapsed π_ref^γ
  }),
  cotrain: z.strictObject({
    // adversarial: 1 − the agent's reward (SCOPE persuasion); cooperative: the agent's reward;
    // curriculum (SCOPE): exp(−(Var − 0.25)² / 0.02) of the variance of the agent's rewards over its
    // group of rollouts of one start state — the simulator is rewarded for tasks the agent solves half the time
    reward: z.enum(["adversarial", "cooperative", "curriculum"]),
    lr: num(0, 1),
    klCoef: num(0), // KL to the reference simulator: the realism anchor
    // reverse: the k3 estimate of KL(simulator ‖ reference) on the replies it sampled (GRPO's usual
    // KL; mode-seeking: it sees only the replies the collapsed simulator still samples, so it
    // undoes the collapse slowly); forward: the exact KL(reference ‖ simulator) over every allowed
    // reply at each user turn it played (mass-covering). A config without the key meant reverse.
    anchor: z.enum(["reverse", "forward"]).default("reverse"),
  }),
  population: z.strictObject({
    poolSize: int(1, 64), // FIFO snapshots kept (SCOPE: 10)
    snapshotEvery: int(1), // policy steps between snapshots
    selection: z.enum(["random", "latest"]),
    draw: z.enum(["batch", "episode"]), // one simulator per batch, or one per episode
  }),
  panel: z.array(PanelMember).min(1), // held-out simulators, never trained against
  eval: z.strictObject({
    episodes: int(16), // dialogues per evaluated opponent at the end
    curveEpisodes: int(8), // dialogues per opponent for learning-curve points
    diagnosticSamples: int(16), // dialogues per simulator for γ estimates and mode coverage
    diagnosticSeeds: int(0, 100), // how many seeds (the first ones) get simulator diagnostics
  }),
  parallel: int(1, 16).optional(), // worker threads in the CLI (default: the core count)
};

/** One variant per registered benchmark: its id, its `world` and `corpus` sections and the common ones. */
function variant<Id extends BenchmarkId, W, C extends { dialogues: number }>(id: Id, m: BenchmarkModule<W, C>) {
  const { version, seeds, seedBase, conditions, ...rest } = COMMON;
  return z.strictObject({ version, benchmark: z.literal(id), seeds, seedBase, conditions, world: m.worldSchema, corpus: m.corpusSchema, ...rest });
}

export const ExperimentConfigSchema = z.discriminatedUnion("benchmark", [
  variant("persuasion", BENCHMARKS.persuasion),
  variant("service", BENCHMARKS.service),
  variant("cooperation", BENCHMARKS.cooperation),
]);

export type ExperimentConfig = z.infer<typeof ExperimentConfigSchema>;
export type PanelMemberConfig = z.infer<typeof PanelMember>;
export type EnsembleMemberConfig = z.infer<typeof EnsembleMember>;

export const DEFAULT_CONFIG: ExperimentConfig = {
  version: 1,
  benchmark: "persuasion",
  seeds: 3,
  seedBase: 0,
  conditions: [...CONDITIONS],
  world: BENCHMARKS.persuasion.defaultWorld,
  corpus: BENCHMARKS.persuasion.defaultCorpus,
  // Two layers and 1,500 steps: a one-layer simulator attends over a bag of tokens and cannot pair
  // a reply with the act it answers, so it cannot infer the latent type the way the Bayes predictive
  // does. Its donation decision was then badly wrong exactly where an adaptive policy goes (KL to the
  // Bayes predictive 1.1 nats there vs 0.19 on the corpus' states), and VS, which samples it, taught
  // little that transfers to humans. Measured in the closing note of issue 3.
  simulator: {
    gamma: 10,
    model: { d: 32, layers: 2, heads: 4, mlpRatio: 4 },
    pretrain: { steps: 1500, batch: 128, lr: 3e-3 },
  },
  policy: {
    model: { d: 32, layers: 1, heads: 4, mlpRatio: 4 },
    pretrain: { steps: 150, batch: 128, lr: 3e-3 },
  },
  // 400 steps: compare at convergence (docs/architecture.md#models, trap 3). The collapsed simulator's low-variance
  // reward makes `single` converge first (train success flat from step 75), while `vs` and the
  // co-trained conditions were still rising at 200, so a 200-step budget favoured `single`. In the
  // recorded run (mean of 5 seeds) `cotrain` and `population` level off from ≈ 300; `vs` is still
  // rising at 400 (held-out 0.45 at 300, 0.54 at 400).
  rl: { steps: 400, prompts: 8, groupSize: 16, lr: 3e-3, klCoef: 0.05, epsLow: 0.2, epsHigh: 0.28, temperature: 1, evalEvery: 50 },
  // SCOPE's ensemble rotates three model families. Here: the single simulator's family and two
  // others, skewed and sized like the panel's members but none of them (validateConfig checks).
  ensemble: {
    k: 3,
    members: [
      { name: "family-f", gamma: 5, prior: [0.55, 0.2, 0.15, 0.1], corpusScale: 0.75, seedOffset: 201 },
      { name: "family-g", gamma: 12, prior: [0.35, 0.3, 0.1, 0.25], corpusScale: 0.5, seedOffset: 202 },
    ],
  },
  vs: { k: 5, selection: "random", fidelity: 1 },
  // The forward (mass-covering) anchor. Paper settings, seed 0, KL(reference ‖ co-trained
  // simulator) on the states it plays, from 4.69 at its collapsed start: forward 0.089 after 50
  // steps; reverse 1.67 after 50, 0.48 after 100 — so early `population` snapshots stay collapsed.
  cotrain: { reward: "adversarial", lr: 1e-3, klCoef: 3, anchor: "forward" },
  population: { poolSize: 10, snapshotEvery: 8, selection: "random", draw: "batch" },
  panel: [
    { name: "family-a", gamma: 4, corpusScale: 1, seedOffset: 101 },
    { name: "family-b", gamma: 8, prior: [0.3, 0.4, 0.15, 0.15], corpusScale: 1, seedOffset: 102 },
    { name: "family-c", gamma: 6, prior: [0.3, 0.2, 0.35, 0.15], corpusScale: 0.5, seedOffset: 103 },
    { name: "family-d", gamma: 3, prior: [0.35, 0.2, 0.15, 0.3], corpusScale: 0.5, seedOffset: 104 },
    { name: "family-e", gamma: 15, corpusScale: 0.25, seedOffset: 105 },
  ],
  eval: { episodes: 512, curveEpisodes: 128, diagnosticSamples: 1024, diagnosticSeeds: 1 },
};

/**
 * The default config of a benchmark: the common defaults with its own `world` and `corpus`
 * sections and its overrides of the common sections (BenchmarkModule.configDefaults).
 */
export function defaultConfig(benchmark: BenchmarkId): ExperimentConfig {
  const m = benchmarkModule(benchmark);
  return validateConfig(merge({ ...DEFAULT_CONFIG, benchmark, world: m.defaultWorld, corpus: m.defaultCorpus }, m.configDefaults ?? {}));
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Validates and returns the config; the error lists every problem with its path. */
export function validateConfig(input: unknown): ExperimentConfig {
  const r = ExperimentConfigSchema.safeParse(input);
  if (!r.success) {
    const lines = r.error.issues.flatMap((i) => {
      const at = (path: PropertyKey[]) => (path.length ? path.map(String).join(".") : "(root)");
      // name each unknown key by its full path (zod reports the parent)
      if (i.code === "unrecognized_keys") return i.keys.map((k) => `${at([...i.path, k])}: unknown key`);
      if (i.path.length === 1 && i.path[0] === "benchmark")
        return [`benchmark: unknown benchmark ${JSON.stringify((input as { benchmark?: unknown })?.benchmark)}; benchmarks: ${BENCHMARK_IDS.join(", ")}`];
      return [`${at(i.path)}: ${i.message}`];
    });
    throw new ConfigError(`invalid experiment config — ${lines.join("; ")}`);
  }
  const c = r.data;
  const types = benchmarkModule(c.benchmark).typeNames;
  const priorProblem = (prior: number[] | undefined) =>
    prior && prior.length !== types.length
      ? `expected one weight per latent type (${types.length}: ${types.join(", ")}), got ${prior.length}`
      : prior && !prior.some((w) => w > 0)
        ? "a type mixture needs some positive weight"
        : null;
  for (const m of c.panel) {
    const p = priorProblem(m.prior);
    if (p) throw new ConfigError(`panel.${m.name}.prior: ${p}`);
  }
  c.ensemble.members.forEach((m, i) => {
    const p = priorProblem(m.prior);
    if (p) throw new ConfigError(`ensemble.members[${i}].prior: ${p}`);
  });
  const problems = ensembleProblems(c);
  if (problems.length) throw new ConfigError(`invalid experiment config — ${problems.join("; ")}`);
  return c;
}

/** What makes a simulator family here: its corpus' type mixture (normalised), its corpus size and its γ. */
interface Family {
  prior: number[];
  corpusScale: number;
  gamma: number;
}

function sameFamily(a: Family, b: Family): boolean {
  const close = (x: number, y: number) => Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
  return close(a.gamma, b.gamma) && close(a.corpusScale, b.corpusScale) && a.prior.every((p, i) => close(p, b.prior[i]));
}

/**
 * The ensemble's families (ensemble.members) must be distinct from each other, from the single
 * simulator's (the humans' mixture, the full corpus, simulator.gamma) and from every pretrained
 * panel member's, and pretrain from seed offsets of their own: a policy must never train against
 * a family it is evaluated on as held out. Each problem names its path. simulator.gamma itself is
 * free (the γ knob takes any value ≥ 1): at a panel member's γ the single simulator is that
 * member's family, for `single` and `ensemble` alike, drawn from other seeds.
 */
function ensembleProblems(c: ExperimentConfig): string[] {
  const { k, members } = c.ensemble;
  if (members.length === 0) return [];
  const out: string[] = [];
  if (k > members.length + 1)
    out.push(
      `ensemble.k: ${k}, but ensemble.members lists ${members.length} famil${members.length === 1 ? "y" : "ies"} besides the single simulator's (k at most ${members.length + 1}); list more, or set ensemble.members=[] for ${k} networks of the single simulator's family`,
    );
  // a corpus' mixture is its prior normalised (as the benchmarks read it), the humans' when absent
  const humans = benchmarkFor(c).humans.types.map((t) => t.prior);
  const familyOf = (m: { prior?: number[]; corpusScale: number; gamma: number }): Family => {
    const total = m.prior?.reduce((a, b) => a + b, 0) ?? 1;
    return { prior: m.prior ? m.prior.map((w) => w / total) : humans, corpusScale: m.corpusScale, gamma: m.gamma };
  };
  const network = c.panel.flatMap((p) =>
    p.gamma !== undefined && p.corpusScale !== undefined && p.seedOffset !== undefined ? [{ ...p, gamma: p.gamma, corpusScale: p.corpusScale, seedOffset: p.seedOffset }] : [],
  );
  const single = familyOf({ corpusScale: 1, gamma: c.simulator.gamma });
  members.forEach((m, i) => {
    const at = `ensemble.members[${i}]`;
    const f = familyOf(m);
    if (sameFamily(f, single)) out.push(`${at}: the same family as the single simulator's (the humans' type mixture, corpus 1 ×, γ = simulator.gamma), which is already the ensemble's first member`);
    for (const p of network) if (sameFamily(f, familyOf(p))) out.push(`${at}: the same family as panel member ${p.name}`);
    for (const [j, o] of members.slice(0, i).entries()) {
      if (sameFamily(f, familyOf(o))) out.push(`${at}: the same family as ensemble.members[${j}] (${o.name})`);
      if (o.seedOffset === m.seedOffset) out.push(`${at}.seedOffset: ${m.seedOffset} is also ensemble.members[${j}]'s; each family pretrains from its own`);
      if (o.name === m.name) out.push(`${at}.name: ${JSON.stringify(m.name)} is also ensemble.members[${j}]'s`);
    }
    for (const p of c.panel) {
      if (p.seedOffset === m.seedOffset) out.push(`${at}.seedOffset: ${m.seedOffset} is also panel member ${p.name}'s; each family pretrains from its own`);
      if (p.name === m.name) out.push(`${at}.name: ${JSON.stringify(m.name)} is also a panel member's`);
    }
  });
  return out;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Deep merge of plain objects; arrays and leaves are replaced. */
export function merge<T>(base: T, patch: unknown): T {
  if (patch === undefined) return structuredClone(base);
  if (typeof patch !== "object" || patch === null || Array.isArray(patch) || typeof base !== "object" || base === null || Array.isArray(base)) {
    return structuredClone(patch) as T;
  }
  const out: Record<string, unknown> = { ...(structuredClone(base) as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) out[k] = k in out ? merge(out[k], v) : structuredClone(v);
  return out as T;
}

/** Parses `path=value` (value as JSON, else as a string) and sets it; its sections must exist. */
export function applySet(config: unknown, assignment: string): unknown {
  const eq = assignment.indexOf("=");
  if (eq <= 0) throw new ConfigError(`--set ${JSON.stringify(assignment)}: expected path=value`);
  const path = assignment.slice(0, eq).trim().split(".");
  const raw = assignment.slice(eq + 1).trim();
  let value: Json;
  try {
    value = JSON.parse(raw) as Json;
  } catch {
    value = raw;
  }
  // a name like __proto__ would reach Object.prototype and change every object of the page
  const bad = path.find((k) => k === "" || k === "__proto__" || k === "constructor" || k === "prototype");
  if (bad !== undefined) throw new ConfigError(`--set ${path.join(".")}: no such setting (${JSON.stringify(bad)} is not a setting's name)`);
  const out = structuredClone(config) as Record<string, unknown>;
  let node: Record<string, unknown> = out;
  for (let i = 0; i < path.length - 1; i++) {
    const next = Object.hasOwn(node, path[i]) ? node[path[i]] : undefined;
    if (typeof next !== "object" || next === null) throw new ConfigError(`--set ${path.join(".")}: no such setting (${path.slice(0, i + 1).join(".")} is not a section)`);
    node = next as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value; // an unknown leaf is caught by validation, which names it

  return out;
}

export function seedsOf(c: ExperimentConfig): number[] {
  return Array.from({ length: c.seeds }, (_, i) => c.seedBase + i);
}
