// ESLint: the recommended rules of ESLint, typescript-eslint and eslint-plugin-svelte, run by
// `npm run lint` (part of `npm run typecheck`). Formatting is Prettier's (npm run format).
import js from "@eslint/js";
import ts from "typescript-eslint";
import svelte from "eslint-plugin-svelte";
import globals from "globals";
import { LAYERS, folderGlob } from "./scripts/layers.mjs";

// Benchmarks are plug-ins: the layers above reach one only through src/benchmarks/registry.ts (and
// the shared src/benchmarks/types.ts, encode.ts and dialogue-file.ts), never by importing its folder.
const BENCHMARK_FOLDER = {
  regex: "(^|/)benchmarks/(?!registry$|types$|encode$|dialogue-file$)[^/]+(/|$)",
  message:
    "a benchmark's folder is its own: import src/benchmarks/registry (benchmarkModule, benchmarkFor) or src/benchmarks/types instead",
};

/** One no-restricted-imports block per folder: the folders of the layers above it, and (above the
 * benchmarks) a benchmark's own folder. ESLint replaces a rule's options per file, so each block
 * carries every pattern its files need. */
function layerRules() {
  const blocks = LAYERS.flatMap((layer, i) => {
    const above = LAYERS.slice(i + 1).flat();
    return layer.map((folder) => {
      const patterns = [];
      if (above.length > 0)
        patterns.push({
          regex: `(^|/)(${above.join("|")})(/|$)`,
          message: `${folder} is in layer ${i + 1} of the source tree (${LAYERS.map((l) => l.join(", ")).join(" < ")}): it may not import from a layer above it (docs/architecture.md#the-source-tree)`,
        });
      if (i >= 2 && folder !== "benchmarks") patterns.push(BENCHMARK_FOLDER);
      return {
        files: [folderGlob(folder)],
        rules: { "no-restricted-imports": patterns.length ? ["error", { patterns }] : "off" },
      };
    });
  });
  // outside the layered tree, bench/ scripts still reach a benchmark through the registry
  return [
    {
      files: ["bench/**/*.ts"],
      rules: { "no-restricted-imports": ["error", { patterns: [BENCHMARK_FOLDER] }] },
    },
    ...blocks,
  ];
}

export default ts.config(
  {
    ignores: [
      "dist/",
      "node_modules/",
      "public/",
      "tmp/",
      ".vitest-attachments/",
      ".ray/",
      ".real-lm/",
    ],
  },
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      // a leading underscore marks a parameter or element that is there for its position only
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          caughtErrors: "none",
        },
      ],
    },
  },
  ...layerRules(),
  {
    files: ["**/*.svelte", "**/*.svelte.ts"],
    languageOptions: { parserOptions: { parser: ts.parser } },
    rules: {
      // the Maps and Sets it flags are local scratch space of a function or a $derived computation,
      // rebuilt on every call and never kept as state: SvelteMap's reactivity would only add cost
      "svelte/prefer-svelte-reactivity": "off",
    },
  },
);
