// Three test projects: `node` (engine and CLI, jax-js on wasm, the float64 reference),
// `browser` (real headless Chromium with WebGPU on SwiftShader; workers through Comlink) and
// `app` (Svelte components in jsdom with @testing-library/svelte).
import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { playwright } from "@vitest/browser-playwright";

import { CHROMIUM_ARGS, findChromium } from "./scripts/chromium.mjs";
import { transformersOrt } from "./scripts/transformers-ort.mjs";

// `npm test` has made sure there is one (scripts/chromium.mjs --ensure); a plain `vitest` run without one fails in the browser project, naming the path
const CHROMIUM = (await findChromium()) ?? "/usr/lib/chromium/chromium";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/**/*.test.ts"],
          exclude: ["test/browser/**", "test/app/**"],
          testTimeout: 120_000,
          hookTimeout: 120_000, // beforeAll hooks start engines and pretrain models: slow on a busy machine
          execArgv: ["--expose-gc"], // the memory test measures after a full GC
        },
      },
      {
        plugins: [svelte()],
        resolve: { conditions: ["browser"] }, // @testing-library/svelte needs Svelte's client build
        test: {
          name: "app",
          environment: "jsdom",
          include: ["test/app/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000, // page tests run a tiny real experiment first
        },
      },
      {
        // transformers.js is reached only through the LM worker, which the dependency scanner does
        // not see: pre-bundle it up front, or Vite re-optimizes and reloads mid-run on a fresh clone
        optimizeDeps: { include: ["@huggingface/transformers"] },
        plugins: [transformersOrt()], // the LM worker serves ORT's wasm from transformers.js's copy
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          testTimeout: 240_000,
          hookTimeout: 240_000,
          browser: {
            enabled: true,
            headless: true,
            api: { host: "127.0.0.1" },
            provider: playwright({
              launchOptions: {
                executablePath: CHROMIUM,
                args: CHROMIUM_ARGS,
              },
            }),
            instances: [{ browser: "chromium" }],
          },
        },
      },
    ],
  },
});
