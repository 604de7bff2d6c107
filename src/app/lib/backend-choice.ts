// Backend `auto` (docs/architecture.md#the-app): where requestAdapter() gives a WebGPU adapter, time WebGPU against
// wasm on this device for the experiment's model size (a short micro-benchmark in two workers,
// cached per device and size) and use the faster; otherwise wasm, with the reason shown.
// A run never waits for the measurement: the page measures while it is idle, and a run that
// starts before there is a measurement goes on wasm and says so.
import { detectWebGPU, type AdapterInfo } from "../../engine/backends";
import type { ModelConfig } from "../../engine/config";
import type { MicroBenchmark } from "../../engine/micro-benchmark";
import type { BackendChoice } from "./url-state";
import { spawnExperimentWorker } from "./web-executor";

export interface BackendDecision {
  requested: BackendChoice;
  name: "webgpu" | "wasm";
  /** Why this backend, in one sentence for the UI. */
  reason: string;
  /** Shown prominently: WebGPU was wanted but is not available. */
  notice?: string;
  adapter?: AdapterInfo;
  /** ms per step on each backend, when measured. */
  measured?: { webgpu: number; wasm: number; cached: boolean };
}

const CACHE_PREFIX = "collapse-lab:backend-bench:v1:";

async function measure(
  backend: "webgpu" | "wasm",
  config: ModelConfig,
  rows: number,
): Promise<MicroBenchmark> {
  const { api, terminate } = spawnExperimentWorker();
  try {
    const info = await api.init(backend);
    if (info.name !== backend)
      throw new Error(info.fallbackReason ?? `${backend} is not available`);
    return await api.benchmark(config, rows);
  } finally {
    terminate();
  }
}

export interface DecideOptions {
  /** Measure when nothing is cached (default true); false answers at once: wasm until measured. */
  measure?: boolean;
  /** Asked after measuring: false when the measurement may be skewed (a run shared the CPU) and must not be kept. */
  valid?: () => boolean;
  storage?: Storage;
}

export async function decideBackend(
  requested: BackendChoice,
  config: ModelConfig,
  rows: number,
  options: DecideOptions = {},
): Promise<BackendDecision> {
  const {
    measure: measureNow = true,
    valid = () => true,
    storage = globalThis.localStorage,
  } = options;
  if (requested === "wasm") return { requested, name: "wasm", reason: "wasm was chosen" };
  const found = await detectWebGPU();
  if (!("adapter" in found)) {
    return {
      requested,
      name: "wasm",
      reason: `running on wasm: ${found.reason}`,
      notice: `No WebGPU here (${found.reason}); running on wasm.`,
    };
  }
  const adapter = found.adapter;
  if (requested === "webgpu")
    return { requested, name: "webgpu", reason: "WebGPU was chosen", adapter };

  const key = `${CACHE_PREFIX}${adapter.vendor}/${adapter.architecture}/${adapter.isFallbackAdapter}/${JSON.stringify(config)}/${rows}`;
  let measured: BackendDecision["measured"];
  try {
    const hit = storage?.getItem(key);
    if (hit) measured = { ...(JSON.parse(hit) as { webgpu: number; wasm: number }), cached: true };
  } catch {
    // a corrupt cache entry is measured again
  }
  if (!measured && !measureNow) {
    return {
      requested,
      name: "wasm",
      adapter,
      reason:
        "running on wasm for now: WebGPU has not been measured against wasm on this device yet (that happens while the page is idle; later runs use the faster)",
    };
  }
  if (!measured) {
    try {
      const wasm = await measureSpeed(config, rows, storage); // the page's speed estimate has usually measured it already
      const webgpu = await measure("webgpu", config, rows);
      measured = { webgpu: webgpu.msPerStep, wasm, cached: false };
      if (valid())
        storage?.setItem(key, JSON.stringify({ webgpu: measured.webgpu, wasm: measured.wasm }));
    } catch (e) {
      return {
        requested,
        name: "wasm",
        adapter,
        reason: `running on wasm: WebGPU failed while measuring (${(e as Error).message})`,
        notice: `WebGPU failed here (${(e as Error).message}); running on wasm.`,
      };
    }
  }
  const gpu = measured.webgpu < measured.wasm;
  const ratio = gpu ? measured.wasm / measured.webgpu : measured.webgpu / measured.wasm;
  const what = adapter.isFallbackAdapter
    ? "a software WebGPU adapter"
    : `WebGPU (${adapter.vendor || "unknown vendor"})`;
  return {
    requested,
    name: gpu ? "webgpu" : "wasm",
    adapter,
    measured,
    reason: `${gpu ? "WebGPU" : "wasm"} measured ${ratio.toFixed(1)}× faster than ${gpu ? "wasm" : what} for this model size${measured.cached ? " (measured earlier on this device)" : ""}`,
  };
}

const SPEED_PREFIX = "collapse-lab:speed:v1:";

/** ms per micro-benchmark step on wasm for this model size, measured once per device in a worker and kept in storage. */
export async function measureSpeed(
  config: ModelConfig,
  rows: number,
  storage: Storage | undefined = globalThis.localStorage,
): Promise<number> {
  const key = `${SPEED_PREFIX}${JSON.stringify(config)}/${rows}`;
  try {
    const hit = Number(storage?.getItem(key));
    if (hit > 0) return hit;
  } catch {
    // unreadable storage: measure again
  }
  const { msPerStep } = await measure("wasm", config, rows);
  try {
    storage?.setItem(key, String(msPerStep));
  } catch {
    // storage full or refused: the measurement still counts for this page
  }
  return msPerStep;
}
