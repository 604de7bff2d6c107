// The collapse-lab command line. Bad flags print one clear line and exit with code 2.
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { createBackend } from "../engine/backends";
import { parameterCount } from "../engine/config";
import { DEFAULT_PATTERN_TASK, runPatternTask, type PatternProgress } from "../demo/pattern-task";
import { throttle } from "../service/throttle";
import { fixed, pct, seconds, table } from "./format";
import { availableParallelism } from "node:os";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applySet, ConfigError, validateConfig } from "../experiment/config";
import { PRESETS, presetConfig } from "../experiment/presets";
import { benchmarkFor, benchmarkModule } from "../benchmarks/registry";
import { modelConfig, modelOptions } from "../experiment/pretrain";
import { microBenchmark } from "../engine/micro-benchmark";
import { runExperiment, type ExperimentProgress, type RunReport } from "../experiment/experiment";
import { fileTaskCache, ResumeError, type FileTaskCache } from "../experiment/node-task-cache";
import { InlineExecutor, type Executor } from "../experiment/tasks";
import { NodeWorkerExecutor } from "../experiment/node-executor";
import { fillStore, nodeStore, presetRequests, pruneStore, STORE_DIR, storeSize } from "../experiment/node-store";
import { jobKey } from "../experiment/store";
import type { Summary } from "../experiment/stats";
import { vsParseJson } from "../lm/vs-parse";
import { promptRemoteKeys, registerRemoteCommands, remoteLines } from "./remote-commands";
import { encodePolicies } from "../experiment/policies";
import type { Checkpoint } from "../engine/checkpoint";
import type { ConditionId } from "../experiment/config";

const USAGE_ERROR = 2;

interface RunOptions {
  apiKeyPrompt?: boolean;
  preset: string;
  seeds?: number;
  seedBase?: number;
  set: string[];
  backend: "wasm" | "cpu";
  parallel?: number;
  out?: string;
  policies?: string; // a folder for the trained policies
  resume?: string; // a folder of the run's finished tasks
  store: boolean;
  quiet?: boolean;
}

function integer(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer ≥ ${min}, got "${value}"`);
    return n;
  };
}

const program = new Command()
  .name("collapse-lab")
  .description("See and test simulator collapse in multi-agent RL, and its fixes.")
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) })
  .showHelpAfterError(false);

program
  .command("demo")
  .description("train a small policy with GRPO, from a random start and a reward only, to emit a cue-dependent 4-token pattern")
  .addOption(new Option("--backend <name>", "engine backend (webgpu runs in the browser app)").choices(["wasm", "cpu"]).default("wasm"))
  .option("--seed <n>", "random seed", integer(0), DEFAULT_PATTERN_TASK.seed)
  .option("--steps <n>", "GRPO updates", integer(1), DEFAULT_PATTERN_TASK.steps)
  .option("--json", "print the result as JSON instead of text")
  .action(async (opts: { backend: "wasm" | "cpu"; seed: number; steps: number; json?: boolean }) => {
    const { backend, info } = await createBackend(opts.backend);
    const cfg = { ...DEFAULT_PATTERN_TASK, seed: opts.seed, steps: opts.steps };
    const log = (s: string) => (opts.json ? process.stderr : process.stdout).write(s + "\n");
    log(`collapse-lab demo: GRPO on the pattern task — backend ${info.name}, seed ${cfg.seed}, ${cfg.steps} steps`);
    log(`policy: ${parameterCount(cfg.model)} parameters (d ${cfg.model.d}, ${cfg.model.layers} layer); ${cfg.groups} groups × ${cfg.groupSize} rollouts per step`);
    const report = throttle((p: PatternProgress) => {
      const exact = p.exact === undefined ? "" : `  exact ${pct(p.exact).padStart(4)}`;
      log(`step ${String(p.step).padStart(4)}/${p.steps}  reward ${fixed(p.reward)}${exact}  entropy ${fixed(p.entropy)}  KL ${fixed(p.kl)}`);
    }, 500);
    const r = await runPatternTask(backend, cfg, { onProgress: report });
    report.flush();
    if (opts.json) {
      const { checkpoint: _, ...rest } = r;
      process.stdout.write(JSON.stringify({ backend: info.name, ...rest }, null, 2) + "\n");
    } else {
      log(`result: exact pattern ${pct(r.initialExact)} → ${pct(r.exact)} of ${cfg.evalRows} sampled rollouts, mean reward ${fixed(r.reward)}, ${seconds(r.ms)}`);
    }
  });

program
  .command("presets")
  .description("list the experiment presets")
  .action(() => {
    for (const p of PRESETS) process.stdout.write(`${p.id.padEnd(18)} ${p.description}\n`);
  });

const collect = (value: string, previous: string[]) => [...previous, value];

program
  .command("run")
  .description("run an experiment and print the paper-style table")
  .requiredOption("--preset <id>", "experiment preset (see `collapse-lab presets`)")
  .option("--seeds <n>", "number of seeds", integer(1))
  .option("--seed-base <s>", "first seed", integer(0))
  .option("--set <path=value>", "override a config value, e.g. --set simulator.gamma=1 (repeatable)", collect, [] as string[])
  .addOption(new Option("--backend <name>", "engine backend").choices(["wasm", "cpu"]).default("wasm"))
  .option("--parallel <n>", "worker threads (default: the number of cores)", integer(1))
  .option("--out <file>", "write the RunReport JSON here")
  .option("--policies <dir>", "write every condition × seed's trained policy into this folder (the Play page's policies of a recording)")
  .option("--no-store", "pretrain every model live instead of loading stored ones (public/pretrained/)")
  .option("--resume <dir>", "keep every finished task in this folder, and continue from the ones it holds (a stopped run, or one spread over sessions; same config and backend)")
  .option("--quiet", "print only the table (and problems with the store)")
  .option("--api-key-prompt", "ask on the terminal for the API key of each remote panel member's server (kept in memory only)")
  .action(async (opts: RunOptions) => {
    let raw: unknown;
    try {
      raw = presetConfig(opts.preset);
    } catch (e) {
      usageError((e as Error).message);
    }
    const patched = { ...(raw as object) } as Record<string, unknown>;
    if (opts.seeds !== undefined) patched.seeds = opts.seeds;
    if (opts.seedBase !== undefined) patched.seedBase = opts.seedBase;
    let config;
    try {
      config = validateConfig(opts.set.reduce(applySet, patched as unknown));
    } catch (e) {
      if (e instanceof ConfigError) usageError(e.message);
      throw e;
    }
    let cache: FileTaskCache | undefined;
    if (opts.resume) {
      try {
        cache = fileTaskCache(opts.resume, config, opts.backend, (m) => process.stderr.write(`collapse-lab: ${m}\n`));
      } catch (e) {
        if (e instanceof ResumeError) usageError(e.message);
        throw e;
      }
    }
    if (opts.apiKeyPrompt) await promptRemoteKeys(config); // before the workers start: they inherit the keys
    const parallel = opts.parallel ?? config.parallel ?? Math.min(availableParallelism(), 8);
    const executor: Executor = parallel > 1 ? new NodeWorkerExecutor(parallel, opts.backend) : new InlineExecutor((await createBackend(opts.backend)).backend);
    const log = (s: string) => !opts.quiet && process.stderr.write(s + "\n");
    log(`collapse-lab run: ${opts.preset}, ${config.seeds} seed(s) from ${config.seedBase}, conditions ${config.conditions.join(" ")}, backend ${opts.backend}, ${parallel} worker(s)`);
    if (!opts.store) log("pretraining: every model live (--no-store)");
    if (cache) log(`tasks kept in ${opts.resume}: ${cache.kept} finished before, each later one as it finishes`);
    const progress = throttle((p: ExperimentProgress) => {
      if (p.phase === "train") log(`train    ${p.done}/${p.total} units done · ${p.unit.condition} seed ${p.unit.seed} step ${p.unit.step}/${p.unit.steps}`);
      else log(`${p.phase.padEnd(8)} ${p.done}/${p.total} · ${p.detail}`);
    }, 1000);
    // this machine's speed on the run's simulator model, so the app can scale the wall time to its own
    const bench = benchmarkFor(config);
    const speed = await microBenchmark((await createBackend(opts.backend)).backend, modelConfig(bench, config.simulator.model, "simulator"), modelOptions(bench, config).capacity);
    let report: RunReport;
    const policies: { condition: ConditionId; seed: number; checkpoint: Checkpoint }[] = [];
    try {
      report = await runExperiment(config, executor, {
        onPolicy: (condition, seed, checkpoint) => policies.push({ condition, seed, checkpoint }),
        backend: opts.backend,
        preset: opts.preset,
        microBenchmark: speed,
        onProgress: progress,
        store: opts.store ? nodeStore() : undefined,
        cache,
        // where the models came from is progress; a store problem is a warning, shown even with --quiet
        onNote: (m) => (m.startsWith("pretraining:") ? log(m) : process.stderr.write(`collapse-lab: ${m}\n`)),
      });
    } finally {
      await executor.close();
    }
    progress.flush();
    process.stdout.write(formatReport(report) + "\n");
    if (opts.out) {
      writeFileSync(opts.out, JSON.stringify(report, null, 1) + "\n");
      log(`report written to ${opts.out}`);
    }
    if (opts.policies) {
      mkdirSync(opts.policies, { recursive: true });
      for (const [name, bytes] of encodePolicies(config, opts.backend, policies)) writeFileSync(join(opts.policies, name), bytes);
      log(`${policies.length} trained policies written to ${opts.policies}`);
    }
  });

program
  .command("store")
  .description("pretrain the models of each preset's own seeds on wasm into the store of pretrained models (public/pretrained/); stored ones are checked and kept")
  .option("--preset <id>", "a preset to store (repeatable; default: every preset)", collect, [] as string[])
  .option("--dir <folder>", "the store's folder", STORE_DIR)
  .option("--parallel <n>", "worker threads (default: the number of cores)", integer(1))
  .option("--prune", "then remove stored models that no current preset uses")
  .action(async (opts: { preset: string[]; dir: string; parallel?: number; prune?: boolean }) => {
    const ids = opts.preset.length ? opts.preset : PRESETS.map((p) => p.id);
    let requests;
    try {
      requests = ids.flatMap(presetRequests);
    } catch (e) {
      usageError((e as Error).message);
    }
    const log = (s: string) => process.stderr.write(s + "\n");
    const backend = "wasm"; // the backend the CLI and the app run by default; other backends pretrain live
    const parallel = opts.parallel ?? Math.min(availableParallelism(), 8);
    const executor = new NodeWorkerExecutor(parallel, backend);
    const t0 = performance.now();
    try {
      const { stored, kept } = await fillStore(opts.dir, requests, executor, backend, log);
      log(`${stored} model(s) pretrained and stored, ${kept} kept, ${seconds(performance.now() - t0)}`);
    } finally {
      await executor.close();
    }
    if (opts.prune) {
      const keep = new Set(PRESETS.flatMap((p) => presetRequests(p.id)).map((r) => jobKey(r.config, r.job, backend)));
      const removed = pruneStore(opts.dir, keep, log);
      log(removed.length ? `pruned ${removed.length}: ${removed.join("; ")}` : "pruned nothing: every stored model is used by a preset");
    }
    const size = storeSize(opts.dir);
    log(`store: ${size.files} files, ${(size.bytes / 1e6).toFixed(2)} MB`);
  });

program
  .command("vs-parse")
  .description("read a Verbalized Sampling reply on stdin; print its candidates and warnings as JSON")
  .option("--k <n>", "number of candidates asked for", integer(1))
  .action(async (opts: { k?: number }) => {
    let raw = "";
    for await (const chunk of process.stdin.setEncoding("utf8")) raw += chunk;
    process.stdout.write(vsParseJson(raw, opts.k) + "\n");
  });

registerRemoteCommands(program, { integer, collect, usageError });

function usageError(message: string): never {
  process.stderr.write(`collapse-lab: ${message}\n`);
  process.exit(USAGE_ERROR);
}

const ci = (s: Summary, asPct: boolean) => {
  const f = (x: number) => (asPct ? (100 * x).toFixed(1) : x.toFixed(2));
  return s.n > 1 ? `${f(s.mean)} [${f(s.lo)}, ${f(s.hi)}]` : f(s.mean);
};

export function formatReport(r: RunReport): string {
  const rows = [["condition", "train-sim success %", "held-out success %", "human success %", "policy entropy"]];
  for (const c of r.conditions) {
    rows.push([c.id, ci(c.summary.trainSuccess, true), ci(c.summary.heldoutSuccess, true), ci(c.summary.humanSuccess, true), ci(c.summary.policyEntropy, false)]);
  }
  const lines = [
    `${r.world.benchmark} — ${r.config.seeds} seed(s), γ = ${r.config.simulator.gamma}, ${r.config.seeds > 1 ? "mean [95% Student-t interval over seeds, cut at each metric's range]" : "one seed: means, no interval"}`,
    table(rows),
  ];
  const diffs = r.comparisons;
  if (diffs.length && r.config.seeds > 1) {
    lines.push("", "paired differences vs single (95% Student-t interval over seeds; success in points, entropy in nats)");
    lines.push(
      table([
        ["comparison", "held-out", "humans", "policy entropy"],
        ...[...new Set(diffs.map((d) => d.a))].map((a) => {
          const f = (m: string, scale: number, digits: number) => {
            const d = diffs.find((x) => x.a === a && x.metric === m)?.difference;
            return d ? `${(scale * d.mean).toFixed(digits)} [${(scale * d.lo).toFixed(digits)}, ${(scale * d.hi).toFixed(digits)}]${d.excludesZero ? " *" : ""}` : "–";
          };
          return [`${a} − single`, f("heldoutSuccess", 100, 1), f("humanSuccess", 100, 1), f("policyEntropy", 1, 2)];
        }),
      ]),
      "* the interval excludes 0. The paper's diversity claim: vs, cotrain and population keep a higher policy entropy than single; ensemble's is reported, not claimed.",
    );
  }
  const onPolicy = r.conditions.flatMap((c) => {
    const kls = c.seeds.map((s) => s.referenceKLOnPolicy).filter((x): x is number => typeof x === "number");
    return kls.length ? [`${c.id} ${(kls.reduce((a, b) => a + b, 0) / kls.length).toFixed(3)}`] : [];
  });
  if (onPolicy.length) lines.push("", `KL(Bayes ‖ reference) on the states each policy reaches with humans (nats, mean over seeds): ${onPolicy.join(", ")}`);
  const d = r.simulators[0];
  if (d) {
    lines.push("", `simulators (seed ${d.seed}): KL(Bayes ‖ reference) = ${d.referenceKL.toFixed(3)} nats over the states of the base policy's dialogues with humans; human modes ${d.humanModes}`);
    const a = d.adaptiveProbe;
    if (a) {
      const agent = benchmarkModule(r.config.benchmark).roles.agent.toLowerCase();
      lines.push(
        `reference where an adaptive ${agent} goes (${a.persuader}): KL(Bayes ‖ reference) ${a.klTalk.toFixed(3)} nats on talk turns${a.klDecision !== null ? `, ${a.klDecision.toFixed(3)} on the decision` : ""}; ` +
          `it wins ${(100 * a.humanSuccess).toFixed(1)} % with humans, ${(100 * a.referenceSuccess).toFixed(1)} % against the reference (VS can only teach adapting as far as these agree)`,
      );
    }
    lines.push(
      table([
        ["simulator", "true γ", "γ (MLE)", "SCOPE γ (mean)", "mode coverage %"],
        ...d.simulators.map((s) => [
          s.name,
          s.trueGamma === null ? "–" : s.trueGamma.toFixed(1),
          s.gammaMLE ? `${s.gammaMLE.gamma.toFixed(2)} ± ${s.gammaMLE.se.toFixed(2)}` : "–",
          s.scope ? s.scope.mean.toFixed(2) : "–",
          (100 * s.modeCoverage).toFixed(0),
        ]),
        ...d.unions.map((u) => [`∪ ${u.name}`, "", "", "", (100 * u.coverage).toFixed(0)]),
      ]),
    );
    for (const s of d.simulators) for (const why of s.unavailable ?? []) lines.push(`  – ${s.name}: ${why}`);
  }
  for (const e of r.diagnosticsErrors ?? []) lines.push("", `the simulator diagnostics of seed ${e.seed} failed: ${e.message} (every condition's results above are kept)`);
  const refs = r.world.referenceLines ?? [];
  if (refs.length) {
    lines.push("", "reference agents with humans (exact where the world allows):");
    for (const l of refs) lines.push(`  ${l.label}: ${(100 * l.humanSuccess).toFixed(1)} % — ${l.description}`);
  }
  lines.push(...remoteLines(r));
  lines.push("", `calibration against ${r.calibration.source}`);
  lines.push(table([["statistic", "real", "fitted", "tolerance"], ...r.calibration.rows.map((c) => [c.name, c.real.toFixed(3), c.fitted.toFixed(3), `±${c.tolerance}`])]));
  const st = r.store;
  const from = st ? (st.location ? `: ${st.loaded} of ${st.loaded + st.trained} models from the store` : ": every model live") : "";
  lines.push("", `wall time ${seconds(r.timing.totalMs)} (pretraining ${seconds(r.timing.pretrainMs)}${from}, training + evaluation ${seconds(r.timing.trainMs)})`);
  return lines.join("\n");
}

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // help and version exit 0; every usage error exits 2 after commander printed its one line
    process.exit(e.exitCode === 0 ? 0 : USAGE_ERROR);
  }
  process.stderr.write(`collapse-lab: ${(e as Error).message}\n`);
  process.exit(1);
}
