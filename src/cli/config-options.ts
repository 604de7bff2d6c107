// The experiment config of a command's flags (--preset, --seeds, --seed-base, --set), validated;
// a bad one is a usage error naming the path.
import { applySet, ConfigError, validateConfig, type ExperimentConfig } from "../experiment/config";
import { presetConfig } from "../experiment/presets";

export interface ConfigOptions {
  preset: string;
  seeds?: number;
  seedBase?: number;
  set: string[];
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
  try {
    return validateConfig(opts.set.reduce(applySet, patched as unknown));
  } catch (e) {
    if (e instanceof ConfigError) usageError(e.message);
    throw e;
  }
}
