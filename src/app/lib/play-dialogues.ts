// The Play page's dialogues as a dialogue corpus (docs/humans.md): a class's merged dialogues,
// written in the format `run --humans`, `--panel-corpus` and the Experiment page read, so the
// people of a class become the humans or a held-out panel member of the next experiment. Each
// line keeps who played it and against what (meta), and the person's card as its traits.
import { checkDialogue, dialogueFile, dialogueLine } from "../../benchmarks/dialogue-file";
import { BENCHMARK_IDS, benchmarkModule } from "../../benchmarks/registry";
import type { PlayRecord } from "./play-results";

/** The benchmark whose rules every record's acts follow (the first registered one), or null. */
function benchmarkOf(records: readonly PlayRecord[]) {
  for (const id of BENCHMARK_IDS) {
    const m = benchmarkModule(id);
    const bench = m.create(m.defaultWorld);
    const parsed = records.map((r) =>
      checkDialogue(m, bench, { acts: r.acts, traits: r.persona.card }),
    );
    if (parsed.every((p) => !("problem" in p)))
      return { m, bench, parsed: parsed as { card: number[] | null; acts: number[] }[] };
  }
  return null;
}

/** The records as a JSONL corpus; throws when they are not the dialogues of one benchmark. */
export function playDialogues(
  records: readonly PlayRecord[],
  run: string | null,
): { text: string; benchmark: string } {
  if (records.length === 0) throw new Error("no dialogues to export");
  const found = benchmarkOf(records);
  if (!found) throw new Error("these dialogues do not follow the rules of any one benchmark");
  const { m, bench, parsed } = found;
  const players = new Set(records.map((r) => r.player)).size;
  const lines = records.map((r, i) =>
    dialogueLine(m, bench, {
      id: r.id,
      card: parsed[i].card,
      acts: parsed[i].acts,
      meta: {
        player: r.player,
        study: r.study,
        condition: r.condition,
        seed: r.seed,
        persona: r.persona.source,
        type: r.persona.type,
      },
    }),
  );
  const text = dialogueFile(
    {
      benchmark: m.id,
      source: `collapse-lab Play: ${records.length} dialogues of ${players} player${players === 1 ? "" : "s"}${run ? ` against the policies of ${run}` : ""}`,
      note: "people playing the user against trained policies; meta says who played, against which condition, and whether they played their own persona or a drawn one",
    },
    lines,
  );
  return { text, benchmark: m.id };
}
