// The store of pretrained models. A pretraining job is a pure function of the config
// sections it reads, its seed, its kind and the backend (pretrain.ts), so its result can ship as
// a static file (public/pretrained/) and be loaded instead of pretrained again. A job's key is the
// SHA-256 of exactly those inputs as canonical JSON (sorted keys), the same in Node and in
// browsers on any origin (@noble/hashes: crypto.subtle is missing on plain-http origins).
// A stored file is used only when it decodes cleanly and fits its job; anything else pretrains
// live, and the reason names the file.
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { z } from "zod";
import { CHECKPOINT_FORMAT, validateCheckpoint, type Checkpoint } from "../engine/checkpoint";
import type { ModelConfig } from "../engine/config";
import { seedsOf, type ExperimentConfig } from "./config";
import { benchmarkFor } from "../benchmarks/registry";
import {
  describeJob,
  ensembleFamily,
  jobRole,
  modelConfig,
  pretrainJobs,
  type PretrainJob,
  type PretrainResult,
} from "./pretrain";

/** Bump whenever pretraining code changes what a job computes: every stored key changes with it. */
export const STORE_VERSION = 1;
export const STORED_FORMAT = "collapse-lab/pretrained@1";
export const INDEX_FORMAT = "collapse-lab/pretrained-index@1";
const MAGIC = "CLPT";

// ---------------------------------------------------------------------------------------------
// keys

/** JSON with object keys sorted at every level (undefined members dropped, as JSON.stringify does). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
  }
  if (typeof value === "number" && !Number.isFinite(value))
    throw new Error(`canonicalJson: ${value} has no JSON form`);
  return JSON.stringify(value);
}

/**
 * Exactly what runPretrainJob reads for this job: the world, the corpus, the role's model and
 * pretraining settings (not the simulator's γ, which only RL uses), the member's own settings,
 * the seed, the kind, the backend and STORE_VERSION. A panel member, and an ensemble member of
 * another family, is keyed by its settings, not by its name, its γ or its place.
 */
export function jobInputs(
  c: ExperimentConfig,
  job: PretrainJob,
  backend: string,
): Record<string, unknown> {
  const role = jobRole(job);
  const section = role === "policy" ? c.policy : c.simulator;
  const inputs: Record<string, unknown> = {
    storeVersion: STORE_VERSION,
    backend,
    benchmark: c.benchmark,
    kind: job.kind,
    seed: job.seed,
    world: c.world,
    corpus: c.corpus,
    role,
    model: section.model,
    pretrain: section.pretrain,
  };
  // the oracle setting (no referenceWorld) keeps the keys the store was written with
  const shifted = c.simulator.referenceWorld;
  if (job.kind === "reference" && shifted) inputs.referenceWorld = shifted;
  if (job.kind === "ensemble") {
    // another family is keyed by its settings, as a panel member is; a network of the reference's family by its place
    const f = ensembleFamily(c, job.member);
    if (f) inputs.family = { prior: f.prior, corpusScale: f.corpusScale, seedOffset: f.seedOffset };
    else {
      inputs.member = job.member;
      if (shifted) inputs.referenceWorld = shifted;
    }
  }
  // the reference's family learns from an imported corpus where the config names one: its content
  const family = job.kind === "reference" || (job.kind === "ensemble" && !inputs.family);
  if (family && c.simulator.corpus) inputs.simulatorCorpus = c.simulator.corpus.sha256 ?? null;
  if (job.kind === "panel") {
    const { prior, corpusScale, seedOffset } = c.panel[job.member];
    inputs.panelMember = { prior, corpusScale, seedOffset };
  }
  return inputs;
}

export function jobKey(c: ExperimentConfig, job: PretrainJob, backend: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(canonicalJson(jobInputs(c, job, backend)))));
}

/** The keys of every model a run of this config on this backend pretrains (all its seeds). */
export function runJobKeys(c: ExperimentConfig, backend: string): string[] {
  return seedsOf(c).flatMap((seed) => pretrainJobs(c, seed).map((job) => jobKey(c, job, backend)));
}

/** What a stored result must look like to stand in for this job. */
export interface StoredShape {
  config: ModelConfig;
  optimizer: boolean; // the base policy keeps its Adam moments (pretrain.ts)
}

export function expectedShape(c: ExperimentConfig, job: PretrainJob): StoredShape {
  const role = jobRole(job);
  return {
    config: modelConfig(benchmarkFor(c), (role === "policy" ? c.policy : c.simulator).model, role),
    optimizer: role === "policy",
  };
}

// ---------------------------------------------------------------------------------------------
// one stored model: "CLPT", the header's length (u32 LE), the header (JSON, space-padded to a
// multiple of 4 bytes), then float32 LE: every tensor in order, then Adam's m and v if present

interface StoredHeader {
  format: typeof STORED_FORMAT;
  key: string;
  model: string; // describeJob, for people reading the file
  config: ModelConfig;
  tensors: { name: string; shape: number[] }[];
  optimizerStep: number | null; // not null: m and v follow the weights
  nll: number[];
}

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1)
  throw new Error("the store's float32 files are little-endian; this platform is not");

export function encodeStored(key: string, model: string, result: PretrainResult): Uint8Array {
  const ck = result.checkpoint;
  const header: StoredHeader = {
    format: STORED_FORMAT,
    key,
    model,
    config: ck.config,
    tensors: ck.tensors.map((t) => ({ name: t.name, shape: t.shape })),
    optimizerStep: ck.optimizer ? ck.optimizer.step : null,
    nll: result.nll,
  };
  let json = JSON.stringify(header);
  json += " ".repeat((4 - (new TextEncoder().encode(json).length % 4)) % 4);
  const head = new TextEncoder().encode(json);
  const arrays = [
    ...ck.tensors.map((t) => t.data),
    ...(ck.optimizer ? [...ck.optimizer.m, ...ck.optimizer.v] : []),
  ];
  const out = new Uint8Array(8 + head.length + 4 * arrays.reduce((n, a) => n + a.length, 0));
  out.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(out.buffer).setUint32(4, head.length, true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const a of arrays) {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    at += a.byteLength;
  }
  return out;
}

/** Decodes a stored model and checks it against its key and the job's shape; throws with the reason. */
export function decodeStored(bytes: Uint8Array, key: string, expect: StoredShape): PretrainResult {
  if (bytes.length < 8 || new TextDecoder().decode(bytes.subarray(0, 4)) !== MAGIC)
    throw new Error("not a stored model (no CLPT signature)");
  const headLen = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4, true);
  if (headLen % 4 !== 0 || 8 + headLen > bytes.length)
    throw new Error(`bad header length ${headLen} in a file of ${bytes.length} bytes (truncated?)`);
  let h: StoredHeader;
  try {
    h = JSON.parse(
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + headLen)),
    ) as StoredHeader;
  } catch (e) {
    throw new Error(`bad header: ${(e as Error).message}`, { cause: e });
  }
  if (h?.format !== STORED_FORMAT)
    throw new Error(
      `bad header: format is ${JSON.stringify(h?.format)}, expected "${STORED_FORMAT}"`,
    );
  if (h.key !== key)
    throw new Error(
      `it holds the model of key ${String(h.key).slice(0, 16)}…, not ${key.slice(0, 16)}…`,
    );
  if (canonicalJson(h.config) !== canonicalJson(expect.config))
    throw new Error(
      `config mismatch: the file's model is ${canonicalJson(h.config)}, the job needs ${canonicalJson(expect.config)}`,
    );
  if ((h.optimizerStep !== null) !== expect.optimizer)
    throw new Error(
      expect.optimizer
        ? "config mismatch: no optimizer state, which the base policy needs"
        : "config mismatch: optimizer state in a simulator's file",
    );
  if (!Array.isArray(h.nll) || !h.nll.every((x) => typeof x === "number" && Number.isFinite(x)))
    throw new Error("bad header: the nll curve is not a list of finite numbers");
  if (!Array.isArray(h.tensors)) throw new Error("bad header: no tensor list");
  const sizes = h.tensors.map((t) =>
    Array.isArray(t?.shape) ? t.shape.reduce((a, b) => a * b, 1) : NaN,
  );
  if (!sizes.every((n) => Number.isInteger(n) && n >= 0))
    throw new Error("bad header: a tensor shape is not a list of integers");
  const floats = sizes.reduce((a, b) => a + b, 0) * (h.optimizerStep === null ? 1 : 3);
  const expected = 8 + headLen + 4 * floats;
  if (bytes.length !== expected)
    throw new Error(`wrong size: ${bytes.length} bytes, its header needs ${expected} (truncated?)`);
  const own = new Uint8Array(bytes).buffer; // a copy (a Node Buffer may be a view into a shared pool)
  let at = 8 + headLen;
  const take = (n: number, what: string): Float32Array => {
    const a = new Float32Array(own.slice(at, at + 4 * n)); // each tensor its own, aligned buffer
    at += 4 * n;
    for (let i = 0; i < a.length; i++)
      if (!Number.isFinite(a[i])) throw new Error(`${what} holds NaN or infinite values`);
    return a;
  };
  const tensors = h.tensors.map((t, i) => ({
    name: t.name,
    shape: [...t.shape],
    data: take(sizes[i], `tensor ${t.name}`),
  }));
  const checkpoint: Checkpoint = { format: CHECKPOINT_FORMAT, config: { ...h.config }, tensors };
  if (h.optimizerStep !== null) {
    if (!Number.isInteger(h.optimizerStep) || h.optimizerStep < 0)
      throw new Error(`bad header: optimizer step ${h.optimizerStep}`);
    const m = h.tensors.map((t, i) => take(sizes[i], `Adam m of ${t.name}`));
    const v = h.tensors.map((t, i) => take(sizes[i], `Adam v of ${t.name}`));
    checkpoint.optimizer = { step: h.optimizerStep, m, v };
  }
  try {
    validateCheckpoint(checkpoint);
  } catch (e) {
    throw new Error(`config mismatch: ${(e as Error).message}`, { cause: e });
  }
  return { checkpoint, nll: h.nll };
}

// ---------------------------------------------------------------------------------------------
// the index and the store

const FILE_NAME = /^[A-Za-z0-9_-]+\.bin$/; // a plain name in the store's folder, never a path

const IndexEntrySchema = z.looseObject({
  file: z.string().regex(FILE_NAME),
  bytes: z.number().int().positive(),
  model: z.string(),
  job: z.looseObject({
    kind: z.enum(["reference", "policy", "ensemble", "panel"]),
    seed: z.number().int(),
    member: z.number().int().optional(),
  }),
  seed: z.number().int(),
  presets: z.array(z.string()),
  backend: z.string(),
  nll: z.array(z.number()),
});
const IndexSchema = z.looseObject({
  format: z.literal(INDEX_FORMAT),
  models: z.record(z.string(), IndexEntrySchema),
});

export type IndexEntry = z.infer<typeof IndexEntrySchema>;
export interface StoreIndex {
  format: typeof INDEX_FORMAT;
  models: Record<string, IndexEntry>; // by key
}

export function parseIndex(text: string): StoreIndex {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON (${(e as Error).message})`, { cause: e });
  }
  const r = IndexSchema.safeParse(data);
  if (!r.success)
    throw new Error(
      r.error.issues
        .slice(0, 2)
        .map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`)
        .join("; "),
    );
  return r.data as StoreIndex;
}

export function indexEntry(
  c: ExperimentConfig,
  job: PretrainJob,
  backend: string,
  key: string,
  bytes: number,
  result: PretrainResult,
  presets: string[],
): IndexEntry {
  return {
    file: `${key.slice(0, 16)}.bin`,
    bytes,
    model: describeJob(c, job),
    job,
    seed: job.seed,
    presets,
    backend,
    nll: result.nll,
  };
}

/** A stored file exists but cannot be used; the message names the file and the reason. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreError";
  }
}

/** There is no usable store at all (index.json missing or unreadable). */
export class StoreUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreUnavailable";
  }
}

export interface PretrainStore {
  /** Where it is, for messages: a folder or a URL. */
  readonly location: string;
  /**
   * The stored result for `key`, or undefined when the store holds none. Throws StoreError when
   * the stored file cannot stand in for the job, StoreUnavailable when there is no usable store.
   */
  get(key: string, expect: StoredShape): Promise<PretrainResult | undefined>;
}

/**
 * A store over a folder of files, whatever reads them: the file system (node-store.ts), fetch
 * (the app), a Map (tests). `read` resolves undefined for a missing file.
 */
export function fileStore(
  location: string,
  read: (name: string) => Promise<Uint8Array | undefined>,
): PretrainStore {
  let index: Promise<StoreIndex> | undefined;
  const loadIndex = async (): Promise<StoreIndex> => {
    let bytes: Uint8Array | undefined;
    try {
      bytes = await read("index.json");
    } catch (e) {
      throw new StoreUnavailable(
        `no store of pretrained models: ${location}/index.json could not be read (${(e as Error).message})`,
      );
    }
    if (!bytes)
      throw new StoreUnavailable(
        `no store of pretrained models: ${location}/index.json is missing`,
      );
    try {
      return parseIndex(new TextDecoder().decode(bytes));
    } catch (e) {
      throw new StoreUnavailable(
        `no store of pretrained models: ${location}/index.json is unreadable — ${(e as Error).message}`,
      );
    }
  };
  return {
    location,
    async get(key, expect) {
      const entry = (await (index ??= loadIndex())).models[key];
      if (!entry) return undefined;
      const where = `${location}/${entry.file}`;
      let bytes: Uint8Array | undefined;
      try {
        bytes = await read(entry.file);
      } catch (e) {
        throw new StoreError(`${where}: could not be read (${(e as Error).message})`);
      }
      if (!bytes) throw new StoreError(`${where}: the file is missing`);
      if (bytes.length !== entry.bytes)
        throw new StoreError(
          `${where}: ${bytes.length} bytes, index.json says ${entry.bytes} (truncated or replaced)`,
        );
      try {
        return decodeStored(bytes, key, expect);
      } catch (e) {
        throw new StoreError(`${where}: ${(e as Error).message}`);
      }
    },
  };
}

/** Where one job's model came from, and why a stored one was not used. */
export type StoreOutcome =
  | { source: "store"; key: string; result: PretrainResult }
  | { source: "trained"; key: string; problem?: string; unavailable?: string };

/** Looks a job up; never throws: any problem with the store means pretraining live. */
export async function lookUp(
  store: PretrainStore,
  c: ExperimentConfig,
  job: PretrainJob,
  backend: string,
): Promise<StoreOutcome> {
  const key = jobKey(c, job, backend);
  try {
    const result = await store.get(key, expectedShape(c, job));
    return result ? { source: "store", key, result } : { source: "trained", key };
  } catch (e) {
    if (e instanceof StoreUnavailable) return { source: "trained", key, unavailable: e.message };
    return {
      source: "trained",
      key,
      problem: e instanceof StoreError ? e.message : `${store.location}: ${(e as Error).message}`,
    };
  }
}
