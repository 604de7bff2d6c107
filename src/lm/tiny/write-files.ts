// Writes Hugging Face folders to disk (Node only): tests and scripts/make-tiny-models.ts.
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { threadId } from "node:worker_threads";
import type { HfFiles } from "../onnx-export";

/**
 * Writes `files` under `dir`, skipping files already there with the same content. Each file is
 * written to a temporary name and renamed, so parallel test workers never read a half-written one.
 */
let written = 0; // temporary names: process, thread and a counter make them unique without randomness

export async function writeHfFolder(dir: string, files: HfFiles): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(dir, rel);
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    const old = await readFile(path).catch(() => null);
    if (old && Buffer.compare(old, bytes) === 0) continue;
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}-${threadId}-${++written}.tmp`;
    await writeFile(tmp, bytes);
    await rename(tmp, path);
  }
}
