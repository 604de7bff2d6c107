// `ray scope-command` and `ray scope-metrics` through a small commander program that holds only
// the ray group (the real CLI mounts the same registerScopeCommands). Output is captured from
// process.stdout / process.stderr; a usage error throws here instead of exiting.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { afterEach, describe, expect, it, vi } from "vitest";
import { registerScopeCommands } from "../../src/cli/scope-commands";
import { presetConfig } from "../../src/experiment/presets";

class UsageError extends Error {}

function program(): Command {
  const ray = new Command("ray")
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} });
  registerScopeCommands(ray, {
    integer: (min) => (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < min)
        throw new InvalidArgumentError(`expected an integer ≥ ${min}, got "${v}"`);
      return n;
    },
    collect: (v, prev) => [...prev, v],
    usageError: (m) => {
      throw new UsageError(m);
    },
  });
  return ray;
}

async function ray(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  vi.spyOn(process.stdout, "write").mockImplementation((s) => ((stdout += String(s)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((s) => ((stderr += String(s)), true));
  try {
    await program().parseAsync(args, { from: "user" });
  } finally {
    vi.restoreAllMocks();
  }
  return { stdout, stderr };
}

afterEach(() => vi.restoreAllMocks());

describe("ray scope-command", () => {
  it("prints the command line of a condition, with notes on stderr", async () => {
    const { stdout, stderr } = await ray(
      "scope-command",
      "--condition",
      "vs",
      "--no-model-args-script",
      "--no-training-args",
      "--no-eval-config",
      "--seed",
      "4",
    );
    expect(stdout).toBe(
      "python3 -m train_p4g_slime --hf-checkpoint /models/Qwen3-4B-Instruct-2507 --ref-load /models/Qwen3-4B-Instruct-2507_torch_dist " +
        "--save results/collapse-lab/p4g-vs-seed4/checkpoints --trajectory-output-dir results/collapse-lab/p4g-vs-seed4/trajectories " +
        "--seed 4 --rollout-seed 4 --num-rollout 100 --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate " +
        "--data-source-path usim.p4g.data_source.get_p4g_data_source --rollout-function-path usim.p4g.rollout.p4g_generate_rollout --trainable-role agent --max-turns 10 " +
        "--p4g-corpus-path data/p4g/corpus --p4g-dataset-dir data/p4g/train --p4g-word-limit 50 --p4g-num-turns 10 " +
        "--usim-fixed-opponent-model gpt-5-mini --usim-fixed-opponent-base-url https://api.openai.com/v1 --usim-fixed-opponent-api-key-var OPENAI_API_KEY " +
        "--usim-verbalized-sampling --usim-vs-num-samples 5 --usim-vs-method random\n",
    );
    expect(stderr).toContain("note: vs.fidelity has no SCOPE flag");
    expect(stderr).toContain("note: evalConfig null");
  });

  it("--set changes the mapped knobs; options and the arguments after -- reach the command", async () => {
    const { stdout } = await ray(
      "scope-command",
      "--condition",
      "population",
      "--set",
      "population.snapshotEvery=16",
      "--set",
      "population.selection=latest",
      "--model-dir",
      "/mnt/my models",
      "--gpus",
      "4",
      "--sglang-config",
      "configs/sglang/cotrain_2plus2.yaml",
      "--",
      "--use-wandb",
      "--wandb-group",
      "a b",
    );
    expect(stdout).toContain("--pool-size 10 --pool-save-interval 16 --pool-selection latest");
    expect(stdout).toContain("--hf-checkpoint '/mnt/my models/Qwen3-4B-Instruct-2507'");
    expect(stdout).toContain(
      "--actor-num-gpus-per-node 2 --colocate --offload-rollout --offload-train --sglang-config configs/sglang/cotrain_2plus2.yaml",
    );
    expect(stdout.trimEnd().endsWith("--use-wandb --wandb-group 'a b'")).toBe(true);
  });

  it("--json prints the Ray Jobs submission body", async () => {
    const { stdout } = await ray(
      "scope-command",
      "--condition",
      "ensemble",
      "--json",
      "--working-dir",
      "/opt/scope",
      "--env",
      "NCCL_NVLS_ENABLE=1",
      "--ensemble-model",
      "m1",
      "--ensemble-base-url",
      "http://a/v1",
      "--ensemble-key-var",
      "KA",
      "--ensemble-model",
      "m2",
      "--ensemble-base-url",
      "http://b/v1",
      "--ensemble-key-var",
      "KB",
      "--set",
      "ensemble.k=2",
      "--set",
      "ensemble.members=[]",
    );
    const body = JSON.parse(stdout) as {
      entrypoint: string;
      runtime_env: unknown;
      metadata: Record<string, string>;
    };
    expect(body.entrypoint).toContain(
      "--usim-fixed-opponent-model m1,m2 --usim-fixed-opponent-base-url http://a/v1,http://b/v1 --usim-fixed-opponent-api-key-var KA,KB",
    );
    expect(body.runtime_env).toEqual({
      working_dir: "/opt/scope",
      env_vars: {
        PYTHONPATH: "/root/Megatron-LM/",
        CUDA_DEVICE_MAX_CONNECTIONS: "1",
        NCCL_NVLS_ENABLE: "1",
      },
    });
    expect(body.metadata).toEqual({
      tool: "collapse-lab",
      kind: "scope",
      benchmark: "p4g",
      condition: "ensemble",
      seed: String(presetConfig("persuasion-paper").seedBase),
      module: "train_p4g_slime",
    }); // the default preset's first seed
  });

  it("usage errors name the problem", async () => {
    await expect(ray("scope-command", "--condition", "bogus")).rejects.toThrow(
      /unknown condition "bogus"; conditions: base, single/,
    );
    await expect(ray("scope-command", "--condition", "base")).rejects.toThrow(
      /scope-command: condition base: .*eval_base\.sh/,
    );
    await expect(ray("scope-command", "--condition", "vs", "--preset", "nope")).rejects.toThrow(
      /unknown preset "nope"/,
    );
    await expect(ray("scope-command", "--condition", "vs", "--set", "vs.k=0")).rejects.toThrow(
      /vs\.k/,
    );
    await expect(
      ray("scope-command", "--condition", "ensemble", "--ensemble-model", "m1"),
    ).rejects.toThrow(/1 --ensemble-model, 0 --ensemble-base-url and 0 --ensemble-key-var/);
    await expect(
      ray("scope-command", "--condition", "single", "--env", "NOEQUALS"),
    ).rejects.toThrow(/--env "NOEQUALS": expected NAME=value/);
    await expect(
      ray("scope-command", "--condition", "cotrain", "--preset", "service-paper"),
    ).rejects.toThrow(/cotrain\.reward "adversarial"/);
    await expect(ray("scope-command", "--condition", "single", "--gpus", "0")).rejects.toThrow(
      /expected an integer ≥ 1/,
    );
  });
});

describe("ray scope-metrics", () => {
  const dir = mkdtempSync(join(tmpdir(), "scope-cli-"));
  const file = join(dir, "job.log");
  writeFileSync(
    file,
    [
      "INFO starting",
      '{"step": 0, "data": {"rollout/raw_reward/mean": 0.25, "train/entropy_loss": 1.5}}',
      '{"step": 16, "data": {"rollout/raw_reward/mean": 0.5, "eval/p4g_test_haiku": 0.125}}',
      '{"step": 32, "data": {"rollout/raw_reward/mean": 0.75}',
      '{"step": "x", "data": {}}',
    ].join("\n"),
  );

  it("prints each series' points, steps and last value, and the skipped lines", async () => {
    const { stdout } = await ray("scope-metrics", file);
    const lines = stdout.split("\n");
    expect(lines[0]).toMatch(/^metric\s+points\s+first step\s+last step\s+last value$/);
    expect(lines.find((l) => l.startsWith("rollout/raw_reward/mean"))).toMatch(
      /^rollout\/raw_reward\/mean\s+2\s+0\s+16\s+0\.5000$/,
    );
    expect(lines.find((l) => l.startsWith("eval/p4g_test_haiku"))).toMatch(
      /\s+1\s+16\s+16\s+0\.1250$/,
    );
    expect(stdout).toContain(
      "2 records read; 2 malformed lines skipped (1 not JSON, 1 without a valid step, 0 without a data object)",
    );
    expect(stdout).toContain("1 other log line ignored");
  });

  it("--json --curves: the series under collapse-lab's names and the counts", async () => {
    const { stdout } = await ray("scope-metrics", file, "--json", "--curves");
    const m = JSON.parse(stdout) as {
      series: Record<string, { step: number; value: number }[]>;
      malformed: number;
    };
    expect(Object.keys(m.series).sort()).toEqual(["entropy", "eval/p4g_test_haiku", "reward"]);
    expect(m.series.reward).toEqual([
      { step: 0, value: 0.25 },
      { step: 16, value: 0.5 },
    ]);
    expect(m.malformed).toBe(2);
  });

  it("a missing file is a usage error", async () => {
    await expect(ray("scope-metrics", join(dir, "nope.jsonl"))).rejects.toThrow(
      /scope-metrics: cannot read .*nope\.jsonl: ENOENT/,
    );
  });
});
