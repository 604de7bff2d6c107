// The imported dialogue corpora a config names (docs/humans.md): as the evaluation humans
// (`humans.corpus`), as held-out panel members (`panel[i].corpus`) and as the reference's
// pretraining corpus (`simulator.corpus`). A run reads each file once, before any work: the CLI
// from disk, the app from IndexedDB (each through `resolveCorpora`'s `load`). The config then names
// each by file name and SHA-256, and the tasks carry the parsed dialogues (`Corpora`, by hash).
import {
  corpusHash,
  fileName,
  parseDialogueFile,
  type DialogueCorpus,
} from "../benchmarks/dialogue-file";
import type { CorpusRefConfig, ExperimentConfig } from "./config";
import { validateConfig } from "./config";

/** Parsed corpora by SHA-256: what tasks need to play or pretrain on them. */
export type Corpora = Record<string, DialogueCorpus>;

export type CorpusUse = { use: "humans" } | { use: "panel"; member: string } | { use: "reference" };

/** Every corpus a config names, with its config path and what it is used as. */
export function corpusRefs(
  c: ExperimentConfig,
): { path: string; ref: CorpusRefConfig; use: CorpusUse }[] {
  const out: { path: string; ref: CorpusRefConfig; use: CorpusUse }[] = [];
  if (c.humans) out.push({ path: "humans.corpus", ref: c.humans.corpus, use: { use: "humans" } });
  c.panel.forEach((m, i) => {
    if (m.corpus)
      out.push({ path: `panel.${i}.corpus`, ref: m.corpus, use: { use: "panel", member: m.name } });
  });
  if (c.simulator.corpus)
    out.push({ path: "simulator.corpus", ref: c.simulator.corpus, use: { use: "reference" } });
  return out;
}

/** A corpus a run cannot use: the config path, and why (a bad file's line and field included). */
export class CorpusError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CorpusError";
  }
}

/**
 * Reads every corpus the config names with `load` (its bytes, or null when there is no such file),
 * checks each against the config's benchmark, and returns the config with each named by its file
 * name and SHA-256, and the parsed corpora. A file whose hash differs from the one the config
 * names is refused: the run would not be the one the config describes.
 */
export async function resolveCorpora(
  config: ExperimentConfig,
  load: (ref: CorpusRefConfig) => Promise<Uint8Array | null>,
): Promise<{ config: ExperimentConfig; corpora: Corpora }> {
  const refs = corpusRefs(config);
  if (refs.length === 0) return { config, corpora: {} };
  const out = structuredClone(config);
  const corpora: Corpora = {};
  for (const { path, ref } of corpusRefs(out)) {
    const bytes = await load(ref);
    if (bytes === null)
      throw new CorpusError(
        `${path}: ${ref.file}${ref.sha256 ? ` (sha256 ${ref.sha256.slice(0, 12)}…)` : ""} is not here`,
      );
    const sha = corpusHash(bytes);
    if (ref.sha256 && ref.sha256 !== sha)
      throw new CorpusError(
        `${path}: ${ref.file} is not the file the config names: its sha256 is ${sha.slice(0, 12)}…, the config's ${ref.sha256.slice(0, 12)}…`,
      );
    if (!corpora[sha]) {
      try {
        corpora[sha] = parseDialogueFile(bytes, ref.file, out);
      } catch (e) {
        throw new CorpusError(`${path}: ${(e as Error).message}`);
      }
    }
    ref.file = fileName(ref.file);
    ref.sha256 = sha;
  }
  return { config: validateConfig(out), corpora };
}

/** Refuses a run whose config names a corpus that is not loaded (or not by hash). */
export function requireCorpora(config: ExperimentConfig, corpora: Corpora): void {
  for (const { path, ref } of corpusRefs(config)) {
    if (!ref.sha256)
      throw new CorpusError(
        `${path}: ${ref.file} has no sha256 yet; read it first (resolveCorpora)`,
      );
    const c = corpora[ref.sha256];
    if (!c)
      throw new CorpusError(
        `${path}: the corpus ${ref.file} (sha256 ${ref.sha256.slice(0, 12)}…) is not loaded`,
      );
    if (c.benchmark !== config.benchmark)
      throw new CorpusError(
        `${path}: ${ref.file} holds ${c.benchmark} dialogues, not ${config.benchmark}`,
      );
  }
}

/** The corpora a config uses, out of a larger set (what its tasks carry). */
export function corporaOf(config: ExperimentConfig, corpora: Corpora): Corpora {
  return Object.fromEntries(
    corpusRefs(config).flatMap(({ ref }) =>
      ref.sha256 && corpora[ref.sha256] ? [[ref.sha256, corpora[ref.sha256]]] : [],
    ),
  );
}

/** A corpus the config names by path, for the code that plays or pretrains on it (requireCorpora ran). */
export function corpusAt(corpora: Corpora, ref: CorpusRefConfig, path: string): DialogueCorpus {
  const c = ref.sha256 ? corpora[ref.sha256] : undefined;
  if (!c) throw new CorpusError(`${path}: the corpus ${ref.file} is not loaded`);
  return c;
}
