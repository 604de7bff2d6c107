// ESLint: the recommended rules of ESLint, typescript-eslint and eslint-plugin-svelte, run by
// `npm run lint` (part of `npm run typecheck`). Formatting is Prettier's (npm run format).
import js from "@eslint/js";
import ts from "typescript-eslint";
import svelte from "eslint-plugin-svelte";
import globals from "globals";

export default ts.config(
  { ignores: ["dist/", "node_modules/", "public/", "tmp/", ".vitest-attachments/"] },
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
    files: ["**/*.svelte", "**/*.svelte.ts"],
    languageOptions: { parserOptions: { parser: ts.parser } },
    rules: {
      // the Maps and Sets it flags are local scratch space of a function or a $derived computation,
      // rebuilt on every call and never kept as state: SvelteMap's reactivity would only add cost
      "svelte/prefer-svelte-reactivity": "off",
    },
  },
);
