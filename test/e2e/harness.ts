// Shared by the end-to-end tests: a production build of the app served by Vite's preview server
// on 127.0.0.1, and the system's headless Chromium with WebGPU on SwiftShader (found by
// scripts/chromium.mjs: $CHROME_PATH, the standard locations, Playwright's).
import { chromium, type BrowserContext } from "playwright";
import { build, preview, type PreviewServer } from "vite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { CHROMIUM_ARGS, findChromium, INSTALL_HINT } from "../../scripts/chromium.mjs";

const found = await findChromium();
if (!found) throw new Error(INSTALL_HINT);
export const CHROMIUM = found;
export { CHROMIUM_ARGS };

type LaunchOptions = NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>;

/**
 * How long a navigation, or a wait on the page, may take. The app measures WebGPU against wasm
 * while idle; on a software adapter (SwiftShader) that takes the CPU, and a navigation or reload
 * that leaves a page mid-measurement waits for it: seconds, or tens of seconds on a busy two-core
 * machine, beyond Playwright's default 30 s.
 */
export const SLOW_PAGE_MS = 120_000;

/** The system's Chromium with its own profile in `dir` (its IndexedDB and storage), navigations allowed SLOW_PAGE_MS. */
export async function launchProfile(
  dir: string,
  options: Omit<LaunchOptions, "executablePath" | "headless" | "args"> = {},
): Promise<BrowserContext> {
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    // the built app's service worker precaches tens of MB in the background; only the offline
    // tests, which are about it, let it in
    serviceWorkers: "block",
    ...options,
  });
  context.setDefaultNavigationTimeout(SLOW_PAGE_MS);
  return context;
}

/**
 * Builds the app into a fresh temporary folder and serves it; returns the server, its URL, the
 * folder (a build is 30–50 MB; callers may keep a browser profile or downloads there too) and
 * `cleanup()`, which closes the server and removes the folder: call it last, after the browser
 * that uses a profile there is closed (safe to call twice, or after server.close()).
 */
export async function serveBuild(
  prefix: string,
): Promise<{ server: PreviewServer; base: string; tmp: string; cleanup: () => Promise<void> }> {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(tmp, { recursive: true, force: true });
  try {
    const outDir = join(tmp, "dist");
    await build({ logLevel: "warn", build: { outDir, emptyOutDir: true } });
    const server = await preview({
      logLevel: "warn",
      preview: { host: "127.0.0.1", port: 0, strictPort: false },
      build: { outDir },
    });
    let closed: Promise<void> | null = null;
    const cleanup = () => (closed ??= server.close().finally(remove));
    return { server, base: server.resolvedUrls!.local[0], tmp, cleanup };
  } catch (e) {
    remove(); // a failed build leaves nothing behind
    throw e;
  }
}
