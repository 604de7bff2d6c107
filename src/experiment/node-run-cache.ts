// The CLI's run cache: without `--resume DIR`, every run keeps its finished tasks in a folder of its
// own under `.collapse-lab/runs/` (or $COLLAPSE_LAB_CACHE), named by the preset and a hash of the
// config (seeds included), the backend and the code, so the same command run again continues where
// it stopped, and an edited world never continues from tasks the old code computed. Folders are
// pruned by age and total size at the start of every run, and by `collapse-lab cache prune`.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { canonicalJson } from "./store";
import type { ExperimentConfig } from "./config";

export const DEFAULT_CACHE_DIR = ".collapse-lab/runs";
/** A run folder not used for this long is removed at the start of the next run. */
export const MAX_AGE_DAYS = 30;
/** Beyond this total, the least recently used folders are removed at the start of the next run. */
export const MAX_TOTAL_BYTES = 2 * 1024 ** 3;
const DAY_MS = 86_400_000;
const FINISHED = "finished.json";

/** Where run folders go: $COLLAPSE_LAB_CACHE, else `.collapse-lab/runs` here; null when it is "off". */
export function runCacheRoot(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()) {
  const v = env.COLLAPSE_LAB_CACHE;
  if (v === "off") return null;
  return resolve(cwd, v || DEFAULT_CACHE_DIR);
}

const PROJECT = fileURLToPath(new URL("../../", import.meta.url));

function filesUnder(dir: string, skip: (path: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (skip(p)) continue;
    if (e.isDirectory()) out.push(...filesUnder(p, skip));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

let fingerprint: string | undefined;
/**
 * A hash of the code a run executes: every file under src/ but the app's, and the locked dependency
 * versions (package-lock.json) where there is one.
 */
export function codeFingerprint(root = PROJECT): string {
  if (root === PROJECT && fingerprint) return fingerprint;
  const app = join(root, "src", "app");
  const files = filesUnder(join(root, "src"), (p) => p === app);
  const lock = join(root, "package-lock.json");
  if (existsSync(lock)) files.push(lock);
  const h = createHash("sha256");
  for (const f of files.map((f) => relative(root, f).split("\\").join("/")).sort())
    h.update(`${f}\0`)
      .update(readFileSync(join(root, f)))
      .update("\0");
  const digest = h.digest("hex");
  if (root === PROJECT) fingerprint = digest;
  return digest;
}

/** The folder of one run: the preset's id and a hash of everything its numbers depend on. */
export function runFolder(
  root: string,
  preset: string,
  config: ExperimentConfig,
  backend: string,
  code = codeFingerprint(),
): string {
  const hash = createHash("sha256").update(canonicalJson({ config, backend, code })).digest("hex");
  return join(root, `${preset.replace(/[^A-Za-z0-9_-]/g, "_")}-${hash.slice(0, 12)}`);
}

export interface CachedRun {
  name: string;
  dir: string;
  preset: string | null;
  backend: string | null;
  seeds: string | null; // "3 from 0"
  tasks: number;
  bytes: number;
  usedAt: number; // ms since the epoch: the folder's last task, or the run's last start
  finished: boolean; // the run made its report
}

function describe(dir: string, name: string): CachedRun | undefined {
  const meta = join(dir, "run.json");
  if (!existsSync(meta)) return undefined;
  let saved: { preset?: unknown; backend?: unknown; config?: Partial<ExperimentConfig> } = {};
  try {
    saved = JSON.parse(readFileSync(meta, "utf8")) as typeof saved;
  } catch {
    // an unreadable run.json still names a folder that can be listed and pruned
  }
  let tasks = 0;
  let bytes = 0;
  for (const f of readdirSync(dir)) {
    const s = statSync(join(dir, f), { throwIfNoEntry: false });
    if (!s?.isFile()) continue;
    bytes += s.size;
    if (f.endsWith(".task")) tasks++;
  }
  const c = saved.config;
  return {
    name,
    dir,
    preset: typeof saved.preset === "string" ? saved.preset : null,
    backend: typeof saved.backend === "string" ? saved.backend : null,
    seeds:
      typeof c?.seeds === "number" && typeof c.seedBase === "number"
        ? `${c.seeds} from ${c.seedBase}`
        : null,
    tasks,
    bytes,
    usedAt: statSync(meta).mtimeMs,
    finished: existsSync(join(dir, FINISHED)),
  };
}

/** The run folders under `root`, most recently used first. */
export function listRuns(root: string): CachedRun[] {
  if (!existsSync(root)) return [];
  const runs: CachedRun[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const run = describe(join(root, e.name), e.name);
    if (run) runs.push(run);
  }
  return runs.sort((a, b) => b.usedAt - a.usedAt);
}

/** Marks a run folder as finished: its report was made (and where it was written, if anywhere). */
export function markFinished(dir: string, report: string | null): void {
  if (existsSync(dir))
    writeFileSync(join(dir, FINISHED), JSON.stringify({ at: new Date().toISOString(), report }));
}

export interface PruneOptions {
  /** Remove unfinished runs too (default: finished ones only). */
  all?: boolean;
  /** Only folders not used for at least this many days. */
  olderThanDays?: number;
  now?: number;
}

/** `collapse-lab cache prune`: removes the run folders the options select; returns them. */
export function pruneRuns(root: string, opts: PruneOptions = {}): CachedRun[] {
  const now = opts.now ?? Date.now();
  const removed = listRuns(root).filter(
    (r) => (opts.all || r.finished) && now - r.usedAt >= (opts.olderThanDays ?? 0) * DAY_MS,
  );
  for (const r of removed) rmSync(r.dir, { recursive: true, force: true });
  return removed;
}

/**
 * The pruning at the start of every run: folders unused for MAX_AGE_DAYS go, then the least
 * recently used ones while the total is over MAX_TOTAL_BYTES. `keep` (the starting run's) stays.
 */
export function autoPrune(
  root: string,
  keep: string,
  limits = { maxAgeDays: MAX_AGE_DAYS, maxTotalBytes: MAX_TOTAL_BYTES, now: Date.now() },
): CachedRun[] {
  const all = listRuns(root);
  const runs = all.filter((r) => resolve(r.dir) !== resolve(keep));
  const removed: CachedRun[] = [];
  let total = all.reduce((s, r) => s + r.bytes, 0);
  for (const r of [...runs].reverse()) {
    const old = limits.now - r.usedAt > limits.maxAgeDays * DAY_MS;
    if (!old && total <= limits.maxTotalBytes) continue;
    rmSync(r.dir, { recursive: true, force: true });
    total -= r.bytes;
    removed.push(r);
  }
  return removed;
}
