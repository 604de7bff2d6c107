// The source tree's layers, read by eslint.config.js (one no-restricted-imports block per folder)
// and by test/scripts/import-boundary.test.ts.

/**
 * The source tree's layers, lowest first (docs/architecture.md#the-source-tree). A folder may import
 * from its own layer and the layers below it, never from one above.
 */
export const LAYERS = [
  ["util", "engine", "metrics"],
  ["lm"],
  ["benchmarks", "remote"],
  ["simulators"],
  ["experiment"],
  ["cluster", "serve", "workers"],
  ["cli", "app"],
];

/** The files of a folder of the layered tree. */
export const folderGlob = (folder) => (folder === "workers" ? "workers/**" : `src/${folder}/**`);
