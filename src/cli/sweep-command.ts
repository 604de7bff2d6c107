// `collapse-lab sweep`: a preset run at every point of a grid of settings (--set-grid path=v1,v2,…,
// repeatable: the product), each point an ordinary run — its own folder in the run cache, the
// store, the workers — written as DIR/<point>.json, then the sweep's summary DIR/sweep.json and its
// table. The points run one after the other on one pool of workers; a pretrained model one point
// made stands in for every other point's same job (γ, for one, does not change pretraining). A bad
// grid is refused in one line before any work; a stopped sweep continues where it stopped.
import { availableParallelism } from "node:os";
import { join, relative, isAbsolute } from "node:path";
import { Option, type Command } from "commander";
import { benchmarkFor } from "../benchmarks/registry";
import { microBenchmark, type MicroBenchmark } from "../engine/micro-benchmark";
import { ConfigError, type ExperimentConfig } from "../experiment/config";
import {
  runExperiment,
  type ExperimentProgress,
  type RunReport,
  type TaskCache,
} from "../experiment/experiment";
import { NodeWorkerExecutor } from "../experiment/node-executor";
import {
  autoPrune,
  codeFingerprint,
  markFinished,
  runCacheRoot,
  runFolder,
} from "../experiment/node-run-cache";
import { nodeStore } from "../experiment/node-store";
import { fileTaskCache, ResumeError, type FileTaskCache } from "../experiment/node-task-cache";
import { createNodeBackend } from "../experiment/node-webgpu";
import { modelConfig, modelOptions } from "../experiment/pretrain";
import { canonicalJson } from "../experiment/store";
import {
  parseGridSpec,
  planSweep,
  sharePretraining,
  summarizeSweep,
  SweepError,
  SWEEP_FILE,
  type PlannedPoint,
  type SweepAxis,
} from "../experiment/sweep";
import { formatSweep } from "../experiment/sweep-text";
import { InlineExecutor, type Executor, type Task, type TaskResult } from "../experiment/tasks";
import type { UnitProgress } from "../experiment/runner";
import { seconds } from "../util/format";
import { throttle } from "../util/throttle";
import { configFromOptions } from "./config-options";
import { checkOutput, saveReport } from "./outputs";
import type { CliHelpers } from "./remote-commands";

interface SweepOptions {
  preset: string;
  setGrid: string[];
  set: string[];
  seeds?: number;
  seedBase?: number;
  backend: "wasm" | "webgpu" | "float64";
  parallel?: number;
  out: string;
  store: boolean;
  fresh?: boolean;
  quiet?: boolean;
}

/** Keeps nothing: a point's own cache when the run cache is off. */
const NO_CACHE: TaskCache = { get: async () => undefined, put: async () => {} };

/** Counts the tasks that reach the workers, so the sweep can say how many models it pretrained. */
class CountingExecutor implements Executor {
  readonly counts: Record<Task["kind"], number> = { pretrain: 0, unit: 0, diagnose: 0, rescore: 0 };
  constructor(readonly inner: Executor) {}
  get parallelism() {
    return this.inner.parallelism;
  }
  run<T extends Task>(task: T, onProgress?: (p: UnitProgress) => void): Promise<TaskResult<T>> {
    this.counts[task.kind]++;
    return this.inner.run(task, onProgress);
  }
  close() {
    return this.inner.close();
  }
}

/** A path as the user would type it: relative to here when it is below here. */
function shownPath(path: string): string {
  const r = relative(process.cwd(), path);
  return r && !r.startsWith("..") && !isAbsolute(r) ? r : path;
}

/** A word as the shell reads it back: quoted unless it is made of plain characters only. */
const shellWord = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);

export function registerSweepCommand(
  program: Command,
  { integer, collect, usageError }: CliHelpers,
): void {
  program
    .command("sweep")
    .description(
      "run a preset at every point of a grid of settings; write a report per point and the sweep's summary of effects against the swept values",
    )
    .requiredOption("--preset <id>", "experiment preset (see `collapse-lab presets`)")
    .requiredOption(
      "--set-grid <path=v1,v2,…>",
      "a setting and the values it takes, e.g. --set-grid simulator.gamma=1,2,4,10,30 (repeatable: the points are the product)",
      collect,
      [] as string[],
    )
    .requiredOption(
      "--out <dir>",
      "write DIR/<point>.json per point and DIR/sweep.json (replaced if they exist; missing folders are created)",
    )
    .option(
      "--set <path=value>",
      "override a config value at every point (repeatable)",
      collect,
      [] as string[],
    )
    .option("--seeds <n>", "number of seeds at every point", integer(1))
    .option("--seed-base <s>", "first seed", integer(0))
    .addOption(
      new Option("--backend <name>", "engine backend (see docs/config.md#backends)")
        .choices(["wasm", "webgpu", "float64"])
        .default("wasm"),
    )
    .option("--parallel <n>", "worker threads (default: the number of cores)", integer(1))
    .option(
      "--no-store",
      "pretrain every model live instead of loading stored ones (public/pretrained/)",
    )
    .option(
      "--fresh",
      "run every task again instead of continuing from the ones kept; the new ones replace them",
    )
    .option("--quiet", "print only the sweep's table (and problems)")
    .action(async (opts: SweepOptions) => {
      const log = (s: string) => !opts.quiet && process.stderr.write(s + "\n");
      const warn = (m: string) => process.stderr.write(`collapse-lab: ${m}\n`);
      // every point is resolved and checked before any work
      const base = configFromOptions(opts, usageError);
      let grid: SweepAxis[];
      let points: PlannedPoint[];
      try {
        grid = opts.setGrid.map(parseGridSpec);
        points = planSweep(grid, opts.set, (sets) =>
          configFromOptions({ ...opts, set: [...opts.set, ...sets] }, (m) => {
            throw new ConfigError(m);
          }),
        );
      } catch (e) {
        if (e instanceof SweepError) usageError(e.message);
        throw e;
      }
      checkOutput(join(opts.out, SWEEP_FILE), "file", "--out", usageError);

      // each point keeps its tasks in the folder `run` with its settings would use
      const root = runCacheRoot();
      const caches = new Map<string, FileTaskCache>();
      if (root) {
        for (const p of points) {
          try {
            caches.set(
              p.name,
              fileTaskCache(
                runFolder(root, opts.preset, p.config, opts.backend),
                p.config,
                opts.backend,
                {
                  onNote: warn,
                  fresh: opts.fresh,
                  code: codeFingerprint(),
                  preset: opts.preset,
                },
              ),
            );
          } catch (e) {
            if (e instanceof ResumeError) usageError(e.message);
            throw e;
          }
        }
        const kept = [...caches.values()].reduce((n, c) => n + c.kept, 0);
        log(
          `collapse-lab sweep: tasks kept in the run cache, ${shownPath(root)}, one folder per point: ${opts.fresh ? "none read (--fresh)" : `${kept} finished before (the same command continues from them; --fresh runs them again)`}`,
        );
        const pruned = autoPrune(root, caches.values().next().value!.dir);
        const mine = new Set([...caches.values()].map((c) => c.dir));
        if (pruned.some((r) => mine.has(r.dir)))
          warn("the run cache's pruning removed folders of this sweep; their tasks run again");
      }
      stopCleanlyOnSignal(caches, points.length);

      const parallel = opts.parallel ?? base.parallel ?? Math.min(availableParallelism(), 8);
      const executor = new CountingExecutor(
        parallel > 1
          ? new NodeWorkerExecutor(parallel, opts.backend)
          : new InlineExecutor((await createNodeBackend(opts.backend)).backend),
      );
      log(
        `collapse-lab sweep: ${opts.preset} over ${grid.map((a) => a.path).join(" × ")}, ${points.length} points, ${base.seeds} seed(s) from ${base.seedBase} each, backend ${opts.backend}, ${parallel} worker(s)`,
      );
      const store = opts.store ? nodeStore() : undefined;
      const speeds = new Map<string, MicroBenchmark>(); // one measurement per simulator model
      const shared = new Map<string, unknown>(); // pretrained models, shared between points
      const done: (PlannedPoint & { report: RunReport; file: string })[] = [];
      const t0 = performance.now();
      try {
        for (const [i, p] of points.entries()) {
          const tag = `[${i + 1}/${points.length} ${p.name}]`;
          const speed = await measureOnce(speeds, p.config, opts.backend);
          const progress = throttle((e: ExperimentProgress) => {
            if (e.phase === "train")
              log(
                `${tag} train ${e.done}/${e.total} units done · ${e.unit.condition} seed ${e.unit.seed} step ${e.unit.step}/${e.unit.steps}`,
              );
            else log(`${tag} ${e.phase} ${e.done}/${e.total} · ${e.detail}`);
          }, 1000);
          const before = executor.counts.pretrain;
          let reused = 0;
          // without the run cache (COLLAPSE_LAB_CACHE=off) the points still share pretraining, in memory
          const own = caches.get(p.name);
          const report = await runExperiment(p.config, executor, {
            backend: opts.backend,
            preset: opts.preset,
            microBenchmark: speed,
            onProgress: progress,
            store,
            cache: sharePretraining(own ?? NO_CACHE, shared, () => reused++),
            onNote: (m) => (m.startsWith("pretraining:") ? log(`${tag} ${m}`) : warn(m)),
          });
          progress.flush();
          const file = `${p.name}.json`;
          const path = join(opts.out, file);
          const written = saveReport(
            path,
            JSON.stringify(report, null, 1) + "\n",
            () => {},
            own?.dir,
          );
          if (own && written === path) markFinished(own.dir, written);
          log(
            `${tag} done in ${seconds(report.timing.totalMs)}: ${executor.counts.pretrain - before} model(s) pretrained live, ${reused} from earlier points; report written to ${path}`,
          );
          done.push({ ...p, report, file });
        }
      } finally {
        await executor.close();
      }
      const summary = summarizeSweep(
        { preset: opts.preset, backend: opts.backend, config: base, sets: opts.set },
        grid,
        done,
      );
      process.stdout.write(formatSweep(summary) + "\n");
      saveReport(join(opts.out, SWEEP_FILE), JSON.stringify(summary, null, 1) + "\n", log);
      log(
        `sweep done in ${seconds(performance.now() - t0)}: ${executor.counts.pretrain} model(s) pretrained live in all, ${executor.counts.unit} condition × seed units trained`,
      );
    });
}

/** This machine's speed on a point's simulator model (for the app's time estimates), measured once per model. */
async function measureOnce(
  speeds: Map<string, MicroBenchmark>,
  config: ExperimentConfig,
  backend: SweepOptions["backend"],
): Promise<MicroBenchmark> {
  const bench = benchmarkFor(config);
  const model = modelConfig(bench, config.simulator.model, "simulator");
  const key = canonicalJson({ model, capacity: modelOptions(bench, config).capacity });
  let speed = speeds.get(key);
  if (!speed) {
    speed = await microBenchmark(
      (await createNodeBackend(backend)).backend,
      model,
      modelOptions(bench, config).capacity,
    );
    speeds.set(key, speed);
  }
  return speed;
}

/**
 * Ctrl-C (SIGINT) or SIGTERM stops a sweep at once and says how to continue it: the finished points'
 * reports are written, and every finished task of the point under way is kept in its folder.
 */
function stopCleanlyOnSignal(caches: Map<string, FileTaskCache>, points: number): void {
  const stop = (signal: NodeJS.Signals) => {
    const again = process.argv
      .slice(2)
      .filter((a) => a !== "--fresh")
      .map(shellWord)
      .join(" ");
    const tasks = [...caches.values()].reduce((n, c) => n + c.count(), 0);
    process.stderr.write(
      caches.size
        ? `\ncollapse-lab: stopped by ${signal}; ${tasks} finished task(s) of the sweep's ${points} points kept in the run cache; to continue: npx collapse-lab ${again}\n`
        : `\ncollapse-lab: stopped by ${signal}; nothing was kept (COLLAPSE_LAB_CACHE=off)\n`,
    );
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
