// SCOPE's Ray job entrypoints from the paper's conditions: the command lines are written out here
// in full (from SCOPE's cmd/slime launchers), not computed by the code under test; quoting is
// checked by running the command line through a real bash with a stand-in interpreter.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applySet, validateConfig, type ExperimentConfig } from "../../src/experiment/config";
import { presetConfig } from "../../src/experiment/presets";
import {
  scopeJob,
  scopeJobs,
  ScopeLaunchError,
  shellJoin,
  shellQuote,
} from "../../src/cluster/scope/launch";

const paper = presetConfig("persuasion-paper");
const withSets = (c: ExperimentConfig, ...sets: string[]) =>
  validateConfig(sets.reduce<unknown>(applySet, c));
// SCOPE's main-run pool: a snapshot every 16 rollouts (the toy default is 8)
const scopePaper = withSets(paper, "population.snapshotEvery=16");

const WRAP = `bash -c 'source "$1" && shift && exec "$@" "\${MODEL_ARGS[@]}"' scope-launch slime/scripts/models/qwen3-4B-Instruct-2507.sh`;
const CKPT =
  "--hf-checkpoint /models/Qwen3-4B-Instruct-2507 --ref-load /models/Qwen3-4B-Instruct-2507_torch_dist";
const P4G_ENV =
  "--p4g-corpus-path data/p4g/corpus --p4g-dataset-dir data/p4g/train --p4g-word-limit 50 --p4g-num-turns 10";
const TRAINING =
  "--rollout-batch-size 16 --n-samples-per-prompt 8 --global-batch-size 128 --rollout-temperature 0.7 --rollout-max-response-len 16384 --balance-data " +
  "--advantage-estimator grpo --disable-grpo-std-normalization --disable-rewards-normalization --use-kl-loss --kl-loss-coef 0.01 --kl-loss-type low_var_kl " +
  "--eps-clip 0.2 --eps-clip-high 0.28 --optimizer adam --lr 1e-6 --save-interval 16";
const EVAL_P4G =
  "--eval-interval 16 --skip-eval-before-train --eval-config eval_configs/p4g_6model.yaml";

describe("SCOPE entrypoints for the paper's conditions (P4G, seed 0)", () => {
  it("single: one frozen GPT-5-mini simulator, no VS flag", () => {
    expect(scopeJob(scopePaper, "single", 0).command).toBe(
      `${WRAP} python3 -m train_p4g_slime ${CKPT} --save results/collapse-lab/p4g-single-seed0/checkpoints --trajectory-output-dir results/collapse-lab/p4g-single-seed0/trajectories ` +
        `--seed 0 --rollout-seed 0 --num-rollout 100 --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate ` +
        `--data-source-path usim.p4g.data_source.get_p4g_data_source --rollout-function-path usim.p4g.rollout.p4g_generate_rollout --trainable-role agent --max-turns 10 ${P4G_ENV} ` +
        `--usim-fixed-opponent-model gpt-5-mini --usim-fixed-opponent-base-url https://api.openai.com/v1 --usim-fixed-opponent-api-key-var OPENAI_API_KEY ` +
        `${TRAINING} ${EVAL_P4G}`,
    );
  });

  it("vs: the same simulator with Verbalized Sampling, k = 5, random", () => {
    const job = scopeJob(scopePaper, "vs", 0);
    expect(job.command).toBe(
      `${WRAP} python3 -m train_p4g_slime ${CKPT} --save results/collapse-lab/p4g-vs-seed0/checkpoints --trajectory-output-dir results/collapse-lab/p4g-vs-seed0/trajectories ` +
        `--seed 0 --rollout-seed 0 --num-rollout 100 --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate ` +
        `--data-source-path usim.p4g.data_source.get_p4g_data_source --rollout-function-path usim.p4g.rollout.p4g_generate_rollout --trainable-role agent --max-turns 10 ${P4G_ENV} ` +
        `--usim-fixed-opponent-model gpt-5-mini --usim-fixed-opponent-base-url https://api.openai.com/v1 --usim-fixed-opponent-api-key-var OPENAI_API_KEY ` +
        `--usim-verbalized-sampling --usim-vs-num-samples 5 --usim-vs-method random ${TRAINING} ${EVAL_P4G}`,
    );
    expect(job.notes.some((n) => n.includes("vs.fidelity"))).toBe(true);
    expect(job.notes.some((n) => n.startsWith("vs: k"))).toBe(false); // the paper's k and selection: no departure noted
  });

  it("vs with k = 3 and prob selection", () => {
    const job = scopeJob(withSets(paper, "vs.k=3", "vs.selection=prob"), "vs", 0);
    expect(
      job.argv.slice(
        job.argv.indexOf("--usim-verbalized-sampling"),
        job.argv.indexOf("--usim-verbalized-sampling") + 5,
      ),
    ).toEqual([
      "--usim-verbalized-sampling",
      "--usim-vs-num-samples",
      "3",
      "--usim-vs-method",
      "prob",
    ]);
    expect(job.notes).toContain("vs: k = 3, prob (SCOPE's main runs: k = 5, random)");
  });

  it("ensemble: three API families rotated, as comma-separated lists", () => {
    expect(scopeJob(scopePaper, "ensemble", 0).command).toBe(
      `${WRAP} python3 -m train_p4g_slime ${CKPT} --save results/collapse-lab/p4g-ensemble-seed0/checkpoints --trajectory-output-dir results/collapse-lab/p4g-ensemble-seed0/trajectories ` +
        `--seed 0 --rollout-seed 0 --num-rollout 100 --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate ` +
        `--data-source-path usim.p4g.data_source.get_p4g_data_source --rollout-function-path usim.p4g.rollout.p4g_generate_rollout --trainable-role agent --max-turns 10 ${P4G_ENV} ` +
        `--usim-fixed-opponent-model anthropic/claude-haiku-4.5,gpt-5-mini,google/gemini-3-flash-preview ` +
        `--usim-fixed-opponent-base-url https://openrouter.ai/api/v1,https://api.openai.com/v1,https://openrouter.ai/api/v1 ` +
        `--usim-fixed-opponent-api-key-var OPENROUTER_API_KEY,OPENAI_API_KEY,OPENROUTER_API_KEY ${TRAINING} ${EVAL_P4G}`,
    );
  });

  it("cotrain: SCOPE's Self-Play, --training-mode dual_cotrain, both roles trained, adversarial reward (no flag)", () => {
    expect(scopeJob(scopePaper, "cotrain", 0).command).toBe(
      `${WRAP} python3 -m train_cotrain_slime ${CKPT} --save results/collapse-lab/p4g-cotrain-seed0/checkpoints --trajectory-output-dir results/collapse-lab/p4g-cotrain-seed0/trajectories ` +
        `--seed 0 --rollout-seed 0 --num-rollout 100 --actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate --offload-rollout --offload-train --sglang-config configs/sglang/cotrain_4plus4.yaml ` +
        `--data-source-path usim.p4g.data_source.get_p4g_data_source --rollout-function-path usim.slime.cotrain_rollout.cotrain_generate_rollout ` +
        `--training-mode dual_cotrain --trainable-role both --max-turns 10 ${P4G_ENV} ${TRAINING} ${EVAL_P4G}`,
    );
  });

  it("population: SCOPE's Population Self-Play, --training-mode dual_selfplay with a pool of 10, a snapshot every 16, random", () => {
    const job = scopeJob(scopePaper, "population", 0);
    expect(job.command).toBe(
      `${WRAP} python3 -m train_cotrain_slime ${CKPT} --save results/collapse-lab/p4g-population-seed0/checkpoints --trajectory-output-dir results/collapse-lab/p4g-population-seed0/trajectories ` +
        `--seed 0 --rollout-seed 0 --num-rollout 100 --actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate --offload-rollout --offload-train --sglang-config configs/sglang/cotrain_4plus4.yaml ` +
        `--data-source-path usim.p4g.data_source.get_p4g_data_source --rollout-function-path usim.slime.cotrain_rollout.cotrain_generate_rollout ` +
        `--training-mode dual_selfplay --trainable-role agent --no-agent-kl --pool-dir results/collapse-lab/p4g-population-seed0/checkpoint_pool ` +
        `--pool-size 10 --pool-save-interval 16 --pool-selection random --max-turns 10 ${P4G_ENV} ${TRAINING} ${EVAL_P4G}`,
    );
    expect(job.notes).toEqual([]);
    // the toy default (a snapshot every 8) is passed as it is, and noted
    const toy = scopeJob(paper, "population", 0);
    expect(toy.argv.join(" ")).toContain(
      "--pool-size 10 --pool-save-interval 8 --pool-selection random",
    );
    expect(toy.notes).toContain(
      "population: pool 10, a snapshot every 8 rollouts, random (SCOPE's main runs: 10, 16, random)",
    );
  });

  it("Service maps to τ²-bench retail with its own entry modules; cotrain with the curriculum reward", () => {
    const service = withSets(presetConfig("service-paper"), "cotrain.reward=curriculum");
    const opts = { modelArgsScript: null, trainingArgs: [], evalConfig: null };
    expect(scopeJob(service, "single", 2, opts).command).toBe(
      "python3 -m train_usim_slime --hf-checkpoint /models/Qwen3-4B-Instruct-2507 --ref-load /models/Qwen3-4B-Instruct-2507_torch_dist " +
        "--save results/collapse-lab/tau2-single-seed2/checkpoints --trajectory-output-dir results/collapse-lab/tau2-single-seed2/trajectories " +
        "--seed 2 --rollout-seed 2 --num-rollout 100 --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate " +
        "--data-source-path usim.slime.data_source.get_tau2_data_source --rollout-function-path usim.slime.rollout.usim_generate_rollout --trainable-role agent --max-turns 30 --usim-domain retail " +
        "--usim-fixed-opponent-model gpt-5-mini --usim-fixed-opponent-base-url https://api.openai.com/v1 --usim-fixed-opponent-api-key-var OPENAI_API_KEY",
    );
    expect(scopeJob(service, "cotrain", 0, opts).command).toBe(
      "python3 -m train_cotrain_slime --hf-checkpoint /models/Qwen3-4B-Instruct-2507 --ref-load /models/Qwen3-4B-Instruct-2507_torch_dist " +
        "--save results/collapse-lab/tau2-cotrain-seed0/checkpoints --trajectory-output-dir results/collapse-lab/tau2-cotrain-seed0/trajectories " +
        "--seed 0 --rollout-seed 0 --num-rollout 100 --actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate --offload-rollout --offload-train --sglang-config configs/sglang/cotrain_4plus4.yaml " +
        "--data-source-path usim.slime.data_source.get_tau2_data_source --rollout-function-path usim.slime.tau2_cotrain_rollout.tau2_cotrain_generate_rollout " +
        "--training-mode dual_cotrain --trainable-role both --tau2-user-reward-mode curriculum --max-turns 30 --usim-domain retail",
    );
    expect(
      scopeJob(withSets(service, "cotrain.reward=cooperative"), "cotrain", 0, opts).argv,
    ).not.toContain("--tau2-user-reward-mode");
    expect(
      scopeJob(withSets(paper, "cotrain.reward=cooperative"), "cotrain", 0, opts).argv,
    ).toContain("--cooperative-reward");
  });

  it("options: launcher interpreter, models, simulators, output, extra args, working dir, env and driver GPUs", () => {
    const job = scopeJob(paper, "single", 7, {
      python: "/opt/venv/bin/python",
      modelDir: "/mnt/ckpt",
      policyModel: "Qwen3-8B",
      modelArgsScript: "slime/scripts/models/qwen3-8B.sh",
      simulator: {
        model: "claude-haiku",
        baseUrl: "http://10.0.0.5:8000/v1",
        apiKeyVar: "HAIKU_KEY",
      },
      outputDir: "/scratch/run 1",
      numRollout: 250,
      trainingArgs: ["--lr", "5e-7"],
      evalConfig: "eval_configs/mine.yaml",
      extraArgs: ["--use-wandb", "--wandb-group", "it's mine"],
      workingDir: "s3://bucket/scope.zip",
      env: { PYTHONPATH: "/root/Megatron-LM/" },
      entrypointGpus: 1,
    });
    expect(job.command).toBe(
      `bash -c 'source "$1" && shift && exec "$@" "\${MODEL_ARGS[@]}"' scope-launch slime/scripts/models/qwen3-8B.sh /opt/venv/bin/python -m train_p4g_slime ` +
        `--hf-checkpoint /mnt/ckpt/Qwen3-8B --ref-load /mnt/ckpt/Qwen3-8B_torch_dist --save '/scratch/run 1/p4g-single-seed7/checkpoints' --trajectory-output-dir '/scratch/run 1/p4g-single-seed7/trajectories' ` +
        `--seed 7 --rollout-seed 7 --num-rollout 250 --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate ` +
        `--data-source-path usim.p4g.data_source.get_p4g_data_source --rollout-function-path usim.p4g.rollout.p4g_generate_rollout --trainable-role agent --max-turns 10 ${P4G_ENV} ` +
        `--usim-fixed-opponent-model claude-haiku --usim-fixed-opponent-base-url http://10.0.0.5:8000/v1 --usim-fixed-opponent-api-key-var HAIKU_KEY ` +
        `--lr 5e-7 --eval-interval 16 --skip-eval-before-train --eval-config eval_configs/mine.yaml --use-wandb --wandb-group 'it'\\''s mine'`,
    );
    expect(job.submission).toEqual({
      entrypoint: job.command,
      runtime_env: {
        working_dir: "s3://bucket/scope.zip",
        env_vars: { PYTHONPATH: "/root/Megatron-LM/" },
      },
      metadata: {
        tool: "collapse-lab",
        kind: "scope",
        benchmark: "p4g",
        condition: "single",
        seed: "7",
        module: "train_p4g_slime",
      },
      entrypoint_num_gpus: 1,
    });
  });

  it("the default submission: SCOPE's Megatron path in the environment, no GPU for the driver", () => {
    const { submission } = scopeJob(paper, "vs", 3);
    expect(submission.runtime_env).toEqual({
      env_vars: { PYTHONPATH: "/root/Megatron-LM/", CUDA_DEVICE_MAX_CONNECTIONS: "1" },
    });
    expect(submission.metadata.seed).toBe("3");
    expect("entrypoint_num_gpus" in submission).toBe(false);
    expect(scopeJob(paper, "vs", 3, { env: {} }).submission.runtime_env).toBeUndefined();
  });

  it("one job per trained condition and seed; base left out with its reason", () => {
    const config = withSets(paper, "seeds=2", "seedBase=4");
    const { jobs, skipped } = scopeJobs(config);
    expect(jobs.map((j) => `${j.condition}:${j.seed}`)).toEqual([
      "single:4",
      "single:5",
      "ensemble:4",
      "ensemble:5",
      "vs:4",
      "vs:5",
      "cotrain:4",
      "cotrain:5",
      "population:4",
      "population:5",
    ]);
    expect(skipped).toHaveLength(1);
    expect(skipped[0].condition).toBe("base");
    expect(skipped[0].reason).toMatch(/eval_base\.sh/);
  });
});

describe("refusals name the condition and why", () => {
  const refuses = (f: () => unknown, message: RegExp) => {
    expect(f).toThrow(ScopeLaunchError);
    expect(f).toThrow(message);
  };
  it("conditions and settings SCOPE cannot express", () => {
    refuses(() => scopeJob(paper, "base", 0), /condition base: .*eval_base\.sh/);
    refuses(
      () => scopeJob(withSets(paper, "population.draw=episode"), "population", 0),
      /condition population: population\.draw is "episode".*per rollout batch/,
    );
    refuses(
      () => scopeJob(withSets(paper, "cotrain.reward=curriculum"), "cotrain", 0),
      /condition cotrain: cotrain\.reward "curriculum" has no flag in SCOPE's P4G/,
    );
    refuses(
      () => scopeJob(presetConfig("service-paper"), "cotrain", 0),
      /condition cotrain: cotrain\.reward "adversarial" has no mode in SCOPE's τ²-bench/,
    );
    refuses(
      () =>
        scopeJob(paper, "ensemble", 0, {
          ensemble: [{ model: "a", baseUrl: "http://x/v1", apiKeyVar: "K" }],
        }),
      /condition ensemble: ensemble\.k is 3 but 1 simulator family was given/,
    );
    refuses(() => scopeJob(paper, "cotrain", 0, { gpus: 3 }), /condition cotrain: gpus is 3.*even/);
    refuses(() => scopeJob(paper, "nonsense" as never, 0), /unknown condition "nonsense"/);
    // Cooperation has no SCOPE launcher here (SCOPE's CooperBench runs train against one frozen partner only)
    refuses(
      () => scopeJob(presetConfig("cooperation-paper"), "single", 0),
      /benchmark "cooperation": SCOPE has no launcher for it/,
    );
  });
  it("bad options, every problem named", () => {
    refuses(
      () =>
        scopeJob(paper, "single", 0, {
          numRollout: 0,
          gpus: 1.5,
          python: "",
          simulator: { model: "a,b", baseUrl: "http://x/v1", apiKeyVar: "MY-KEY" },
          env: { "BAD NAME": "x" },
        }),
      /invalid SCOPE launch options — python: expected a non-empty string; numRollout: expected an integer ≥ 1, got 0; gpus: expected an integer ≥ 1, got 1\.5; simulator\.model: "a,b" contains a comma.*simulator\.apiKeyVar: "MY-KEY" is not an environment variable's name; env: "BAD NAME"/,
    );
    refuses(() => scopeJob(paper, "single", -1), /seed: expected an integer ≥ 0, got -1/);
    refuses(() => scopeJob(paper, "single", 0, { extraArgs: ["a\0b"] }), /NUL/);
  });
});

describe("shell quoting", () => {
  const AWKWARD = [
    "plain",
    "",
    "two words",
    "it's",
    "$HOME",
    "`uname`",
    'a"b',
    "back\\slash",
    "new\nline",
    "*.yaml",
    "~user",
    "a;b|c&d",
    "--flag=x y",
    "ü ∑",
    "'",
    "!bang",
    "tab\there",
  ];

  it("quotes only what needs it", () => {
    expect(shellQuote("--eval-config")).toBe("--eval-config");
    expect(shellQuote("a,b:c/d@e%f+g=h.i_j")).toBe("a,b:c/d@e%f+g=h.i_j");
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote("$HOME")).toBe("'$HOME'");
    expect(shellJoin(["echo", "two words", "x"])).toBe("echo 'two words' x");
  });

  it("bash reads the command line back into the same argv, through the model-args wrapper too", () => {
    const dir = mkdtempSync(join(tmpdir(), "scope-quote-"));
    // a stand-in interpreter that prints its arguments as JSON, and a model-args script
    const python = join(dir, "fake python");
    writeFileSync(
      python,
      `#!/usr/bin/env node\nprocess.stdout.write(JSON.stringify(process.argv.slice(2)));\n`,
    );
    chmodSync(python, 0o755);
    const modelArgs = join(dir, "model args.sh");
    writeFileSync(modelArgs, `MODEL_ARGS=(--num-layers 36 "--swiglu")\n`);
    const run = (command: string) =>
      JSON.parse(execFileSync("bash", ["-c", command], { encoding: "utf8" })) as string[];

    expect(run(shellJoin([python, ...AWKWARD]))).toEqual(AWKWARD);
    const job = scopeJob(paper, "single", 0, {
      python,
      modelArgsScript: modelArgs,
      trainingArgs: [],
      evalConfig: null,
      extraArgs: AWKWARD,
    });
    const argv = run(job.command);
    expect(argv.slice(0, 2)).toEqual(["-m", "train_p4g_slime"]);
    expect(argv.slice(-AWKWARD.length - 3)).toEqual([...AWKWARD, "--num-layers", "36", "--swiglu"]);
    expect(argv.slice(2, -3)).toEqual(job.argv.slice(8)); // everything between the module and MODEL_ARGS, unchanged
  });
});
