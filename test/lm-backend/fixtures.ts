// The tiny models on disk for the Node tests: generated (deterministically, in milliseconds) into a
// fresh temporary folder per test file on first use, loaded from there with remote downloads
// off, and removed when the file's tests end. A fixed shared folder would let runs and checkouts
// (and their different model versions) read each other's files.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { tinyModelFiles } from "../../src/lm/tiny";
import { writeHfFolder } from "../../src/lm/tiny/write-files";
import type { ModelSource } from "../../src/lm/backend";

export const MODELS_DIR = mkdtempSync(join(tmpdir(), "collapse-lab-tiny-models-"));
afterAll(() => rmSync(MODELS_DIR, { recursive: true, force: true })); // registered in the importing test file

let written: Promise<void> | null = null;

/** Writes every tiny model under MODELS_DIR (once per test file) and returns its source. */
export async function tinySource(id: string): Promise<ModelSource> {
  written ??= (async () => {
    for (const [name, files] of Object.entries(tinyModelFiles()))
      await writeHfFolder(join(MODELS_DIR, name), files);
  })();
  await written;
  return { id, localModelPath: MODELS_DIR, allowRemote: false };
}
