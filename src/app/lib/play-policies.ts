// Where the Play page finds a run's trained policies. A recording's are static files beside it
// (public/recorded/<preset>.policies/, written by scripts/record-presets.sh through
// experiment/policies.ts); a run made in this browser keeps each condition × seed's policy in its
// finished unit task in IndexedDB (SeedMetrics.finalPolicy, run-store.ts's task cache). Either
// way a policy is checked against the run's config before it is played; a run without them says
// why in words the page shows.
import { benchmarkFor } from "../../benchmarks/registry";
import type { Checkpoint } from "../../engine/checkpoint";
import type { ConditionId } from "../../experiment/config";
import type { RunReport } from "../../experiment/experiment";
import { decodePolicy, parsePoliciesIndex, type PoliciesIndex } from "../../experiment/policies";
import { modelConfig } from "../../experiment/pretrain";
import type { SeedMetrics } from "../../experiment/runner";
import { canonicalJson } from "../../experiment/store";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { RunStore } from "./run-store";

/** A run's policies: which condition × seed pairs exist, and how to load one. */
export interface PolicySource {
  available: { condition: ConditionId; seed: number }[];
  load(condition: ConditionId, seed: number): Promise<Checkpoint>;
}

/** Identifies the run a play record was made against: its config and backend (merged files must agree). */
export function runKey(report: RunReport): string {
  const backend = report.env.backend.split(" ")[0]; // "wasm (started on webgpu)" trained on wasm's numbers from there on
  return bytesToHex(
    sha256(new TextEncoder().encode(canonicalJson({ config: report.config, backend }))),
  ).slice(0, 32);
}

async function fetchBytes(url: URL, fetchFn: typeof fetch): Promise<Uint8Array | undefined> {
  const res = await fetchFn(url.href);
  // a static host (and Vite's dev server) may answer a missing file with the app's page
  if (res.status === 404 || res.headers.get("content-type")?.includes("text/html"))
    return undefined;
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** Whether a recording has policies beside it (its index.json is there); for picking a default run. */
export async function hasRecordedPolicies(
  preset: string,
  fetchFn: typeof fetch = fetch,
  base: string = document.baseURI,
): Promise<boolean> {
  return (
    (await fetchBytes(new URL(`recorded/${preset}.policies/index.json`, base), fetchFn).catch(
      () => undefined,
    )) !== undefined
  );
}

/** The policies shipped beside a recording, or the reason there are none to play. */
export async function recordedPolicies(
  preset: string,
  report: RunReport,
  fetchFn: typeof fetch = fetch,
  base: string = document.baseURI,
): Promise<PolicySource | string> {
  const root = new URL(`recorded/${preset}.policies/`, base);
  let index: PoliciesIndex;
  try {
    const bytes = await fetchBytes(new URL("index.json", root), fetchFn);
    if (!bytes)
      return `The recording of ${preset} has no trained policies yet: record it again with bash scripts/record-presets.sh ${preset} (it writes them), or play a run of your own.`;
    index = parsePoliciesIndex(new TextDecoder().decode(bytes));
  } catch (e) {
    return `The policies of the ${preset} recording could not be read (recorded/${preset}.policies/index.json: ${(e as Error).message}).`;
  }
  const backend = index.backend;
  const shape = modelConfig(benchmarkFor(report.config), report.config.policy.model, "policy");
  const trained = new Set(
    report.conditions.flatMap((c) => c.seeds.map((s) => `${c.id}:${s.seed}`)),
  );
  const entries = index.policies.filter((p) => trained.has(`${p.condition}:${p.seed}`));
  if (entries.length === 0)
    return `The policies beside the ${preset} recording are not this recording's conditions and seeds: record it again.`;
  return {
    available: entries.map(({ condition, seed }) => ({ condition, seed })),
    async load(condition, seed) {
      const entry = entries.find((p) => p.condition === condition && p.seed === seed);
      if (!entry)
        throw new Error(`no ${condition} policy of seed ${seed} in recorded/${preset}.policies/`);
      const where = `recorded/${preset}.policies/${entry.file}`;
      const bytes = await fetchBytes(new URL(entry.file, root), fetchFn).catch((e: Error) => {
        throw new Error(`${where}: ${e.message}`);
      });
      if (!bytes) throw new Error(`${where} is missing`);
      try {
        return decodePolicy(bytes, report.config, backend, entry, shape);
      } catch (e) {
        throw new Error(`${where}: ${(e as Error).message}`, { cause: e });
      }
    },
  };
}

/** The policies a run made in this browser kept with its finished tasks, or the reason there are none. */
export async function storedPolicies(
  store: Pick<RunStore, "taskCache">,
  runId: string,
  report: RunReport,
): Promise<PolicySource | string> {
  const cache = store.taskCache(runId);
  const found = new Map<string, Checkpoint>();
  for (const c of report.conditions) {
    for (const s of c.seeds) {
      const unit = (await cache.get(`unit:${c.id}:${s.seed}`)) as SeedMetrics | undefined;
      if (unit?.finalPolicy) found.set(`${c.id}:${s.seed}`, unit.finalPolicy);
    }
  }
  if (found.size === 0)
    return "This run kept no trained policies (runs made before the Play page, and imported runs, have none): run it again here, or play a recording.";
  return {
    available: [...found.keys()].map((k) => ({
      condition: k.split(":")[0] as ConditionId,
      seed: Number(k.split(":")[1]),
    })),
    async load(condition, seed) {
      const ck = found.get(`${condition}:${seed}`);
      if (!ck) throw new Error(`this run kept no ${condition} policy of seed ${seed}`);
      return ck;
    },
  };
}
