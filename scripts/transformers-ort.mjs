// The onnxruntime-web copy that @huggingface/transformers itself resolves, found by Node's module
// resolution from transformers.js's own location (wherever npm put it: hoisted or nested), and a
// Vite plugin that lets the app import its files as `transformers-ort:<path in the package>`,
// e.g. `transformers-ort:dist/ort-wasm-simd-threaded.asyncify.wasm?url`. The app serves ORT's
// wasm from that copy (the JS glue bundled with transformers.js and the wasm binary must be one
// version), never from a CDN. Used by vite.config.ts and the test projects that load the LM tier;
// requireTransformersOrt loads the same copy in Node (its types are onnxruntime-common's, which
// onnxruntime-web re-exports).
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** onnxruntime-web as @huggingface/transformers resolves it, loaded in Node (its CommonJS build). */
export function requireTransformersOrt(from = import.meta.url) {
  const transformers = createRequire(from).resolve("@huggingface/transformers");
  return createRequire(transformers)("onnxruntime-web");
}

/** The import prefix the plugin resolves. */
export const TRANSFORMERS_ORT = "transformers-ort:";

/** The root folder of the onnxruntime-web package that @huggingface/transformers imports. */
export function transformersOrtDir(from = import.meta.url) {
  const transformers = createRequire(from).resolve("@huggingface/transformers");
  // a file the package exports (its package.json is not exported), then up to the package root
  let dir = dirname(createRequire(transformers).resolve("onnxruntime-web"));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, "utf8")).name === "onnxruntime-web")
      return dir;
    const up = dirname(dir);
    if (up === dir)
      throw new Error(
        "onnxruntime-web: resolved from @huggingface/transformers, but no package.json of it was found above the resolved file",
      );
    dir = up;
  }
}

/** `transformers-ort:<path>` → that file of transformers.js's onnxruntime-web (a query such as `?url` is kept). */
export function transformersOrt() {
  let dir; // found on first use
  return {
    name: "collapse-lab:transformers-ort",
    enforce: "pre",
    resolveId(source) {
      if (!source.startsWith(TRANSFORMERS_ORT)) return null;
      dir ??= transformersOrtDir();
      return join(dir, source.slice(TRANSFORMERS_ORT.length));
    },
  };
}
