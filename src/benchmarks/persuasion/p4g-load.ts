// Computes the Persuasion for Good calibration statistics (P4GStats) from the raw corpus files,
// full_info.csv and annotated_acts.csv (see shared/data/p4g/README.md). Node only: it reads the
// files with node:fs, so it must never be imported by the browser app, which imports the
// precomputed numbers from ./p4g-stats instead.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "csv-parse/sync";
import {
  P4G_STRATEGIES,
  P4G_TRAITS,
  TOY_DONATION_AMOUNTS,
  type Correlation,
  type OutOfRangePolicy,
  type P4GStats,
  type P4GStrategy,
  type P4GTrait,
} from "./p4g-stats";
import { p4gDialogueFile, p4gDialogues, type P4GDialogues } from "./p4g-dialogues";
import { persuasion } from "./index";
import type { BenchmarkModule } from "../types";

export const P4G_SOURCE: P4GStats["source"] = {
  corpus: "Persuasion for Good",
  citation:
    "Wang et al., Persuasion for Good: Towards a Personalized Persuasive Dialogue System for Social Good, ACL 2019",
  licence: "Apache-2.0",
};

const MAX_DONATION = 2; // dollars: the task's bonus, so larger records are not real donations

export interface LoadOptions {
  // "drop" (default) reproduces the published statistics, which are over donations within
  // [0, 2]; the 35 larger records (e.g. 50, 700) look like typos, so clamping them to $2 would
  // invent 35 maximal donors (mean $0.41 instead of $0.35).
  outOfRange?: OutOfRangePolicy;
}

type Row = Record<string, string>;

function readCsv(path: string, required: readonly string[]): Row[] {
  if (!existsSync(path)) throw new Error(`P4G data file not found: ${path}`);
  return parse<Row>(readFileSync(path, "utf8"), {
    columns: (header: string[]) => {
      const missing = required.filter((c) => !header.includes(c));
      if (missing.length > 0) throw new Error(`${path}: missing column(s) ${missing.join(", ")}`);
      return header;
    },
    skip_empty_lines: true,
  });
}

/** A finite number, or undefined for an empty or non-numeric cell (Number("") would be 0). */
function numeric(cell: string | undefined): number | undefined {
  if (cell === undefined || cell.trim() === "") return undefined;
  const v = Number(cell);
  return Number.isFinite(v) ? v : undefined;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Pearson r; with a 0/1 side it is the point-biserial correlation. */
export function pearson(xs: readonly number[], ys: readonly number[]): Correlation {
  if (xs.length !== ys.length)
    throw new Error(`pearson: lengths differ (${xs.length} vs ${ys.length})`);
  const mx = mean(xs);
  const my = mean(ys);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < xs.length; i++) {
    const dx = xs[i] - mx;
    const dy = ys[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

function argmax<K extends string>(r: Record<K, Correlation>): K {
  let best: K | undefined;
  for (const k of Object.keys(r) as K[]) {
    const v = r[k];
    if (v !== null && (best === undefined || v > (r[best] as number))) best = k;
  }
  if (best === undefined) throw new Error("no defined correlation");
  return best;
}

function record<K extends string, V>(keys: readonly K[], f: (k: K) => V): Record<K, V> {
  return Object.fromEntries(keys.map((k) => [k, f(k)])) as Record<K, V>;
}

function frequencies(counts: Record<string, number>): Record<string, number> {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, n / total]));
}

function sortedByCount(counts: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

function isStrategy(label: string): label is P4GStrategy {
  return (P4G_STRATEGIES as readonly string[]).includes(label);
}

function checkRole(role: string, where: string): void {
  if (role !== "0" && role !== "1") throw new Error(`${where}: role "${role}" is neither 0 nor 1`);
}

/** Reads `dir`/full_info.csv and `dir`/annotated_acts.csv and computes every statistic. */
export function loadP4GStats(dir: string, options: LoadOptions = {}): P4GStats {
  const outOfRange = options.outOfRange ?? "drop";
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new Error(
      `P4G data directory not found: ${root} (expected full_info.csv and annotated_acts.csv there)`,
    );
  }
  const infoPath = join(root, "full_info.csv");
  const actsPath = join(root, "annotated_acts.csv");
  const info = readCsv(infoPath, ["B2", "B4", "B6", ...P4G_TRAITS.map((t) => `${t}.x`)]);
  const acts = readCsv(actsPath, [
    "dialogue_id",
    "role",
    "turn",
    "persuader_label",
    "persuadee_label",
  ]);

  // --- Donations of persuadees -------------------------------------------------------------
  const persuadees: { row: Row; donation: number }[] = [];
  const donationByDialogue = new Map<string, number>();
  let droppedNonNumeric = 0;
  let outOfRangeCount = 0;
  info.forEach((row, i) => {
    checkRole(row.B4, `${infoPath} row ${i + 2}`);
    if (row.B4 !== "1") return;
    const raw = numeric(row.B6);
    if (raw === undefined) {
      droppedNonNumeric++;
      return;
    }
    if (raw < 0 || raw > MAX_DONATION) {
      outOfRangeCount++;
      if (outOfRange === "drop") return;
    }
    const donation = Math.min(Math.max(raw, 0), MAX_DONATION);
    if (donationByDialogue.has(row.B2))
      throw new Error(`${infoPath}: two persuadees in dialogue ${row.B2}`);
    donationByDialogue.set(row.B2, donation);
    persuadees.push({ row, donation });
  });
  const donations = persuadees.map((p) => p.donation);
  if (donations.length === 0) throw new Error(`${infoPath}: no persuadee with a usable donation`);
  const donors = donations.filter((d) => d > 0);
  const bins = TOY_DONATION_AMOUNTS.map(() => 0);
  // Nearest $0.5 with ties up: 0.25 → 0.5, 0.75 → 1.
  for (const d of donations) bins[Math.floor(d * 2 + 0.5)]++;

  // --- Act labels of the annotated dialogues -------------------------------------------------
  // Only the primary label (persuader_label / persuadee_label) is counted; the rare second label
  // (22 persuader and 15 persuadee sentences) is ignored so each sentence counts once.
  const persuaderCounts = new Map<string, number>();
  const persuadeeCounts = new Map<string, number>();
  const perDialogue = new Map<
    string,
    { strategies: Map<P4GStrategy, number>; persuaderTurns: Set<string> }
  >();
  acts.forEach((row, i) => {
    checkRole(row.role, `${actsPath} row ${i + 2}`);
    let d = perDialogue.get(row.dialogue_id);
    if (d === undefined) {
      d = { strategies: new Map(), persuaderTurns: new Set() };
      perDialogue.set(row.dialogue_id, d);
    }
    if (row.role === "0") {
      const label = row.persuader_label;
      persuaderCounts.set(label, (persuaderCounts.get(label) ?? 0) + 1);
      d.persuaderTurns.add(row.turn);
      if (isStrategy(label)) d.strategies.set(label, (d.strategies.get(label) ?? 0) + 1);
    } else {
      const label = row.persuadee_label;
      persuadeeCounts.set(label, (persuadeeCounts.get(label) ?? 0) + 1);
    }
  });
  const strategyCounts = record(P4G_STRATEGIES, (s) => persuaderCounts.get(s) ?? 0);
  const otherPersuader = new Map([...persuaderCounts].filter(([label]) => !isStrategy(label)));
  const persuadeeSorted = sortedByCount(persuadeeCounts);

  // --- Strategy use vs the persuadee's donation, per annotated dialogue ----------------------
  const joined = [...perDialogue].filter(([id]) => donationByDialogue.has(id));
  const joinedDonations = joined.map(([id]) => donationByDialogue.get(id) as number);
  const sentencesOf = (s: P4GStrategy) => joined.map(([, d]) => d.strategies.get(s) ?? 0);
  const bySentences = record(P4G_STRATEGIES, (s) => pearson(sentencesOf(s), joinedDonations));
  const byUse = record(P4G_STRATEGIES, (s) =>
    pearson(
      sentencesOf(s).map((n) => (n > 0 ? 1 : 0)),
      joinedDonations,
    ),
  );

  // --- Persuadee traits vs donating (> $0) ----------------------------------------------------
  const traitPairs = record(P4G_TRAITS, (t: P4GTrait) =>
    persuadees.flatMap(({ row, donation }) => {
      const v = numeric(row[`${t}.x`]);
      return v === undefined ? [] : [[v, donation > 0 ? 1 : 0] as const];
    }),
  );

  const dialogues = [...perDialogue.values()];
  return {
    source: P4G_SOURCE,
    donations: {
      outOfRange,
      n: donations.length,
      droppedNonNumeric,
      outOfRangeCount,
      mean: mean(donations),
      zeroFraction: donations.filter((d) => d === 0).length / donations.length,
      donorMedian: median(donors),
      successFraction: donations.filter((d) => d >= 1).length / donations.length,
      histogram: {
        amounts: [...TOY_DONATION_AMOUNTS],
        fractions: bins.map((b) => b / donations.length),
      },
    },
    strategies: {
      counts: strategyCounts,
      frequencies: frequencies(strategyCounts) as Record<P4GStrategy, number>,
      otherPersuaderCounts: sortedByCount(otherPersuader),
    },
    persuadeeActs: { counts: persuadeeSorted, frequencies: frequencies(persuadeeSorted) },
    strategyDonation: {
      dialogues: joined.length,
      bySentences,
      byUse,
      dialoguesUsing: record(P4G_STRATEGIES, (s) => sentencesOf(s).filter((n) => n > 0).length),
      highestBySentences: argmax(bySentences),
      highestByUse: argmax(byUse),
    },
    traitDonating: {
      n: record(P4G_TRAITS, (t) => traitPairs[t].length),
      correlations: record(P4G_TRAITS, (t) =>
        pearson(
          traitPairs[t].map((p) => p[0]),
          traitPairs[t].map((p) => p[1]),
        ),
      ),
    },
    annotated: {
      dialogues: perDialogue.size,
      sentences: acts.length,
      meanPersuaderTurns: mean(dialogues.map((d) => d.persuaderTurns.size)),
    },
  };
}

/**
 * The annotated dialogues of `dir` (full_info.csv, annotated_acts.csv) as a JSONL corpus of the
 * benchmark's acts (p4g-dialogues.ts; docs/humans.md#persuasion-for-good).
 */
export function loadP4GDialogues(dir: string): P4GDialogues & { text: string } {
  const root = resolve(dir);
  const info = readCsv(join(root, "full_info.csv"), [
    "B2",
    "B4",
    "B6",
    "agreeable.x",
    "care.x",
    "rational.x",
  ]);
  const acts = readCsv(join(root, "annotated_acts.csv"), [
    "dialogue_id",
    "role",
    "turn",
    "persuader_label",
    "persuadee_label",
  ]);
  const m = persuasion as unknown as BenchmarkModule;
  const corpus = p4gDialogues(m, m.create(m.defaultWorld), info, acts);
  return { ...corpus, text: p4gDialogueFile(corpus.lines) };
}

/** Rounds every non-integer number to `digits` decimals (counts stay exact), for the JSON. */
export function roundP4GStats(stats: P4GStats, digits = 4): P4GStats {
  const scale = 10 ** digits;
  const round = (v: unknown): unknown => {
    if (typeof v === "number") return Math.round(v * scale) / scale + 0; // + 0 turns -0 into 0, as JSON does
    if (Array.isArray(v)) return v.map(round);
    if (v !== null && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, round(x)]));
    return v;
  };
  return round(stats) as P4GStats;
}
