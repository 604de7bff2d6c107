// The tiny models on disk for the Node tests: generated (deterministically) into a temporary
// folder on first use, then loaded from there with remote downloads off.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tinyModelFiles } from "../../src/lm/tiny";
import { writeHfFolder } from "../../src/lm/tiny/write-files";
import type { ModelSource } from "../../src/lm/backend";

export const MODELS_DIR = join(tmpdir(), "collapse-lab-tiny-models");

let written: Promise<void> | null = null;

/** Writes every tiny model under MODELS_DIR (once per test file) and returns its source. */
export async function tinySource(id: string): Promise<ModelSource> {
  written ??= (async () => {
    for (const [name, files] of Object.entries(tinyModelFiles())) await writeHfFolder(join(MODELS_DIR, name), files);
  })();
  await written;
  return { id, localModelPath: MODELS_DIR, allowRemote: false };
}
