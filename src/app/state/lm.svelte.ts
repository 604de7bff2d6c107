// The LM lab's state (docs/architecture.md#the-lm-tier, #the-app): which benchmark's user the LM
// plays (any whose module has an lm part, lib/lm-benchmarks.ts; everything benchmark-specific comes
// from that part), which models to load and from where, their load progress (per file and overall),
// Direct vs Verbalized Sampling replies of the instruct model at one persona card and dialogue state
// with their diversity and outcome numbers (src/lm/compare.ts), and γ of the instruct model against
// its base model (src/lm/gamma-run.ts). The models live in the LM worker behind an LmLabHost
// (lib/lm-contracts.ts); this class holds the settings, the job and the results, starts and cancels
// the procedures and shows their progress, so it runs unchanged on fake models in tests. One job
// at a time; every job can be cancelled. The "endpoint" source runs the same procedures on models
// behind an OpenAI-compatible server (src/remote/ through lib/lm-endpoint.ts); its API keys live in
// this object's memory only (lib/lm-keys.ts) — never in the URL, IndexedDB, a result or a message.
import type { DeviceRequest, LoadProgress, ModelSource } from "../../lm/backend";
import type { OutcomeComparison } from "../../benchmarks/types";
import { LmCancelledError } from "../../lm/errors";
import { DEFAULT_MODEL_IDS } from "../../lm/models";
import { isDefaultEmbedder } from "../../lm/offline-embedder";
import { printable } from "../../remote/printable";
import type { VsTextSelection } from "../../lm/vs-parse";
import {
  compareDirectVs,
  compareSteps,
  type CompareMeasures,
  type CompareProgress,
  type CompareSampling,
  type MeasureSet as MeasureSetOf,
  type ReplyView,
  type VsCallView,
} from "../../lm/compare";
import { gammaSteps, sampleAndFitGamma, type GammaProgress } from "../../lm/gamma-run";
import type { LmGammaReport } from "../../lm/lm-gamma";
import {
  DEFAULT_CARD,
  DEFAULT_STATE,
  LAB_BENCHMARK,
  defaultState,
  labBenchmark,
  labDialogue,
} from "../lib/lm-benchmarks";
import type {
  EndpointRole,
  EndpointSpec,
  LabEmbeddingModel,
  LabLanguageModel,
  LabModelInfo,
  LmLabHost,
  LoadCall,
  ModelRole,
} from "../lib/lm-contracts";
import { describeError, describeLoadError, type LabError } from "../lib/lm-errors";
import { droppedKeyNote, endpointSpecOf, keyIsStale, type TypedKey } from "../lib/lm-keys";

// ─────────────────────────────────────────────────────────────────────────────────────────────
// What can be picked

export const MODEL_ROLES: readonly ModelRole[] = ["instruct", "base", "embedder"];
export type SourceKind = "hub" | "local" | "tiny" | "endpoint";
export const DEVICES: readonly DeviceRequest[] = ["auto", "webgpu", "wasm"];

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

export type JobKind = "load" | "compare" | "gamma";

/** The batch of replies being written (streamed from an endpoint): which side, its first row's index, each reply's text so far (control characters removed). */
export interface LiveBatch {
  side: "direct" | "vs";
  first: number;
  texts: string[];
}

/** The measures of one set of replies, with the benchmark's outcomes. */
export type MeasureSet = MeasureSetOf<OutcomeComparison>;

export interface CompareSettings extends CompareSampling {
  benchmark: string; // its id
  card: string;
  state: string;
  instruct: string;
  embedder: string | null;
}

export interface CompareResult {
  settings: CompareSettings;
  direct: ReplyView[];
  vs: VsCallView[];
  /** Filled when both sides finished. */
  measures: CompareMeasures<OutcomeComparison> | null;
  /** HTTP requests the run sent, retries included (endpoint models only). */
  requests: number | null;
  /** Why embedding diversity is missing, when it is. */
  embeddingNote: string | null;
  /** VS calls were asked for the VS schema's JSON (a server that constrains its output). */
  constrained: boolean;
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

// ─────────────────────────────────────────────────────────────────────────────────────────────

export class LmLabState {
  // where the models come from
  source = $state<SourceKind>("hub");
  ids = $state<Record<ModelRole, string>>({ ...DEFAULT_MODEL_IDS });
  localPath = $state("models/");
  device = $state<DeviceRequest>("auto");
  /** Endpoint source: the simulator's server and model, and the base model's (an empty URL: the simulator's server). */
  endpoints = $state<Record<EndpointRole, { baseUrl: string; model: string }>>({
    instruct: { baseUrl: "http://127.0.0.1:8000/v1", model: "" },
    base: { baseUrl: "", model: "" },
  });
  /** Why a key was just dropped (its server's URL was changed), shown beside the key field. */
  keyNote = $state.raw<string | null>(null);
  // each key with the URL it was typed for: memory only, sent only there
  #keys = $state<Record<EndpointRole, TypedKey>>({
    instruct: { key: "", url: "" },
    base: { key: "", url: "" },
  });

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
  /** The app's own copy of the default embedder, loaded instead of the hub's (see LmLabHost.localEmbedder). */
  localEmbedder = $state.raw<ModelSource | null>(null);

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
  readonly prompts = $derived({
    direct: this.lab.lm.directPrompt(this.dialogue),
    vs: this.lab.lm.vsPrompt(this.dialogue, { k: this.#kShown }),
  });
  readonly vsCalls = $derived(
    Number.isInteger(this.n) && this.n >= 1 ? Math.ceil(this.n / this.#kShown) : 0,
  );
  /** Overall load progress over every file seen so far, in [0, 1]; null before sizes are known. */
  readonly overall = $derived.by(() => {
    const total = this.files.reduce((s, f) => s + f.total, 0);
    return total > 0
      ? Math.min(1, this.files.reduce((s, f) => s + Math.min(f.loaded, f.total), 0) / total)
      : null;
  });
  readonly settingsProblem = $derived.by(() => {
    const bad = (x: number, min: number, max: number, int = true) =>
      !(Number.isFinite(x) && x >= min && x <= max && (!int || Number.isInteger(x)));
    if (bad(this.n, 1, 200)) return "replies each way must be a whole number from 1 to 200";
    if (bad(this.k, 1, 20)) return "k must be a whole number from 1 to 20";
    if (bad(this.tailThreshold, 0, 1, false)) return "the tail threshold must lie in [0, 1]";
    if (bad(this.temperature, 0, 5, false)) return "the temperature must lie in [0, 5]";
    if (bad(this.maxNewTokens, 1, 512))
      return "max new tokens must be a whole number from 1 to 512";
    if (!Number.isInteger(this.seed)) return "the seed must be a whole number";
    if (bad(this.gammaSamples, 2, 100))
      return "γ samples per state must be a whole number from 2 to 100";
    return null;
  });

  #models: { instruct?: LabLanguageModel; base?: LabLanguageModel; embedder?: LabEmbeddingModel } =
    {};
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
    if (keyIsStale(this.#keys[role], url)) {
      this.#keys[role] = { key: "", url: "" };
      this.keyNote = droppedKeyNote(role);
    }
  }

  /** Where a role's model is, with the key typed for that very URL (the base model on the simulator's server shares its key). */
  endpointSpec(role: EndpointRole): EndpointSpec {
    return endpointSpecOf(role, this.endpoints, this.#keys);
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
    if (this.busy)
      throw new Error(
        "LM lab: wait for the running job (or cancel it) before choosing another benchmark",
      );
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

  /** Asks the host whether the app serves its own copy of the default embedder (for the model panel's note). */
  async checkLocalEmbedder(): Promise<void> {
    this.localEmbedder = (await this.host.localEmbedder?.().catch(() => null)) ?? null;
  }

  /** Where the embedder loads from: the app's own copy when the default is asked for and it is served. */
  async #embedderSource(picked: ModelSource): Promise<ModelSource> {
    if (!isDefaultEmbedder(picked.id)) return picked;
    await this.checkLocalEmbedder();
    return this.localEmbedder ?? picked;
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

  #step(): void {
    if (this.job) this.job = { ...this.job, done: this.job.done + 1 };
  }

  #label(label: string): void {
    if (this.job) this.job = { ...this.job, label };
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
    const given = (r: ModelRole) =>
      (endpoint && r !== "embedder" ? this.endpoints[r].model : this.ids[r]).trim() !== "";
    const roles = MODEL_ROLES.filter((r) => source === "tiny" || given(r));
    if (endpoint && (!this.host.connectEndpoint || this.endpoints.instruct.baseUrl.trim() === "")) {
      this.error = {
        kind: null,
        title: "No server",
        message: "Give the base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1.",
        job: "load",
      };
      return false;
    }
    if (endpoint && !roles.includes("instruct")) {
      this.error = {
        kind: null,
        title: "No simulator model",
        message: "Give the name of the instruct (chat) model as the server lists it.",
        job: "load",
      };
      return false;
    }
    if (!roles.includes("instruct")) {
      this.error = {
        kind: null,
        title: "No simulator model",
        message: "Give the id of an instruct (chat) model for the simulator.",
        job: "load",
      };
      return false;
    }
    if (source === "local" && this.localPath.trim() === "") {
      this.error = {
        kind: null,
        title: "No local folder",
        message: "Give the URL path of the model folder on this server, e.g. models/.",
        job: "load",
      };
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
          this.#label(`Connecting to ${spec.model} at ${spec.baseUrl}`);
          const m = await this.host.connectEndpoint!(spec, signal);
          this.#models[role] = m;
          this.loaded = { ...this.loaded, [role]: m.info };
          this.#step();
          continue;
        }
        // an endpoint's embedder comes from the hub; the default one from the app's copy where it serves one
        const picked: ModelSource = tiny
          ? tiny[role]
          : source === "local"
            ? { id: this.ids[role].trim(), localModelPath: this.localPath.trim() }
            : { id: this.ids[role].trim() };
        const src = !tiny && role === "embedder" ? await this.#embedderSource(picked) : picked;
        current = src;
        this.#label(`Loading the ${ROLE_WORDS[role]} (${src.id})`);
        const call: LoadCall = {
          device: this.device,
          onProgress: (p) => this.#onProgress(role, p),
          signal,
        };
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
        this.notice = {
          job: "load",
          text: `${instruct.id} has no chat template, so it cannot answer the chat prompts: pick an instruct model for the simulator.`,
        };
      return true;
    } catch (e) {
      if (current && describeError(e).kind !== "cancelled")
        this.error = { ...describeLoadError(e, current), job: "load" };
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
    const row: FileProgress = {
      role,
      model: p.model,
      file: p.file,
      loaded: p.loaded,
      total: p.total,
      done: p.status === "done",
    };
    this.files =
      i < 0
        ? [...this.files, row]
        : this.files.with(i, { ...row, done: row.done || this.files[i].done });
  }

  // ───────────────────────────────────────────────────────────────────────────────────────────
  // Direct vs Verbalized Sampling

  /** N replies Direct (N samples) and VS (⌈N/k⌉ calls of k candidates, one selected per call), then the measures. */
  async runCompare(): Promise<CompareResult | null> {
    if (this.busy) return null;
    const lm = this.#models.instruct;
    if (!lm) {
      this.error = {
        kind: null,
        title: "No model loaded",
        message: "Load a simulator model first.",
        job: "compare",
      };
      return null;
    }
    if (this.settingsProblem) {
      this.error = {
        kind: null,
        title: "Check the settings",
        message: this.settingsProblem,
        job: "compare",
      };
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
    const d = this.dialogue;
    const bench = this.lab.bench;
    const signal = this.#start("compare", "Direct replies", compareSteps(settings.n, settings.k));
    const t0 = performance.now();
    const requests0 = lm.requestCount?.() ?? null;
    let result: CompareResult = {
      settings,
      direct: [],
      vs: [],
      measures: null,
      embeddingNote: null,
      constrained: false,
      requests: null,
      status: "running",
      seconds: null,
    };
    this.compare = result;
    const update = (patch: Partial<CompareResult>) =>
      (this.compare = result =
        {
          ...result,
          ...patch,
          requests: requests0 === null ? null : lm.requestCount!() - requests0,
        });
    const phases = {
      direct: "Direct replies",
      vs: `VS calls (k = ${settings.k})`,
      measures: "Measures",
    };
    const onProgress = (p: CompareProgress) => {
      switch (p.kind) {
        case "phase":
          return this.#label(phases[p.phase]);
        case "batch":
          this.live = {
            side: p.side,
            first: p.first,
            texts: Array.from({ length: p.rows }, () => ""),
          };
          return;
        case "text":
          if (this.live)
            this.live = { ...this.live, texts: this.live.texts.with(p.row, printable(p.text)) };
          return;
        case "replies":
          this.live = null;
          update({ direct: p.direct, vs: p.vs });
          return;
        case "step":
          return this.#step();
        default:
          p satisfies never;
      }
    };
    try {
      const done = await compareDirectVs({
        lm,
        prompts: {
          direct: labLm.directPrompt(d),
          vs: (k) => labLm.vsPrompt(d, { k }),
          parseOutcome: (t) => labLm.parseOutcome(t),
          compareOutcomes: (v) => labLm.compareOutcomes(v),
        },
        // a model that reads act texts gets the dialogue itself (and VS from its :vs twin), not the prompts
        actReplies:
          lm.info.endpoint?.actTexts && lm.generateActs
            ? (vsK, opts, ctl) => lm.generateActs!(bench, d, vsK, opts, ctl)
            : undefined,
        embedder,
        sampling: settings,
        // an endpoint streams the batch in flight into `live` (the finished replies are the same as unstreamed: chatReplies)
        stream: !!lm.info.endpoint,
        signal,
        onProgress,
        errorMessage: (e) => describeError(e).message,
      });
      update({ ...done, status: "done", seconds: (performance.now() - t0) / 1000 });
    } catch (e) {
      update({
        status: this.#fail(e, "compare", "The Direct vs VS run"),
        seconds: (performance.now() - t0) / 1000,
      });
    } finally {
      this.live = null;
      this.#end();
    }
    return result;
  }

  // ───────────────────────────────────────────────────────────────────────────────────────────
  // γ of the real LM

  /** Samples replies from the instruct model and its base model at every picked state and fits γ (src/lm/gamma-run.ts). */
  async runGamma(): Promise<GammaResult | null> {
    if (this.busy) return null;
    const instruct = this.#models.instruct;
    const base = this.#models.base;
    if (!instruct || !base) {
      this.error = {
        kind: null,
        title: "Load both models",
        message: "γ needs the instruct model and its base model: load both (give a base model id).",
        job: "gamma",
      };
      return null;
    }
    if (this.settingsProblem) {
      this.error = {
        kind: null,
        title: "Check the settings",
        message: this.settingsProblem,
        job: "gamma",
      };
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
    const signal = this.#start("gamma", "Sampling", gammaSteps(states.length));
    const t0 = performance.now();
    let result: GammaResult = {
      settings,
      report: null,
      dropped: 0,
      status: "running",
      seconds: null,
    };
    this.gamma = result;
    const bench = this.lab.bench;
    const labels = states.map((id) => this.states.find((s) => s.id === id)!.label);
    const onProgress = (p: GammaProgress) => {
      if (p.kind === "step") this.#step();
      else if (p.phase === "fit") this.#label(`Scoring under ${base.id} and fitting γ`);
      else
        this.#label(`${p.phase === "instruct" ? "Instruct" : "Base"} replies, ${labels[p.state]}`);
    };
    // an act-text model (serve's simulators) answers the dialogue itself; its acts are scored as text under the base model
    const actTexts = instruct.info.endpoint?.actTexts && instruct.generateActs;
    try {
      const { report, dropped } = await sampleAndFitGamma({
        instruct,
        base,
        states: states.map((id) => {
          const d = labDialogue(this.cardId, id, benchmark);
          return {
            direct: labLm.directPrompt(d),
            baseText: labLm.baseTextPrompt(d),
            actReplies: actTexts
              ? (opts, ctl) => instruct.generateActs!(bench, d, null, opts, ctl)
              : undefined,
          };
        }),
        continuation: labLm.baseContinuation,
        samples: settings.samples,
        maxNewTokens: settings.maxNewTokens,
        seed: settings.seed,
        signal,
        onProgress,
      });
      this.gamma = result = {
        ...result,
        report,
        dropped,
        status: "done",
        seconds: (performance.now() - t0) / 1000,
      };
    } catch (e) {
      this.gamma = result = {
        ...result,
        status: this.#fail(e, "gamma", "The γ run"),
        seconds: (performance.now() - t0) / 1000,
      };
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
  if (ep.actTexts)
    return `${needs} reads act texts only and offers no /v1/completions. Serve the base model with vLLM (its /v1/completions gives prompt log-probs) and give it as the base model.`;
  if (!c.echoLogprobs && !c.promptLogprobs)
    return `${needs} gives no prompt log-probs on /v1/completions (neither echo with token offsets nor vLLM's prompt_logprobs), so γ is not computed rather than computed wrong. vLLM gives them.`;
  return null;
}

export const ROLE_WORDS: Record<ModelRole, string> = {
  instruct: "simulator (instruct model)",
  base: "base model (for γ)",
  embedder: "embedding model",
};
