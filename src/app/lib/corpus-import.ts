// Dialogue corpora in the app (docs/humans.md): a dropped file is read against the experiment's
// benchmark and stored only when good; a run finds the corpora its config names in the store by
// their hash. Which corpus plays what is part of the URL (an override, like any knob), so a link
// names the exact file, and a reload uses it again.
import { fileName, parseDialogueFile } from "../../benchmarks/dialogue-file";
import type { CorpusRefConfig, ExperimentConfig } from "../../experiment/config";
import { CorpusError, resolveCorpora, type Corpora } from "../../experiment/corpora";
import type { CorpusStore, StoredCorpus } from "./corpus-store";

export type CorpusRole = "humans" | "panel" | "reference";
export const CORPUS_ROLES: { id: CorpusRole; label: string }[] = [
  { id: "humans", label: "the humans" },
  { id: "panel", label: "a held-out panel member" },
  { id: "reference", label: "the reference simulator's corpus" },
];

/**
 * Reads a dropped file for the experiment's config and stores it. Throws the file's problem
 * (DialogueFileError: its line and field) and then stores nothing, so what was stored stays.
 */
export async function importCorpus(
  store: CorpusStore,
  file: { name: string; bytes: Uint8Array },
  config: ExperimentConfig,
): Promise<StoredCorpus> {
  const corpus = parseDialogueFile(file.bytes, file.name, config);
  const stored: StoredCorpus = {
    sha256: corpus.sha256,
    file: corpus.file,
    bytes: file.bytes,
    benchmark: corpus.benchmark,
    dialogues: corpus.dialogues.length,
    addedAt: Date.now(),
  };
  await store.put(stored);
  return stored;
}

/** The corpora a config names, from the store; a missing one says how to bring it. */
export async function loadCorpora(
  store: CorpusStore | undefined,
  config: ExperimentConfig,
): Promise<{ config: ExperimentConfig; corpora: Corpora }> {
  try {
    return await resolveCorpora(config, async (ref) => {
      const found = ref.sha256 ? await store?.get(ref.sha256) : await store?.byName(ref.file);
      return found?.bytes ?? null;
    });
  } catch (e) {
    if (e instanceof CorpusError && /is not here$/.test(e.message))
      throw new CorpusError(
        `${e.message} in this browser: drop the file on the Experiment page (Humans) to run this experiment`,
      );
    throw e;
  }
}

/** A panel member's name for a corpus, unique in the panel. */
export function memberName(file: string, taken: readonly string[]): string {
  const stem = fileName(file).replace(/\.(jsonl|ndjson|json|csv)$/i, "") || "corpus";
  let name = stem;
  for (let i = 2; taken.includes(name); i++) name = `${stem}-${i}`;
  return name;
}

/** The override (config path and value) that gives a corpus a role, in the config at hand. */
export function corpusOverride(
  config: ExperimentConfig,
  role: CorpusRole,
  ref: Required<CorpusRefConfig>,
): { path: string; value: unknown } {
  switch (role) {
    case "humans":
      return {
        path: "humans",
        value: { corpus: ref, minCount: config.humans?.minCount ?? 5 },
      };
    case "reference":
      return { path: "simulator.corpus", value: ref };
    case "panel": {
      const others = config.panel.filter((m) => m.corpus?.sha256 !== ref.sha256);
      const name = memberName(
        ref.file,
        others.map((m) => m.name),
      );
      return { path: "panel", value: [...others, { name, corpus: ref }] };
    }
  }
}
