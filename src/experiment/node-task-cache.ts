// The CLI's resumable runs: every finished task (a pretraining job, a condition × seed unit, a seed's
// diagnostics) kept as a file in a folder (the run cache's, node-run-cache.ts, or --resume's), so a
// run that was stopped, or that is spread over several sessions, continues from them. Tasks are deterministic given the config and the backend,
// so a resumed run gives the numbers an uninterrupted one would. The folder belongs to one run:
// its run.json holds the config and backend, and another config is refused by name.
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
} from "node:fs";
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
  readonly dir: string;
  /** How many tasks the folder held when the run began (0 with `fresh`: none is read). */
  readonly kept: number;
  /** How many finished tasks the folder holds now. */
  count(): number;
}

export interface TaskCacheOptions {
  onNote?: (m: string) => void;
  /** Read no earlier task: every task runs again, and replaces the one kept. */
  fresh?: boolean;
  /** The code's fingerprint (node-run-cache.ts); a folder written by other code is said, not refused. */
  code?: string;
  /** Kept in run.json for `collapse-lab cache list`. */
  preset?: string;
}

/** Temporary files a killed run left (the atomic writer's), once no write can still be using them. */
function removeStaleTemporaries(dir: string, olderThanMs = 600_000): void {
  for (const f of readdirSync(dir)) {
    if (!f.endsWith(".tmp")) continue;
    const s = statSync(join(dir, f), { throwIfNoEntry: false });
    if (s && Date.now() - s.mtimeMs > olderThanMs) rmSync(join(dir, f), { force: true });
  }
}

const countTasks = (dir: string) =>
  existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".task")).length : 0;

/**
 * Opens (or starts) the task folder of a run with this config and backend. A folder started by a
 * run with another config or backend is refused with the first setting that differs; nothing in
 * it is changed.
 */
export function fileTaskCache(
  dir: string,
  config: ExperimentConfig,
  backend: string,
  opts: TaskCacheOptions = {},
): FileTaskCache {
  const { onNote, fresh = false } = opts;
  const meta = { format: FORMAT, backend, config, code: opts.code, preset: opts.preset };
  const metaFile = join(dir, "run.json");
  const start = () => {
    mkdirSync(dir, { recursive: true });
    writeFileAtomic(metaFile, JSON.stringify(meta, null, 1) + "\n");
  };
  if (existsSync(metaFile)) {
    let saved: { format?: unknown; backend?: unknown; config?: unknown; code?: unknown };
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
    if (opts.code && typeof saved.code === "string" && saved.code !== opts.code && !fresh)
      onNote?.(
        `${dir} was started by other code (the sources or dependencies changed since); its tasks are used as they are (--fresh runs every task again)`,
      );
    utimesSync(metaFile, new Date(), new Date()); // used now, for the cache's pruning
  } else start();
  removeStaleTemporaries(dir);
  const kept = fresh ? 0 : countTasks(dir);
  return {
    dir,
    kept,
    count: () => countTasks(dir),
    async get(key) {
      if (fresh) return undefined;
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
      if (!existsSync(metaFile)) start(); // the folder was pruned while the run went on
      const file = join(dir, fileOf(key));
      writeFileAtomic(file, serialize(value)); // a run stopped mid-write leaves no half-written task
      utimesSync(metaFile, new Date(), new Date());
    },
  };
}
