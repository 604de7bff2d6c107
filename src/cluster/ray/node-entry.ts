// The Node side of a collapse-lab Ray job, bundled into one file (collapse-lab-ray.mjs) that the
// job's working directory carries to every node:
//   driver [--config FILE] --backend B [--preset ID] [--no-store]   (else the config is in $COLLAPSE_LAB_CONFIG)
//       runs the experiment under driver.py, each task a Ray task (RayExecutor), and writes the
//       progress, the report's table and the report itself (as markers, job-log.ts) to stderr;
//   task --backend B --out FILE  (the task, v8-serialised, on stdin)
//       runs one task in this process and writes its result, v8-serialised, to FILE; a unit's
//       learning curve goes to stdout as it trains, which Ray forwards into the job's log.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { deserialize, serialize } from "node:v8";
import { parseArgs } from "node:util";
import { benchmarkFor } from "../../benchmarks/registry";
import { formatReport } from "../../experiment/report-text";
import type { BackendName } from "../../engine/backend";
import { createNodeBackend } from "../../experiment/node-webgpu";
import { microBenchmark } from "../../engine/micro-benchmark";
import { ConfigError, validateConfig } from "../../experiment/config";
import { runExperiment, type ExperimentProgress } from "../../experiment/experiment";
import { nodeStore } from "../../experiment/node-store";
import { modelConfig, modelOptions } from "../../experiment/pretrain";
import type { UnitProgress } from "../../experiment/runner";
import { executeTask, type Task } from "../../experiment/tasks";
import { throttle } from "../../util/throttle";
import { marker, reportMarkers } from "./job-log";
import { RayExecutor } from "./ray-executor";

const HERE = dirname(fileURLToPath(import.meta.url));
const [mode, ...rest] = process.argv.slice(2);
// the driver's stdout carries its requests to driver.py, so it speaks on stderr (the job's log too)
const log = mode === "driver" ? process.stderr : process.stdout;
if (mode === "driver") console.log = console.error;
const say = (line: string) => log.write(`${line}\n`);

function backendOf(name: string | undefined): BackendName {
  if (name === "wasm" || name === "webgpu" || name === "float64") return name;
  throw new Error(`--backend must be wasm, webgpu or float64, not ${JSON.stringify(name)}`);
}

/** The backend asked for, or an error saying why it cannot start here (never another backend). */
async function startBackend(name: BackendName) {
  return (await createNodeBackend(name)).backend;
}

async function driver(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: "string" },
      backend: { type: "string" },
      preset: { type: "string" },
      "no-store": { type: "boolean" },
    },
  });
  const backendName = backendOf(values.backend);
  let config;
  try {
    const raw = values.config
      ? readFileSync(values.config, "utf8")
      : process.env.COLLAPSE_LAB_CONFIG;
    if (!raw) throw new Error("no config: pass --config FILE or set COLLAPSE_LAB_CONFIG");
    config = validateConfig(JSON.parse(raw));
  } catch (e) {
    const why =
      e instanceof ConfigError
        ? `the experiment's config is invalid on the cluster: ${e.message}`
        : `the experiment's config could not be read: ${(e as Error).message}`;
    throw new Error(why, { cause: e });
  }
  const executor = await RayExecutor.connect();
  const { cpus, gpus, nodes } = executor.cluster;
  say(
    `collapse-lab on Ray: ${values.preset ?? "a custom config"}, ${config.seeds} seed(s) from ${config.seedBase}, conditions ${config.conditions.join(" ")}, backend ${backendName}`,
  );
  say(
    `cluster: ${nodes} node(s), ${cpus} CPU(s), ${gpus} GPU(s); ${executor.parallelism} task(s) at once`,
  );
  say(
    marker({
      t: "start",
      preset: values.preset,
      backend: backendName,
      seeds: config.seeds,
      conditions: config.conditions,
    }),
  );
  const storeDir = join(HERE, "pretrained");
  const store =
    !values["no-store"] && existsSync(join(storeDir, "index.json"))
      ? nodeStore(storeDir)
      : undefined;
  if (!store) say("pretraining: every model live (no store in the job)");
  // the head's speed on the simulator model, for the app's time estimates; the head may lack a GPU
  const bench = benchmarkFor(config);
  const speed = await startBackend(backendName).then(
    (b) =>
      microBenchmark(
        b,
        modelConfig(bench, config.simulator.model, "simulator"),
        modelOptions(bench, config).capacity,
      ),
    (e: Error) => void say(`no micro-benchmark on the head: ${e.message}`),
  );
  const progress = throttle((p: ExperimentProgress) => {
    const detail = p.phase === "train" ? `${p.unit.condition} seed ${p.unit.seed}` : p.detail;
    say(`${p.phase.padEnd(8)} ${p.done}/${p.total} · ${detail}`);
    say(marker({ t: "phase", phase: p.phase, done: p.done, total: p.total, detail }));
  }, 1000);
  try {
    const report = await runExperiment(config, executor, {
      backend: backendName,
      preset: values.preset,
      microBenchmark: speed,
      store,
      onProgress: progress,
      onNote: (m) => say(m),
    });
    progress.flush();
    say(formatReport(report));
    for (const line of reportMarkers(report)) say(line);
  } finally {
    await executor.close();
  }
}

async function task(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { backend: { type: "string" }, out: { type: "string" } },
  });
  if (!values.out) throw new Error("task needs --out FILE");
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const t = deserialize(Buffer.concat(chunks)) as Task;
  const backend = await startBackend(backendOf(values.backend));
  // every curve point (the live figure's data), and otherwise the step at most every 5 s
  const steps = throttle((p: UnitProgress) => say(marker({ t: "unit", progress: p })), 5000);
  const onProgress = (p: UnitProgress) =>
    p.point ? say(marker({ t: "unit", progress: p })) : steps(p);
  const result = await executeTask(backend, t, onProgress);
  writeFileSync(values.out, serialize(result));
}

try {
  if (mode === "driver") await driver(rest);
  else if (mode === "task") await task(rest);
  else throw new Error(`unknown mode ${JSON.stringify(mode)}: driver or task`);
  process.exit(0);
} catch (e) {
  const message = (e as Error).message ?? String(e);
  if (mode === "driver") say(marker({ t: "error", message }));
  process.stderr.write(
    `collapse-lab: ${mode === "task" ? ((e as Error).stack ?? message) : message}\n`,
  );
  process.exit(1);
}
