// `collapse-lab evaluate`: re-scores a run's stored trained policies (`run --policies`, or a
// recording's public/recorded/<preset>.policies/) against the humans and a held-out panel, changed
// only in evaluation settings by --set, without training again (src/experiment/rescore.ts), and
// prints and writes a RunReport that says what it re-scored.
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { Option, type Command } from "commander";
import type { BackendName } from "../engine/backend";
import { ConfigError, validateConfig, type ExperimentConfig } from "../experiment/config";
import type { ExperimentProgress, RunReport } from "../experiment/experiment";
import { NodeWorkerExecutor } from "../experiment/node-executor";
import { nodeStore } from "../experiment/node-store";
import { createNodeBackend } from "../experiment/node-webgpu";
import { openPolicyFolder, type PolicyFolder } from "../experiment/node-policies";
import { policiesBeside } from "../experiment/policies";
import { parseReport } from "../experiment/report-schema";
import { formatReport } from "../experiment/report-text";
import {
  EVALUATION_SETTINGS,
  evaluationConfig,
  RescoreError,
  rescoreRun,
  type StoredPolicies,
} from "../experiment/rescore";
import { InlineExecutor, type Executor } from "../experiment/tasks";
import { throttle } from "../util/throttle";
import { checkOutput, saveReport } from "./outputs";
import type { CliHelpers } from "./remote-commands";

const BACKENDS = ["wasm", "webgpu", "float64"] as const;

interface EvaluateOptions {
  report: string;
  policies?: string;
  set: string[];
  backend?: BackendName;
  parallel?: number;
  out?: string;
  store: boolean;
  quiet?: boolean;
}

export function registerEvaluateCommand(
  program: Command,
  { integer, collect, usageError }: CliHelpers,
): void {
  program
    .command("evaluate")
    .description(
      "re-score a run's stored trained policies against the humans and a held-out panel (changed with --set panel…), without training again",
    )
    .requiredOption("--report <file>", "the RunReport of the run that trained the policies")
    .option(
      "--policies <dir>",
      "its trained policies, written by `run --policies` (default: <report>.policies/ beside the report)",
    )
    .option(
      "--set <path=value>",
      `change an evaluation setting (${EVALUATION_SETTINGS.join(", ")}), e.g. --set panel.0.gamma=2 (repeatable)`,
      collect,
      [] as string[],
    )
    .addOption(
      new Option(
        "--backend <name>",
        "engine backend (default: the one the policies were trained on; another gives other draws)",
      ).choices(BACKENDS),
    )
    .option("--parallel <n>", "worker threads (default: the number of cores)", integer(1))
    .option(
      "--out <file>",
      "write the re-scored RunReport JSON here (replaced if it exists; missing folders are created)",
    )
    .option(
      "--no-store",
      "pretrain every model live instead of loading stored ones (public/pretrained/)",
    )
    .option("--quiet", "print only the table (and problems with the store)")
    .action(async (opts: EvaluateOptions) => {
      let text: string;
      try {
        text = readFileSync(opts.report, "utf8");
      } catch (e) {
        return usageError(`--report ${opts.report}: ${(e as Error).message}`);
      }
      let report: RunReport;
      let trained: ExperimentConfig;
      let config: ExperimentConfig;
      try {
        report = parseReport(text);
        trained = validateConfig(report.config);
        config = evaluationConfig(trained, opts.set);
      } catch (e) {
        return usageError(
          e instanceof RescoreError || e instanceof ConfigError
            ? `evaluate: ${e.message}`
            : `${opts.report}: ${(e as Error).message}`,
        );
      }
      const dir = opts.policies ?? policiesBeside(opts.report);
      let folder: PolicyFolder;
      try {
        folder = openPolicyFolder(dir, trained);
      } catch (e) {
        return usageError(
          existsSync(dir)
            ? `${dir}: ${(e as Error).message}`
            : `no policies at ${dir}: give the folder \`run --policies\` wrote (--policies)`,
        );
      }
      const { index } = folder;
      const backend =
        opts.backend ??
        BACKENDS.find((b) => b === index.backend) ??
        usageError(
          `the policies were trained on ${index.backend}, which this command cannot run: choose --backend`,
        );
      if (opts.out) checkOutput(opts.out, "file", "--out", usageError);

      const policies: StoredPolicies = {
        name: dir,
        backend: index.backend,
        policy: (condition, seed) => folder.checkpoint(condition, seed),
      };
      const log = (s: string) => !opts.quiet && process.stderr.write(s + "\n");
      const warn = (m: string) => process.stderr.write(`collapse-lab: ${m}\n`);
      const parallel = opts.parallel ?? config.parallel ?? Math.min(availableParallelism(), 8);
      log(
        `collapse-lab evaluate: the policies of ${opts.report} (${report.preset ?? "no preset"}, ${config.seeds} seed(s), conditions ${config.conditions.join(" ")}) from ${dir}, backend ${backend}, ${parallel} worker(s)${opts.set.length ? `; ${opts.set.join(", ")}` : "; the run's own settings"}`,
      );
      if (!opts.store) log("pretraining: every model live (--no-store)");
      const executor: Executor =
        parallel > 1
          ? new NodeWorkerExecutor(parallel, backend)
          : new InlineExecutor((await createNodeBackend(backend)).backend);
      const progress = throttle((p: ExperimentProgress) => {
        if (p.phase === "train")
          log(`evaluate ${p.done}/${p.total} policies · ${p.unit.condition} seed ${p.unit.seed}`);
        else log(`${p.phase.padEnd(8)} ${p.done}/${p.total} · ${p.detail}`);
      }, 1000);
      let rescored: RunReport;
      try {
        rescored = await rescoreRun(
          { report, name: opts.report, sha256: bytesToHex(sha256(new TextEncoder().encode(text))) },
          policies,
          config,
          opts.set,
          executor,
          {
            backend,
            store: opts.store ? nodeStore() : undefined,
            onProgress: progress,
            onNote: (m) => (m.startsWith("pretraining:") ? log(m) : warn(m)),
          },
        );
      } catch (e) {
        if (e instanceof RescoreError) return usageError(`evaluate: ${e.message}`);
        throw e;
      } finally {
        await executor.close();
      }
      progress.flush();
      process.stdout.write(formatReport(rescored) + "\n");
      if (opts.out) saveReport(opts.out, JSON.stringify(rescored, null, 1) + "\n", log);
    });
}
