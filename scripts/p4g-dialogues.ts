// Writes the 300 annotated Persuasion for Good dialogues as a corpus of the Persuasion benchmark's
// acts (JSONL, docs/humans.md#persuasion-for-good), for `collapse-lab run --humans`, a panel
// member or the reference's pretraining corpus, and prints what was kept.
// Usage: npx tsx scripts/p4g-dialogues.ts [data-dir] [--out FILE]
//   (default data-dir: ../shared/data/p4g from the project root; default FILE: p4g-dialogues.jsonl)
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadP4GDialogues } from "../src/benchmarks/persuasion/p4g-load";

const ROOT = resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const at = args.indexOf("--out");
const out = at >= 0 ? args[at + 1] : "p4g-dialogues.jsonl";
const rest = at >= 0 ? [...args.slice(0, at), ...args.slice(at + 2)] : args;
if (!out || rest.length > 1 || rest[0]?.startsWith("-")) {
  process.stderr.write("usage: npx tsx scripts/p4g-dialogues.ts [data-dir] [--out FILE]\n");
  process.exit(2);
}
const dir = rest[0] === undefined ? resolve(ROOT, "../shared/data/p4g") : resolve(rest[0]);
const corpus = loadP4GDialogues(dir);
writeFileSync(out, corpus.text);
const { noDonation, outOfRange, tooShort } = corpus.left;
process.stdout.write(
  [
    `${out}: ${corpus.kept} dialogues from ${dir}`,
    `  ${corpus.endedByAsk} end at an ask the persuadee answered with a decision, ${corpus.kept - corpus.endedByAsk} after five exchanges`,
    `  left out: ${noDonation} without a donation record, ${outOfRange} with a donation outside [0, $2], ${tooShort} with fewer than five exchanges and no decision`,
    `  card traits "high" at or above the persuadees' medians: ${Object.entries(corpus.traitMedians)
      .map(([t, v]) => `${t} ${v}`)
      .join(", ")}`,
  ].join("\n") + "\n",
);
