// Types of scripts/service-worker.mjs (a plain script: vite-plugin-pwa's types must stay out of the type check).
import type { PluginOption } from "vite";
export declare function storeFiles(scales: readonly string[]): Set<string>;
export declare function serviceWorker(): PluginOption;
