// The units of work of an experiment, as plain data so they can run in this thread or in a
// worker (Node worker_threads in the CLI, web workers in the app). Each is deterministic given
// its inputs, so where it runs never changes the numbers.
import type { EngineBackend } from "../engine/backend";
import type { Checkpoint } from "../engine/checkpoint";
import type { ConditionId, ExperimentConfig } from "./config";
import type { Corpora } from "./corpora";
import { diagnose, type DiagnosticsReport } from "./diagnostics";
import {
  runPretrainJob,
  type PretrainedSet,
  type PretrainJob,
  type PretrainResult,
} from "./pretrain";
import { rescoreUnit, runUnit, type SeedMetrics, type UnitProgress } from "./runner";

// `corpora`: the imported dialogue corpora the config names, by hash (corpora.ts), where it names any
export type Task = (
  | { kind: "pretrain"; config: ExperimentConfig; job: PretrainJob }
  | { kind: "unit"; config: ExperimentConfig; pretrained: PretrainedSet; condition: ConditionId }
  | { kind: "diagnose"; config: ExperimentConfig; pretrained: PretrainedSet }
  | {
      kind: "rescore"; // the final evaluation of a stored trained policy (rescore.ts)
      config: ExperimentConfig;
      pretrained: PretrainedSet;
      condition: ConditionId;
      policy: Checkpoint;
    }
) & { corpora?: Corpora };

export type RescoreResult = Awaited<ReturnType<typeof rescoreUnit>>;

export type TaskResult<T extends Task> = T extends { kind: "pretrain" }
  ? PretrainResult
  : T extends { kind: "unit" }
    ? SeedMetrics
    : T extends { kind: "rescore" }
      ? RescoreResult
      : DiagnosticsReport;

export async function executeTask(
  backend: EngineBackend,
  task: Task,
  onProgress?: (p: UnitProgress) => void,
  signal?: AbortSignal,
  gate?: () => Promise<void>,
): Promise<PretrainResult | SeedMetrics | DiagnosticsReport | RescoreResult> {
  switch (task.kind) {
    case "pretrain":
      return runPretrainJob(backend, task.config, task.job, task.corpora);
    case "unit":
      return runUnit(
        backend,
        task.config,
        task.pretrained,
        task.condition,
        onProgress,
        signal,
        gate,
        task.corpora,
      );
    case "diagnose":
      return diagnose(backend, task.config, task.pretrained, task.corpora);
    case "rescore":
      return rescoreUnit(
        backend,
        task.config,
        task.pretrained,
        task.condition,
        task.policy,
        task.corpora,
      );
  }
}

/** Runs tasks somewhere; `parallelism` of them at once. */
export interface Executor {
  readonly parallelism: number;
  run<T extends Task>(task: T, onProgress?: (p: UnitProgress) => void): Promise<TaskResult<T>>;
  close(): Promise<void>;
}

/** Runs tasks one at a time on a backend in this thread. */
export class InlineExecutor implements Executor {
  readonly parallelism = 1;
  #queue: Promise<unknown> = Promise.resolve();
  constructor(
    readonly backend: EngineBackend,
    readonly signal?: AbortSignal,
  ) {}
  run<T extends Task>(task: T, onProgress?: (p: UnitProgress) => void): Promise<TaskResult<T>> {
    const next = this.#queue.then(() => executeTask(this.backend, task, onProgress, this.signal));
    this.#queue = next.catch(() => undefined);
    return next as Promise<TaskResult<T>>;
  }
  async close(): Promise<void> {}
}
