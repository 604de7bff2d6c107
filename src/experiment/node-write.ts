// Files that are a command's product (reports, policies, stored models, cached tasks), in Node:
// checked before the work that makes them, and written whole or not at all. A file is written to a
// temporary name in its own folder and renamed over the target, so a crash or a full disk never
// leaves a truncated file under the final name; a folder is written beside its target and swapped in.
import {
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { threadId } from "node:worker_threads";

/** An output path that cannot be written, said in one line that names it. */
export class OutputError extends Error {}

// unique by process, worker thread and a counter of this module's writes
let written = 0;
const tempName = (target: string) =>
  join(dirname(target), `.${basename(target)}.${process.pid}.${threadId}.${++written}.tmp`);

/** Writes `data` to `file` through a temporary file in the same folder and a rename. */
export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  const tmp = tempName(file);
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Writes a folder of files whole: into a sibling temporary folder, then swapped in for `dir`
 * (whose earlier contents are removed only once the new set is in place).
 */
export function writeFolderAtomic(dir: string, files: ReadonlyMap<string, Uint8Array>): void {
  const tmp = tempName(dir);
  const old = existsSync(dir) ? tempName(dir) : undefined;
  try {
    mkdirSync(tmp);
    for (const [name, bytes] of files) writeFileSync(join(tmp, name), bytes);
    if (old) renameSync(dir, old);
    try {
      renameSync(tmp, dir);
    } catch (e) {
      if (old) renameSync(old, dir); // put the earlier set back
      throw e;
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  if (old) rmSync(old, { recursive: true, force: true });
}

/** The nearest folder on `path`'s way up that exists, and the folders below it that do not. */
function existingAncestor(path: string): { existing: string; missing: string[] } {
  const missing: string[] = [];
  let p = path;
  while (!existsSync(p)) {
    missing.unshift(p);
    const up = dirname(p);
    if (up === p) break;
    p = up;
  }
  return { existing: p, missing };
}

/** Throws an OutputError unless a file can be created in `folder` (tried, not guessed). */
function checkWritable(folder: string, shown: string): void {
  const probe = tempName(join(folder, "probe"));
  try {
    writeFileSync(probe, "");
    unlinkSync(probe);
  } catch (e) {
    throw new OutputError(
      `${shown}: cannot write in ${folder} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
}

/**
 * Makes sure `path` can be written as a `kind` before any work: an existing path of the other kind
 * is refused, missing parent folders are created (returned, to be said), and the folder it goes
 * in must accept a new file.
 * @throws OutputError naming the path and why.
 */
export function prepareOutput(
  path: string,
  kind: "file" | "folder",
  shown = path,
): { created: string[] } {
  const target = resolve(path);
  if (existsSync(target)) {
    const isDir = statSync(target).isDirectory();
    if (kind === "file" && isDir)
      throw new OutputError(`${shown} is a folder; give a file name for the output`);
    if (kind === "folder" && !isDir)
      throw new OutputError(`${shown} is a file; give a folder for the output`);
    checkWritable(dirname(target), shown);
    return { created: [] };
  }
  const { existing, missing } = existingAncestor(dirname(target));
  if (!statSync(existing).isDirectory())
    throw new OutputError(`${shown}: ${existing} is a file, not a folder`);
  checkWritable(existing, shown);
  try {
    for (const m of missing) mkdirSync(m);
  } catch (e) {
    throw new OutputError(`${shown}: cannot create ${missing[0]} (${(e as Error).message})`);
  }
  return { created: missing };
}

/**
 * Writes a report to `file` atomically; if that fails (full disk, permissions, the path taken by a
 * folder meanwhile), writes it to a fallback file in `fallbackDir` (the system's temporary folder
 * by default) instead and returns its path, so the work is not lost.
 */
export function writeReportOrFallback(
  file: string,
  text: string,
  fallbackDir = tmpdir(),
): { written: string; error?: Error } {
  try {
    writeFileAtomic(file, text);
    return { written: file };
  } catch (e) {
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const fallback = join(fallbackDir, `collapse-lab-${basename(file, ".json")}-${stamp}.json`);
    writeFileSync(fallback, text);
    return { written: fallback, error: e as Error };
  }
}
