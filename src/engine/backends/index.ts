// Choosing and starting a backend. WebGPU is detected with requestAdapter() (navigator.gpu
// alone is not enough: headless or blocklisted browsers expose it and return no adapter) and
// falls back to wasm with a reason the UI can show. jax-js is imported lazily so that the
// float64 reference runs without it.
import type { BackendName, EngineBackend } from "../backend";
import { Float64Backend } from "./float64";

export type BackendRequest = BackendName;

export interface AdapterInfo {
  vendor: string;
  architecture: string;
  isFallbackAdapter: boolean;
}

export interface BackendInfo {
  requested: BackendRequest;
  name: BackendName; // what actually runs
  fallbackReason?: string; // why `name` differs from `requested`
  adapter?: AdapterInfo;
}

/** Asks for a WebGPU adapter; returns it or the reason there is none. */
export async function detectWebGPU(): Promise<{ adapter: AdapterInfo } | { reason: string }> {
  const gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) return { reason: "this environment has no WebGPU (navigator.gpu is missing)" };
  try {
    const adapter = await gpu.requestAdapter();
    if (!adapter) return { reason: "WebGPU is present but requestAdapter() returned no adapter" };
    const i = adapter.info;
    return {
      adapter: {
        vendor: i?.vendor ?? "",
        architecture: i?.architecture ?? "",
        isFallbackAdapter: !!(i as { isFallbackAdapter?: boolean })?.isFallbackAdapter,
      },
    };
  } catch (e) {
    return { reason: `requestAdapter() failed: ${(e as Error).message}` };
  }
}

/** Starts the requested backend, falling back from webgpu to wasm with a stated reason; on
 * webgpu it also returns the GPUDevice, so that its caller can watch it for loss. */
export async function createBackend(
  requested: BackendRequest,
): Promise<{ backend: EngineBackend; info: BackendInfo; gpuDevice?: GPUDevice }> {
  switch (requested) {
    case "float64":
      return { backend: new Float64Backend(), info: { requested, name: "float64" } };
    case "wasm": {
      const { JaxBackend } = await import("./jax");
      return { backend: await JaxBackend.create("wasm"), info: { requested, name: "wasm" } };
    }
    case "webgpu": {
      const found = await detectWebGPU();
      const { JaxBackend } = await import("./jax");
      if ("adapter" in found) {
        try {
          const backend = await JaxBackend.create("webgpu");
          return {
            backend,
            info: { requested, name: "webgpu", adapter: found.adapter },
            gpuDevice: backend.gpuDevice(),
          };
        } catch (e) {
          return {
            backend: await JaxBackend.create("wasm"),
            info: {
              requested,
              name: "wasm",
              fallbackReason: (e as Error).message,
              adapter: found.adapter,
            },
          };
        }
      }
      return {
        backend: await JaxBackend.create("wasm"),
        info: { requested, name: "wasm", fallbackReason: found.reason },
      };
    }
    default:
      requested satisfies never;
      throw new Error(`unknown backend "${requested as string}": expected webgpu, wasm or float64`);
  }
}
