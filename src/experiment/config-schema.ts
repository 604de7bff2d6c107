// The experiment config's schema (zod): the sections every benchmark shares and, per registered
// benchmark, its own `world` and `corpus` sections. Unknown keys and wrong types are errors that
// name their path (config-validate.ts words them).
import { z } from "zod";
import { BENCHMARKS, type BenchmarkId } from "../benchmarks/registry";
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
    if (r.mode === "direct")
      for (const k of ["k", "selection"] as const)
        if (r[k] !== undefined)
          ctx.addIssue({ code: "custom", path: [k], message: 'only for mode "vs"' });
    if (r.mode === "vs" && r.scoring !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["scoring"],
        message: 'only for mode "direct" (vs reads candidates)',
      });
    const u = URL.canParse(r.baseUrl) ? new URL(r.baseUrl) : null;
    if (!u || !/^https?:$/.test(u.protocol))
      ctx.addIssue({
        code: "custom",
        path: ["baseUrl"],
        message: "expected an http(s) URL such as http://127.0.0.1:8000/v1",
      });
    else if (u.username || u.password || u.search)
      ctx.addIssue({
        code: "custom",
        path: ["baseUrl"],
        message: "no credentials or query string in the URL: give the API key through apiKeyEnv",
      });
  });

/**
 * Remote training simulators (optional): `single` trains against `single`, `ensemble` rotates over
 * `ensemble` per batch, `vs` trains against `vs` (mode "vs") instead of the pretrained networks.
 */
const TrainingRemote = z
  .strictObject({
    single: PanelRemote.optional(),
    ensemble: z.array(PanelRemote).min(1).optional(),
    vs: PanelRemote.optional(),
  })
  .superRefine((r, ctx) => {
    if (r.vs && r.vs.mode !== "vs")
      ctx.addIssue({
        code: "custom",
        path: ["vs", "mode"],
        message: 'the vs condition\'s remote simulator has mode "vs"',
      });
  });

/**
 * An imported dialogue corpus (docs/humans.md): its file and the SHA-256 of the file's bytes. The
 * CLI reads `file` as a path and keeps only its name; the app finds the file it stored by its hash.
 * A run fills in sha256 before it starts, so a report names the exact file it used.
 */
const CorpusRef = z.strictObject({
  file: z.string().min(1).max(500),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "64 lowercase hex digits")
    .optional(),
});
/** Replies at a state are the corpus' own when at least this many of its people reached it; else it backs off. */
const minCount = int(1, 100_000);

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
    corpus: CorpusRef.optional(), // present: the empirical population of an imported corpus (docs/humans.md)
    minCount: minCount.optional(), // corpus members only: default 5
  })
  .superRefine((m, ctx) => {
    const kinds = (["lm", "remote", "corpus"] as const).filter((k) => m[k] !== undefined);
    if (kinds.length > 1)
      ctx.addIssue({
        code: "custom",
        path: [kinds[1]],
        message: `a member is an LM (lm), a remote model (remote) or a corpus (corpus): this one has ${kinds.join(" and ")}, ${kinds.length === 2 ? "not both" : "not all three"}`,
      });
    if (m.minCount !== undefined && !m.corpus)
      ctx.addIssue({ code: "custom", path: ["minCount"], message: "only for a corpus member" });
    if (m.lm || m.remote || m.corpus) {
      const what = m.lm
        ? "an LM member (with lm)"
        : m.remote
          ? "a remote member (with remote)"
          : "a corpus member (with corpus)";
      for (const k of NETWORK_KEYS)
        if (m[k] !== undefined)
          ctx.addIssue({
            code: "custom",
            path: [k],
            message: `${what} is not pretrained here; remove this key`,
          });
      if (m.lm?.mode === "direct") {
        for (const k of ["k", "selection", "exponent"] as const)
          if (m.lm[k] !== undefined)
            ctx.addIssue({ code: "custom", path: ["lm", k], message: 'only for mode "vs"' });
      }
    } else {
      for (const k of ["gamma", "corpusScale", "seedOffset"] as const)
        if (m[k] === undefined)
          ctx.addIssue({
            code: "custom",
            path: [k],
            message: "required for a pretrained panel member (one without lm, remote or corpus)",
          });
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
    // The population the reference simulator's corpus is drawn from, as `world` settings merged
    // over the humans' (absent: the humans' own, the oracle setting). A base model's users are
    // not the study's participants; validated against the benchmark's `world` schema.
    referenceWorld: z.record(z.string(), z.unknown()).optional(),
    corpus: CorpusRef.optional(), // the reference (and its family's ensemble networks) learn from this imported corpus instead of the behaviour agent's (docs/humans.md)
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
    // Two conditions that exchange their RL random streams: a check that a difference between
    // them is not an artefact of which stream each one draws (the label-swap check)
    streamSwap: z
      .tuple([z.enum(CONDITIONS), z.enum(CONDITIONS)])
      .refine(([a, b]) => a !== b, "two different conditions")
      .optional(),
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
  panel: z.array(PanelMember).min(1), // held-out simulators, never trained against (or one of the benchmark's panels by name: panelSchema)
  // the evaluation humans: absent, the benchmark's hand-written population; with a corpus, the
  // empirical population of its dialogues (docs/humans.md#the-empirical-population)
  humans: z
    .strictObject({
      corpus: CorpusRef,
      minCount: minCount.default(5), // people at a state before its replies are used as they are
    })
    .optional(),
  eval: z.strictObject({
    episodes: int(16), // dialogues per evaluated opponent at the end
    curveEpisodes: int(8), // dialogues per opponent for learning-curve points
    diagnosticSamples: int(16), // dialogues per simulator for γ estimates and mode coverage
    diagnosticSeeds: int(0, 100), // how many seeds (the first ones) get simulator diagnostics
  }),
  parallel: int(1, 16).optional(), // worker threads in the CLI (default: the core count)
};

/**
 * A benchmark's `panel`: a list of members, or the name of one of its panels
 * (BenchmarkModule.panels, e.g. "own-modes"), which validation replaces by that panel's members.
 */
function panelSchema(id: string, m: BenchmarkModule<unknown, { dialogues: number }>) {
  const panels = m.panels ?? {};
  const names = Object.keys(panels);
  const known = names.length
    ? `${id}'s panels: ${names.join(", ")}`
    : `${id} has no named panels; list the members`;
  return z.preprocess(
    (v) =>
      typeof v === "string" && Object.hasOwn(panels, v)
        ? structuredClone(panels[v as keyof typeof panels])
        : v,
    z
      .array(PanelMember, {
        error: (issue) =>
          typeof issue.input === "string"
            ? `no panel named ${JSON.stringify(issue.input)} (${known})`
            : undefined,
      })
      .min(1),
  );
}

/** One variant per registered benchmark: its id, its `world`, `corpus` and `panel` sections and the common ones. */
function variant<Id extends BenchmarkId, W, C extends { dialogues: number }>(
  id: Id,
  m: BenchmarkModule<W, C>,
) {
  const { version, seeds, seedBase, conditions, ...rest } = COMMON;
  return z.strictObject({
    version,
    benchmark: z.literal(id),
    seeds,
    seedBase,
    conditions,
    world: m.worldSchema,
    corpus: m.corpusSchema,
    ...rest,
    panel: panelSchema(id, m as BenchmarkModule<unknown, { dialogues: number }>),
  });
}

export const ExperimentConfigSchema = z.discriminatedUnion("benchmark", [
  variant("persuasion", BENCHMARKS.persuasion),
  variant("service", BENCHMARKS.service),
  variant("cooperation", BENCHMARKS.cooperation),
]);

export type ExperimentConfig = z.infer<typeof ExperimentConfigSchema>;
export type PanelMemberConfig = z.infer<typeof PanelMember>;
export type EnsembleMemberConfig = z.infer<typeof EnsembleMember>;
export type CorpusRefConfig = z.infer<typeof CorpusRef>;
