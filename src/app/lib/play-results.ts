// The Play page's results: one record per finished dialogue (who played, which condition and
// policy they faced, the persona, every act, the decision), the per-condition table (success with
// a binomial interval, clustered by player, mean outcome, n), the exported files (JSON, which merges;
// CSV, for spreadsheets) and the merge of many players' files into one table. An imported file is
// checked with zod: a bad one gets one message naming the file and what is wrong, and merging
// never changes what was merged before unless the file is good.
import { z } from "zod";
import { CONDITIONS, type ConditionId } from "../../experiment/config";
import type { RunReport } from "../../experiment/experiment";
import { clusteredProportion, type ProportionInterval } from "../../metrics/proportion";
import { benchmarkFor, benchmarkModule } from "../../benchmarks/registry";
import { toCsv } from "./export";

export const PLAY_FORMAT = "collapse-lab/play-results@1";

const id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "letters, digits, - and _ only");
const RecordSchema = z.strictObject({
  id, // the dialogue's own id (random): a dialogue in two files is one dialogue
  player: id,
  study: id.nullable(),
  run: z.string().max(200), // recorded/<preset> or stored/<id>
  runKey: z.string().regex(/^[0-9a-f]{32}$/, "32 hex digits"), // the run's config and backend (play-policies.ts)
  index: z.number().int().min(0), // the player's n-th dialogue in this study
  condition: z.enum(CONDITIONS),
  seed: z.number().int(),
  sessionSeed: z.number().int(),
  persona: z.strictObject({
    source: z.enum(["own", "drawn"]),
    card: z.array(z.string().max(80)).max(16),
    type: z.string().max(80).nullable(),
  }),
  acts: z.array(z.string().max(80)).min(1).max(64), // act names, in order
  outcome: z.number().finite().min(0).max(1e6), // the decision as a number (a donation in $)
  success: z.boolean(),
  reward: z.number().min(0).max(1),
  startedAt: z.number().finite(),
  finishedAt: z.number().finite(),
  ownWords: z
    .array(z.strictObject({ at: z.number().int().min(0), text: z.string().max(300) }))
    .max(32)
    .optional(), // replies given in the person's words (an LM read them), by act position
});
export type PlayRecord = z.infer<typeof RecordSchema>;

const FileSchema = z.strictObject({
  format: z.literal(PLAY_FORMAT),
  exportedAt: z.string().max(40),
  records: z.array(RecordSchema).max(100_000),
});
export type PlayFile = z.infer<typeof FileSchema>;

export class PlayFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PlayFileError";
  }
}

export function playFile(records: PlayRecord[], now = new Date()): PlayFile {
  return { format: PLAY_FORMAT, exportedAt: now.toISOString(), records };
}

/** Reads an exported file; throws PlayFileError with one line saying what is wrong. */
export function parsePlayFile(text: string): PlayFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new PlayFileError(`not JSON (${(e as Error).message.split("\n")[0]})`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw new PlayFileError("not a Play results file: expected a JSON object");
  const { format, schema } = data as { format?: unknown; schema?: unknown };
  if (format !== PLAY_FORMAT) {
    if (schema === "collapse-lab/run-report@1")
      throw new PlayFileError(
        "not a Play results file: this is a RunReport (open it on the Runs page)",
      );
    const found =
      format === undefined
        ? 'it has no "format"'
        : `"format" is ${JSON.stringify(format)?.slice(0, 60)}`;
    throw new PlayFileError(`not a Play results file: ${found}, expected "${PLAY_FORMAT}"`);
  }
  const r = FileSchema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new PlayFileError(
      `malformed — ${i.path.join(".") || "(top)"}: ${i.message.split("\n")[0]}`,
    );
  }
  const seen = new Set<string>();
  for (const [j, rec] of r.data.records.entries()) {
    if (seen.has(rec.id))
      throw new PlayFileError(`malformed — records.${j}: dialogue ${rec.id} appears twice`);
    seen.add(rec.id);
    if (rec.runKey !== r.data.records[0].runKey)
      throw new PlayFileError(
        `malformed — records.${j} was played against another run than records.0`,
      );
  }
  return r.data;
}

/** Many players' files merged: the records by dialogue id, and which file each came from. */
export interface MergedSet {
  runKey: string | null; // every record's run
  run: string | null;
  records: PlayRecord[];
  files: { name: string; dialogues: number }[];
}

export const EMPTY_MERGE: MergedSet = { runKey: null, run: null, records: [], files: [] };

/**
 * Adds files to a merged set. A file that cannot be read, or was played against another run, is
 * named and skipped; dialogues already in the set (the same file twice, a player's two exports)
 * are counted once. Returns a new set; `set` is never changed.
 */
export function mergeFiles(
  set: MergedSet,
  files: { name: string; text: string }[],
): { set: MergedSet; messages: string[]; problems: string[] } {
  const next: MergedSet = { ...set, records: [...set.records], files: [...set.files] };
  const ids = new Set(next.records.map((r) => r.id));
  const messages: string[] = [];
  const problems: string[] = [];
  for (const f of files) {
    let parsed: PlayFile;
    try {
      parsed = parsePlayFile(f.text);
    } catch (e) {
      problems.push(`${f.name}: ${(e as Error).message} — skipped`);
      continue;
    }
    const first = parsed.records[0];
    if (!first) {
      problems.push(`${f.name}: holds no dialogues — skipped`);
      continue;
    }
    if (next.runKey !== null && first.runKey !== next.runKey) {
      problems.push(
        `${f.name}: played against another run (${first.run}, config ${first.runKey.slice(0, 8)}) than the merged files (${next.run}, config ${next.runKey.slice(0, 8)}) — skipped`,
      );
      continue;
    }
    const fresh = parsed.records.filter((r) => !ids.has(r.id));
    const dup = parsed.records.length - fresh.length;
    for (const r of fresh) ids.add(r.id);
    next.runKey ??= first.runKey;
    next.run ??= first.run;
    next.records.push(...fresh);
    if (fresh.length) next.files.push({ name: f.name, dialogues: fresh.length });
    messages.push(
      `${f.name}: ${fresh.length} dialogue${fresh.length === 1 ? "" : "s"} added${dup ? `, ${dup} already merged (duplicates) left out` : ""}`,
    );
  }
  return { set: next, messages, problems };
}

export interface ConditionResult {
  condition: ConditionId;
  n: number;
  success: ProportionInterval | null; // null when no dialogue
  outcome: number | null; // mean decision (donation)
  players: number;
}

/**
 * Per condition: success with a 95 % interval for 0/1 outcomes (metrics/proportion.ts: exact
 * binomial where each player played one dialogue of the condition, clustered by player where
 * some played several, since one person's dialogues are not independent), mean outcome,
 * dialogues, players.
 */
export function summariseRecords(
  records: readonly PlayRecord[],
  conditions: readonly ConditionId[],
): ConditionResult[] {
  return conditions.map((condition) => {
    const rs = records.filter((r) => r.condition === condition);
    const n = rs.length;
    return {
      condition,
      n,
      success: n
        ? clusteredProportion(
            rs.map((r) => ({ cluster: r.player, success: r.success })),
            0.95,
          )
        : null,
      outcome: n ? rs.reduce((s, r) => s + r.outcome, 0) / n : null,
      players: new Set(rs.map((r) => r.player)).size,
    };
  });
}

/** The run's own numbers with its simulated humans, per condition: success over seeds (the report's interval) and the mean outcome of its sample dialogues with them. */
export function simulatedHumans(report: RunReport): Map<
  ConditionId,
  {
    success: { mean: number; lo: number; hi: number };
    seeds: number;
    outcome: number | null;
    samples: number;
  }
> {
  const bench = benchmarkFor(report.config);
  const m = benchmarkModule(report.config.benchmark);
  const out = new Map<
    ConditionId,
    {
      success: { mean: number; lo: number; hi: number };
      seeds: number;
      outcome: number | null;
      samples: number;
    }
  >();
  for (const c of report.conditions) {
    const outcomes = c.seeds
      .flatMap((s) => s.samples ?? [])
      .filter((d) => d.opponent === "humans")
      .map(
        (d) =>
          m.lm?.parseOutcome(
            m.outcome(bench, {
              card: d.card,
              acts: d.acts,
              ...(d.hidden ? { hidden: d.hidden } : {}),
            }),
          ) ?? null,
      )
      .filter((x): x is number => x !== null);
    out.set(c.id, {
      success: c.summary.humanSuccess,
      seeds: c.seeds.length,
      outcome: outcomes.length ? outcomes.reduce((a, b) => a + b, 0) / outcomes.length : null,
      samples: outcomes.length,
    });
  }
  return out;
}

/** Every dialogue as a CSV row (acts joined with " > "). */
export function recordsCsv(records: readonly PlayRecord[]): string {
  return toCsv(
    [
      "dialogue",
      "study",
      "player",
      "index",
      "run",
      "condition",
      "seed",
      "session_seed",
      "persona_source",
      "persona_card",
      "persona_type",
      "acts",
      "outcome",
      "success",
      "reward",
      "started_at",
      "finished_at",
      "own_words",
    ],
    records.map((r) => [
      r.id,
      r.study ?? "",
      r.player,
      r.index,
      r.run,
      r.condition,
      r.seed,
      r.sessionSeed,
      r.persona.source,
      r.persona.card.join(" "),
      r.persona.type ?? "",
      r.acts.join(" > "),
      r.outcome,
      r.success ? 1 : 0,
      r.reward,
      new Date(r.startedAt).toISOString(),
      new Date(r.finishedAt).toISOString(),
      (r.ownWords ?? []).map((w) => `${w.at}: ${w.text}`).join(" | "),
    ]),
  );
}

/** A random id for a dialogue or a player (crypto where there is one; ids only need to be unique). */
export function randomId(length = 12): string {
  const alphabet = "abcdefghijkmnpqrstuvwxyz23456789";
  const bytes = new Uint8Array(length);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}
