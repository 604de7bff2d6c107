// The contract between the LM lab (state/lm.svelte.ts) and the places its models run: the LM
// worker (lm-host.ts), an OpenAI-compatible server (lm-endpoint.ts) and the fakes of the tests.
// Types only, so that each side imports this file and neither imports the other.
import type {
  Device,
  DeviceRequest,
  LoadProgress,
  LoadedInfo,
  ModelSource,
} from "../../lm/backend";
import type { ControlledLanguageModel, GenerateControl } from "../../lm/sampling";
import type { EmbeddingModel, GenerateOptions, Generation } from "../../lm/types";
import type { Capabilities } from "../../remote/client";
import type { Benchmark, Dialogue } from "../../benchmarks/types";

export type ModelRole = "instruct" | "base" | "embedder";
/** The roles an endpoint can fill (the embedder comes from the hub). */
export type EndpointRole = "instruct" | "base";

/** Where an endpoint model is, as the lab asks for it. */
export interface EndpointSpec {
  baseUrl: string;
  model: string;
  /** Sent as a bearer token to `baseUrl` only; undefined for a server without auth. */
  apiKey?: string;
}

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

/** A loaded causal LM; its calls take a cancel signal, and `onText` where replies stream. */
export interface LabLanguageModel extends ControlledLanguageModel {
  readonly info: LabModelInfo;
  /** For a model that reads act texts: replies to the dialogue itself (Direct, or VS with `vsK` candidates). */
  generateActs?(
    bench: Benchmark,
    d: Dialogue,
    vsK: number | null,
    opts?: GenerateOptions,
    control?: GenerateControl,
  ): Promise<Generation[]>;
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
  /** The app's own copy of the default embedder (lm/offline-embedder.ts) where it is served, else null. */
  localEmbedder?(): Promise<ModelSource | null>;
}
