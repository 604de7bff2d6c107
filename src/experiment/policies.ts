// The trained policies of a run (one per condition × seed), as files beside a recording:
// `<folder>/index.json` and one `<condition>-<seed>.bin` per policy, each in the store's format
// (store.ts: "CLPT", a JSON header, float32 weights). A policy's key is the SHA-256 of the run's
// config, backend, condition and seed, so files written for another config (a re-recorded preset)
// are refused with a reason instead of being played. The Play page reads them; the CLI's
// `run --policies DIR` (scripts/record-presets.sh) writes them.
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { z } from "zod";
import type { Checkpoint } from "../engine/checkpoint";
import { benchmarkFor } from "../benchmarks/registry";
import { CONDITIONS, seedsOf, type ConditionId, type ExperimentConfig } from "./config";
import { modelConfig } from "./pretrain";
import { canonicalJson, decodeStored, encodeStored } from "./store";

export const POLICIES_FORMAT = "collapse-lab/policies@1";

const IndexSchema = z.looseObject({
  format: z.literal(POLICIES_FORMAT),
  backend: z.string(),
  policies: z.array(
    z.looseObject({
      condition: z.enum(CONDITIONS),
      seed: z.number().int(),
      file: z.string().regex(/^[A-Za-z0-9_-]+\.bin$/),
      bytes: z.number().int().positive(),
      key: z.string(),
    }),
  ),
});
export type PoliciesIndex = z.infer<typeof IndexSchema>;
/** One policy: its condition and seed, its file (a plain name in the folder), size and key. */
export type PolicyEntry = PoliciesIndex["policies"][number];

/** The policies folder `run --policies` is expected to have written beside a report: `<report>.policies`. */
export const policiesBeside = (reportFile: string) =>
  reportFile.replace(/\.json$/, "") + ".policies";

/** What a trained policy is a function of: the whole run config, the backend, its condition and seed. */
export function policyKey(
  config: ExperimentConfig,
  backend: string,
  condition: ConditionId,
  seed: number,
): string {
  const inputs = { kind: "trained-policy", config, backend, condition, seed };
  return bytesToHex(sha256(new TextEncoder().encode(canonicalJson(inputs))));
}

/** The files of a run's policies: index.json and one .bin per policy. */
export function encodePolicies(
  config: ExperimentConfig,
  backend: string,
  policies: { condition: ConditionId; seed: number; checkpoint: Checkpoint }[],
): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const entries: PolicyEntry[] = [];
  for (const p of [...policies].sort(
    (a, b) => CONDITIONS.indexOf(a.condition) - CONDITIONS.indexOf(b.condition) || a.seed - b.seed,
  )) {
    const key = policyKey(config, backend, p.condition, p.seed);
    const bytes = encodeStored(key, `${p.condition} policy, seed ${p.seed}`, {
      checkpoint: p.checkpoint,
      nll: [],
    });
    const file = `${p.condition}-${p.seed}.bin`;
    files.set(file, bytes);
    entries.push({ condition: p.condition, seed: p.seed, file, bytes: bytes.length, key });
  }
  const index: PoliciesIndex = { format: POLICIES_FORMAT, backend, policies: entries };
  files.set("index.json", new TextEncoder().encode(JSON.stringify(index, null, 1) + "\n"));
  return files;
}

/** Reads index.json; throws a readable reason. */
export function parsePoliciesIndex(text: string): PoliciesIndex {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`index.json is not JSON (${(e as Error).message})`, { cause: e });
  }
  const r = IndexSchema.safeParse(data);
  if (!r.success)
    throw new Error(
      `index.json is malformed — ${r.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`)[0]}`,
    );
  return r.data;
}

/** Decodes one policy file and checks it is the one this run, condition and seed trained; throws why not. */
export function decodePolicy(
  bytes: Uint8Array,
  config: ExperimentConfig,
  backend: string,
  entry: Pick<PolicyEntry, "condition" | "seed">,
  modelConfig: Checkpoint["config"],
): Checkpoint {
  const key = policyKey(config, backend, entry.condition, entry.seed);
  try {
    return decodeStored(bytes, key, { config: modelConfig, optimizer: false }).checkpoint;
  } catch (e) {
    const m = (e as Error).message;
    throw new Error(
      m.startsWith("it holds the model of key")
        ? `it was trained by another run than this recording (another config, backend or seed): re-record the preset`
        : m,
      { cause: e },
    );
  }
}

/** One run's policies folder, for merging: its run's config, its index and a reader of its files. */
export interface PoliciesPart {
  name: string; // the folder, for errors
  config: ExperimentConfig;
  index: PoliciesIndex;
  read: (file: string) => Uint8Array;
}

/**
 * The policies of runs merged into one report (merge-reports.ts): each is checked against the run
 * that trained it and written under the merged run's key, so the merged recording's Play page and
 * `serve` accept them. Every condition × seed of every part must be there.
 */
export function mergePolicies(
  merged: ExperimentConfig,
  backend: string,
  parts: PoliciesPart[],
): Map<string, Uint8Array> {
  const shape = modelConfig(benchmarkFor(merged), merged.policy.model, "policy");
  const policies = parts.flatMap((part) => {
    if (part.index.backend !== backend)
      throw new Error(
        `${part.name} holds policies trained on ${part.index.backend}, not ${backend}`,
      );
    return part.config.conditions.flatMap((condition) =>
      seedsOf(part.config).map((seed) => {
        const entry = part.index.policies.find((p) => p.condition === condition && p.seed === seed);
        if (!entry) throw new Error(`${part.name} has no policy of ${condition}, seed ${seed}`);
        try {
          return {
            condition,
            seed,
            checkpoint: decodePolicy(part.read(entry.file), part.config, backend, entry, shape),
          };
        } catch (e) {
          throw new Error(`${part.name}/${entry.file}: ${(e as Error).message}`, { cause: e });
        }
      }),
    );
  });
  return encodePolicies(merged, backend, policies);
}
