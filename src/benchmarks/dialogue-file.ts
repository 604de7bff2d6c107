// Dialogue corpora people bring: real dialogues of a benchmark, one per line of a JSONL file or
// one per row of a CSV file (docs/humans.md), each a complete episode of the benchmark's acts,
// with the persona's card (optional) and the outcome. A file is read whole and checked against
// the benchmark's own rules (whose turn, which acts are allowed there, when it ends); anything
// wrong is one DialogueFileError that names the file, the line and the field. A corpus is named
// by its file and the SHA-256 of its bytes, so a run that used it can say which it was.
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { parse as parseCsv } from "csv-parse/browser/esm/sync";
import { z } from "zod";
import { benchmarkFor, benchmarkModule } from "./registry";
import type { Benchmark, BenchmarkModule, Dialogue } from "./types";

export const DIALOGUES_FORMAT = "collapse-lab/dialogues@1";
export const MAX_FILE_BYTES = 32 * 1024 * 1024;
export const MAX_DIALOGUES = 100_000;

/** One imported dialogue: its acts (token ids, the outcome's included) and its card, if it had one. */
export interface CorpusDialogue {
  id?: string;
  card: number[] | null; // null: no traits given (users of the corpus draw a card)
  acts: number[];
}

export interface DialogueCorpus {
  file: string; // the file's name, without folders
  sha256: string; // of the file's bytes, 64 hex digits
  benchmark: string;
  source?: string; // the header's, where it has one
  licence?: string;
  dialogues: CorpusDialogue[];
}

/** A corpus that cannot be used: `line` is 1-based (null: the file as a whole), `field` what on it. */
export class DialogueFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    readonly field: string | null,
    readonly problem: string,
  ) {
    super(
      `${file}${line === null ? "" : ` line ${line}`}: ${field === null ? "" : `${field}: `}${problem}`,
    );
    this.name = "DialogueFileError";
  }
}

/** The SHA-256 of a file's bytes, as 64 lowercase hex digits. */
export function corpusHash(bytes: Uint8Array): string {
  return bytesToHex(sha256(bytes));
}

/** The last part of a path or file name, the name a report keeps (no folders). */
export function fileName(path: string): string {
  return path.split(/[/\\]/).pop() || path;
}

const Meta = z.record(
  z.string().max(80),
  z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]),
);
const Header = z.strictObject({
  format: z.literal(DIALOGUES_FORMAT),
  benchmark: z.string().max(80),
  source: z.string().max(2000).optional(), // where the dialogues come from, for people
  licence: z.string().max(200).optional(),
  note: z.string().max(4000).optional(), // e.g. how the source's labels were mapped to acts
});
const Line = z.strictObject({
  id: z.string().min(1).max(200).optional(),
  traits: z.array(z.string().max(80)).max(16).optional(), // the persona card's acts, "card:" optional
  acts: z.array(z.string().max(80)).min(1).max(256), // act names in order, from the first turn
  outcome: z.number().optional(), // the benchmark's outcome as a number (Persuasion: dollars)
  meta: Meta.optional(), // anything else (kept by no one; for people reading the file)
});
type LineData = z.infer<typeof Line>;
const CSV_COLUMNS = ["id", "traits", "acts", "outcome"] as const;

/** A zod problem as a field and a message. */
function zodProblem(e: z.ZodError): { field: string | null; problem: string } {
  const i = e.issues[0];
  if (i.code === "unrecognized_keys") {
    const keys = i.keys.map((k) => JSON.stringify(k)).join(", ");
    return { field: i.path.join(".") || null, problem: `unknown key ${keys}` };
  }
  const field = i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
  return { field: field.replace(/^\./, "") || null, problem: i.message.split("\n")[0] };
}

/** The acts a role may say at a state, as a short list for a message. */
function listActs(bench: Benchmark, allowed: number[]): string {
  const names = allowed.map((a) => bench.acts[a].name);
  return names.length > 14
    ? `${names.slice(0, 12).join(", ")}, … (${names.length})`
    : names.join(", ");
}

/** Checks one dialogue against the benchmark's rules; returns its acts as token ids, or a problem. */
export function checkDialogue(
  m: BenchmarkModule,
  bench: Benchmark,
  line: Omit<LineData, "id" | "meta">,
): { card: number[] | null; acts: number[] } | { field: string; problem: string } {
  const index = new Map(bench.acts.map((a, i) => [a.name, i]));
  let card: number[] | null = null;
  if (line.traits) {
    const ids: number[] = [];
    for (const [j, raw] of line.traits.entries()) {
      const name = raw.startsWith("card:") ? raw : `card:${raw}`;
      const id = index.get(name);
      if (id === undefined || bench.acts[id].kind !== "card")
        return {
          field: `traits[${j}]`,
          problem: `${JSON.stringify(raw)} is not a persona trait of ${m.title}`,
        };
      ids.push(id);
    }
    const key = [...ids].sort((a, b) => a - b).join(",");
    const found = bench.humans
      .cardDistribution()
      .find((c) => [...c.card].sort((a, b) => a - b).join(",") === key);
    if (!found) {
      const example = bench.humans.cardDistribution()[0].card.map((c) => bench.acts[c].name);
      return {
        field: "traits",
        problem: `${line.traits.join(" ")} is not a persona card of ${m.title}: a card has ${bench.cardLen} traits, one of each kind, e.g. ${example.map((n) => n.replace(/^card:/, "")).join(" ")}`,
      };
    }
    card = [...found.card];
  }
  const d: Dialogue = { card: card ?? [], acts: [] };
  const speaker = (who: "agent" | "user") => m.roles[who];
  const add = (name: string) => {
    const who = bench.turn(d);
    if (who === "done")
      return `the dialogue has already ended (at ${bench.acts[d.acts[d.acts.length - 1]].name}); nothing comes after the outcome`;
    if (who === "env")
      return `it is the world's turn here, and imported dialogues of ${m.title} cannot hold the world's moves`;
    const allowed = bench.maskClasses[who === "agent" ? bench.agentClass(d) : bench.userClass(d)];
    const here = `the ${speaker(who)}'s turn, with these acts: ${listActs(bench, allowed.allowed)}`;
    const id = index.get(name);
    if (id === undefined) return `unknown act ${JSON.stringify(name)} (it is ${here})`;
    if (!allowed.allowed.includes(id))
      return `${JSON.stringify(name)} cannot come here: it is ${here}`;
    d.acts.push(id);
    return null;
  };
  for (const [i, name] of line.acts.entries()) {
    const problem = add(name);
    if (problem) return { field: `acts[${i}]`, problem };
  }
  if (line.outcome !== undefined) {
    const o = m.outcomeActs;
    if (!o) return { field: "outcome", problem: `${m.title} takes its outcomes as acts only` };
    if (!Number.isFinite(line.outcome))
      return { field: "outcome", problem: `expected a number, got ${line.outcome}` };
    const act = o.act(line.outcome);
    if ("problem" in act) return { field: "outcome", problem: act.problem };
    if (bench.turn(d) === "done") {
      const last = bench.acts[d.acts[d.acts.length - 1]].name;
      if (last !== act.act)
        return {
          field: "outcome",
          problem: `${line.outcome} (${act.act}) disagrees with the dialogue's last act, ${last}`,
        };
    } else {
      const problem = add(act.act);
      if (problem) return { field: "outcome", problem: `${line.outcome} (${act.act}): ${problem}` };
    }
  }
  const who = bench.turn(d);
  if (who !== "done")
    return {
      field: "acts",
      problem: `the dialogue is unfinished: after its last act it is the ${who === "env" ? "world" : speaker(who)}'s turn${who === "user" && m.outcomeActs ? ` (give the ${m.outcomeActs.name} as "outcome", or end with the act that states it)` : ""}`,
    };
  return { card, acts: d.acts };
}

/** The whole file as one JSON value, when it is one (a RunReport, a Play results file): a hint, or null. */
function wrongFile(text: string): string | null {
  if (!/^\s*\{[\s\S]*\}\s*$/.test(text) || !/\n\s*"/.test(text)) return null;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  const d = data as { schema?: unknown; format?: unknown };
  if (d.schema === "collapse-lab/run-report@1")
    return "this is a RunReport, not dialogues (open it on the Runs page)";
  if (d.format === "collapse-lab/play-results@1")
    return "this is a Play results file: export it from the Play page as dialogues (JSONL) first";
  return null;
}

interface Row {
  line: number;
  data: LineData;
}

function jsonlRows(
  file: string,
  text: string,
): { header: z.infer<typeof Header> | null; rows: Row[] } {
  const lines = text.split(/\r?\n/);
  let header: z.infer<typeof Header> | null = null;
  const rows: Row[] = [];
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new DialogueFileError(
        file,
        line,
        null,
        `not JSON (${(e as Error).message.split("\n")[0]})`,
      );
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new DialogueFileError(
        file,
        line,
        null,
        "expected a JSON object: one dialogue per line",
      );
    if ("format" in value) {
      if (header || rows.length)
        throw new DialogueFileError(file, line, "format", "the header must be the first line");
      const h = Header.safeParse(value);
      if (!h.success) {
        const p = zodProblem(h.error);
        throw new DialogueFileError(file, line, p.field, p.problem);
      }
      header = h.data;
      continue;
    }
    const r = Line.safeParse(value);
    if (!r.success) {
      const p = zodProblem(r.error);
      throw new DialogueFileError(file, line, p.field, p.problem);
    }
    rows.push({ line, data: r.data });
  }
  return { header, rows };
}

function csvRows(file: string, text: string): Row[] {
  let records: { record: Record<string, string>; info: { lines: number } }[];
  try {
    records = parseCsv(text, {
      columns: (header: string[]) => {
        const names = header.map((h) => h.trim());
        const unknown = names.find((h) => !(CSV_COLUMNS as readonly string[]).includes(h));
        if (unknown !== undefined)
          throw new DialogueFileError(
            file,
            1,
            null,
            `unknown column ${JSON.stringify(unknown)} (columns: ${CSV_COLUMNS.join(", ")}; acts is required)`,
          );
        if (!names.includes("acts"))
          throw new DialogueFileError(
            file,
            1,
            null,
            `no "acts" column (columns: ${CSV_COLUMNS.join(", ")})`,
          );
        const twice = names.find((h, i) => names.indexOf(h) !== i);
        if (twice !== undefined)
          throw new DialogueFileError(
            file,
            1,
            null,
            `column ${JSON.stringify(twice)} appears twice`,
          );
        return names;
      },
      info: true,
      skip_empty_lines: true,
      trim: true,
    }) as typeof records;
  } catch (e) {
    if (e instanceof DialogueFileError) throw e;
    const err = e as Error & { lines?: number };
    throw new DialogueFileError(file, err.lines ?? null, null, `not readable CSV (${err.message})`);
  }
  const words = (cell: string) => cell.split(/\s*>\s*|\s+/).filter((w) => w !== "");
  return records.map(({ record, info }) => {
    const data: Record<string, unknown> = { acts: words(record.acts ?? "") };
    if (record.id) data.id = record.id;
    if (record.traits) data.traits = words(record.traits);
    if (record.outcome) {
      const v = Number(record.outcome);
      if (!Number.isFinite(v))
        throw new DialogueFileError(
          file,
          info.lines,
          "outcome",
          `${JSON.stringify(record.outcome)} is not a number`,
        );
      data.outcome = v;
    }
    const r = Line.safeParse(data);
    if (!r.success) {
      const p = zodProblem(r.error);
      throw new DialogueFileError(file, info.lines, p.field, p.problem);
    }
    return { line: info.lines, data: r.data };
  });
}

/**
 * Reads a dialogue corpus for a config's benchmark (`config.benchmark`, `config.world`): JSONL
 * (a `.jsonl`/`.json`/`.ndjson` file, or one whose text starts with "{") or CSV. Throws
 * DialogueFileError naming the file, the line and the field of the first problem.
 */
export function parseDialogueFile(
  bytes: Uint8Array,
  path: string,
  config: { benchmark: string; world: unknown },
): DialogueCorpus {
  const file = fileName(path);
  if (bytes.length > MAX_FILE_BYTES)
    throw new DialogueFileError(file, null, null, `larger than ${MAX_FILE_BYTES / 1024 ** 2} MB`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes); // drops a byte-order mark
  } catch {
    throw new DialogueFileError(file, null, null, "not UTF-8 text");
  }
  const m = benchmarkModule(config.benchmark);
  const bench = benchmarkFor(config);
  if (bench.envAct || bench.humans.sampleHidden)
    throw new DialogueFileError(
      file,
      null,
      null,
      `${m.title} has hidden state (the world's own moves), which a dialogue file cannot give; corpora are for benchmarks without it, such as Persuasion`,
    );
  const hint = wrongFile(text);
  if (hint) throw new DialogueFileError(file, null, null, hint);
  const jsonl =
    /\.(jsonl|ndjson|json)$/i.test(file) || (!/\.csv$/i.test(file) && /^\s*\{/.test(text));
  const { header, rows } = jsonl
    ? jsonlRows(file, text)
    : { header: null, rows: csvRows(file, text) };
  if (header && header.benchmark !== m.id)
    throw new DialogueFileError(
      file,
      1,
      "benchmark",
      `the dialogues are of ${JSON.stringify(header.benchmark)}, but the experiment is ${m.id}`,
    );
  if (rows.length === 0) throw new DialogueFileError(file, null, null, "holds no dialogues");
  if (rows.length > MAX_DIALOGUES)
    throw new DialogueFileError(file, null, null, `more than ${MAX_DIALOGUES} dialogues`);
  const ids = new Map<string, number>();
  const dialogues = rows.map(({ line, data }): CorpusDialogue => {
    if (data.id !== undefined) {
      const first = ids.get(data.id);
      if (first !== undefined)
        throw new DialogueFileError(
          file,
          line,
          "id",
          `${JSON.stringify(data.id)} is also line ${first}'s`,
        );
      ids.set(data.id, line);
    }
    const checked = checkDialogue(m, bench, data);
    if ("problem" in checked)
      throw new DialogueFileError(file, line, checked.field, checked.problem);
    return { ...(data.id !== undefined ? { id: data.id } : {}), ...checked };
  });
  return {
    file,
    sha256: corpusHash(bytes),
    benchmark: m.id,
    ...(header?.source ? { source: header.source } : {}),
    ...(header?.licence ? { licence: header.licence } : {}),
    dialogues,
  };
}

/** One dialogue as a line of a JSONL corpus (act names; the outcome as a number where the benchmark has one). */
export function dialogueLine(
  m: BenchmarkModule,
  bench: Benchmark,
  d: {
    id?: string;
    card: number[] | null;
    acts: number[];
    outcome?: number; // default: the benchmark's reading of the last act
    meta?: z.infer<typeof Meta>;
  },
): string {
  const name = (a: number) => bench.acts[a].name;
  const line: LineData = {
    ...(d.id !== undefined ? { id: d.id } : {}),
    ...(d.card ? { traits: d.card.map((c) => name(c).replace(/^card:/, "")) } : {}),
    acts: d.acts.map(name),
    ...(d.outcome !== undefined
      ? { outcome: d.outcome }
      : m.outcomeActs
        ? { outcome: m.outcomeActs.value(bench, { card: d.card ?? [], acts: d.acts }) }
        : {}),
    ...(d.meta ? { meta: d.meta } : {}),
  };
  return JSON.stringify(line);
}

/** A JSONL corpus: the header line, then one line per dialogue. */
export function dialogueFile(
  header: { benchmark: string; source?: string; licence?: string; note?: string },
  lines: readonly string[],
): string {
  return [JSON.stringify({ format: DIALOGUES_FORMAT, ...header }), ...lines].join("\n") + "\n";
}
