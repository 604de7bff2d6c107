// The app: Svelte 5 + Vite, served on 127.0.0.1; `npm run build` writes a static site to dist/
// with relative asset paths, so it works from any static host and any sub-path, and a service
// worker that keeps it working offline after one visit (scripts/service-worker.mjs).
import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { transformersOrt } from "./scripts/transformers-ort.mjs";
import { serviceWorker } from "./scripts/service-worker.mjs";

export default defineConfig({
  base: "./",
  plugins: [svelte(), transformersOrt(), serviceWorker()],
  server: { host: "127.0.0.1", port: 5178 },
  preview: { host: "127.0.0.1", port: 5178 },
  worker: { format: "es", plugins: () => [transformersOrt()] },
  optimizeDeps: { exclude: ["@jax-js/jax"] },
  build: { target: "es2022", outDir: "dist", chunkSizeWarningLimit: 4096 },
});
