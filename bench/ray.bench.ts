// What a Ray job costs over a local run of the same experiment, side by side in one run: the
// preset run locally (worker threads), then submitted to a single-node Ray head started here with
// as many CPUs as the local run's workers, with the times from the submission to the job's first
// line, to its start marker, and to its end, and the report's own wall time in both. Both runs
// must give the same numbers. Needs Ray in .ray/venv (bash scripts/ray.sh).
// Usage: npm run bench:ray [-- --preset persuasion-smoke --parallel 2]
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { isDeepStrictEqual } from "node:util";
import { table } from "../src/util/format";
import { validateConfig } from "../src/experiment/config";
import { runExperiment, type RunReport } from "../src/experiment/experiment";
import { NodeWorkerExecutor } from "../src/experiment/node-executor";
import { nodeStore } from "../src/experiment/node-store";
import { presetConfig } from "../src/experiment/presets";
import { isTerminal, RayJobsClient } from "../src/cluster/ray/jobs";
import { readJobLog, reportFromLog } from "../src/cluster/ray/job-log";
import { plainFetch } from "../src/cluster/ray/node-http";
import { submitRun } from "../src/cluster/ray/submit";
import { startRayHead } from "../test/cluster/ray-head";

const { values } = parseArgs({
  options: {
    preset: { type: "string", default: "persuasion-smoke" },
    parallel: { type: "string", default: String(Math.min(availableParallelism(), 8)) },
  },
});
const preset = values.preset!;
const parallel = Number(values.parallel);
if (!Number.isInteger(parallel) || parallel < 1) {
  console.error(`bench: --parallel must be a positive integer, got "${values.parallel}"`);
  process.exit(2);
}
const config = validateConfig(presetConfig(preset));
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const numbers = (r: RunReport) =>
  JSON.parse(
    JSON.stringify({ ...r, timing: 0, env: 0, store: 0 }, (k, v) =>
      /Ms$|^ms$/.test(k) ? undefined : v,
    ),
  ) as unknown;

console.error(`bench: ${preset} locally on ${parallel} worker thread(s)`);
let t = performance.now();
const executor = new NodeWorkerExecutor(parallel, "wasm");
const local = await runExperiment(config, executor, {
  backend: "wasm",
  preset,
  store: nodeStore(),
}).finally(() => executor.close());
const localMs = performance.now() - t;

console.error(`bench: starting a Ray head with ${parallel} CPU(s)`);
t = performance.now();
const head = await startRayHead({ cpus: parallel });
const headMs = performance.now() - t;
try {
  const ray = new RayJobsClient(head.address, { fetch: plainFetch });
  t = performance.now();
  const { id, pkg } = await submitRun(ray, { config, backend: "wasm", preset });
  const submitMs = performance.now() - t;
  let firstLine = NaN;
  let started = NaN;
  let log = "";
  for (;;) {
    const info = await ray.info(id);
    log = await ray.logs(id);
    const now = performance.now() - t;
    if (Number.isNaN(firstLine) && log.trim()) firstLine = now;
    if (Number.isNaN(started) && readJobLog(log).start) started = now;
    if (isTerminal(info.status)) {
      if (info.status !== "SUCCEEDED")
        throw new Error(`the job ended ${info.status}: ${readJobLog(log).error ?? info.message}`);
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const rayMs = performance.now() - t;
  const remote = reportFromLog(log);
  console.log(
    `${preset}, ${parallel} CPU(s), wasm; job package ${(pkg.zip.length / 1e6).toFixed(1)} MB`,
  );
  console.log(
    table([
      ["", "local", "Ray", "Ray / local"],
      ["whole run, as the caller waits", s(localMs), s(rayMs), (rayMs / localMs).toFixed(2)],
      [
        "the report's wall time",
        s(local.timing.totalMs),
        s(remote.timing.totalMs),
        (remote.timing.totalMs / local.timing.totalMs).toFixed(2),
      ],
      [
        "training + evaluation",
        s(local.timing.trainMs),
        s(remote.timing.trainMs),
        (remote.timing.trainMs / local.timing.trainMs).toFixed(2),
      ],
    ]),
  );
  console.log(
    `Ray: head started in ${s(headMs)}; package built and uploaded in ${s(submitMs)}; first log line after ${s(firstLine)}, driver started after ${s(started)} (from the submission)`,
  );
  console.log(`same numbers: ${isDeepStrictEqual(numbers(local), numbers(remote)) ? "yes" : "NO"}`);
} finally {
  await head.stop();
}
