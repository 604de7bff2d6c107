// `collapse-lab ray …`: an experiment as a Ray job, through Ray's Jobs REST API. `submit` sends it,
// `status`, `logs`, `stop` and `fetch` follow it, stop it and bring its report home. `relay`
// serves the job endpoints to the app's Remote page with the token kept on this side.
import { Option, type Command } from "commander";
import { parseReport } from "../experiment/report-schema";
import { isTerminal, RayJobsError, type RayJobsClient, type RayJobInfo } from "../cluster/ray/jobs";
import { JobReportError, readJobLog, reportFromLog } from "../cluster/ray/job-log";
import { submitRun } from "../cluster/ray/submit";
import { configFromOptions, type ConfigOptions } from "./config-options";
import { corpusRefs } from "../experiment/corpora";
import type { CliHelpers } from "./remote-commands";
import { formatReport } from "../experiment/report-text";
import { checkOutput, saveReport } from "./outputs";
import { addConnection, client, type Connection } from "./ray-connection";
import { registerRelayCommand } from "./relay-command";
import { registerScopeCommands } from "./scope-commands";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function describe(info: RayJobInfo, log?: string): string {
  const lines = [`${info.submission_id}: ${info.status}`];
  const md = info.metadata ?? {};
  if (md["collapse-lab"])
    lines.push(
      `  ${md.preset ?? "custom"} · ${md.seeds ?? "?"} seed(s) · ${md.conditions ?? ""} · backend ${md.backend ?? "?"}`,
    );
  if (info.start_time)
    lines.push(
      `  started ${new Date(info.start_time).toISOString()}${info.end_time ? `, ended ${new Date(info.end_time).toISOString()}` : ""}`,
    );
  if (log !== undefined) {
    const r = readJobLog(log);
    const last = r.phases.at(-1);
    if (last) lines.push(`  progress: ${last.phase} ${last.done}/${last.total} (${last.detail})`);
    if (r.error) lines.push(`  cause: ${r.error}`);
    else if (info.status === "SUCCEEDED" && r.reportChunks.of)
      lines.push(
        "  its report is ready: collapse-lab ray fetch " +
          info.submission_id +
          " --out report.json",
      );
  }
  if (info.status === "FAILED" && info.message && (log === undefined || !readJobLog(log).error))
    lines.push(`  Ray: ${info.message.split("\n")[0]}`);
  return lines.join("\n");
}

/** Prints the job's log as it grows (markers left out unless `raw`) until the job ends. */
async function follow(
  c: RayJobsClient,
  id: string,
  raw: boolean,
  pollMs: number,
): Promise<RayJobInfo> {
  let shown = 0;
  for (;;) {
    const info = await c.info(id);
    const log = await c.logs(id);
    const fresh = log.slice(shown);
    const cut = isTerminal(info.status) ? fresh.length : fresh.lastIndexOf("\n") + 1; // whole lines while it runs
    for (const line of fresh.slice(0, cut).split("\n"))
      if (line && (raw || !line.includes("@@collapse-lab "))) process.stdout.write(`${line}\n`);
    shown += cut;
    if (isTerminal(info.status)) return info;
    await sleep(pollMs);
  }
}

function fetchReport(log: string, out: string, quiet: boolean): void {
  const report = reportFromLog(log);
  parseReport(JSON.stringify(report)); // what is written reads back as a report
  if (!quiet) process.stdout.write(formatReport(report) + "\n");
  saveReport(out, JSON.stringify(report, null, 1) + "\n", (m) => process.stderr.write(`${m}\n`));
}

export function registerRayCommands(program: Command, helpers: CliHelpers): void {
  const { integer, collect, usageError } = helpers;
  const ray = program
    .command("ray")
    .description(
      "run experiments as Ray jobs on a cluster (Ray's Jobs API), follow them and fetch their reports",
    );
  const guard = async (f: () => Promise<void>) => {
    try {
      await f();
    } catch (e) {
      if (e instanceof RayJobsError || e instanceof JobReportError) {
        process.stderr.write(`collapse-lab: ${e.message}\n`);
        process.exit(1);
      }
      throw e;
    }
  };

  addConnection(
    ray
      .command("submit")
      .description(
        "submit an experiment as a Ray job; prints its id (with --follow: its log, then its report)",
      )
      .requiredOption("--preset <id>", "experiment preset (see `collapse-lab presets`)")
      .option("--seeds <n>", "number of seeds", integer(1))
      .option("--seed-base <s>", "first seed", integer(0))
      .option("--set <path=value>", "override a config value (repeatable)", collect, [] as string[])
      .addOption(
        new Option(
          "--backend <name>",
          "engine backend on the workers (webgpu asks Ray for a GPU per task)",
        )
          .choices(["wasm", "webgpu", "float64"])
          .default("wasm"),
      )
      .option(
        "--no-store",
        "pretrain every model on the cluster instead of shipping the stored ones",
      )
      .option("--task-cpus <n>", "CPUs Ray reserves for each task", Number, 1)
      .option("--task-gpus <n>", "GPUs per task (default: 1 with --backend webgpu, else 0)", Number)
      .option(
        "--task-heap-mb <n>",
        "Node's heap limit in each task, MB (default: Node's own)",
        integer(16),
      )
      .option(
        "--python <cmd>",
        "the Python with Ray on the head, that runs the job's entrypoint",
        "python",
      )
      .option(
        "--env <NAME=value>",
        "an environment variable for the job's driver and tasks (repeatable), e.g. VK_ICD_FILENAMES=…",
        collect,
        [] as string[],
      )
      .option("--follow", "print the job's log until it ends, then its table (and --out)")
      .option("--out <file>", "with --follow: write the RunReport JSON here"),
  ).action(
    (
      opts: ConfigOptions &
        Connection & {
          backend: "wasm" | "webgpu" | "float64";
          store: boolean;
          taskCpus: number;
          taskGpus?: number;
          taskHeapMb?: number;
          python: string;
          env: string[];
          follow?: boolean;
          out?: string;
        },
    ) =>
      guard(async () => {
        const config = configFromOptions(opts, usageError);
        const corpora = corpusRefs(config);
        if (corpora.length)
          usageError(
            `${corpora[0].path}: a Ray job does not carry dialogue corpora (docs/humans.md); run it with collapse-lab run`,
          );
        if (!(opts.taskCpus > 0)) usageError("--task-cpus must be a number > 0");
        if (opts.taskGpus !== undefined && !(opts.taskGpus >= 0))
          usageError("--task-gpus must be a number ≥ 0");
        if (opts.out && !opts.follow)
          usageError(
            "--out needs --follow (or fetch the report later: collapse-lab ray fetch JOB --out FILE)",
          );
        if (opts.out) checkOutput(opts.out, "file", "--out", usageError);
        const env: Record<string, string> = {};
        for (const kv of opts.env) {
          const eq = kv.indexOf("=");
          if (eq <= 0) usageError(`--env ${JSON.stringify(kv)}: expected NAME=value`);
          env[kv.slice(0, eq)] = kv.slice(eq + 1);
        }
        const c = client(opts, usageError);
        const version = await c.version();
        const { id } = await submitRun(
          c,
          {
            config,
            backend: opts.backend,
            preset: opts.preset,
            store: opts.store,
            taskCpus: opts.taskCpus,
            taskGpus: opts.taskGpus,
            taskHeapMb: opts.taskHeapMb,
            python: opts.python,
            env,
          },
          (m) => process.stderr.write(`${m}\n`),
        );
        process.stderr.write(
          `submitted to Ray ${version} at ${c.address}: follow it with collapse-lab ray logs ${id} --follow\n`,
        );
        process.stdout.write(`${id}\n`);
        if (!opts.follow) return;
        const info = await follow(c, id, false, 2000);
        process.stderr.write(describe(info, await c.logs(id)) + "\n");
        if (info.status !== "SUCCEEDED") process.exit(1);
        if (opts.out) fetchReport(await c.logs(id), opts.out, true);
      }),
  );

  addConnection(
    ray
      .command("status")
      .description("a job's status, progress and, when it failed, the cause")
      .argument("<job>", "the job's submission id"),
  ).action((job: string, opts: Connection) =>
    guard(async () => {
      const c = client(opts, usageError);
      const info = await c.info(job);
      process.stdout.write(describe(info, await c.logs(job)) + "\n");
    }),
  );

  addConnection(
    ray
      .command("logs")
      .description("a job's log (its progress lines; --raw also the machine-readable ones)")
      .argument("<job>", "the job's submission id")
      .option("--follow", "keep printing until the job ends")
      .option("--raw", "include the @@collapse-lab lines (progress, report)"),
  ).action((job: string, opts: Connection & { follow?: boolean; raw?: boolean }) =>
    guard(async () => {
      const c = client(opts, usageError);
      if (opts.follow) {
        const info = await follow(c, job, !!opts.raw, 2000);
        process.stderr.write(`${job}: ${info.status}\n`);
        return;
      }
      for (const line of (await c.logs(job)).split("\n"))
        if (line && (opts.raw || !line.includes("@@collapse-lab ")))
          process.stdout.write(`${line}\n`);
    }),
  );

  addConnection(
    ray
      .command("stop")
      .description("stop a job (its tasks and processes end with it)")
      .argument("<job>", "the job's submission id")
      .option("--no-wait", "return at once instead of waiting until Ray says it stopped"),
  ).action((job: string, opts: Connection & { wait: boolean }) =>
    guard(async () => {
      const c = client(opts, usageError);
      const stopping = await c.stop(job);
      if (!stopping) {
        const info = await c.info(job);
        process.stdout.write(`${job} had already ended: ${info.status}\n`);
        return;
      }
      if (!opts.wait) return void process.stdout.write(`${job}: stopping\n`);
      for (let i = 0; ; i++) {
        const info = await c.info(job);
        if (isTerminal(info.status)) return void process.stdout.write(`${job}: ${info.status}\n`);
        if (i > 120)
          throw new RayJobsError(
            "server-error",
            `${job} is still ${info.status} a minute after it was asked to stop`,
          );
        await sleep(500);
      }
    }),
  );

  addConnection(
    ray
      .command("fetch")
      .description(
        "download a finished job's RunReport (the Runs page and `serve --report` read it)",
      )
      .argument("<job>", "the job's submission id")
      .requiredOption("--out <file>", "write the RunReport JSON here")
      .option("--quiet", "do not print the table"),
  ).action((job: string, opts: Connection & { out: string; quiet?: boolean }) =>
    guard(async () => {
      checkOutput(opts.out, "file", "--out", usageError);
      const c = client(opts, usageError);
      const info = await c.info(job);
      if (!isTerminal(info.status))
        throw new JobReportError(
          `${job} is ${info.status}: fetch its report once it has finished (collapse-lab ray logs ${job} --follow)`,
        );
      fetchReport(await c.logs(job), opts.out, !!opts.quiet);
    }),
  );

  registerRelayCommand(ray, helpers);
  registerScopeCommands(ray, helpers);
}
