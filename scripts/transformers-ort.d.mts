// Types of scripts/transformers-ort.mjs (a plain script, so that the Vite and Vitest configs load it as is).
import type { Plugin } from "vite";

export declare const TRANSFORMERS_ORT: string;
export declare function requireTransformersOrt(from?: string): typeof import("onnxruntime-common");
export declare function transformersOrtDir(from?: string): string;
export declare function transformersOrt(): Plugin;
