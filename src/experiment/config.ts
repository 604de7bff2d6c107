// ExperimentConfig: plain, versioned JSON validated with zod. Unknown keys and wrong types are
// errors that name their path (e.g. `rl.steps: expected a number`). Presets are small overrides
// of a benchmark's default config; `--set path=value` applies further overrides to any leaf.
// This is the public entry; the parts, each importing only those listed before it:
// config-schema.ts (the zod schema and its types), config-validate.ts (validateConfig,
// ConfigError), config-set.ts (merge and `--set`), config-defaults.ts (the default configs).
import type { ExperimentConfig } from "./config-schema";

export {
  CONDITIONS,
  type ConditionId,
  type CorpusRefConfig,
  type EnsembleMemberConfig,
  type ExperimentConfig,
  type PanelMemberConfig,
} from "./config-schema";
export { ConfigError, validateConfig } from "./config-validate";
export { applySet, merge } from "./config-set";
export { DEFAULT_CONFIG, defaultConfig } from "./config-defaults";

export function seedsOf(c: ExperimentConfig): number[] {
  return Array.from({ length: c.seeds }, (_, i) => c.seedBase + i);
}
