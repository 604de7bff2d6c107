// The LM lab's state (docs/architecture.md#the-lm-tier, #the-app): which benchmark's user the LM plays (any whose module has an
// lm part; everything benchmark-specific — prompts, presets, outcomes and their names — comes from
// that part), which models to load and from where, their load progress (per file and overall),
// Direct vs Verbalized Sampling replies of the instruct model at one persona card and dialogue
// state with their diversity and outcome numbers, and γ of the instruct model against its base
// model. The models live in the LM worker behind an LmLabHost; this class only builds prompts,
// parses, selects and measures (all cheap), so it runs unchanged on fake models in tests. One job
// at a time; every job can be cancelled. The "endpoint" source runs the same procedures on models
// behind an OpenAI-compatible server (src/remote/ through lib/lm-endpoint.ts); its API keys live in
// this object's memory only — never in the URL, IndexedDB, a result or a message.
import type { Device, DeviceRequest, LoadProgress, LoadedInfo, ModelSource } from "../../lm/backend";
import type { ContinuationScore, EmbeddingModel, GenerateOptions, Generation, LanguageModel, LmPrompt } from "../../lm/types";
import type { Dialogue } from "../../benchmarks/types";
import { BENCHMARK_IDS, benchmarkModule } from "../../benchmarks/registry";
import type { Benchmark, BenchmarkLm, BenchmarkModule, OutcomeComparison } from "../../benchmarks/types";
import { LmCancelledError, lmErrorKind, type LmErrorKind } from "../../lm/errors";
import { remoteErrorKind, type RemoteErrorKind } from "../../remote/errors";
import { normaliseBaseUrl, type Capabilities } from "../../remote/client";
import { printable } from "../../remote/printable";
import type { EndpointSpec } from "../lib/lm-endpoint";
import { parseVs, selectCandidate, type VsFormat, type VsTextSelection } from "../../lm/vs-parse";
import { distinctScores, embeddingDiversity, type DistinctScores } from "../../lm/measures";
import { lmGamma, type LmGammaPrompt, type LmGammaReport } from "../../lm/lm-gamma";
import { Rng } from "../../engine/random";

// ─────────────────────────────────────────────────────────────────────────────────────────────
// What can be picked

export type ModelRole = "instruct" | "base" | "embedder";
export const MODEL_ROLES: readonly ModelRole[] = ["instruct", "base", "embedder"];
export type SourceKind = "hub" | "local" | "tiny" | "endpoint";
/** The roles an endpoint can fill (the embedder comes from the hub). */
export type EndpointRole = "instruct" | "base";
export const DEVICES: readonly DeviceRequest[] = ["auto", "webgpu", "wasm"];

/**
 * The backend's default model ids. Typed as `typeof DEFAULT_MODELS` of backend.ts, so the type
 * checker fails if the two ever differ — without importing backend.ts (and transformers.js with
 * it) into the page: transformers.js lives in the LM worker only.
 */
export const DEFAULT_MODEL_IDS: typeof import("../../lm/backend").DEFAULT_MODELS = {
  base: "HuggingFaceTB/SmolLM2-135M",
  instruct: "HuggingFaceTB/SmolLM2-135M-Instruct",
  embedder: "Xenova/all-MiniLM-L6-v2",
};

export interface CardChoice {
  id: string; // e.g. "agreeable-high.caring-low.rational-high"
  card: number[];
  label: string; // the card in words, as the prompt says it
}

export interface StateChoice {
  id: string;
  label: string;
  acts: string[]; // act names; the user speaks next
}

/** A benchmark the lab can play: its module, lm part and world (default config). */
export interface LabBenchmark {
  id: string;
  module: BenchmarkModule;
  lm: BenchmarkLm;
  bench: Benchmark;
}

/** The benchmarks whose module has an lm part, in the registry's order; the first is the default. */
export const LAB_BENCHMARKS: readonly { id: string; title: string }[] = BENCHMARK_IDS.flatMap((id) => {
  const m = benchmarkModule(id);
  return m.lm ? [{ id, title: m.title }] : [];
});
export const LAB_BENCHMARK = LAB_BENCHMARKS[0].id;

const labs = new Map<string, LabBenchmark>();
/** The lab's view of a benchmark (built once). @throws on an unknown id or a benchmark without an lm part. */
export function labBenchmark(id: string): LabBenchmark {
  let b = labs.get(id);
  if (!b) {
    const m = benchmarkModule(id);
    if (!m.lm) throw new Error(`LM lab: the ${m.title} benchmark has no prompts for real LMs`);
    b = { id, module: m, lm: m.lm, bench: m.create(m.defaultWorld) };
    labs.set(id, b);
  }
  return b;
}

/** The default benchmark's preset persona cards. */
export const LM_CARDS: readonly CardChoice[] = labBenchmark(LAB_BENCHMARK).lm.cards;
/** The default benchmark's preset dialogue states (act names), each ending at the user's turn. */
export const LM_STATES: readonly StateChoice[] = labBenchmark(LAB_BENCHMARK).lm.states;

/** The state a benchmark's lab opens on: its first preset state where the user must state the outcome (else its first). */
export function defaultState(benchmark: string): string {
  const { lm } = labBenchmark(benchmark);
  const card = lm.cards[0].id;
  return (lm.states.find((s) => lm.decisionDue(labDialogue(card, s.id, benchmark))) ?? lm.states[0]).id;
}

export const DEFAULT_CARD = LM_CARDS[0].id;
export const DEFAULT_STATE = defaultState(LAB_BENCHMARK);

/** The dialogue of a preset state under a card. @throws on an unknown id or a state that is not the user's turn. */
export function labDialogue(cardId: string, stateId: string, benchmark: string = LAB_BENCHMARK): Dialogue {
  const { lm, bench, module } = labBenchmark(benchmark);
  const card = lm.cards.find((c) => c.id === cardId);
  const state = lm.states.find((s) => s.id === stateId);
  if (!card) throw new Error(`LM lab: no card ${JSON.stringify(cardId)}`);
  if (!state) throw new Error(`LM lab: no dialogue state ${JSON.stringify(stateId)}`);
  const actId = (name: string) => {
    const i = bench.acts.findIndex((a) => a.name === name);
    if (i < 0) throw new Error(`LM lab: unknown act ${name}`);
    return i;
  };
  const d: Dialogue = { card: [...card.card], acts: state.acts.map(actId) };
  if (bench.turn(d) !== "user") throw new Error(`LM lab: in state ${state.id} the ${module.roles.user.toLowerCase()} does not speak next`);
  return d;
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// The host: where models are loaded and run (the LM worker in the app, fakes in tests)

/** Where an endpoint model is served and what its server offers (no key: that stays with the client). */
export interface EndpointInfo {
  baseUrl: string;
  model: string;
  capabilities: Capabilities;
  /** The model reads act texts only (a `collapse-lab serve` simulator): the lab sends it the dialogue itself. */
  actTexts: boolean;
  /** What the probe found, in words. */
  summary: string;
}

/** A loaded model's id and where it runs: a device in this browser, or a server. */
export interface LabModelInfo extends Omit<LoadedInfo, "device"> {
  device: Device | "remote";
  endpoint?: EndpointInfo;
}

/**
 * What a call may be given: `signal` cancels it (the worker stops at the next token); `onText`
 * receives each reply's text so far while it is written (endpoint models stream; others ignore it).
 */
export interface GenerateControl {
  signal?: AbortSignal;
  onText?: (index: number, text: string) => void;
}

/** A loaded causal LM. */
export interface LabLanguageModel extends LanguageModel {
  readonly info: LabModelInfo;
  generate(prompt: LmPrompt, opts?: GenerateOptions, control?: GenerateControl): Promise<Generation[]>;
  score(prompt: LmPrompt, continuations: string[], control?: { signal?: AbortSignal }): Promise<ContinuationScore[]>;
  /** For a model that reads act texts: replies to the dialogue itself (Direct, or VS with `vsK` candidates). */
  generateActs?(bench: Benchmark, d: Dialogue, vsK: number | null, opts?: GenerateOptions, control?: GenerateControl): Promise<Generation[]>;
  /** Requests sent to its server so far (endpoint models). */
  requestCount?(): number;
}

export interface LabEmbeddingModel extends EmbeddingModel {
  readonly info: LoadedInfo;
}

export interface LoadCall {
  device: DeviceRequest;
  onProgress: (p: LoadProgress) => void;
  /** Aborting rejects the load with a cancelled error (the host may drop every loaded model). */
  signal: AbortSignal;
}

export interface LmLabHost {
  loadLanguageModel(src: ModelSource, call: LoadCall): Promise<LabLanguageModel>;
  loadEmbeddingModel(src: ModelSource, call: LoadCall): Promise<LabEmbeddingModel>;
  /** The project's tiny test models (random weights), built in the page and handed over in memory. */
  tinySources(): Promise<Record<ModelRole, ModelSource>>;
  /** Drops every loaded model (before a new set is loaded). */
  reset(): void;
  /** A caveat about this browser's WebGPU adapter (e.g. a software one, far slower than wasm), or null. */
  webGpuNote?(): Promise<string | null>;
  /** A model on an OpenAI-compatible server, probed; rejects with a typed remote error. */
  connectEndpoint?(spec: EndpointSpec, signal: AbortSignal): Promise<LabLanguageModel>;
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Results

export interface FileProgress {
  role: ModelRole;
  model: string;
  file: string;
  loaded: number;
  total: number;
  done: boolean;
}

export interface LabError {
  kind: LmErrorKind | null;
  title: string;
  message: string;
}

export type JobKind = "load" | "compare" | "gamma";

export interface ReplyView {
  text: string;
  tokens: number;
  outcome: number | null; // the benchmark's outcome read from the text (lm.parseOutcome)
}

/** The batch of replies being written (streamed from an endpoint): which side, its first row's index, each reply's text so far (control characters removed). */
export interface LiveBatch {
  side: "direct" | "vs";
  first: number;
  texts: string[];
}

export interface VsCallView {
  raw: string;
  format: VsFormat;
  warnings: string[];
  candidates: { text: string; probability: number; outcome: number | null }[];
  /** Index of the candidate selection picked; null when the output held none. */
  selected: number | null;
}

export interface MeasureSet {
  label: string;
  count: number;
  /** Replies that occur once among these (exact text, whitespace collapsed) / count. */
  uniqueShare: number;
  distinct: DistinctScores;
  embedding: number | null;
  outcomes: OutcomeComparison;
}

export interface CompareSettings {
  benchmark: string; // its id
  card: string;
  state: string;
  instruct: string;
  embedder: string | null;
  n: number;
  k: number;
  selection: VsTextSelection;
  tailThreshold: number;
  temperature: number;
  maxNewTokens: number;
  seed: number;
}

export interface CompareResult {
  settings: CompareSettings;
  direct: ReplyView[];
  vs: VsCallView[];
  /** Filled when both sides finished. */
  measures: { direct: MeasureSet; vsAll: MeasureSet; vsSelected: MeasureSet } | null;
  /** HTTP requests the run sent, retries included (endpoint models only). */
  requests: number | null;
  /** Why embedding diversity is missing, when it is. */
  embeddingNote: string | null;
  status: "running" | "done" | "cancelled" | "error";
  seconds: number | null;
}

export interface GammaSettings {
  benchmark: string; // its id
  instruct: string;
  base: string;
  card: string;
  states: string[];
  samples: number;
  maxNewTokens: number;
  seed: number;
}

export interface GammaResult {
  settings: GammaSettings;
  report: LmGammaReport | null;
  /** Empty replies left out (they say nothing a base model could score). */
  dropped: number;
  status: "running" | "done" | "cancelled" | "error";
  seconds: number | null;
}

export interface Job {
  kind: JobKind;
  label: string;
  done: number;
  total: number;
}

const ERROR_TITLES: Record<LmErrorKind, string> = {
  "no-webgpu": "No WebGPU",
  "model-not-found": "Model not found",
  offline: "Offline",
  "storage-quota": "Browser storage is full",
  cancelled: "Cancelled",
  "context-overflow": "Prompt too long for the model",
};

const REMOTE_TITLES: Partial<Record<RemoteErrorKind, string>> = {
  unreachable: "Server unreachable",
  timeout: "The server did not answer in time",
  unauthorised: "Not authorised",
  "model-not-found": "Model not found",
  "not-offered": "Not offered by this server",
  "no-logprobs": "No log-probs",
  "malformed-reply": "Unreadable reply",
  "rate-limited": "Rate limited",
  "server-error": "Server error",
  "bad-request": "Request refused",
};

/**
 * A page cannot tell a server that is down from one that refuses its origin (CORS): the browser
 * hides which. Say both, and how each server kind is told to allow an origin.
 */
function unreachableHint(): string {
  const origin = typeof location !== "undefined" ? location.origin : "this page's origin";
  return (
    ` In a browser this also happens when the server does not allow requests from ${origin} (CORS): ` +
    `\`collapse-lab serve\` allows the origins given with --cors-origin; vLLM and SGLang allow every origin unless told otherwise (vLLM: --allowed-origins); llama.cpp's server has answered any origin so far.`
  );
}

/** A readable error, with the lm tier's and the remote tier's typed errors (also after a worker boundary) by kind. */
export function describeError(e: unknown): LabError {
  const kind = lmErrorKind(e);
  const message = e instanceof Error || (typeof e === "object" && e !== null && "message" in e) ? String((e as Error).message) : String(e);
  const remote = kind ? null : remoteErrorKind(e);
  if (remote && REMOTE_TITLES[remote])
    return { kind: remote === "model-not-found" ? "model-not-found" : null, title: REMOTE_TITLES[remote]!, message: remote === "unreachable" ? message + unreachableHint() : message };
  return { kind, title: kind ? ERROR_TITLES[kind] : "Something went wrong", message };
}

/**
 * A static server that answers every unknown path with the app's index.html (as Vite's and most
 * single-page hosts do) turns a missing model file into "Unexpected token '<' … is not valid
 * JSON": say what that means for a local folder.
 */
export function describeLoadError(e: unknown, src: { id: string; localModelPath?: string }): LabError {
  const err = describeError(e);
  if (err.kind === null && src.localModelPath !== undefined && /unexpected token '?<|<!doctype|is not valid json/i.test(err.message)) {
    const path = src.localModelPath.endsWith("/") ? src.localModelPath : `${src.localModelPath}/`;
    return {
      kind: "model-not-found",
      title: "Model not found",
      message: `The server sent a web page instead of a model file for "${src.id}" (${err.message}): ${path}${src.id}/config.json and the other files are probably missing. Put the model folder there, in Hugging Face layout.`,
    };
  }
  return err;
}

/** One reply of a transcript: the first line, trimmed (the next line would be another speaker's). */
export const firstLine = (text: string) => text.trim().split(/\r?\n/)[0].trim();

const sameKey = (s: string) => s.trim().replace(/\s+/g, " ");

/** Two base URLs name the same server and path (as the client would send to them). */
function sameUrl(a: string, b: string): boolean {
  try {
    return normaliseBaseUrl(a.trim()) === normaliseBaseUrl(b.trim());
  } catch {
    return a.trim() === b.trim();
  }
}

function uniqueShare(texts: readonly string[]): number {
  if (texts.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const t of texts) counts.set(sameKey(t), (counts.get(sameKey(t)) ?? 0) + 1);
  return texts.filter((t) => counts.get(sameKey(t)) === 1).length / texts.length;
}

/** Generation rows per call: small batches, so progress shows and a cancel lands between them. */
const BATCH = 4;

// ─────────────────────────────────────────────────────────────────────────────────────────────

export class LmLabState {
  // where the models come from
  source = $state<SourceKind>("hub");
  ids = $state<Record<ModelRole, string>>({ ...DEFAULT_MODEL_IDS });
  localPath = $state("models/");
  device = $state<DeviceRequest>("auto");
  /** Endpoint source: the simulator's server and model, and the base model's (an empty URL: the simulator's server). */
  endpoints = $state<Record<EndpointRole, { baseUrl: string; model: string }>>({ instruct: { baseUrl: "http://127.0.0.1:8000/v1", model: "" }, base: { baseUrl: "", model: "" } });
  /** Why a key was just dropped (its server's URL was changed), shown beside the key field. */
  keyNote = $state.raw<string | null>(null);
  // each key with the URL it was typed for: memory only, sent only there
  #keys = $state<Record<EndpointRole, { key: string; url: string }>>({ instruct: { key: "", url: "" }, base: { key: "", url: "" } });

  // which benchmark's user the LM plays (set through `benchmark`)
  #benchmark = $state(LAB_BENCHMARK);

  // Direct vs VS
  cardId = $state(DEFAULT_CARD);
  stateId = $state(DEFAULT_STATE);
  n = $state(10); // replies each way
  k = $state(5); // VS candidates per call (SCOPE and the VS paper: 5)
  selection = $state<VsTextSelection>("random"); // SCOPE's main setting
  tailThreshold = $state(0); // τ: drop candidates below it before selecting; 0 = off
  temperature = $state(0.7); // SCOPE's sampling temperature
  maxNewTokens = $state(40); // per reply; a VS call gets k times this plus room for the JSON
  seed = $state(1);

  // γ
  gammaSamples = $state(8); // replies per state from each model
  gammaAllStates = $state(true);

  // status and results (raw: replaced whole, never mutated in place)
  job = $state.raw<Job | null>(null);
  loaded = $state.raw<Partial<Record<ModelRole, LabModelInfo>>>({});
  loadedSource = $state.raw<SourceKind | null>(null);
  files = $state.raw<FileProgress[]>([]);
  /** The last failure, with the job (page section) it belongs to. */
  error = $state.raw<(LabError & { job: JobKind }) | null>(null);
  /** A note about the last job (a cancel, a model without a chat template). */
  notice = $state.raw<{ job: JobKind; text: string } | null>(null);
  compare = $state.raw<CompareResult | null>(null);
  /** Direct vs VS on an endpoint: the replies of the batch in flight as they stream in; null between batches. */
  live = $state.raw<LiveBatch | null>(null);
  gamma = $state.raw<GammaResult | null>(null);
  /** Cancel was pressed; the job ends once the worker reaches its next step. */
  cancelling = $state(false);
  /** A caveat about WebGPU here (see LmLabHost.webGpuNote). */
  gpuNote = $state.raw<string | null>(null);

  readonly busy = $derived(this.job !== null);
  /** The chosen benchmark's module, lm part and world. */
  readonly lab = $derived(labBenchmark(this.#benchmark));
  readonly cards = $derived(this.lab.lm.cards);
  readonly states = $derived(this.lab.lm.states);
  readonly dialogue = $derived(labDialogue(this.cardId, this.stateId, this.#benchmark));
  readonly transcript = $derived(this.lab.lm.renderTranscript(this.dialogue));
  readonly decision = $derived(this.lab.lm.decisionDue(this.dialogue));
  /** k while it is being edited can be anything; the shown prompt and call count use a valid one. */
  readonly #kShown = $derived(Number.isInteger(this.k) && this.k >= 1 && this.k <= 20 ? this.k : 5);
  readonly prompts = $derived({ direct: this.lab.lm.directPrompt(this.dialogue), vs: this.lab.lm.vsPrompt(this.dialogue, { k: this.#kShown }) });
  readonly vsCalls = $derived(Number.isInteger(this.n) && this.n >= 1 ? Math.ceil(this.n / this.#kShown) : 0);
  /** Overall load progress over every file seen so far, in [0, 1]; null before sizes are known. */
  readonly overall = $derived.by(() => {
    const total = this.files.reduce((s, f) => s + f.total, 0);
    return total > 0 ? Math.min(1, this.files.reduce((s, f) => s + Math.min(f.loaded, f.total), 0) / total) : null;
  });
  readonly settingsProblem = $derived.by(() => {
    const bad = (x: number, min: number, max: number, int = true) => !(Number.isFinite(x) && x >= min && x <= max && (!int || Number.isInteger(x)));
    if (bad(this.n, 1, 200)) return "replies each way must be a whole number from 1 to 200";
    if (bad(this.k, 1, 20)) return "k must be a whole number from 1 to 20";
    if (bad(this.tailThreshold, 0, 1, false)) return "the tail threshold must lie in [0, 1]";
    if (bad(this.temperature, 0, 5, false)) return "the temperature must lie in [0, 5]";
    if (bad(this.maxNewTokens, 1, 512)) return "max new tokens must be a whole number from 1 to 512";
    if (!Number.isInteger(this.seed)) return "the seed must be a whole number";
    if (bad(this.gammaSamples, 2, 100)) return "γ samples per state must be a whole number from 2 to 100";
    return null;
  });

  #models: { instruct?: LabLanguageModel; base?: LabLanguageModel; embedder?: LabEmbeddingModel } = {};
  #abort: AbortController | null = null;

  // ───────────────────────────────────────────────────────────────────────────────────────────
  // Endpoint URLs and keys

  /** The key typed for a role's server (for the key field). */
  apiKey(role: EndpointRole): string {
    return this.#keys[role].key;
  }

  /** Keeps `key` for the role's server as its URL reads now. */
  setApiKey(role: EndpointRole, key: string): void {
    this.#keys[role] = { key, url: this.endpoints[role].baseUrl };
    this.keyNote = null;
  }

  /** Changes a role's server URL; a key typed for another URL is dropped, so it never goes to a server it was not typed for. */
  setEndpointUrl(role: EndpointRole, url: string): void {
    this.endpoints[role].baseUrl = url;
    const k = this.#keys[role];
    if (k.key && !sameUrl(k.url, url)) {
      this.#keys[role] = { key: "", url: "" };
      this.keyNote = `The ${role === "instruct" ? "simulator's" : "base model's"} API key was cleared: it was typed for another URL. Type it again for this server.`;
    }
  }

  /** Where a role's model is, with the key typed for that very URL (the base model on the simulator's server shares its key). */
  endpointSpec(role: EndpointRole): EndpointSpec {
    const own = this.endpoints[role];
    const ins = this.endpoints.instruct;
    const baseUrl = role === "base" && own.baseUrl.trim() === "" ? ins.baseUrl.trim() : own.baseUrl.trim();
    const keyFor = (r: EndpointRole) => (this.#keys[r].key && sameUrl(this.#keys[r].url, baseUrl) ? this.#keys[r].key : undefined);
    const apiKey = keyFor(role) ?? (role === "base" ? keyFor("instruct") : undefined);
    return { baseUrl, model: own.model.trim(), ...(apiKey ? { apiKey } : {}) };
  }

  /** The loaded instruct model (the Play page reads a person's own words with it); reactive through `loaded`. */
  get instructModel(): LabLanguageModel | undefined {
    return this.loaded.instruct ? this.#models.instruct : undefined;
  }

  /** @param benchmark the benchmark it opens on (default: the first with an lm part). */
  constructor(
    private readonly host: LmLabHost,
    benchmark: string = LAB_BENCHMARK,
  ) {
    this.benchmark = benchmark;
  }

  /** The benchmark whose user the LM plays; choosing another opens its first card and default state and clears the results (they belong to the other). */
  get benchmark(): string {
    return this.#benchmark;
  }
  set benchmark(id: string) {
    if (id === this.#benchmark && this.cards.some((c) => c.id === this.cardId)) return;
    if (this.busy) throw new Error("LM lab: wait for the running job (or cancel it) before choosing another benchmark");
    const { lm } = labBenchmark(id);
    this.#benchmark = id;
    this.cardId = lm.cards[0].id;
    this.stateId = defaultState(id);
    this.compare = null;
    this.gamma = null;
    this.error = null;
    this.notice = null;
  }

  /** Cancels the running job (a load, a Direct-vs-VS run or a γ run). */
  cancel(): void {
    if (!this.#abort || this.#abort.signal.aborted) return;
    this.cancelling = true;
    this.#abort.abort();
  }

  /** Asks the host about this browser's WebGPU adapter once (for the device picker's note). */
  async checkWebGpu(): Promise<void> {
    this.gpuNote = (await this.host.webGpuNote?.().catch(() => null)) ?? null;
  }

  /** Drops every model (e.g. when the page's owner goes away). */
  dispose(): void {
    this.cancel();
    this.host.reset();
    this.#models = {};
    this.loaded = {};
  }

  #start(kind: JobKind, label: string, total: number): AbortSignal {
    const ac = new AbortController();
    this.#abort = ac;
    this.job = { kind, label, done: 0, total };
    this.error = null;
    this.notice = null;
    return ac.signal;
  }

  #step(label?: string): void {
    if (this.job) this.job = { ...this.job, done: this.job.done + 1, label: label ?? this.job.label };
  }

  #end(): void {
    this.job = null;
    this.#abort = null;
    this.cancelling = false;
  }

  /** Records a failure; a cancel is a notice, not an error. Returns the status a result gets. */
  #fail(e: unknown, job: JobKind, what: string): "cancelled" | "error" {
    const err = describeError(e);
    if (err.kind === "cancelled") {
      this.notice = { job, text: `${what} was cancelled.` };
      return "cancelled";
    }
    this.error = { ...err, job };
    return "error";
  }

  // ───────────────────────────────────────────────────────────────────────────────────────────
  // Loading

  /** Loads the picked models (an empty id skips that role; the instruct model is required). */
  async load(): Promise<boolean> {
    if (this.busy) return false;
    const source = this.source;
    const endpoint = source === "endpoint";
    const given = (r: ModelRole) => (endpoint && r !== "embedder" ? this.endpoints[r].model : this.ids[r]).trim() !== "";
    const roles = MODEL_ROLES.filter((r) => source === "tiny" || given(r));
    if (endpoint && (!this.host.connectEndpoint || this.endpoints.instruct.baseUrl.trim() === "")) {
      this.error = { kind: null, title: "No server", message: "Give the base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1.", job: "load" };
      return false;
    }
    if (endpoint && !roles.includes("instruct")) {
      this.error = { kind: null, title: "No simulator model", message: "Give the name of the instruct (chat) model as the server lists it.", job: "load" };
      return false;
    }
    if (!roles.includes("instruct")) {
      this.error = { kind: null, title: "No simulator model", message: "Give the id of an instruct (chat) model for the simulator.", job: "load" };
      return false;
    }
    if (source === "local" && this.localPath.trim() === "") {
      this.error = { kind: null, title: "No local folder", message: "Give the URL path of the model folder on this server, e.g. models/.", job: "load" };
      return false;
    }
    const signal = this.#start("load", "Loading models", roles.length);
    this.host.reset();
    this.#models = {};
    this.loaded = {};
    this.loadedSource = null;
    this.files = [];
    let current: ModelSource | null = null;
    try {
      const tiny = source === "tiny" ? await this.host.tinySources() : null;
      for (const role of roles) {
        if (signal.aborted) throw new LmCancelledError("loading");
        if (endpoint && role !== "embedder") {
          const spec = this.endpointSpec(role);
          current = { id: spec.model };
          this.job = { ...this.job!, label: `Connecting to ${spec.model} at ${spec.baseUrl}` };
          const m = await this.host.connectEndpoint!(spec, signal);
          this.#models[role] = m;
          this.loaded = { ...this.loaded, [role]: m.info };
          this.#step();
          continue;
        }
        // an endpoint's embedder comes from the hub
        const src: ModelSource = tiny ? tiny[role] : source === "local" ? { id: this.ids[role].trim(), localModelPath: this.localPath.trim() } : { id: this.ids[role].trim() };
        current = src;
        this.job = { ...this.job!, label: `Loading the ${ROLE_WORDS[role]} (${src.id})` };
        const call: LoadCall = { device: this.device, onProgress: (p) => this.#onProgress(role, p), signal };
        if (role === "embedder") {
          const m = await this.host.loadEmbeddingModel(src, call);
          this.#models.embedder = m;
          this.loaded = { ...this.loaded, embedder: m.info };
        } else {
          const m = await this.host.loadLanguageModel(src, call);
          this.#models[role] = m;
          this.loaded = { ...this.loaded, [role]: m.info };
        }
        this.#step();
      }
      this.loadedSource = source;
      if (endpoint) this.keyNote = null;
      const instruct = this.loaded.instruct;
      if (instruct && !instruct.hasChatTemplate)
        this.notice = { job: "load", text: `${instruct.id} has no chat template, so it cannot answer the chat prompts: pick an instruct model for the simulator.` };
      return true;
    } catch (e) {
      if (current && describeError(e).kind !== "cancelled") this.error = { ...describeLoadError(e, current), job: "load" };
      else this.#fail(e, "load", "Loading");
      if (describeError(e).kind === "cancelled") {
        this.host.reset();
        this.#models = {};
        this.loaded = {};
      }
      return false;
    } finally {
      this.#end();
    }
  }

  #onProgress(role: ModelRole, p: LoadProgress): void {
    if (p.kind !== "file") return;
    const i = this.files.findIndex((f) => f.model === p.model && f.file === p.file);
    const row: FileProgress = { role, model: p.model, file: p.file, loaded: p.loaded, total: p.total, done: p.status === "done" };
    this.files = i < 0 ? [...this.files, row] : this.files.with(i, { ...row, done: row.done || this.files[i].done });
  }

  // ───────────────────────────────────────────────────────────────────────────────────────────
  // Direct vs Verbalized Sampling

  /** N replies Direct (N samples) and VS (⌈N/k⌉ calls of k candidates, one selected per call), then the measures. */
  async runCompare(): Promise<CompareResult | null> {
    if (this.busy) return null;
    const lm = this.#models.instruct;
    if (!lm) {
      this.error = { kind: null, title: "No model loaded", message: "Load a simulator model first.", job: "compare" };
      return null;
    }
    if (this.settingsProblem) {
      this.error = { kind: null, title: "Check the settings", message: this.settingsProblem, job: "compare" };
      return null;
    }
    const embedder = this.#models.embedder;
    const labLm = this.lab.lm;
    const settings: CompareSettings = {
      benchmark: this.#benchmark,
      card: this.cards.find((c) => c.id === this.cardId)!.label,
      state: this.states.find((s) => s.id === this.stateId)!.label,
      instruct: lm.id,
      embedder: embedder?.id ?? null,
      n: this.n,
      k: this.k,
      selection: this.selection,
      tailThreshold: this.tailThreshold,
      temperature: this.temperature,
      maxNewTokens: this.maxNewTokens,
      seed: this.seed,
    };
    const { n, k, temperature, maxNewTokens, seed } = settings;
    const d = this.dialogue;
    const calls = Math.ceil(n / k);
    const signal = this.#start("compare", "Direct replies", n + calls + 1);
    const t0 = performance.now();
    const requests0 = lm.requestCount?.() ?? null;
    let result: CompareResult = { settings, direct: [], vs: [], measures: null, embeddingNote: null, requests: null, status: "running", seconds: null };
    this.compare = result;
    const update = (patch: Partial<CompareResult>) => (this.compare = result = { ...result, ...patch, requests: requests0 === null ? null : lm.requestCount!() - requests0 });
    const sampling = { temperature, maxNewTokens };
    // a model that reads act texts gets the dialogue itself (and VS from its :vs twin), not the prompts
    const bench = this.lab.bench;
    // an endpoint streams the batch in flight into `live` (the finished replies are the same as unstreamed: chatReplies)
    const control = (side: LiveBatch["side"], first: number, rows: number): GenerateControl => {
      if (!lm.info.endpoint) return { signal };
      this.live = { side, first, texts: Array.from({ length: rows }, () => "") };
      const onText = (i: number, text: string) => {
        if (this.live) this.live = { ...this.live, texts: this.live.texts.with(i, printable(text)) };
      };
      return { signal, onText };
    };
    const ask = (vsK: number | null, opts: GenerateOptions & { n: number; seed: number }, first: number) => {
      const ctl = control(vsK === null ? "direct" : "vs", first, opts.n);
      return lm.info.endpoint?.actTexts && lm.generateActs ? lm.generateActs(bench, d, vsK, opts, ctl) : lm.generate(vsK === null ? labLm.directPrompt(d) : labLm.vsPrompt(d, { k: vsK }), opts, ctl);
    };
    try {
      // Direct: n samples of the one-reply prompt
      for (let done = 0; done < n; done += BATCH) {
        if (signal.aborted) throw new LmCancelledError("generation");
        const rows = Math.min(BATCH, n - done);
        const gens = await ask(null, { ...sampling, n: rows, seed: seed + done }, done);
        this.live = null;
        update({ direct: [...result.direct, ...gens.map((g) => ({ text: g.text.trim(), tokens: g.tokens, outcome: labLm.parseOutcome(g.text) }))] });
        for (let i = 0; i < rows; i++) this.#step(i + 1 + done === n ? `VS calls (k = ${k})` : undefined);
      }
      // VS: ⌈n/k⌉ calls of k candidates; one candidate selected per call
      const rng = Rng.seed(seed);
      const vsOpts = { temperature, maxNewTokens: k * maxNewTokens + 16 * k + 16, seed: seed + 100_003 };
      for (let done = 0; done < calls; done += BATCH) {
        if (signal.aborted) throw new LmCancelledError("generation");
        const rows = Math.min(BATCH, calls - done);
        const gens = await ask(k, { ...vsOpts, n: rows, seed: vsOpts.seed + done }, done);
        this.live = null;
        const views = gens.map((g): VsCallView => {
          const parsed = parseVs(g.text, { k });
          const selected = parsed.candidates.length ? selectCandidate(parsed.candidates, settings.selection, rng, { tailThreshold: settings.tailThreshold }) : null;
          return {
            raw: g.text,
            format: parsed.format,
            warnings: parsed.warnings,
            candidates: parsed.candidates.map((c) => ({ ...c, outcome: labLm.parseOutcome(c.text) })),
            selected,
          };
        });
        update({ vs: [...result.vs, ...views] });
        for (let i = 0; i < rows; i++) this.#step(i + 1 + done === calls ? "Measures" : undefined);
      }
      // measures
      const directTexts = result.direct.map((r) => r.text);
      const vsAll = result.vs.flatMap((c) => c.candidates);
      const vsSel = result.vs.flatMap((c) => (c.selected === null ? [] : [c.candidates[c.selected]]));
      const groups = [directTexts, vsAll.map((c) => c.text), vsSel.map((c) => c.text)];
      const { values: emb, note } = await this.#embeddingDiversity(embedder, groups, signal);
      const measure = (label: string, texts: string[], outcomes: (number | null)[], embedding: number | null): MeasureSet => ({
        label,
        count: texts.length,
        uniqueShare: uniqueShare(texts),
        distinct: distinctScores(texts),
        embedding,
        outcomes: labLm.compareOutcomes(outcomes),
      });
      this.#step();
      update({
        measures: {
          direct: measure(
            "Direct",
            directTexts,
            result.direct.map((r) => r.outcome),
            emb[0],
          ),
          vsAll: measure(
            "VS, all candidates",
            groups[1],
            vsAll.map((c) => c.outcome),
            emb[1],
          ),
          vsSelected: measure(
            "VS, selected",
            groups[2],
            vsSel.map((c) => c.outcome),
            emb[2],
          ),
        },
        embeddingNote: note,
        status: "done",
        seconds: (performance.now() - t0) / 1000,
      });
    } catch (e) {
      update({ status: this.#fail(e, "compare", "The Direct vs VS run"), seconds: (performance.now() - t0) / 1000 });
    } finally {
      this.live = null;
      this.#end();
    }
    return result;
  }

  /** Embedding diversity of each group (one embed call for all texts); null where it cannot be computed, with why. */
  async #embeddingDiversity(embedder: LabEmbeddingModel | undefined, groups: string[][], signal: AbortSignal): Promise<{ values: (number | null)[]; note: string | null }> {
    const none = groups.map(() => null);
    if (!embedder) return { values: none, note: "no embedding model is loaded" };
    const texts = [...new Set(groups.flat())];
    if (texts.length === 0) return { values: none, note: "there are no replies to embed" };
    let vectors: Float32Array[];
    try {
      vectors = await embedder.embed(texts);
    } catch (e) {
      return { values: none, note: `the embedding model failed: ${describeError(e).message}` };
    }
    if (signal.aborted) throw new LmCancelledError("the measures");
    const byText = new Map(texts.map((t, i) => [t, vectors[i]]));
    const notes = new Set<string>();
    const values = groups.map((g) => {
      if (g.length < 2) {
        notes.add("it needs at least 2 replies");
        return null;
      }
      try {
        return embeddingDiversity(g.map((t) => byText.get(t)!));
      } catch (e) {
        notes.add((e as Error).message);
        return null;
      }
    });
    return { values, note: notes.size ? [...notes].join("; ") : null };
  }

  // ───────────────────────────────────────────────────────────────────────────────────────────
  // γ of the real LM

  /**
   * Samples replies from the instruct model (Direct prompt) and from the base model (the
   * third-person transcript) at temperature 1 — γ is about the models, not the sampler — scores
   * all of them exactly under the base model and fits γ (lm-gamma.ts: mle, nce, SCOPE's).
   * A reply is the first line of what a model wrote, as in a transcript.
   */
  async runGamma(): Promise<GammaResult | null> {
    if (this.busy) return null;
    const instruct = this.#models.instruct;
    const base = this.#models.base;
    if (!instruct || !base) {
      this.error = { kind: null, title: "Load both models", message: "γ needs the instruct model and its base model: load both (give a base model id).", job: "gamma" };
      return null;
    }
    if (this.settingsProblem) {
      this.error = { kind: null, title: "Check the settings", message: this.settingsProblem, job: "gamma" };
      return null;
    }
    const noLogprobs = gammaScoringProblem(base.info);
    if (noLogprobs) {
      this.error = { kind: null, title: "No log-probs", message: noLogprobs, job: "gamma" };
      return null;
    }
    const states = this.gammaAllStates ? this.states.map((s) => s.id) : [this.stateId];
    const benchmark = this.#benchmark;
    const labLm = this.lab.lm;
    const settings: GammaSettings = {
      benchmark,
      instruct: instruct.id,
      base: base.id,
      card: this.cards.find((c) => c.id === this.cardId)!.label,
      states,
      samples: this.gammaSamples,
      maxNewTokens: this.maxNewTokens,
      seed: this.seed,
    };
    const m = settings.samples;
    const signal = this.#start("gamma", "Sampling", states.length * 2 + 1);
    const t0 = performance.now();
    let result: GammaResult = { settings, report: null, dropped: 0, status: "running", seconds: null };
    this.gamma = result;
    const bench = this.lab.bench;
    const sample = async (lm: LabLanguageModel, prompt: LmPrompt, seed: number, d?: Dialogue) => {
      const out: string[] = [];
      for (let done = 0; done < m; done += BATCH) {
        if (signal.aborted) throw new LmCancelledError("generation");
        const opts = { temperature: 1, maxNewTokens: settings.maxNewTokens, n: Math.min(BATCH, m - done), seed: seed + done };
        // an act-text model (serve's simulators) answers the dialogue itself; its acts are scored as text under the base model
        const gens = d && lm.info.endpoint?.actTexts && lm.generateActs ? await lm.generateActs(bench, d, null, opts, { signal }) : await lm.generate(prompt, opts, { signal });
        out.push(...gens.map((g) => firstLine(g.text)));
      }
      return out;
    };
    try {
      const prompts: LmGammaPrompt[] = [];
      let dropped = 0;
      for (const [j, id] of states.entries()) {
        const d = labDialogue(this.cardId, id, benchmark);
        const label = this.states.find((s) => s.id === id)!.label;
        this.job = { ...this.job!, label: `Instruct replies, ${label}` };
        const replies = await sample(instruct, labLm.directPrompt(d), settings.seed + 1000 * j, d);
        this.#step(`Base replies, ${label}`);
        const baseSamples = await sample(base, labLm.baseTextPrompt(d), settings.seed + 1000 * j + 500);
        this.#step();
        const keep = (xs: string[]) => xs.filter((x) => x !== "");
        dropped += replies.length - keep(replies).length + baseSamples.length - keep(baseSamples).length;
        if (keep(replies).length) prompts.push({ prompt: labLm.baseTextPrompt(d), replies: keep(replies), baseSamples: keep(baseSamples) });
      }
      if (prompts.length === 0) throw new Error("every instruct reply was empty; nothing to fit γ on");
      this.job = { ...this.job!, label: `Scoring under ${base.id} and fitting γ` };
      const scorer: LanguageModel = { id: base.id, generate: (p, o) => base.generate(p, o, { signal }), score: (p, c) => base.score(p, c, { signal }) };
      const report = await lmGamma(prompts, scorer, { continuation: labLm.baseContinuation });
      this.#step();
      this.gamma = result = { ...result, report, dropped, status: "done", seconds: (performance.now() - t0) / 1000 };
    } catch (e) {
      this.gamma = result = { ...result, status: this.#fail(e, "gamma", "The γ run"), seconds: (performance.now() - t0) / 1000 };
    } finally {
      this.#end();
    }
    return result;
  }
}

/**
 * Why γ cannot be fitted under a base model, or null: it samples the base model's replies to a
 * text prompt and scores replies by their log-probabilities as continuations of that prompt, so an
 * endpoint base model needs /completions with prompt log-probs (echo, or vLLM's prompt_logprobs).
 */
export function gammaScoringProblem(info: LabModelInfo): string | null {
  const ep = info.endpoint;
  if (!ep) return null;
  const c = ep.capabilities;
  const needs = `γ needs the base model's log-probabilities of replies as text, and ${ep.model} at ${ep.baseUrl}`;
  if (ep.actTexts) return `${needs} reads act texts only and offers no /v1/completions. Serve the base model with vLLM (its /v1/completions gives prompt log-probs) and give it as the base model.`;
  if (!c.echoLogprobs && !c.promptLogprobs)
    return `${needs} gives no prompt log-probs on /v1/completions (neither echo with token offsets nor vLLM's prompt_logprobs), so γ is not computed rather than computed wrong. vLLM gives them.`;
  return null;
}

export const ROLE_WORDS: Record<ModelRole, string> = {
  instruct: "simulator (instruct model)",
  base: "base model (for γ)",
  embedder: "embedding model",
};
