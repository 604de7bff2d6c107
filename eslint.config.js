// ESLint: the recommended rules of ESLint, typescript-eslint and eslint-plugin-svelte, run by
// `npm run lint` (part of `npm run typecheck`). Formatting is Prettier's (npm run format).
import js from "@eslint/js";
import ts from "typescript-eslint";
import svelte from "eslint-plugin-svelte";
import globals from "globals";

export default ts.config(
  { ignores: ["dist/", "node_modules/", "public/", "tmp/", ".vitest-attachments/", ".ray/", ".real-lm/"] },
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      // a leading underscore marks a parameter or element that is there for its position only
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    // Benchmarks are plug-ins: the layers above reach one only through src/benchmarks/registry.ts
    // (and the shared types in src/benchmarks/types.ts), never by importing its folder.
    files: ["src/**/*.ts", "src/**/*.svelte", "workers/**/*.ts", "bench/**/*.ts"],
    ignores: ["src/benchmarks/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "(^|/)benchmarks/(?!registry$|types$|encode$)[^/]+(/|$)",
              message: "a benchmark's folder is its own: import src/benchmarks/registry (benchmarkModule, benchmarkFor) or src/benchmarks/types instead",
            },
          ],
        },
      ],
    },
  },
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
