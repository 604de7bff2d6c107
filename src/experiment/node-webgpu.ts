// WebGPU in Node: Dawn (the `webgpu` package) installed as `navigator.gpu`, so that jax-js's
// webgpu device starts in a Node process or worker_thread as it does in a browser. Node-only:
// the CLI and its worker threads import this file, the browser app never does. Dawn is an
// optional dependency (a large native addon only `--backend webgpu` needs): loaded on first use.
import { existsSync } from "node:fs";
import type { BackendName } from "../engine/backend";
import {
  createBackend,
  detectWebGPU,
  type AdapterInfo,
  type BackendInfo,
} from "../engine/backends";
import type { EngineBackend } from "../engine/backend";

/** Chromium's Vulkan ICD for SwiftShader, a CPU implementation of Vulkan (Debian package chromium). */
export const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";

// Dawn's own flags, e.g. `backend=vulkan` or `adapter=<name>`: none. Dawn then picks the
// platform's native API (Vulkan on Linux, Metal on macOS, D3D12 on Windows) and the adapter
// that requestAdapter({powerPreference}) asks for; validation stays at its default and no
// unsafe APIs are allowed.
const DAWN_FLAGS: string[] = [];

/** WebGPU could not start in this Node process; the message says why and what to try. */
export class NodeWebGPUError extends Error {
  override name = "NodeWebGPUError";
}

let installed: Promise<void> | undefined;

/**
 * Puts Dawn's WebGPU globals (GPUBufferUsage, …) and a `navigator.gpu` into this thread's
 * globals, where there is no `navigator.gpu` yet. Idempotent; call it before jax-js starts its
 * webgpu device. Dawn is loaded here, not at import, so wasm runs never load the native addon.
 */
export function installDawn(): Promise<void> {
  installed ??= (async () => {
    const g = globalThis as { navigator?: Partial<Navigator> };
    if (g.navigator?.gpu) return;
    let dawn: typeof import("webgpu");
    try {
      dawn = await import("webgpu");
    } catch (e) {
      throw new NodeWebGPUError(dawnLoadMessage(e));
    }
    Object.assign(globalThis, dawn.globals);
    const gpu = dawn.create(DAWN_FLAGS);
    // Node 20 has no navigator; jax-js's WebGPU code also reads navigator.userAgent
    if (!g.navigator)
      Object.defineProperty(globalThis, "navigator", {
        value: { userAgent: `Node.js/${process.versions.node}`, gpu },
        configurable: true,
        writable: true,
      });
    else
      Object.defineProperty(g.navigator, "gpu", { value: gpu, configurable: true, writable: true });
  })();
  return installed;
}

/** Why the webgpu package (Dawn) did not load: not installed (an optional dependency), or its native addon failed. */
export function dawnLoadMessage(e: unknown): string {
  const { code, message } = e as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(e);
  if (code === "ERR_MODULE_NOT_FOUND" && /\bpackage 'webgpu'/.test(text))
    return "WebGPU in Node needs the webgpu package (Dawn), an optional dependency that is not installed (npm ci --omit=optional, or a platform npm skipped): install it with `npm install --include=optional`, or use --backend wasm";
  return `WebGPU in Node: the webgpu package (Dawn) did not load on ${process.platform}-${process.arch}: ${text}`;
}

/** Why Dawn found no adapter, with what to do about it on this machine. */
export function noAdapterMessage(
  reason: string,
  env: NodeJS.ProcessEnv = process.env,
  swiftShaderICD = SWIFTSHADER_ICD,
): string {
  const head = `WebGPU in Node (Dawn) could not start: ${reason}`;
  if (process.platform !== "linux") return head;
  const icd = env.VK_ICD_FILENAMES;
  const where = !icd
    ? "VK_ICD_FILENAMES is unset, so Vulkan looked for this machine's GPU drivers (Dawn does not accept Mesa's lavapipe)"
    : existsSync(icd)
      ? `VK_ICD_FILENAMES=${icd}`
      : `VK_ICD_FILENAMES=${icd} is a file that does not exist`;
  const hint = existsSync(swiftShaderICD)
    ? `for a test without a GPU, point Vulkan at SwiftShader: VK_ICD_FILENAMES=${swiftShaderICD}`
    : `for a test without a GPU, install Debian's chromium package and set VK_ICD_FILENAMES=${swiftShaderICD} (Chromium's SwiftShader)`;
  return `${head}; ${where}. It needs a GPU with Vulkan drivers and the Vulkan loader (libvulkan1); ${hint}`;
}

/** Installs Dawn and asks it for an adapter; throws NodeWebGPUError when there is none. */
export async function startNodeWebGPU(): Promise<AdapterInfo> {
  await installDawn();
  const found = await detectWebGPU();
  if ("reason" in found) throw new NodeWebGPUError(noAdapterMessage(found.reason));
  return found.adapter;
}

/**
 * createBackend for Node entry points: `webgpu` runs on Dawn, and never falls back to wasm
 * (a run's report would then carry wasm's numbers under a webgpu label): it throws instead.
 */
export async function createNodeBackend(
  requested: BackendName,
): Promise<{ backend: EngineBackend; info: BackendInfo }> {
  if (requested === "webgpu") await startNodeWebGPU();
  const started = await createBackend(requested);
  if (started.info.name !== requested)
    throw new NodeWebGPUError(
      `the ${requested} backend did not start in Node: ${started.info.fallbackReason ?? "no reason given"}`,
    );
  return started;
}
