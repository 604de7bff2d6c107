// The CLI's resumable runs: every finished task (a pretraining job, a condition × seed unit, a seed's
// diagnostics) kept as a file in a folder, so a run that was stopped, or that is spread over
// several sessions, continues from them. Tasks are deterministic given the config and the backend,
// so a resumed run gives the numbers an uninterrupted one would. The folder belongs to one run:
// its run.json holds the config and backend, and another config is refused by name.
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { deserialize, serialize } from "node:v8";
import { configDifferences } from "./config-diff";
import type { ExperimentConfig } from "./config";
import type { TaskCache } from "./experiment";
import { writeFileAtomic } from "./node-write";

const FORMAT = "collapse-lab/run-tasks@1";

export class ResumeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ResumeError";
  }
}

/** A task's file name: its key with anything but letters, digits, "-" and "_" spelled out. */
function fileOf(key: string): string {
  return `${key.replace(/[^A-Za-z0-9_-]/g, (c) => `~${c.charCodeAt(0).toString(16)}~`)}.task`;
}

export interface FileTaskCache extends TaskCache {
  /** How many tasks the folder held when the run began. */
  readonly kept: number;
}

/**
 * Opens (or starts) the task folder of a run with this config and backend. A folder started by a
 * run with another config or backend is refused with the first setting that differs; nothing in
 * it is changed.
 */
export function fileTaskCache(
  dir: string,
  config: ExperimentConfig,
  backend: string,
  onNote?: (m: string) => void,
): FileTaskCache {
  const meta = { format: FORMAT, backend, config };
  const metaFile = join(dir, "run.json");
  if (existsSync(metaFile)) {
    let saved: { format?: unknown; backend?: unknown; config?: unknown };
    try {
      saved = JSON.parse(readFileSync(metaFile, "utf8")) as typeof saved;
    } catch (e) {
      throw new ResumeError(
        `${metaFile} is not readable JSON (${(e as Error).message}); choose another folder, or remove this one to start again`,
      );
    }
    if (saved.format !== FORMAT)
      throw new ResumeError(
        `${metaFile} is not a collapse-lab run's task folder (format ${JSON.stringify(saved.format)}, expected ${FORMAT})`,
      );
    if (saved.backend !== backend)
      throw new ResumeError(
        `${dir} holds the tasks of a run on ${String(saved.backend)}, not ${backend}: its numbers would differ; choose another folder or --backend ${String(saved.backend)}`,
      );
    const [diff] = configDifferences(saved.config as ExperimentConfig, config);
    if (diff)
      throw new ResumeError(
        `${dir} holds the tasks of a run with another config: ${diff.path} is ${diff.shown} there, ${diff.wanted} here; choose another folder to run this config`,
      );
  } else {
    mkdirSync(dir, { recursive: true });
    writeFileAtomic(metaFile, JSON.stringify(meta, null, 1) + "\n");
  }
  const kept = readdirSync(dir).filter((f) => f.endsWith(".task")).length;
  return {
    kept,
    async get(key) {
      const file = join(dir, fileOf(key));
      if (!existsSync(file)) return undefined;
      try {
        return deserialize(readFileSync(file));
      } catch (e) {
        onNote?.(`${file} is unreadable (${(e as Error).message}); that task runs again`);
        return undefined;
      }
    },
    async put(key, value) {
      const file = join(dir, fileOf(key));
      writeFileAtomic(file, serialize(value)); // a run stopped mid-write leaves no half-written task
    },
  };
}
