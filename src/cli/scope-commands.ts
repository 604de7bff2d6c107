// `collapse-lab ray scope-command` and `ray scope-metrics`: SCOPE's Ray job entrypoint for a
// condition of an experiment (printed, or submitted with --submit), and a summary of SCOPE's
// logged metrics (from a file, or a job's log with --job). The ray command group hands in its helpers.
import { createReadStream } from "node:fs";
import type { Command } from "commander";
import {
  applySet,
  ConfigError,
  CONDITIONS,
  validateConfig,
  type ConditionId,
} from "../experiment/config";
import { presetConfig } from "../experiment/presets";
import {
  DEFAULT_SCOPE_OPTIONS,
  scopeJob,
  ScopeLaunchError,
  type ScopeLaunchOptions,
  type ScopeSimulator,
} from "../cluster/scope/launch";
import { readScopeMetrics, readScopeMetricsStream, toCurveSeries } from "../cluster/scope/metrics";
import { table } from "../util/format";
import { addConnection, client, type Connection } from "./ray-connection";
import { RayJobsError } from "../cluster/ray/jobs";

export interface ScopeCliHelpers {
  integer: (min: number) => (value: string) => number;
  collect: (value: string, previous: string[]) => string[];
  usageError: (message: string) => never;
}

interface CommandOptions {
  condition: string;
  preset: string;
  set: string[];
  seed?: number;
  json?: boolean;
  python?: string;
  modelDir?: string;
  policyModel?: string;
  modelArgsScript?: string | false;
  simulatorModel?: string;
  simulatorBaseUrl?: string;
  simulatorKeyVar?: string;
  ensembleModel: string[];
  ensembleBaseUrl: string[];
  ensembleKeyVar: string[];
  outputDir?: string;
  numRollout?: number;
  gpus?: number;
  evalConfig?: string | false;
  tau2Domain?: string;
  sglangConfig?: string;
  trainingArgs: boolean;
  workingDir?: string;
  env: string[];
  entrypointGpus?: number;
  submit?: boolean;
}

const d = DEFAULT_SCOPE_OPTIONS;

export function registerScopeCommands(
  ray: Command,
  { integer, collect, usageError }: ScopeCliHelpers,
): void {
  const failed = (e: unknown): never => {
    if (!(e instanceof RayJobsError)) throw e;
    process.stderr.write(`collapse-lab: ${e.message}\n`);
    process.exit(1);
  };
  addConnection(
    ray
      .command("scope-command")
      .description(
        "print the Ray job entrypoint of SCOPE's Slime launcher for one condition of an experiment (docs/scope-on-ray.md says what it assumes about the cluster)",
      )
      .requiredOption(
        "--condition <id>",
        `the condition (${CONDITIONS.filter((c) => c !== "base").join(", ")})`,
      )
      .option(
        "--preset <id>",
        "the experiment preset whose settings to map (VS k and selection, pool size, snapshot interval and selection, ensemble k, seeds, benchmark)",
        "persuasion-paper",
      )
      .option("--set <path=value>", "override a config value (repeatable)", collect, [] as string[])
      .option("--seed <n>", "the seed (default: the config's first)", integer(0))
      .option(
        "--json",
        "print the Ray Jobs submission body (POST /api/jobs/) instead of the command line",
      )
      .option("--python <path>", `the interpreter on the cluster (default ${d.python})`)
      .option(
        "--model-dir <dir>",
        `holds <policy-model>/ and <policy-model>_torch_dist/ (default ${d.modelDir})`,
      )
      .option("--policy-model <name>", `the policy's checkpoint folder (default ${d.policyModel})`)
      .option(
        "--model-args-script <file>",
        `the Slime script that defines MODEL_ARGS (default ${d.modelArgsScript})`,
      )
      .option(
        "--no-model-args-script",
        "source no MODEL_ARGS script (give the model's flags after --)",
      )
      .option(
        "--simulator-model <id>",
        `the frozen simulator of single and vs (default ${d.simulator.model})`,
      )
      .option(
        "--simulator-base-url <url>",
        `its OpenAI-compatible API (default ${d.simulator.baseUrl})`,
      )
      .option(
        "--simulator-key-var <name>",
        `the cluster's environment variable with its API key (default ${d.simulator.apiKeyVar})`,
      )
      .option(
        "--ensemble-model <id>",
        "an ensemble family (repeatable, with --ensemble-base-url and --ensemble-key-var in the same order; default SCOPE's three)",
        collect,
        [] as string[],
      )
      .option(
        "--ensemble-base-url <url>",
        "the API of each --ensemble-model",
        collect,
        [] as string[],
      )
      .option(
        "--ensemble-key-var <name>",
        "the API key variable of each --ensemble-model",
        collect,
        [] as string[],
      )
      .option("--output-dir <dir>", `where jobs write, on the cluster (default ${d.outputDir})`)
      .option("--num-rollout <n>", `rollout batches to train (default ${d.numRollout})`, integer(1))
      .option("--gpus <n>", `GPUs of the node (default ${d.gpus})`, integer(1))
      .option(
        "--eval-config <file>",
        "the held-out panel YAML (default SCOPE's 6-model panel of the benchmark)",
      )
      .option("--no-eval-config", "no held-out evaluation during training")
      .option("--tau2-domain <name>", `τ²-bench domain (default ${d.tau2Domain})`)
      .option(
        "--sglang-config <file>",
        `the SGLang layout of the co-training modes (default ${d.sglangConfig})`,
      )
      .option(
        "--no-training-args",
        "leave out SCOPE's shared GRPO, optimiser and rollout settings (give yours after --)",
      )
      .option(
        "--working-dir <path>",
        "runtime_env.working_dir: where the cluster finds SCOPE (a path on the nodes or a package URI)",
      )
      .option(
        "--env <NAME=value>",
        "an environment variable of the job (repeatable; added to PYTHONPATH and CUDA_DEVICE_MAX_CONNECTIONS)",
        collect,
        [] as string[],
      )
      .option(
        "--entrypoint-gpus <n>",
        "GPUs reserved for the driver (default 0: Slime's actors claim their own)",
        integer(0),
      )
      .option(
        "--submit",
        "submit it to the cluster at --address (Ray's Jobs API) and print the job's id",
      )
      .argument("[extra...]", "arguments appended to the launcher's (after --)"),
  ).action(async (extra: string[], opts: CommandOptions & Connection) => {
    const condition = opts.condition as ConditionId;
    if (!(CONDITIONS as readonly string[]).includes(condition))
      usageError(
        `scope-command: unknown condition "${opts.condition}"; conditions: ${CONDITIONS.join(", ")}`,
      );
    const config = (() => {
      try {
        return validateConfig(opts.set.reduce<unknown>(applySet, presetConfig(opts.preset)));
      } catch (e) {
        return usageError(
          e instanceof ConfigError ? e.message : `scope-command: ${(e as Error).message}`,
        );
      }
    })();
    const options = launchOptions(opts, extra, usageError);
    const job = (() => {
      try {
        return scopeJob(config, condition, opts.seed ?? config.seedBase, options);
      } catch (e) {
        if (e instanceof ScopeLaunchError) return usageError(`scope-command: ${e.message}`);
        throw e;
      }
    })();
    for (const n of job.notes) process.stderr.write(`note: ${n}\n`);
    if (opts.submit) {
      const c = client(opts, usageError);
      const id = await c.submit(job.submission).catch(failed);
      process.stderr.write(
        `submitted to ${c.address}: ${job.command}\nfollow it with collapse-lab ray logs ${id} --follow; its metrics: collapse-lab ray scope-metrics --job ${id}\n`,
      );
      process.stdout.write(`${id}\n`);
      return;
    }
    process.stdout.write(
      opts.json ? JSON.stringify(job.submission, null, 2) + "\n" : job.command + "\n",
    );
  });

  addConnection(
    ray
      .command("scope-metrics")
      .description(
        "summarise SCOPE's logged metrics (JSON lines of {step, data}) from a file, a saved job log, or a job's log on the cluster (--job)",
      )
      .argument("[file]", "a metrics .jsonl file or a job's log")
      .option("--job <id>", "read the log of this job at --address instead of a file")
      .option("--json", "print the series and the counts as JSON")
      .option(
        "--curves",
        "name SCOPE's reward and entropy as collapse-lab's curves (reward, entropy)",
      ),
  ).action(
    async (
      file: string | undefined,
      opts: Connection & { job?: string; json?: boolean; curves?: boolean },
    ) => {
      if (!file === !opts.job) usageError("scope-metrics: give a file or --job ID (one of them)");
      const m = opts.job
        ? readScopeMetrics(await client(opts, usageError).logs(opts.job).catch(failed))
        : await readScopeMetricsStream(createReadStream(file!)).catch((e: NodeJS.ErrnoException) =>
            usageError(`scope-metrics: cannot read ${file}: ${e.code ?? e.message}`),
          );
      const series = opts.curves ? toCurveSeries(m.series) : m.series;
      if (opts.json) {
        process.stdout.write(JSON.stringify({ ...m, series }) + "\n");
        return;
      }
      const names = Object.keys(series).sort();
      const rows = [["metric", "points", "first step", "last step", "last value"]];
      for (const name of names) {
        const points = series[name];
        const last = points[points.length - 1];
        rows.push([
          name,
          String(points.length),
          String(points[0].step),
          String(last.step),
          formatValue(last.value),
        ]);
      }
      const lines = names.length ? [table(rows)] : ["no metrics found"];
      const { notJson, noStep, badData } = m.reasons;
      lines.push(
        "",
        `${m.records} record${m.records === 1 ? "" : "s"} read; ${m.malformed} malformed line${m.malformed === 1 ? "" : "s"} skipped (${notJson} not JSON, ${noStep} without a valid step, ${badData} without a data object); ` +
          `${m.skippedValues} non-numeric value${m.skippedValues === 1 ? "" : "s"} skipped; ${m.replacedSteps} re-logged step${m.replacedSteps === 1 ? "" : "s"} (the later value kept); ${m.textLines} other log line${m.textLines === 1 ? "" : "s"} ignored`,
      );
      process.stdout.write(lines.join("\n") + "\n");
    },
  );
}

const formatValue = (v: number) =>
  Number.isInteger(v)
    ? String(v)
    : Math.abs(v) >= 1e-3 && Math.abs(v) < 1e6
      ? v.toFixed(4)
      : v.toExponential(3);

function launchOptions(
  opts: CommandOptions,
  extra: string[],
  usageError: (m: string) => never,
): Partial<ScopeLaunchOptions> {
  const o: Partial<ScopeLaunchOptions> = { extraArgs: extra };
  if (opts.python !== undefined) o.python = opts.python;
  if (opts.modelDir !== undefined) o.modelDir = opts.modelDir;
  if (opts.policyModel !== undefined) o.policyModel = opts.policyModel;
  if (opts.modelArgsScript === false) o.modelArgsScript = null;
  else if (opts.modelArgsScript !== undefined) o.modelArgsScript = opts.modelArgsScript;
  if (
    opts.simulatorModel !== undefined ||
    opts.simulatorBaseUrl !== undefined ||
    opts.simulatorKeyVar !== undefined
  )
    o.simulator = {
      model: opts.simulatorModel ?? d.simulator.model,
      baseUrl: opts.simulatorBaseUrl ?? d.simulator.baseUrl,
      apiKeyVar: opts.simulatorKeyVar ?? d.simulator.apiKeyVar,
    };
  const { ensembleModel: models, ensembleBaseUrl: urls, ensembleKeyVar: vars } = opts;
  if (models.length || urls.length || vars.length) {
    if (urls.length !== models.length || vars.length !== models.length)
      usageError(
        `scope-command: ${models.length} --ensemble-model, ${urls.length} --ensemble-base-url and ${vars.length} --ensemble-key-var given; give one of each per family, in the same order`,
      );
    o.ensemble = models.map((model, i): ScopeSimulator => ({
      model,
      baseUrl: urls[i],
      apiKeyVar: vars[i],
    }));
  }
  if (opts.outputDir !== undefined) o.outputDir = opts.outputDir;
  if (opts.numRollout !== undefined) o.numRollout = opts.numRollout;
  if (opts.gpus !== undefined) o.gpus = opts.gpus;
  if (opts.evalConfig === false) o.evalConfig = null;
  else if (opts.evalConfig !== undefined) o.evalConfig = opts.evalConfig;
  if (opts.tau2Domain !== undefined) o.tau2Domain = opts.tau2Domain;
  if (opts.sglangConfig !== undefined) o.sglangConfig = opts.sglangConfig;
  if (!opts.trainingArgs) o.trainingArgs = [];
  if (opts.workingDir !== undefined) o.workingDir = opts.workingDir;
  if (opts.entrypointGpus !== undefined) o.entrypointGpus = opts.entrypointGpus;
  if (opts.env.length) {
    const env = { ...d.env };
    for (const kv of opts.env) {
      const eq = kv.indexOf("=");
      if (eq <= 0) usageError(`scope-command: --env ${JSON.stringify(kv)}: expected NAME=value`);
      env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    o.env = env;
  }
  return o;
}
