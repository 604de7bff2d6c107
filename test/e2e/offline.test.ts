// The built app with the network off (scripts/service-worker.mjs), in headless Chromium: a
// production build served by Vite's preview server on 127.0.0.1, at the root and in a sub-folder,
// is visited once; when the service worker is active and its precache filled (the app says it is
// saved for offline use), the server is shut down and the browser context set offline. After a
// reload the Experiment page shows the recorded run and its figures, pages visited before work, the
// LM lab loads its sentence embedder from the app's own copy (scripts/offline-embedder.sh; that
// part is left out without the copy, unless COLLAPSE_LAB_REQUIRE_EMBEDDER=1 makes it a failure)
// and a quick live run starts from stored models.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright";
import { build, preview, type PreviewServer } from "vite";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchProfile, SLOW_PAGE_MS } from "./harness";
import { makeTinyGpt2, TINY_LM } from "../../src/lm/tiny";
import { writeHfFolder } from "../../src/lm/tiny/write-files";
import { OFFLINE_EMBEDDER_ID } from "../../src/lm/offline-embedder";
import { localEmbedderSource } from "../../src/lm/node-embedder";

const HAVE_EMBEDDER = localEmbedderSource() !== null;
if (!HAVE_EMBEDDER) {
  if (process.env.COLLAPSE_LAB_REQUIRE_EMBEDDER === "1")
    throw new Error(
      "the offline embedder is not in public/models/ (COLLAPSE_LAB_REQUIRE_EMBEDDER=1): run bash scripts/offline-embedder.sh",
    );
  console.warn(
    "the offline embedder is not in public/models/: the LM lab is left out of the offline test (bash scripts/offline-embedder.sh installs it)",
  );
}

const SHOTS = process.env.OFFLINE_SHOTS; // a folder: a screenshot of the offline app is written there

let tmp: string;
let outDir: string;
/** The precache manifest's URLs, read from the built sw.js. */
let precached: string[];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "collapse-lab-offline-"));
  outDir = join(tmp, "dist");
  await build({ logLevel: "warn", build: { outDir, emptyOutDir: true } });
  // the LM lab's simulator for the offline load: the tiny test LM, in a folder beside the app
  await writeHfFolder(join(outDir, "models", TINY_LM), makeTinyGpt2({ context: 2048 }).files);
  precached = [...readFileSync(join(outDir, "sw.js"), "utf8").matchAll(/url:"([^"]+)"/g)].map(
    (m) => m[1],
  );
}, 300_000); // a production build: tens of seconds alone, minutes on a busy machine

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Serves the build at `path` on 127.0.0.1 (a fresh port). */
async function serve(path: string): Promise<{ server: PreviewServer; url: string }> {
  const server = await preview({
    logLevel: "warn",
    base: path,
    preview: { host: "127.0.0.1", port: 0, strictPort: false },
    build: { outDir },
  });
  return { server, url: server.resolvedUrls!.local[0] };
}

/** A fresh browser profile on a fresh page that records console errors. */
async function browse(
  name: string,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await launchProfile(join(tmp, name), { serviceWorkers: "allow" });
  // the page measures WebGPU against wasm while idle; on SwiftShader that can hold its frames for long
  context.setDefaultTimeout(SLOW_PAGE_MS);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  return { context, page, errors };
}

/** Waits until the service worker controls the page and the app says it is saved for offline use; returns the precache's URLs. */
async function savedForOffline(page: Page): Promise<string[]> {
  await page.getByTestId("offline-ready").waitFor({ timeout: SLOW_PAGE_MS });
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  return page.evaluate(async () => {
    const name = (await caches.keys()).find((k) => k.startsWith("workbox-precache"));
    if (!name) return [];
    const keys = await (await caches.open(name)).keys();
    return keys.map((r) => new URL(r.url).pathname);
  });
}

/** Shuts the server down and sets the browser offline: every request now fails unless the service worker answers it. */
async function goOffline(context: BrowserContext, server: PreviewServer): Promise<void> {
  await server.close();
  await context.setOffline(true);
}

/** The Experiment page shows the recorded run of persuasion-paper: its story, curves and table. */
async function showsRecording(page: Page): Promise<void> {
  await page.getByTestId("story").waitFor({ timeout: SLOW_PAGE_MS });
  await page.getByTestId("figure-curves").locator("svg").first().waitFor();
  await page.getByTestId("results-table").waitFor();
  expect(await page.getByTestId("figure-curves").locator("svg").count()).toBeGreaterThan(0);
  expect(await page.getByText(/could not be loaded/).count()).toBe(0);
}

/**
 * In the LM lab: loads the tiny test LM and the default embedder from models/ beside the app (the
 * embedder from the app's own copy), then runs Direct vs VS, whose embedding diversity needs it.
 */
async function lmLabWithOwnEmbedder(page: Page, url: string, compare: boolean): Promise<void> {
  await page.goto(new URL("./#lm", url).href);
  await page.getByTestId("local-embedder").waitFor({ timeout: SLOW_PAGE_MS });
  await page.getByTestId("source-local").check();
  await page.getByTestId("model-instruct").fill(TINY_LM);
  await page.getByTestId("model-base").fill("");
  await page.getByTestId("device").selectOption("wasm");
  await page.getByTestId("load").click();
  await page.getByTestId("device-embedder").waitFor({ timeout: SLOW_PAGE_MS });
  expect(await page.getByTestId("loaded").textContent()).toContain(OFFLINE_EMBEDDER_ID);
  if (!compare) return;
  await page.getByTestId("n").fill("4");
  await page.getByTestId("k").fill("2");
  await page.getByTestId("max-tokens").fill("8");
  await page.getByTestId("run-compare").click();
  await page.getByTestId("measures").waitFor({ timeout: SLOW_PAGE_MS });
  const embedding = await page
    .locator('[data-testid="measures"] tr[data-row="embedding"] td')
    .allTextContents();
  for (const v of embedding.slice(0, 2).map(Number)) {
    expect(v).toBeGreaterThanOrEqual(0);
    expect(v).toBeLessThanOrEqual(1);
  }
  expect(await page.getByTestId("embedding-note").count()).toBe(0);
}

describe("the built app offline after one visit", () => {
  it(
    "shows the recorded run, visited pages, the LM lab's own embedder and a quick live run from stored models with the server gone",
    async () => {
      const t0 = Date.now();
      const { server, url } = await serve("/");
      const { context, page, errors } = await browse("profile-root");
      const foreign: string[] = [];
      context.on("request", (r) => {
        if (!r.url().startsWith(url) && !/^(blob|data):/.test(r.url())) foreign.push(r.url());
      });
      try {
        await page.goto(url);
        const cached = await savedForOffline(page);
        if (SHOTS) await page.screenshot({ path: join(SHOTS, "offline-ready.png") });
        expect(cached.length).toBe(precached.length); // the whole precache is filled
        for (const must of [
          "/index.html",
          "/recorded/persuasion-paper.json",
          "/pretrained/index.json",
        ])
          expect(cached).toContain(must);
        // the default experiment's quick version runs from models precached with the app
        expect(
          cached.filter((p) => p.startsWith("/pretrained/") && p.endsWith(".bin")).length,
        ).toBeGreaterThan(20);
        await showsRecording(page);
        // settled, as a lecturer's tab would be: the page's idle speed and backend measurements stored
        const stored = () =>
          page.evaluate(() => Object.keys(localStorage).map((k) => k.replace(/:v1:.*/, "")));
        await expect
          .poll(stored, { timeout: SLOW_PAGE_MS * 2, interval: 500 })
          .toEqual(expect.arrayContaining(["collapse-lab:backend-bench", "collapse-lab:speed"]));
        // a page visited online: the Play page, with a recording's policies
        await page.goto(new URL("./#play", url).href);
        await expect
          .poll(() => page.getByTestId("play-start").isEnabled(), { timeout: SLOW_PAGE_MS })
          .toBe(true);
        // the LM lab, once online: its model files are kept by transformers.js's own cache
        if (HAVE_EMBEDDER) await lmLabWithOwnEmbedder(page, url, false);
        console.info(
          `visited once and saved for offline use: ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        );

        await goOffline(context, server);
        await page.goto(new URL("./", url).href);
        await showsRecording(page);
        await page.getByTestId("offline-now").waitFor();
        if (SHOTS) await page.screenshot({ path: join(SHOTS, "offline.png") });

        await page.goto(new URL("./#play", url).href);
        await expect
          .poll(() => page.getByTestId("play-start").isEnabled(), { timeout: SLOW_PAGE_MS })
          .toBe(true);
        if (HAVE_EMBEDDER) await lmLabWithOwnEmbedder(page, url, true);
        await page.goto(new URL("./#simulators", url).href);
        await page.getByRole("link", { name: "Experiment" }).click();

        // the quick version live: every model from the store, none pretrained live, training starts
        await page.getByTestId("run-quick").click();
        const note = page.getByText(/^pretraining: \d+ of \d+ models from the store/);
        await note.waitFor({ timeout: SLOW_PAGE_MS });
        const [, loaded, all] = /(\d+) of (\d+)/.exec((await note.textContent())!)!;
        expect(Number(loaded)).toBe(Number(all));
        expect(await note.textContent()).not.toContain("pretrained live");
        await expect
          .poll(() => page.getByTestId("status").textContent(), { timeout: SLOW_PAGE_MS })
          .toBe("running");
        await page.getByRole("button", { name: "Stop" }).click();
        console.info(
          `offline: reloaded, pages shown, LM lab run, quick run started: ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        );
        expect(errors).toEqual([]);
        expect(foreign).toEqual([]); // nothing from the hub (or any other host), online or off
      } finally {
        await context.close();
        await server.close().catch(() => {}); // already closed by goOffline unless it failed first
      }
    },
    SLOW_PAGE_MS * 5,
  );

  it(
    "works in a sub-folder of the host, and offers a new version when one is deployed",
    async () => {
      const { server, url } = await serve("/courses/rl-2026/lab/");
      const { context, page, errors } = await browse("profile-sub");
      try {
        await page.goto(new URL("./?backend=wasm", url).href); // no WebGPU timing: not this test's subject
        const cached = await savedForOffline(page);
        expect(cached).toContain("/courses/rl-2026/lab/recorded/persuasion-paper.json");

        // a new version on the host (the page changed: its revision in sw.js, same length)
        const sw = join(outDir, "sw.js");
        const old = readFileSync(sw, "utf8");
        const [, revision] = /\{url:"index\.html",revision:"([0-9a-f]+)"\}/.exec(old)!;
        const changed = [...revision].reverse().join("");
        expect(changed).not.toBe(revision);
        writeFileSync(sw, old.replace(revision, changed));
        await page.reload();
        await page.getByTestId("offline-update").waitFor();
        await page.getByRole("button", { name: "Reload" }).click(); // the new version takes over, and the page reloads
        await page.waitForFunction(
          async () => {
            const r = await navigator.serviceWorker.getRegistration();
            return (
              !!r?.active && !r.waiting && !document.querySelector('[data-testid="offline-update"]')
            );
          },
          undefined,
          { polling: 500 },
        );
        await showsRecording(page);

        await goOffline(context, server);
        await page.goto(new URL("./?preset=persuasion-paper&backend=wasm#experiment", url).href);
        await showsRecording(page);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
        await server.close().catch(() => {});
      }
    },
    SLOW_PAGE_MS * 2,
  );
});
