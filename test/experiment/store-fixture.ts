// A store of pretrained models in memory for tests: real files (encodeStored) in a Map, read
// through fileStore, so every check a shipped file gets applies; and results with random weights.
import { initCheckpoint } from "../../src/engine/checkpoint";
import type { ExperimentConfig } from "../../src/experiment/config";
import { describeJob, type PretrainJob, type PretrainResult } from "../../src/experiment/pretrain";
import {
  encodeStored,
  expectedShape,
  fileStore,
  INDEX_FORMAT,
  indexEntry,
  jobKey,
  type PretrainStore,
  type StoreIndex,
} from "../../src/experiment/store";

/** A result of the right shape for the job (random weights; Adam moments for the policy). */
export function fakeResult(c: ExperimentConfig, job: PretrainJob, seed = 1): PretrainResult {
  const shape = expectedShape(c, job);
  const checkpoint = initCheckpoint(shape.config, seed);
  if (shape.optimizer)
    checkpoint.optimizer = {
      step: 3,
      m: checkpoint.tensors.map((t) => t.data.map((x) => x / 2)),
      v: checkpoint.tensors.map((t) => t.data.map((x) => x * x)),
    };
  return { checkpoint, nll: [2, 1.5] };
}

export class MemoryFiles {
  readonly files = new Map<string, Uint8Array>();
  readonly index: StoreIndex = { format: INDEX_FORMAT, models: {} };

  /** Stores a job's result under its key (backend wasm); returns its file name. */
  put(c: ExperimentConfig, job: PretrainJob, result: PretrainResult, backend = "wasm"): string {
    const key = jobKey(c, job, backend);
    const bytes = encodeStored(key, describeJob(c, job), result);
    const entry = indexEntry(c, job, backend, key, bytes.length, result, ["test"]);
    this.index.models[key] = entry;
    this.files.set(entry.file, bytes);
    return entry.file;
  }

  /** The store over these files, at location "mem"; without index.json when `withIndex` is false. */
  store(withIndex = true): PretrainStore {
    return fileStore("mem", async (name) => {
      if (name === "index.json")
        return withIndex ? new TextEncoder().encode(JSON.stringify(this.index)) : undefined;
      return this.files.get(name);
    });
  }
}
