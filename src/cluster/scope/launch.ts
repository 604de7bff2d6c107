// SCOPE's Slime launchers as Ray jobs: from an experiment's condition, seed and knobs, the
// entrypoint (an argv array and a shell-quoted command line) and the Ray Jobs submission body.
// No HTTP here; the Ray Jobs client submits the body.
//
// What SCOPE takes is read from the public repository CHATS-lab/scope_usim (cmd/slime/README.md,
// cmd/slime/{p4g,tau2}/*.sh, train_cotrain_slime.py), not run: docs/scope-on-ray.md lists the
// assumptions. Its launcher scripts start and kill a Ray head of their own, so a job on an
// existing cluster runs the Python entry module they call (`python3 -m train_p4g_slime …`).
import type { ConditionId, ExperimentConfig } from "../../experiment/config";

export type ScopeBenchmark = "p4g" | "tau2";

/** collapse-lab's benchmark → SCOPE's (Persuasion for Good; τ²-bench, whose dual control Service follows); a benchmark not listed has no SCOPE launcher here. */
export const SCOPE_BENCHMARK: Partial<Record<ExperimentConfig["benchmark"], ScopeBenchmark>> = {
  persuasion: "p4g",
  service: "tau2",
};

/** A frozen simulator behind an OpenAI-compatible API, as SCOPE's `--usim-fixed-opponent-*` flags name it. */
export interface ScopeSimulator {
  model: string;
  baseUrl: string;
  apiKeyVar: string; // the environment variable on the cluster that holds its key (never the key)
}

/** The simulators of SCOPE's main runs (cmd/slime/p4g/ensemble.sh, vs_gpt5mini.sh). */
export const SCOPE_SIMULATORS = {
  haiku: {
    model: "anthropic/claude-haiku-4.5",
    baseUrl: "https://openrouter.ai/api/v1",
    apiKeyVar: "OPENROUTER_API_KEY",
  },
  gpt5mini: {
    model: "gpt-5-mini",
    baseUrl: "https://api.openai.com/v1",
    apiKeyVar: "OPENAI_API_KEY",
  },
  gemini: {
    model: "google/gemini-3-flash-preview",
    baseUrl: "https://openrouter.ai/api/v1",
    apiKeyVar: "OPENROUTER_API_KEY",
  },
} as const satisfies Record<string, ScopeSimulator>;

/**
 * SCOPE's shared training settings (the Qwen3-4B launchers): 16 prompts × 8 samples, GRPO with
 * clip 0.2 / 0.28 and a low-variance KL of 0.01, Adam at 1e-6, temperature 0.7.
 */
// prettier-ignore
export const SCOPE_TRAINING_ARGS: readonly string[] = [
  "--rollout-batch-size", "16",
  "--n-samples-per-prompt", "8",
  "--global-batch-size", "128",
  "--rollout-temperature", "0.7",
  "--rollout-max-response-len", "16384",
  "--balance-data",
  "--advantage-estimator", "grpo",
  "--disable-grpo-std-normalization",
  "--disable-rewards-normalization",
  "--use-kl-loss",
  "--kl-loss-coef", "0.01",
  "--kl-loss-type", "low_var_kl",
  "--eps-clip", "0.2",
  "--eps-clip-high", "0.28",
  "--optimizer", "adam",
  "--lr", "1e-6",
  "--save-interval", "16",
];

export interface ScopeLaunchOptions {
  python: string; // the interpreter on the cluster
  modelDir: string; // holds <policyModel>/ (Hugging Face) and <policyModel>_torch_dist/ (Megatron)
  policyModel: string; // the trained policy's checkpoint folder name
  /** A shell file that defines MODEL_ARGS (Slime's model architecture flags), sourced before the run; null: none (give them in extraArgs). */
  modelArgsScript: string | null;
  simulator: ScopeSimulator; // the frozen simulator of single and vs
  ensemble: ScopeSimulator[]; // the families ensemble rotates (its first ensemble.k)
  outputDir: string; // each job writes under <outputDir>/<benchmark>-<condition>-seed<S>/
  numRollout: number; // rollout batches (training steps)
  gpus: number; // GPUs of the node the job's actors claim
  /** SCOPE's held-out panel YAML; undefined: SCOPE's 6-model panel of the benchmark; null: no evaluation during training. */
  evalConfig?: string | null;
  tau2Domain: string; // τ²-bench domain
  sglangConfig: string; // the two-engine SGLang layout of the co-training modes
  trainingArgs: readonly string[]; // GRPO, optimiser and rollout shape
  extraArgs: readonly string[]; // appended last (parallelism, W&B, …)
  workingDir: string | null; // runtime_env.working_dir: a path or URI the cluster can read; null: the job starts where SCOPE is installed
  env: Record<string, string>; // runtime_env.env_vars
  entrypointGpus: number; // GPUs reserved for the driver itself (Slime's actors claim their own)
}

export const DEFAULT_SCOPE_OPTIONS: ScopeLaunchOptions = {
  python: "python3",
  modelDir: "/models",
  policyModel: "Qwen3-4B-Instruct-2507",
  modelArgsScript: "slime/scripts/models/qwen3-4B-Instruct-2507.sh",
  simulator: SCOPE_SIMULATORS.gpt5mini,
  ensemble: [SCOPE_SIMULATORS.haiku, SCOPE_SIMULATORS.gpt5mini, SCOPE_SIMULATORS.gemini],
  outputDir: "results/collapse-lab",
  numRollout: 100,
  gpus: 8,
  tau2Domain: "retail",
  sglangConfig: "configs/sglang/cotrain_4plus4.yaml",
  trainingArgs: SCOPE_TRAINING_ARGS,
  extraArgs: [],
  workingDir: null,
  env: { PYTHONPATH: "/root/Megatron-LM/", CUDA_DEVICE_MAX_CONNECTIONS: "1" },
  entrypointGpus: 0,
};

/** SCOPE's 6-model held-out panels (its launchers pass them through envsubst; they hold no variables). */
export const SCOPE_EVAL_CONFIG: Record<ScopeBenchmark, string> = {
  p4g: "eval_configs/p4g_6model.yaml",
  tau2: "eval_configs/tau2_retail_6model.yaml",
};

/** The Ray Jobs submission body (POST /api/jobs/). */
export interface ScopeSubmission {
  entrypoint: string;
  runtime_env?: { working_dir?: string; env_vars?: Record<string, string> };
  metadata: Record<string, string>;
  entrypoint_num_gpus?: number;
}

export interface ScopeJob {
  condition: ConditionId;
  seed: number;
  benchmark: ScopeBenchmark;
  argv: string[];
  command: string; // argv, shell-quoted: Ray runs the entrypoint through a shell
  submission: ScopeSubmission;
  /** Where this job departs from the config or from SCOPE's main runs. */
  notes: string[];
}

export class ScopeLaunchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScopeLaunchError";
  }
}

// SCOPE's main-run values, for the notes on departures from them
const SCOPE_MAIN = {
  vsK: 5,
  vsSelection: "random",
  ensembleK: 3,
  poolSize: 10,
  poolSaveInterval: 16,
  poolSelection: "random",
} as const;

/** Bash runs this with $1 = the model-args script and the command after it: MODEL_ARGS go last. */
export const SOURCE_MODEL_ARGS = 'source "$1" && shift && exec "$@" "${MODEL_ARGS[@]}"';

/** The Ray job of one condition and seed. */
export function scopeJob(
  config: ExperimentConfig,
  condition: ConditionId,
  seed: number,
  options: Partial<ScopeLaunchOptions> = {},
): ScopeJob {
  const o = checkedOptions({ ...DEFAULT_SCOPE_OPTIONS, ...options });
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new ScopeLaunchError(`seed: expected an integer ≥ 0, got ${seed}`);
  const benchmark = SCOPE_BENCHMARK[config.benchmark];
  if (!benchmark)
    throw new ScopeLaunchError(
      `benchmark ${JSON.stringify(config.benchmark)}: SCOPE has no launcher for it here (collapse-lab builds SCOPE jobs for p4g and tau2: Persuasion and Service)`,
    );
  const notes: string[] = [];
  const dir = `${o.outputDir}/${benchmark}-${condition}-seed${seed}`;
  const { module, args } = conditionArgs(config, condition, benchmark, dir, o, notes);
  const cotraining = condition === "cotrain" || condition === "population";
  if (cotraining && o.gpus % 2 !== 0)
    throw new ScopeLaunchError(
      `condition ${condition}: gpus is ${o.gpus}, but SCOPE's co-training modes split the GPUs evenly between its two models; give an even number`,
    );
  // prettier-ignore
  const core = [
    "--hf-checkpoint", `${o.modelDir}/${o.policyModel}`,
    "--ref-load", `${o.modelDir}/${o.policyModel}_torch_dist`,
    "--save", `${dir}/checkpoints`,
    "--trajectory-output-dir", `${dir}/trajectories`,
    "--seed", String(seed),
    "--rollout-seed", String(seed),
    "--num-rollout", String(o.numRollout),
    "--actor-num-nodes", "1",
    // the co-training modes train two models on half the GPUs each (SCOPE: 4 + 4, offloaded)
    ...(cotraining ? ["--actor-num-gpus-per-node", String(o.gpus / 2), "--colocate", "--offload-rollout", "--offload-train", "--sglang-config", o.sglangConfig] : ["--actor-num-gpus-per-node", String(o.gpus), "--colocate"]),
  ];
  if (cotraining && o.gpus !== 8)
    notes.push(
      `${o.gpus} GPUs: the SGLang layout ${o.sglangConfig} must match ${o.gpus / 2} + ${o.gpus / 2} engines (SCOPE's cotrain_4plus4.yaml is for 8)`,
    );
  const evalConfig = o.evalConfig === undefined ? SCOPE_EVAL_CONFIG[benchmark] : o.evalConfig;
  const evalArgs =
    evalConfig === null
      ? []
      : ["--eval-interval", "16", "--skip-eval-before-train", "--eval-config", evalConfig];
  if (evalConfig === null) notes.push("evalConfig null: no held-out evaluation during training");
  if (benchmark === "tau2" && o.evalConfig === undefined && o.tau2Domain !== "retail")
    notes.push(
      `tau2Domain ${o.tau2Domain}: SCOPE's evaluation panel ${SCOPE_EVAL_CONFIG.tau2} is retail's; give evalConfig`,
    );
  const run = [
    o.python,
    "-m",
    module,
    ...core,
    ...args,
    ...o.trainingArgs,
    ...evalArgs,
    ...o.extraArgs,
  ];
  const argv =
    o.modelArgsScript === null
      ? run
      : ["bash", "-c", SOURCE_MODEL_ARGS, "scope-launch", o.modelArgsScript, ...run];
  const command = shellJoin(argv);
  const env_vars = Object.keys(o.env).length ? o.env : undefined;
  const runtime_env =
    o.workingDir !== null || env_vars
      ? {
          ...(o.workingDir !== null ? { working_dir: o.workingDir } : {}),
          ...(env_vars ? { env_vars } : {}),
        }
      : undefined;
  const submission: ScopeSubmission = {
    entrypoint: command,
    ...(runtime_env ? { runtime_env } : {}),
    metadata: {
      tool: "collapse-lab",
      kind: "scope",
      benchmark,
      condition,
      seed: String(seed),
      module,
    },
    ...(o.entrypointGpus > 0 ? { entrypoint_num_gpus: o.entrypointGpus } : {}),
  };
  return { condition, seed, benchmark, argv, command, submission, notes };
}

/** One job per trained condition × seed of the config; `base` (no RL) is left out with its reason. */
export function scopeJobs(
  config: ExperimentConfig,
  options: Partial<ScopeLaunchOptions> = {},
): { jobs: ScopeJob[]; skipped: { condition: ConditionId; reason: string }[] } {
  const jobs: ScopeJob[] = [];
  const skipped: { condition: ConditionId; reason: string }[] = [];
  const seeds = Array.from({ length: config.seeds }, (_, i) => config.seedBase + i);
  for (const condition of config.conditions) {
    if (condition === "base") skipped.push({ condition, reason: BASE_REASON });
    else for (const seed of seeds) jobs.push(scopeJob(config, condition, seed, options));
  }
  return { jobs, skipped };
}

const BASE_REASON =
  "base is the policy before RL: SCOPE measures it with eval_base.sh, a training job stopped by hand after its rollout-0 evaluation, which is not a job that ends by itself; collapse-lab builds none";

/** The entry module and the arguments that make a condition what it is. */
function conditionArgs(
  config: ExperimentConfig,
  condition: ConditionId,
  benchmark: ScopeBenchmark,
  dir: string,
  o: ScopeLaunchOptions,
  notes: string[],
): { module: string; args: string[] } {
  const env =
    benchmark === "p4g"
      ? [
          "--p4g-corpus-path",
          "data/p4g/corpus",
          "--p4g-dataset-dir",
          "data/p4g/train",
          "--p4g-word-limit",
          "50",
          "--p4g-num-turns",
          "10",
        ]
      : ["--usim-domain", o.tau2Domain];
  const maxTurns = ["--max-turns", benchmark === "p4g" ? "10" : "30"];
  const data =
    benchmark === "p4g"
      ? "usim.p4g.data_source.get_p4g_data_source"
      : "usim.slime.data_source.get_tau2_data_source";
  // prettier-ignore
  const frozen = (opponents: ScopeSimulator[]) => ({
    module: benchmark === "p4g" ? "train_p4g_slime" : "train_usim_slime",
    args: [
      "--data-source-path", data,
      "--rollout-function-path", benchmark === "p4g" ? "usim.p4g.rollout.p4g_generate_rollout" : "usim.slime.rollout.usim_generate_rollout",
      "--trainable-role", "agent",
      ...maxTurns,
      ...env,
      // several opponents: SCOPE rotates over the comma-separated lists
      "--usim-fixed-opponent-model", opponents.map((s) => s.model).join(","),
      "--usim-fixed-opponent-base-url", opponents.map((s) => s.baseUrl).join(","),
      "--usim-fixed-opponent-api-key-var", opponents.map((s) => s.apiKeyVar).join(","),
    ],
  });
  const cotrainRollout =
    benchmark === "p4g"
      ? "usim.slime.cotrain_rollout.cotrain_generate_rollout"
      : "usim.slime.tau2_cotrain_rollout.tau2_cotrain_generate_rollout";
  const cotrained = (mode: string[]) => ({
    module: "train_cotrain_slime",
    args: [
      "--data-source-path",
      data,
      "--rollout-function-path",
      cotrainRollout,
      ...mode,
      ...maxTurns,
      ...env,
    ],
  });

  switch (condition) {
    case "base":
      throw new ScopeLaunchError(`condition base: ${BASE_REASON}`);
    case "single":
      return frozen([o.simulator]);
    case "vs": {
      const { k, selection } = config.vs;
      if (k !== SCOPE_MAIN.vsK || selection !== SCOPE_MAIN.vsSelection)
        notes.push(`vs: k = ${k}, ${selection} (SCOPE's main runs: k = 5, random)`);
      notes.push(
        "vs.fidelity has no SCOPE flag: on a real LM the fidelity of its verbalized distribution is what VS measures, not a setting",
      );
      const job = frozen([o.simulator]);
      return {
        ...job,
        args: [
          ...job.args,
          "--usim-verbalized-sampling",
          "--usim-vs-num-samples",
          String(k),
          "--usim-vs-method",
          selection,
        ],
      };
    }
    case "ensemble": {
      const k = config.ensemble.k;
      if (o.ensemble.length < k)
        throw new ScopeLaunchError(
          `condition ensemble: ensemble.k is ${k} but ${o.ensemble.length} simulator famil${o.ensemble.length === 1 ? "y was" : "ies were"} given; give at least ${k} (SCOPE's: Claude Haiku 4.5, GPT-5-mini, Gemini 3 Flash)`,
        );
      if (k !== SCOPE_MAIN.ensembleK) notes.push(`ensemble: k = ${k} (SCOPE's main runs: 3)`);
      notes.push(
        "ensemble: the families are the given API models; ensemble.members (toy networks) do not carry over",
      );
      return frozen(o.ensemble.slice(0, k));
    }
    case "cotrain":
      // SCOPE's Self-Play: both models trained on the same dialogues
      return cotrained([
        "--training-mode",
        "dual_cotrain",
        "--trainable-role",
        "both",
        ...rewardArgs(config.cotrain.reward, benchmark),
      ]);
    case "population": {
      // SCOPE's Population Self-Play: --training-mode dual_selfplay with the pool flags
      // (dual_cotrain ignores them). Its launchers train the agent role and pass --no-agent-kl.
      const p = config.population;
      if (p.draw !== "batch")
        throw new ScopeLaunchError(
          `condition population: population.draw is "${p.draw}", but SCOPE draws one pool member per rollout batch and has no per-episode draw; set population.draw=batch`,
        );
      if (
        p.poolSize !== SCOPE_MAIN.poolSize ||
        p.snapshotEvery !== SCOPE_MAIN.poolSaveInterval ||
        p.selection !== SCOPE_MAIN.poolSelection
      )
        notes.push(
          `population: pool ${p.poolSize}, a snapshot every ${p.snapshotEvery} rollouts, ${p.selection} (SCOPE's main runs: 10, 16, random)`,
        );
      // prettier-ignore
      return cotrained([
        "--training-mode", "dual_selfplay",
        "--trainable-role", "agent",
        "--no-agent-kl",
        "--pool-dir", `${dir}/checkpoint_pool`,
        "--pool-size", String(p.poolSize),
        "--pool-save-interval", String(p.snapshotEvery),
        "--pool-selection", p.selection,
      ]);
    }
    default:
      throw new ScopeLaunchError(`unknown condition ${JSON.stringify(condition satisfies never)}`);
  }
}

/** The simulator's reward in SCOPE's co-training rollouts: P4G is adversarial unless cooperative; τ² cooperative unless curriculum. */
function rewardArgs(
  reward: ExperimentConfig["cotrain"]["reward"],
  benchmark: ScopeBenchmark,
): string[] {
  if (benchmark === "p4g") {
    if (reward === "adversarial") return [];
    if (reward === "cooperative") return ["--cooperative-reward"];
    throw new ScopeLaunchError(
      "condition cotrain: cotrain.reward \"curriculum\" has no flag in SCOPE's P4G co-training rollout (its curriculum is τ²-bench's); use adversarial or cooperative",
    );
  }
  if (reward === "cooperative") return [];
  if (reward === "curriculum") return ["--tau2-user-reward-mode", "curriculum"];
  throw new ScopeLaunchError(
    "condition cotrain: cotrain.reward \"adversarial\" has no mode in SCOPE's τ²-bench co-training rollout (cooperative or curriculum); set cotrain.reward=curriculum (SCOPE's Self-Play) or cooperative",
  );
}

function checkedOptions(o: ScopeLaunchOptions): ScopeLaunchOptions {
  const problems: string[] = [];
  const text = (name: string, v: unknown) => {
    if (typeof v !== "string" || v.length === 0)
      problems.push(`${name}: expected a non-empty string`);
  };
  for (const k of [
    "python",
    "modelDir",
    "policyModel",
    "outputDir",
    "tau2Domain",
    "sglangConfig",
  ] as const)
    text(k, o[k]);
  for (const k of ["modelArgsScript", "evalConfig", "workingDir"] as const)
    if (o[k] !== null && o[k] !== undefined) text(k, o[k]);
  if (!Number.isSafeInteger(o.numRollout) || o.numRollout < 1)
    problems.push(`numRollout: expected an integer ≥ 1, got ${o.numRollout}`);
  if (!Number.isSafeInteger(o.gpus) || o.gpus < 1)
    problems.push(`gpus: expected an integer ≥ 1, got ${o.gpus}`);
  if (!Number.isFinite(o.entrypointGpus) || o.entrypointGpus < 0)
    problems.push(`entrypointGpus: expected a number ≥ 0, got ${o.entrypointGpus}`);
  const sims: [string, ScopeSimulator][] = [
    ["simulator", o.simulator],
    ...o.ensemble.map((s, i): [string, ScopeSimulator] => [`ensemble[${i}]`, s]),
  ];
  for (const [at, s] of sims) {
    for (const k of ["model", "baseUrl", "apiKeyVar"] as const) {
      const v = s?.[k];
      if (typeof v !== "string" || v.length === 0)
        problems.push(`${at}.${k}: expected a non-empty string`);
      // SCOPE splits the opponent flags on commas
      else if (v.includes(","))
        problems.push(
          `${at}.${k}: ${JSON.stringify(v)} contains a comma, which SCOPE reads as a list separator`,
        );
    }
    if (
      typeof s?.apiKeyVar === "string" &&
      s.apiKeyVar &&
      !/^[A-Za-z_][A-Za-z0-9_]*$/.test(s.apiKeyVar)
    )
      problems.push(
        `${at}.apiKeyVar: ${JSON.stringify(s.apiKeyVar)} is not an environment variable's name`,
      );
  }
  for (const [k, v] of Object.entries(o.env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
      problems.push(`env: ${JSON.stringify(k)} is not an environment variable's name`);
    if (typeof v !== "string") problems.push(`env.${k}: expected a string`);
  }
  for (const [k, list] of [
    ["trainingArgs", o.trainingArgs],
    ["extraArgs", o.extraArgs],
  ] as const)
    if (!Array.isArray(list) || list.some((a) => typeof a !== "string"))
      problems.push(`${k}: expected a list of strings`);
  if (problems.length)
    throw new ScopeLaunchError(`invalid SCOPE launch options — ${problems.join("; ")}`);
  return o;
}

/** One argument for a POSIX shell: as is when it has only safe characters, else in single quotes. */
export function shellQuote(arg: string): string {
  if (arg.includes("\0"))
    throw new ScopeLaunchError(
      "an argument contains a NUL character, which no command line can carry",
    );
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

export const shellJoin = (argv: readonly string[]): string => argv.map(shellQuote).join(" ");
