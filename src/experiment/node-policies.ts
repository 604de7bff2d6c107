// A run's policies folder on disk (`run --policies`), read in Node: its index, and each policy
// decoded and checked against the config that trained it (policies.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { benchmarkFor } from "../benchmarks/registry";
import type { Checkpoint } from "../engine/checkpoint";
import type { ConditionId, ExperimentConfig } from "./config";
import { decodePolicy, parsePoliciesIndex, type PoliciesIndex } from "./policies";
import { modelConfig } from "./pretrain";

export interface PolicyFolder {
  dir: string;
  index: PoliciesIndex;
  /** The trained policy of a condition × seed; throws when the folder has none or it is another run's. */
  checkpoint(condition: ConditionId, seed: number): Checkpoint;
}

/** Opens `dir` for the run whose config is `trained`; throws when its index.json is missing or malformed. */
export function openPolicyFolder(dir: string, trained: ExperimentConfig): PolicyFolder {
  const index = parsePoliciesIndex(readFileSync(join(dir, "index.json"), "utf8"));
  const shape = modelConfig(benchmarkFor(trained), trained.policy.model, "policy");
  return {
    dir,
    index,
    checkpoint(condition, seed) {
      const entry = index.policies.find((p) => p.condition === condition && p.seed === seed);
      if (!entry) throw new Error("not in the folder's index.json");
      const bytes = new Uint8Array(readFileSync(join(dir, entry.file)));
      return decodePolicy(bytes, trained, index.backend, entry, shape);
    },
  };
}
