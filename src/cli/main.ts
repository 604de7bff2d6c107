// The collapse-lab command line. Bad flags print one clear line and exit with code 2.
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { createNodeBackend } from "../experiment/node-webgpu";
import { parameterCount } from "../engine/config";
import { DEFAULT_PATTERN_TASK, runPatternTask, type PatternProgress } from "../engine/pattern-task";
import { throttle } from "../util/throttle";
import { fixed, pct, seconds, table } from "../util/format";
import { availableParallelism } from "node:os";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { PRESETS } from "../experiment/presets";
import { benchmarkFor } from "../benchmarks/registry";
import { modelConfig, modelOptions } from "../experiment/pretrain";
import { microBenchmark } from "../engine/micro-benchmark";
import { runExperiment, type ExperimentProgress, type RunReport } from "../experiment/experiment";
import { fileTaskCache, ResumeError, type FileTaskCache } from "../experiment/node-task-cache";
import { writeFolderAtomic } from "../experiment/node-write";
import {
  autoPrune,
  codeFingerprint,
  listRuns,
  markFinished,
  MAX_AGE_DAYS,
  MAX_TOTAL_BYTES,
  pruneRuns,
  runCacheRoot,
  runFolder,
  type CachedRun,
} from "../experiment/node-run-cache";
import { checkOutput, saveReport } from "./outputs";
import { mergeReports, MergeError } from "../experiment/merge-reports";
import { parseReport } from "../experiment/report-schema";
import { InlineExecutor, type Executor } from "../experiment/tasks";
import { NodeWorkerExecutor } from "../experiment/node-executor";
import {
  fillStore,
  nodeStore,
  presetRequests,
  pruneStore,
  STORE_DIR,
  storeSize,
} from "../experiment/node-store";
import { jobKey } from "../experiment/store";
import { vsParseJson } from "../lm/vs-parse";
import { promptRemoteKeys, registerRemoteCommands } from "./remote-commands";
import { formatReport } from "../experiment/report-text";
import { configFromOptions } from "./config-options";
import { loadCorpusFiles } from "./corpus-files";
import { registerRayCommands } from "./ray-commands";
import { registerEvaluateCommand } from "./evaluate-command";
import { registerSweepCommand } from "./sweep-command";
import { registerReportCommand } from "./report-command";
import {
  encodePolicies,
  mergePolicies,
  parsePoliciesIndex,
  policiesBeside,
} from "../experiment/policies";
import type { Checkpoint } from "../engine/checkpoint";
import type { ConditionId } from "../experiment/config";

const USAGE_ERROR = 2;

interface RunOptions {
  apiKeyPrompt?: boolean;
  preset: string;
  seeds?: number;
  seedBase?: number;
  set: string[];
  backend: "wasm" | "webgpu" | "float64";
  parallel?: number;
  out?: string;
  policies?: string; // a folder for the trained policies
  resume?: string; // a folder of the run's finished tasks, instead of the run cache's
  fresh?: boolean;
  store: boolean;
  quiet?: boolean;
  humans?: string;
  panelCorpus: string[];
  referenceCorpus?: string;
}

function integer(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`expected an integer ≥ ${min}, got "${value}"`);
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
  .description(
    "train a small policy with GRPO, from a random start and a reward only, to emit a cue-dependent 4-token pattern",
  )
  .addOption(
    new Option(
      "--backend <name>",
      "engine backend (webgpu in Node: Dawn on a Vulkan GPU, see docs/config.md#backends)",
    )
      .choices(["wasm", "webgpu", "float64"])
      .default("wasm"),
  )
  .option("--seed <n>", "random seed", integer(0), DEFAULT_PATTERN_TASK.seed)
  .option("--steps <n>", "GRPO updates", integer(1), DEFAULT_PATTERN_TASK.steps)
  .option("--json", "print the result as JSON instead of text")
  .action(
    async (opts: {
      backend: "wasm" | "webgpu" | "float64";
      seed: number;
      steps: number;
      json?: boolean;
    }) => {
      const { backend, info } = await createNodeBackend(opts.backend);
      const cfg = { ...DEFAULT_PATTERN_TASK, seed: opts.seed, steps: opts.steps };
      const log = (s: string) => (opts.json ? process.stderr : process.stdout).write(s + "\n");
      log(
        `collapse-lab demo: GRPO on the pattern task — backend ${info.name}, seed ${cfg.seed}, ${cfg.steps} steps`,
      );
      log(
        `policy: ${parameterCount(cfg.model)} parameters (d ${cfg.model.d}, ${cfg.model.layers} layer); ${cfg.groups} groups × ${cfg.groupSize} rollouts per step`,
      );
      const report = throttle((p: PatternProgress) => {
        const exact = p.exact === undefined ? "" : `  exact ${pct(p.exact).padStart(4)}`;
        log(
          `step ${String(p.step).padStart(4)}/${p.steps}  reward ${fixed(p.reward)}${exact}  entropy ${fixed(p.entropy)}  KL ${fixed(p.kl)}`,
        );
      }, 500);
      const r = await runPatternTask(backend, cfg, { onProgress: report });
      report.flush();
      if (opts.json) {
        const { checkpoint: _, ...rest } = r;
        process.stdout.write(JSON.stringify({ backend: info.name, ...rest }, null, 2) + "\n");
      } else {
        log(
          `result: exact pattern ${pct(r.initialExact)} → ${pct(r.exact)} of ${cfg.evalRows} sampled rollouts, mean reward ${fixed(r.reward)}, ${seconds(r.ms)}`,
        );
      }
    },
  );

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
  .option(
    "--set <path=value>",
    "override a config value, e.g. --set simulator.gamma=1 (repeatable)",
    collect,
    [] as string[],
  )
  .addOption(
    new Option(
      "--backend <name>",
      "engine backend (webgpu in Node: Dawn on a Vulkan GPU, see docs/config.md#backends)",
    )
      .choices(["wasm", "webgpu", "float64"])
      .default("wasm"),
  )
  .option("--parallel <n>", "worker threads (default: the number of cores)", integer(1))
  .option(
    "--humans <file>",
    "evaluate against the people of this dialogue corpus (JSONL or CSV, docs/humans.md) instead of the hand-written population",
  )
  .option(
    "--panel-corpus <file>",
    "add a held-out panel member that plays the people of this dialogue corpus (repeatable)",
    collect,
    [] as string[],
  )
  .option(
    "--reference-corpus <file>",
    "pretrain the reference simulator on this dialogue corpus instead of the behaviour agent's",
  )
  .option(
    "--out <file>",
    "write the RunReport JSON here (replaced if it exists; missing folders are created)",
  )
  .option(
    "--policies <dir>",
    "write every condition × seed's trained policy into this folder, replaced whole if it holds earlier policies (the Play page's policies of a recording)",
  )
  .option(
    "--no-store",
    "pretrain every model live instead of loading stored ones (public/pretrained/)",
  )
  .option(
    "--resume <dir>",
    "keep every finished task in this folder instead of the run cache, and continue from the ones it holds (a run spread over sessions or machines; same config and backend)",
  )
  .option(
    "--fresh",
    "run every task again instead of continuing from the ones kept; the new ones replace them",
  )
  .option("--quiet", "print only the table (and problems with the store)")
  .option(
    "--api-key-prompt",
    "ask on the terminal for the API key of each remote panel member's server (kept in memory only)",
  )
  .action(async (opts: RunOptions) => {
    const { config, corpora } = await loadCorpusFiles(
      configFromOptions(opts, usageError),
      usageError,
    );
    const log = (s: string) => !opts.quiet && process.stderr.write(s + "\n");
    const warn = (m: string) => process.stderr.write(`collapse-lab: ${m}\n`);
    // finished tasks are kept (the run cache, or --resume's folder) so a stopped run continues
    const root = runCacheRoot();
    const dir = opts.resume ?? (root ? runFolder(root, opts.preset, config, opts.backend) : null);
    let cache: FileTaskCache | undefined;
    if (dir) {
      try {
        cache = fileTaskCache(dir, config, opts.backend, {
          onNote: warn,
          fresh: opts.fresh,
          code: codeFingerprint(),
          preset: opts.preset,
        });
      } catch (e) {
        if (e instanceof ResumeError) usageError(e.message);
        throw e;
      }
      const earlier = opts.fresh
        ? "none read (--fresh)"
        : `${cache.kept} finished before${opts.resume ? "" : " (the same command continues from them; --fresh runs them again)"}`;
      log(`collapse-lab run: tasks kept in ${shownPath(dir)}: ${earlier}`);
      if (!opts.resume && root) {
        const pruned = autoPrune(root, dir);
        if (pruned.length)
          log(
            `run cache: ${pruned.length} folder(s) removed (unused for ${MAX_AGE_DAYS} days, or beyond ${MAX_TOTAL_BYTES / 1024 ** 3} GiB in all): ${pruned.map((r) => r.name).join(", ")}`,
          );
      }
    }
    stopCleanlyOnSignal(cache);
    // every output is checked before any work, so a long run cannot end unable to save itself
    if (opts.out) checkOutput(opts.out, "file", "--out", usageError);
    if (opts.policies) checkPoliciesFolder(opts.policies);
    if (opts.apiKeyPrompt) await promptRemoteKeys(config); // before the workers start: they inherit the keys
    const parallel = opts.parallel ?? config.parallel ?? Math.min(availableParallelism(), 8);
    const executor: Executor =
      parallel > 1
        ? new NodeWorkerExecutor(parallel, opts.backend)
        : new InlineExecutor((await createNodeBackend(opts.backend)).backend);
    log(
      `collapse-lab run: ${opts.preset}, ${config.seeds} seed(s) from ${config.seedBase}, conditions ${config.conditions.join(" ")}, backend ${opts.backend}, ${parallel} worker(s)`,
    );
    if (!opts.store) log("pretraining: every model live (--no-store)");
    const progress = throttle((p: ExperimentProgress) => {
      if (p.phase === "train")
        log(
          `train    ${p.done}/${p.total} units done · ${p.unit.condition} seed ${p.unit.seed} step ${p.unit.step}/${p.unit.steps}`,
        );
      else log(`${p.phase.padEnd(8)} ${p.done}/${p.total} · ${p.detail}`);
    }, 1000);
    // this machine's speed on the run's simulator model, so the app can scale the wall time to its own
    const bench = benchmarkFor(config);
    const speed = await microBenchmark(
      (await createNodeBackend(opts.backend)).backend,
      modelConfig(bench, config.simulator.model, "simulator"),
      modelOptions(bench, config).capacity,
    );
    let report: RunReport;
    const policies: { condition: ConditionId; seed: number; checkpoint: Checkpoint }[] = [];
    try {
      report = await runExperiment(config, executor, {
        onPolicy: (condition, seed, checkpoint) => policies.push({ condition, seed, checkpoint }),
        corpora,
        backend: opts.backend,
        preset: opts.preset,
        microBenchmark: speed,
        onProgress: progress,
        store: opts.store ? nodeStore() : undefined,
        cache,
        // where the models came from is progress; a store problem is a warning, shown even with --quiet
        onNote: (m) => (m.startsWith("pretraining:") ? log(m) : warn(m)),
      });
    } finally {
      await executor.close();
    }
    progress.flush();
    process.stdout.write(formatReport(report) + "\n");
    const written = opts.out
      ? saveReport(opts.out, JSON.stringify(report, null, 1) + "\n", log, dir ?? undefined)
      : null;
    // a report kept in the cache's fallback file leaves the run unfinished, so `cache prune` keeps it
    if (dir && written === (opts.out ?? null)) markFinished(dir, written && resolve(written));
    if (opts.policies) {
      writeFolderAtomic(opts.policies, encodePolicies(config, opts.backend, policies));
      log(`${policies.length} trained policies written to ${opts.policies}`);
    }
  });

program
  .command("merge")
  .description(
    "merge the reports of one experiment run on different seeds (--seed-base) into the report of one run over all their seeds",
  )
  .argument(
    "<reports...>",
    "RunReport JSON files of one config and backend whose seeds, together, are consecutive",
  )
  .requiredOption(
    "--out <file>",
    "write the merged RunReport JSON here (not over one of the reports)",
  )
  .option(
    "--policies <dir>",
    "also merge each report's trained policies (the folder beside it: a.json's a.policies/) into this folder",
  )
  .action((files: string[], opts: { out: string; policies?: string }) => {
    if (files.length < 2) usageError(`merge needs two reports or more, got ${files.length}`);
    if (files.some((f) => resolve(f) === resolve(opts.out)))
      usageError(
        `--out ${opts.out} is one of the reports to merge; write the merged report elsewhere`,
      );
    const policyDirs = files.map(policiesBeside);
    if (opts.policies && policyDirs.some((d) => resolve(d) === resolve(opts.policies!)))
      usageError(
        `--policies ${opts.policies} is one of the reports' policies folders; write the merged policies elsewhere`,
      );
    checkOutput(opts.out, "file", "--out", usageError);
    if (opts.policies) checkPoliciesFolder(opts.policies);
    const reports = files.map((f) => {
      try {
        return parseReport(readFileSync(f, "utf8"));
      } catch (e) {
        usageError(`${f}: ${(e as Error).message}`);
      }
    });
    let merged: RunReport;
    try {
      merged = mergeReports(reports, files);
    } catch (e) {
      if (e instanceof MergeError) usageError(e.message);
      throw e;
    }
    let policies: Map<string, Uint8Array> | undefined;
    if (opts.policies) {
      try {
        const parts = files.map((_, i) => {
          const dir = policyDirs[i];
          const index = parsePoliciesIndex(readFileSync(join(dir, "index.json"), "utf8"));
          return {
            name: dir,
            config: reports[i].config,
            index,
            read: (file: string) => new Uint8Array(readFileSync(join(dir, file))),
          };
        });
        policies = mergePolicies(merged.config, merged.env.backend, parts);
      } catch (e) {
        usageError(`the policies cannot be merged: ${(e as Error).message}`);
      }
    }
    process.stdout.write(formatReport(merged) + "\n");
    const written = saveReport(opts.out, JSON.stringify(merged, null, 1) + "\n", () => {});
    if (opts.policies && policies) {
      writeFolderAtomic(opts.policies, policies);
      process.stderr.write(`${policies.size - 1} trained policies written to ${opts.policies}\n`);
    }
    const { seedBase, seeds } = merged.config;
    process.stderr.write(
      `${files.length} reports merged (seeds ${seedBase}–${seedBase + seeds - 1}; their wall times sum to ${seconds(merged.timing.totalMs)}), written to ${written}\n`,
    );
  });

program
  .command("store")
  .description(
    "pretrain the models of each preset's own seeds on wasm into the store of pretrained models (public/pretrained/); stored ones are checked and kept",
  )
  .option(
    "--preset <id>",
    "a preset to store (repeatable; default: every preset)",
    collect,
    [] as string[],
  )
  .option("--dir <folder>", "the store's folder", STORE_DIR)
  .option("--parallel <n>", "worker threads (default: the number of cores)", integer(1))
  .option(
    "--seeds <n>",
    "store the models of this many seeds instead of each preset's own (those `run --seeds N --seed-base S` loads)",
    integer(1),
  )
  .option("--seed-base <s>", "the first of those seeds", integer(0))
  .option(
    "--set <path=value>",
    "store the models of the presets with this setting (repeatable), e.g. panel=own-modes: those `run --set` loads",
    collect,
    [] as string[],
  )
  .option("--prune", "then remove stored models that no current preset uses")
  .action(
    async (opts: {
      preset: string[];
      dir: string;
      parallel?: number;
      prune?: boolean;
      seeds?: number;
      seedBase?: number;
      set: string[];
    }) => {
      const ids = opts.preset.length ? opts.preset : PRESETS.map((p) => p.id);
      if (
        opts.prune &&
        (opts.seeds !== undefined || opts.seedBase !== undefined || opts.set.length > 0)
      )
        usageError(
          "--prune keeps only the models of the presets' own seeds and settings: it would remove those of --seeds/--seed-base/--set; run it on its own",
        );
      let requests;
      try {
        requests = ids.flatMap((id) =>
          presetRequests(id, { seeds: opts.seeds, seedBase: opts.seedBase }, opts.set),
        );
      } catch (e) {
        usageError((e as Error).message);
      }
      checkOutput(opts.dir, "folder", "--dir", usageError);
      const log = (s: string) => process.stderr.write(s + "\n");
      const backend = "wasm"; // the backend the CLI and the app run by default; other backends pretrain live
      const parallel = opts.parallel ?? Math.min(availableParallelism(), 8);
      const executor = new NodeWorkerExecutor(parallel, backend);
      const t0 = performance.now();
      try {
        const { stored, kept } = await fillStore(opts.dir, requests, executor, backend, log);
        log(
          `${stored} model(s) pretrained and stored, ${kept} kept, ${seconds(performance.now() - t0)}`,
        );
      } finally {
        await executor.close();
      }
      if (opts.prune) {
        const keep = new Set(
          PRESETS.flatMap((p) => presetRequests(p.id)).map((r) => jobKey(r.config, r.job, backend)),
        );
        const removed = pruneStore(opts.dir, keep, log);
        log(
          removed.length
            ? `pruned ${removed.length}: ${removed.join("; ")}`
            : "pruned nothing: every stored model is used by a preset",
        );
      }
      const size = storeSize(opts.dir);
      log(`store: ${size.files} files, ${(size.bytes / 1e6).toFixed(2)} MB`);
    },
  );

program
  .command("vs-parse")
  .description(
    "read a Verbalized Sampling reply on stdin; print its candidates and warnings as JSON",
  )
  .option("--k <n>", "number of candidates asked for", integer(1))
  .action(async (opts: { k?: number }) => {
    let raw = "";
    for await (const chunk of process.stdin.setEncoding("utf8")) raw += chunk;
    process.stdout.write(vsParseJson(raw, opts.k) + "\n");
  });

const cacheCommand = program
  .command("cache")
  .description(
    `the run cache, where runs keep their finished tasks (${runCacheRoot() ?? "off: COLLAPSE_LAB_CACHE=off"})`,
  );

cacheCommand
  .command("list")
  .description("list the runs kept in the run cache, most recently used first")
  .action(() => {
    const root = cacheRootOrExit();
    const runs = listRuns(root);
    process.stdout.write(`run cache: ${shownPath(root)}\n`);
    if (!runs.length) return void process.stdout.write("no runs kept\n");
    process.stdout.write(
      table([
        ["folder", "preset", "seeds", "backend", "tasks", "size", "last used", "state"],
        ...runs.map((r) => [
          r.name,
          r.preset ?? "?",
          r.seeds ?? "?",
          r.backend ?? "?",
          String(r.tasks),
          megabytes(r.bytes),
          new Date(r.usedAt).toISOString().slice(0, 16).replace("T", " "),
          r.finished ? "finished" : "unfinished",
        ]),
      ]) + "\n",
    );
    process.stdout.write(`${runs.length} run(s), ${megabytes(total(runs))} in all\n`);
  });

cacheCommand
  .command("prune")
  .description(
    `remove the runs whose report was made (each run also removes folders unused for ${MAX_AGE_DAYS} days, and the least recently used beyond ${MAX_TOTAL_BYTES / 1024 ** 3} GiB in all)`,
  )
  .option("--all", "remove unfinished runs too (they cannot be continued then)")
  .option("--older-than <days>", "only runs not used for this many days", integer(0))
  .action((opts: { all?: boolean; olderThan?: number }) => {
    const root = cacheRootOrExit();
    const removed = pruneRuns(root, { all: opts.all, olderThanDays: opts.olderThan });
    for (const r of removed) process.stdout.write(`removed ${r.name}\n`);
    process.stdout.write(
      `${removed.length} run(s) removed from ${shownPath(root)} (${megabytes(total(removed))}); ${listRuns(root).length} kept\n`,
    );
  });

registerRemoteCommands(program, { integer, collect, usageError });
registerReportCommand(program, usageError);
registerRayCommands(program, { integer, collect, usageError });
registerEvaluateCommand(program, { integer, collect, usageError });
registerSweepCommand(program, { integer, collect, usageError });

/** A policies folder is replaced whole; one that holds other files than policies is refused. */
function checkPoliciesFolder(dir: string): void {
  checkOutput(dir, "folder", "--policies", usageError);
  if (existsSync(dir) && readdirSync(dir).length && !existsSync(join(dir, "index.json")))
    usageError(`--policies ${dir} is a folder of other files, not policies; choose another`);
}

function cacheRootOrExit(): string {
  return runCacheRoot() ?? usageError("the run cache is off (COLLAPSE_LAB_CACHE=off)");
}

const total = (runs: CachedRun[]) => runs.reduce((s, r) => s + r.bytes, 0);
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** A path as the user would type it: relative to here when it is below here. */
function shownPath(path: string): string {
  const r = relative(process.cwd(), path);
  return r && !r.startsWith("..") && !isAbsolute(r) ? r : path;
}

/** A word as the shell reads it back: quoted unless it is made of plain characters only. */
const shellWord = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);

/**
 * Ctrl-C (SIGINT) or SIGTERM stops a run at once and says how to continue it. Every kept task is
 * written in one synchronous step, between two of which this runs, so none is left half-written.
 */
function stopCleanlyOnSignal(cache: FileTaskCache | undefined): void {
  const stop = (signal: NodeJS.Signals) => {
    const again = process.argv
      .slice(2)
      .filter((a) => a !== "--fresh")
      .map(shellWord)
      .join(" ");
    process.stderr.write(
      cache
        ? `\ncollapse-lab: stopped by ${signal}; ${cache.count()} finished task(s) kept in ${shownPath(cache.dir)}; to continue: npx collapse-lab ${again}\n`
        : `\ncollapse-lab: stopped by ${signal}; nothing was kept (COLLAPSE_LAB_CACHE=off)\n`,
    );
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

function usageError(message: string): never {
  process.stderr.write(`collapse-lab: ${message}\n`);
  process.exit(USAGE_ERROR);
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
