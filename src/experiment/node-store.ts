// The store of pretrained models on the file system (Node): the reader the CLI uses by default,
// and the writer behind `collapse-lab store` (scripts/store-pretrained.sh), which pretrains the
// presets' own jobs on an executor and keeps one file per job plus index.json in the folder.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import lockfile from "proper-lockfile";
import { applySet, seedsOf, validateConfig, type ExperimentConfig } from "./config";
import { presetConfig } from "./presets";
import { describeJob, pretrainJobs, type PretrainJob } from "./pretrain";
import {
  decodeStored,
  encodeStored,
  expectedShape,
  fileStore,
  INDEX_FORMAT,
  indexEntry,
  jobKey,
  parseIndex,
  type PretrainStore,
  type StoreIndex,
} from "./store";
import type { Executor } from "./tasks";
import { writeFileAtomic } from "./node-write";

/** The repository's store, which the app serves as `pretrained/` (Vite serves public/ at the base). */
export const STORE_DIR = fileURLToPath(
  new URL("../../public/pretrained/", import.meta.url),
).replace(/\/$/, "");

/** A path for messages: relative to the working folder when inside it. */
const shown = (path: string) => {
  const r = relative(process.cwd(), path);
  return r === "" ? "." : r.startsWith("..") ? path : r;
};

export function nodeStore(dir = STORE_DIR): PretrainStore {
  return fileStore(shown(dir), async (name) => {
    try {
      return await readFile(join(dir, name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  });
}

/** One job a preset needs, on its own seeds. */
export interface StoreRequest {
  preset: string;
  config: ExperimentConfig;
  job: PretrainJob;
}

/**
 * The jobs of a preset's own seeds, or of other seeds (those a run with `--seeds`/`--seed-base`
 * pretrains), with `--set` assignments applied (e.g. `panel=own-modes`: the models a run with them
 * loads); such jobs are listed under the preset and the assignments.
 */
export function presetRequests(
  preset: string,
  seeds: { seeds?: number; seedBase?: number } = {},
  set: string[] = [],
): StoreRequest[] {
  const own = presetConfig(preset);
  const config = validateConfig(
    set.reduce(applySet, {
      ...own,
      seeds: seeds.seeds ?? own.seeds,
      seedBase: seeds.seedBase ?? own.seedBase,
    } as unknown),
  );
  const jobs = seedsOf(config).flatMap((s) => pretrainJobs(config, s));
  const name = set.length ? `${preset} --set ${set.join(" --set ")}` : preset;
  return jobs.map((job) => ({ preset: name, config, job }));
}

/** Another writer holds the store's lock: two at once would each overwrite the other's index.json. */
export class StoreLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreLockedError";
  }
}

/** How long a lock may go unrefreshed before it counts as left behind by a writer that died (the holder refreshes it every half of this). */
const LOCK_STALE_MS = 30_000;

/**
 * Takes the store folder's lock (a `.lock` folder in it) for one writer and returns its release.
 * A second writer is refused at once, naming the lock; a lock its holder stopped refreshing is
 * taken over.
 */
function lockStore(dir: string, log: (s: string) => void): () => void {
  mkdirSync(dir, { recursive: true });
  const lockfilePath = join(dir, ".lock");
  try {
    return lockfile.lockSync(dir, {
      lockfilePath,
      stale: LOCK_STALE_MS,
      onCompromised: (e) =>
        log(
          `the store's lock ${shown(lockfilePath)} was lost (${e.message}); another writer may now overwrite index.json`,
        ),
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ELOCKED") throw e;
    throw new StoreLockedError(
      `${shown(dir)} is being written by another \`collapse-lab store\` (it holds ${shown(lockfilePath)}): wait for it to finish, or give both presets to one \`store\`; two at once would each overwrite the other's index.json`,
    );
  }
}

function readIndex(dir: string, log: (s: string) => void): StoreIndex {
  const file = join(dir, "index.json");
  if (existsSync(file)) {
    try {
      return parseIndex(readFileSync(file, "utf8"));
    } catch (e) {
      log(`${shown(file)} is unreadable (${(e as Error).message}); starting a new index`);
    }
  }
  return { format: INDEX_FORMAT, models: {} };
}

function writeIndex(dir: string, index: StoreIndex): void {
  // one line per model, in key order: small diffs when a preset changes
  const lines = Object.keys(index.models)
    .sort()
    .map((k) => `  ${JSON.stringify(k)}: ${JSON.stringify(index.models[k])}`);
  writeFileAtomic(
    join(dir, "index.json"),
    `{\n "format": ${JSON.stringify(index.format)},\n "models": {\n${lines.join(",\n")}\n }\n}\n`,
  );
}

/**
 * Pretrains every requested job the store does not hold in a usable file, writes its file and
 * keeps index.json current after each one (an interrupted run keeps what it finished). Jobs that
 * several presets share are pretrained once. Re-runnable: stored jobs are checked and kept. One
 * writer at a time: while one holds the folder's lock, another is refused (StoreLockedError).
 */
export async function fillStore(
  dir: string,
  requests: StoreRequest[],
  executor: Executor,
  backend: string,
  log: (s: string) => void,
): Promise<{ stored: number; kept: number }> {
  const release = lockStore(dir, log);
  try {
    return await fillLocked(dir, requests, executor, backend, log);
  } finally {
    release();
  }
}

async function fillLocked(
  dir: string,
  requests: StoreRequest[],
  executor: Executor,
  backend: string,
  log: (s: string) => void,
): Promise<{ stored: number; kept: number }> {
  const index = readIndex(dir, log);
  const byKey = new Map<
    string,
    { config: ExperimentConfig; job: PretrainJob; presets: Set<string> }
  >();
  for (const r of requests) {
    const key = jobKey(r.config, r.job, backend);
    const seen = byKey.get(key);
    if (seen) seen.presets.add(r.preset);
    else byKey.set(key, { config: r.config, job: r.job, presets: new Set([r.preset]) });
  }
  // an entry lists the presets that use it now: those asked for here are recomputed, others kept
  const asked = new Set(requests.map((r) => r.preset));
  const presetsOf = (key: string) => {
    const old = (index.models[key]?.presets ?? []).filter((p) => !asked.has(p));
    return [...new Set([...old, ...(byKey.get(key)?.presets ?? [])])].sort();
  };
  for (const key of Object.keys(index.models)) index.models[key].presets = presetsOf(key);

  const todo: string[] = [];
  for (const [key, { config, job }] of byKey) {
    const entry = index.models[key];
    if (!entry) {
      todo.push(key);
      continue;
    }
    try {
      const bytes = readFileSync(join(dir, entry.file));
      if (bytes.length !== entry.bytes)
        throw new Error(`${bytes.length} bytes, index.json says ${entry.bytes}`);
      decodeStored(bytes, key, expectedShape(config, job));
    } catch (e) {
      log(
        `${shown(join(dir, entry.file))} is unusable (${(e as Error).message}); pretraining it again`,
      );
      todo.push(key);
    }
  }
  writeIndex(dir, index);
  log(
    `store ${shown(dir)}: ${byKey.size} models asked for, ${byKey.size - todo.length} already stored, ${todo.length} to pretrain on ${backend}`,
  );
  let done = 0;
  await Promise.all(
    todo.map(async (key) => {
      const { config, job } = byKey.get(key)!;
      const t0 = performance.now();
      const result = await executor.run({ kind: "pretrain", config, job });
      const bytes = encodeStored(key, describeJob(config, job), result);
      const entry = indexEntry(config, job, backend, key, bytes.length, result, presetsOf(key));
      writeFileAtomic(join(dir, entry.file), bytes); // a stopped store leaves no half-written model
      index.models[key] = entry;
      writeIndex(dir, index);
      log(
        `stored ${++done}/${todo.length} · ${entry.presets.join(", ")} seed ${job.seed}: ${entry.model} → ${entry.file} (${(bytes.length / 1024).toFixed(0)} KB, ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
      );
    }),
  );
  return { stored: todo.length, kept: byKey.size - todo.length };
}

/** Removes index entries whose key is not in `keep`, and every .bin file the index does not name. */
export function pruneStore(dir: string, keep: Set<string>, log: (s: string) => void): string[] {
  const release = lockStore(dir, log);
  try {
    return pruneLocked(dir, keep, log);
  } finally {
    release();
  }
}

function pruneLocked(dir: string, keep: Set<string>, log: (s: string) => void): string[] {
  const index = readIndex(dir, log);
  const removed: string[] = [];
  for (const key of Object.keys(index.models)) {
    if (keep.has(key)) continue;
    removed.push(
      `${index.models[key].file} (${index.models[key].model}, key ${key.slice(0, 16)}…)`,
    );
    delete index.models[key];
  }
  writeIndex(dir, index);
  const named = new Set(Object.values(index.models).map((e) => e.file));
  for (const f of readdirSync(dir)) {
    if (!f.endsWith(".bin") || named.has(f)) continue;
    rmSync(join(dir, f));
    if (!removed.some((r) => r.startsWith(f))) removed.push(`${f} (not in index.json)`);
  }
  return removed;
}

/** The store's files and their total size in bytes. */
export function storeSize(dir: string): { files: number; bytes: number } {
  if (!existsSync(dir)) return { files: 0, bytes: 0 };
  const files = readdirSync(dir).filter((f) => f.endsWith(".bin") || f === "index.json");
  return {
    files: files.length,
    bytes: files.reduce((n, f) => n + readFileSync(join(dir, f)).length, 0),
  };
}
