// Two test projects: `node` (engine and CLI, jax-js on wasm, the float64 reference) and
// `browser` (real headless Chromium with WebGPU on SwiftShader; workers through Comlink).
import { defineConfig } from "vitest/config";
import { playwright } from "@vitest/browser-playwright";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/lib/chromium/chromium";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/**/*.test.ts"],
          exclude: ["test/browser/**"],
          testTimeout: 120_000,
          execArgv: ["--expose-gc"], // the memory test measures after a full GC
        },
      },
      {
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          testTimeout: 240_000,
          browser: {
            enabled: true,
            headless: true,
            api: { host: "127.0.0.1" },
            provider: playwright({
              launchOptions: {
                executablePath: CHROMIUM,
                args: [
                  "--enable-unsafe-webgpu",
                  "--no-sandbox",
                  "--disable-background-networking",
                  "--disable-component-update",
                  "--disable-sync",
                  "--no-first-run",
                  "--disable-quic",
                  "--disable-dev-shm-usage",
                ],
              },
            }),
            instances: [{ browser: "chromium" }],
          },
        },
      },
    ],
  },
});
