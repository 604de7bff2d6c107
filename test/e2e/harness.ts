// Shared by the end-to-end tests: a production build of the app served by Vite's preview server
// on 127.0.0.1, and the system's headless Chromium with WebGPU on SwiftShader.
import { build, preview, type PreviewServer } from "vite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/lib/chromium/chromium";
export const CHROMIUM_ARGS = ["--enable-unsafe-webgpu", "--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"];

/** Builds the app into a fresh temporary folder and serves it; returns the server, its URL and the folder. */
export async function serveBuild(prefix: string): Promise<{ server: PreviewServer; base: string; tmp: string }> {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const outDir = join(tmp, "dist");
  await build({ logLevel: "warn", build: { outDir, emptyOutDir: true } });
  const server = await preview({ logLevel: "warn", preview: { host: "127.0.0.1", port: 0, strictPort: false }, build: { outDir } });
  return { server, base: server.resolvedUrls!.local[0], tmp };
}
