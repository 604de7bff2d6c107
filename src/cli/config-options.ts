// The experiment config of a command's flags (--preset, --seeds, --seed-base, the corpus flags,
// --set), validated; a bad one is a usage error naming the path.
import { applySet, ConfigError, validateConfig, type ExperimentConfig } from "../experiment/config";
import { presetConfig } from "../experiment/presets";
import { fileName } from "../benchmarks/dialogue-file";

export interface ConfigOptions {
  preset: string;
  seeds?: number;
  seedBase?: number;
  set: string[];
  humans?: string; // a dialogue corpus as the evaluation humans (docs/humans.md)
  panelCorpus?: string[]; // dialogue corpora as held-out panel members
  referenceCorpus?: string; // a dialogue corpus as the reference simulator's pretraining corpus
}

/** A panel member's name for a corpus file: its name without the extension. */
export function corpusMemberName(path: string): string {
  return fileName(path).replace(/\.(jsonl|ndjson|json|csv)$/i, "") || "corpus";
}

export function configFromOptions(
  opts: ConfigOptions,
  usageError: (m: string) => never,
): ExperimentConfig {
  let raw: unknown;
  try {
    raw = presetConfig(opts.preset);
  } catch (e) {
    usageError((e as Error).message);
  }
  const patched = { ...(raw as object) } as Record<string, unknown>;
  if (opts.seeds !== undefined) patched.seeds = opts.seeds;
  if (opts.seedBase !== undefined) patched.seedBase = opts.seedBase;
  // the corpus flags name files; the run reads them and keeps their names and hashes (corpora.ts)
  if (opts.humans !== undefined) patched.humans = { corpus: { file: opts.humans } };
  if (opts.referenceCorpus !== undefined)
    patched.simulator = {
      ...(patched.simulator as object),
      corpus: { file: opts.referenceCorpus },
    };
  for (const file of opts.panelCorpus ?? []) {
    const panel = patched.panel as { name: string }[];
    const name = corpusMemberName(file);
    if (panel.some((m) => m.name === name))
      usageError(`--panel-corpus ${file}: the panel already has a member named ${name}`);
    patched.panel = [...panel, { name, corpus: { file } }];
  }
  try {
    return validateConfig(opts.set.reduce(applySet, patched as unknown));
  } catch (e) {
    if (e instanceof ConfigError) usageError(e.message);
    throw e;
  }
}
