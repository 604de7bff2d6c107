// The app's service worker (vite-plugin-pwa, Workbox's generateSW), so that a built app opened
// once works with the network off: a lecturer who opened it at home shows the recorded run, its
// pages and a quick live run in a classroom without Wi-Fi. What it keeps, and when:
//   * precached on the first visit (one download, refreshed only when a file changes): the app
//     itself (HTML, JS, CSS; not ORT's wasm), every recording (public/recorded/: reports and the
//     policies the Play page uses), the store's index and the stored models of every preset that
//     runs live in minutes (quick and smoke scale), and the config of each model folder under
//     models/, by which the LM lab finds the local embedder;
//   * cached on first use (cache first): the store's other models (the paper presets', which take
//     hours to run live; their file names are content keys, so a cached one never goes stale) and
//     ORT's wasm (only the LM lab needs it, hashed names);
//   * left to transformers.js, which keeps every model file it loads in its own browser cache:
//     the LM lab's model files.
// The notices (offline-ready, a new version) are shown by the app (src/app/state/offline.svelte.ts).
// A plain script with its types beside it (service-worker.d.mts): vite-plugin-pwa's own types pull
// in `lib: esnext`, which the project's type check must not see. Vite bundles it with the config.
import { readFileSync } from "node:fs";
import { VitePWA } from "vite-plugin-pwa";

const STORE_INDEX = new URL("../public/pretrained/index.json", import.meta.url);

/**
 * The store's model files that presets of these scales use (public/pretrained/index.json). A
 * preset's id ends in its scale (persuasion-quick); test/scripts/service-worker.test.ts keeps it so.
 * @param {readonly string[]} scales
 * @returns {Set<string>}
 */
export function storeFiles(scales) {
  /** @type {{ models: Record<string, { file: string; presets: string[] }> }} */
  const index = JSON.parse(readFileSync(STORE_INDEX, "utf8"));
  const live = (/** @type {string} */ preset) => scales.some((s) => preset.endsWith(`-${s}`));
  return new Set(
    Object.values(index.models)
      .filter((m) => m.presets.some(live))
      .map((m) => `pretrained/${m.file}`),
  );
}

/** The plugin that writes sw.js and its precache manifest into the build. */
export function serviceWorker() {
  const precachedModels = storeFiles(["quick", "smoke"]);
  return VitePWA({
    registerType: "prompt", // a new version waits until the person reloads (a live run is not cut off)
    injectRegister: false, // src/app/main.ts registers it
    manifest: false,
    mode: "production", // also under a test runner, whose NODE_ENV would give a debug build
    workbox: {
      globPatterns: [
        "*.html",
        "assets/*.{js,mjs,css}",
        "recorded/**/*.{json,bin}",
        "pretrained/*.{json,bin}",
        "models/*/config.json",
      ],
      manifestTransforms: [
        async (entries) => ({
          manifest: entries.filter(
            (e) => !/^pretrained\/.*\.bin$/.test(e.url) || precachedModels.has(e.url),
          ),
          warnings: [],
        }),
      ],
      maximumFileSizeToCacheInBytes: 8 * 1024 * 1024, // the largest recording is 1.3 MB: none is left out silently
      navigateFallback: "index.html",
      navigateFallbackDenylist: [/\/(assets|pretrained|recorded|models)\//],
      clientsClaim: true, // the first visit's page is served (and its later fetches cached) at once
      cleanupOutdatedCaches: true,
      runtimeCaching: [
        {
          urlPattern: ({ url }) => /\/pretrained\/[0-9a-f]+\.bin$/.test(url.pathname),
          handler: "CacheFirst",
          options: {
            cacheName: "collapse-lab-store",
            cacheableResponse: { statuses: [200] },
          },
        },
        {
          urlPattern: ({ url }) => /\/assets\/[^/]+\.wasm$/.test(url.pathname),
          handler: "CacheFirst",
          options: {
            cacheName: "collapse-lab-wasm",
            cacheableResponse: { statuses: [200] },
            expiration: { maxEntries: 4 }, // hashed names: an old version's file goes
          },
        },
      ],
    },
  });
}
