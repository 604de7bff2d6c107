// Where the tests find the real Persuasion for Good corpus: ../shared/data/p4g beside the project
// (docs/data.md). A clone without it skips the tests that read the raw corpus, saying so; CI sets
// COLLAPSE_LAB_REQUIRE_P4G=1 so that a misplaced corpus fails there instead of skipping.
import { existsSync } from "node:fs";
import { resolve } from "node:path";

export const P4G_DATA = resolve(import.meta.dirname, "../../../shared/data/p4g");
export const HAVE_P4G = existsSync(P4G_DATA);

if (!HAVE_P4G) {
  if (process.env.COLLAPSE_LAB_REQUIRE_P4G === "1")
    throw new Error(`the P4G corpus is not at ${P4G_DATA} (COLLAPSE_LAB_REQUIRE_P4G=1)`);
  console.warn(
    `P4G corpus not found at ${P4G_DATA}: the tests that read the raw corpus are skipped (docs/data.md)`,
  );
}
