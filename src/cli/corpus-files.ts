// The dialogue corpora a run's config names, read from disk (docs/humans.md): each `file` is a path
// from the folder the command runs in. A file that is missing, unreadable, malformed or not the
// one the config's sha256 names is a usage error that says which, and where in the file.
import { readFileSync } from "node:fs";
import type { ExperimentConfig } from "../experiment/config";
import { CorpusError, resolveCorpora, type Corpora } from "../experiment/corpora";

export async function loadCorpusFiles(
  config: ExperimentConfig,
  usageError: (m: string) => never,
): Promise<{ config: ExperimentConfig; corpora: Corpora }> {
  try {
    return await resolveCorpora(config, async (ref) => {
      try {
        return new Uint8Array(readFileSync(ref.file));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return null;
        throw new CorpusError(`${ref.file}: cannot be read (${(e as Error).message})`);
      }
    });
  } catch (e) {
    if (e instanceof CorpusError) usageError(e.message);
    throw e;
  }
}
