// Persuasion for Good's 300 annotated dialogues as a corpus of this benchmark's acts
// (docs/humans.md#persuasion-for-good): each P4G turn (the persuader's sentences, then the
// persuadee's) becomes at most one exchange, its labels mapped to the toy's acts by the tables
// below; the persuadee's real donation ends the dialogue, at the first ask they answer with a
// decision or after the fifth exchange, as the toy's rules say. Pure: it takes the rows of
// full_info.csv and annotated_acts.csv (p4g-load.ts reads them in Node).
import { dialogueLine, dialogueFile } from "../dialogue-file";
import type { Benchmark, BenchmarkModule } from "../types";
import { AMOUNTS, CARD_TRAITS, MAX_EXCHANGES, STRATEGIES, actId } from "./world";

/** P4G's persuader labels that ask for the donation. */
const ASK_LABELS = [
  "proposition-of-donation",
  "ask-donation-amount",
  "ask-donate-more",
  "confirm-donation",
];
/** The persuadee's labels that answer it with a decision: only then is the turn the toy's `ask`. */
const DECISION_LABELS = [
  "provide-donation-amount",
  "agree-donation",
  "disagree-donation",
  "disagree-donation-more",
];
/** The persuadee's reply: the first of these acts one of its sentences' labels maps to, else neutral. */
export const PERSUADEE_MAP: readonly (readonly [string, readonly string[]])[] = [
  ["refuse", ["disagree-donation", "disagree-donation-more"]],
  ["object-trust", ["negative-reaction-to-donation"]],
  [
    "agree",
    [
      "positive-reaction-to-donation",
      "agree-donation",
      "provide-donation-amount",
      "confirm-donation",
    ],
  ],
  [
    "ask-question",
    [
      "ask-org-info",
      "ask-donation-procedure",
      "ask-persuader-donation-intention",
      "task-related-inquiry",
      "personal-related-inquiry",
    ],
  ],
  ["share-personal", ["positive-to-inquiry"]],
];
/** The card's traits, in the card's order, and the P4G column each is binned from. */
const TRAIT_COLUMNS: Record<(typeof CARD_TRAITS)[number], string> = {
  agreeable: "agreeable.x", // Big Five, 1–5
  caring: "care.x", // moral foundation care, 1–6
  rational: "rational.x", // decision style, 1–5
};
const STRATEGY_OF = new Map<string, string>(STRATEGIES.map(([act, label]) => [label, act]));

type Row = Record<string, string>;

export interface P4GDialogues {
  lines: string[]; // one JSONL line per dialogue
  kept: number;
  left: { noDonation: number; outOfRange: number; tooShort: number }; // dialogues left out, and why
  traitMedians: Record<string, number>; // the card's "high": at or above these
  endedByAsk: number; // dialogues whose decision came at an ask (the others after five exchanges)
}

const numeric = (cell: string | undefined) =>
  cell === undefined || cell.trim() === "" || !Number.isFinite(Number(cell))
    ? undefined
    : Number(cell);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The persuader's act for one P4G turn, or null when none of its labels maps to one. */
export function persuaderAct(labels: string[], reply: string[]): string | null {
  if (labels.some((l) => ASK_LABELS.includes(l)) && reply.some((l) => DECISION_LABELS.includes(l)))
    return "ask";
  const strategies = labels.flatMap((l) => (STRATEGY_OF.has(l) ? [STRATEGY_OF.get(l)!] : []));
  if (strategies.length) {
    const count = (s: string) => strategies.filter((x) => x === s).length;
    const most = Math.max(...strategies.map(count));
    return strategies.find((s) => count(s) === most)!; // the most frequent; ties: the first said
  }
  return labels.includes("greeting") ? "greeting" : null;
}

/** The persuadee's act for their sentences' labels in one turn. */
export function persuadeeAct(labels: string[]): string {
  for (const [act, from] of PERSUADEE_MAP) if (labels.some((l) => from.includes(l))) return act;
  return "neutral";
}

/**
 * The annotated dialogues as JSONL lines of this benchmark (`m`, `bench`: Persuasion's module and
 * world), in the order of annotated_acts.csv; donations outside [0, $2] are left out, as the
 * calibration statistics leave them (p4g-load.ts).
 */
export function p4gDialogues(
  m: BenchmarkModule,
  bench: Benchmark,
  info: Row[],
  acts: Row[],
): P4GDialogues {
  const persuadees = info.filter((r) => r.B4 === "1");
  const donation = new Map<string, number | null>();
  for (const r of persuadees) {
    const v = numeric(r.B6);
    if (v !== undefined) donation.set(r.B2, v >= 0 && v <= AMOUNTS[AMOUNTS.length - 1] ? v : null);
  }
  const inRange = persuadees.filter((r) => typeof donation.get(r.B2) === "number");
  const traitMedians = Object.fromEntries(
    CARD_TRAITS.map((t) => [t, median(inRange.flatMap((r) => numeric(r[TRAIT_COLUMNS[t]]) ?? []))]),
  );
  const byId = new Map(persuadees.map((r) => [r.B2, r]));
  const turns = new Map<string, Map<number, [string[], string[]]>>();
  for (const r of acts) {
    let d = turns.get(r.dialogue_id);
    if (!d) turns.set(r.dialogue_id, (d = new Map()));
    const t = Number(r.turn);
    if (!d.has(t)) d.set(t, [[], []]);
    if (r.role === "0") d.get(t)![0].push(r.persuader_label);
    else d.get(t)![1].push(r.persuadee_label);
  }
  const out: P4GDialogues = {
    lines: [],
    kept: 0,
    left: { noDonation: 0, outOfRange: 0, tooShort: 0 },
    traitMedians,
    endedByAsk: 0,
  };
  for (const [id, byTurn] of turns) {
    const given = donation.get(id);
    if (given === undefined) {
      out.left.noDonation++;
      continue;
    }
    if (given === null) {
      out.left.outOfRange++;
      continue;
    }
    const exchanges: [string, string][] = [];
    for (const [, [said, reply]] of [...byTurn].sort((a, b) => a[0] - b[0])) {
      const a = persuaderAct(said, reply);
      if (a === null) continue; // a turn of thanks or small talk: no act of the toy
      exchanges.push([a, persuadeeAct(reply)]);
      if (a === "ask" || exchanges.length === MAX_EXCHANGES) break;
    }
    const asked = exchanges.length > 0 && exchanges[exchanges.length - 1][0] === "ask";
    if (!asked && exchanges.length < MAX_EXCHANGES) {
      out.left.tooShort++;
      continue;
    }
    if (asked) out.endedByAsk++;
    const names = exchanges.flatMap(([a, u]) => (a === "ask" ? [a] : [a, u]));
    const grid = m.outcomeActs!.act(given);
    if ("problem" in grid) throw new Error(`${id}: ${grid.problem}`);
    const person = byId.get(id)!;
    const traits = CARD_TRAITS.map((t) => numeric(person[TRAIT_COLUMNS[t]]));
    const card = traits.every((v) => v !== undefined)
      ? CARD_TRAITS.map((t, j) =>
          actId(`card:${t}-${traits[j]! >= traitMedians[t] ? "high" : "low"}`),
        )
      : null;
    out.lines.push(
      dialogueLine(m, bench, {
        id,
        card,
        acts: [...names, grid.act].map(actId),
        outcome: given,
      }),
    );
    out.kept++;
  }
  return out;
}

/** The corpus file's header: where it comes from, its licence, and where the mapping is documented. */
export function p4gDialogueFile(lines: string[]): string {
  return dialogueFile(
    {
      benchmark: "persuasion",
      source:
        "Persuasion for Good (Wang et al., ACL 2019; github.com/ohyj1002/persuasionforgood): the 300 annotated dialogues' act labels and the persuadees' donations and traits, no utterance text",
      licence: "Apache-2.0",
      note: "P4G's labels mapped to the toy's acts by collapse-lab's scripts/p4g-dialogues.ts (docs/humans.md#persuasion-for-good); outcome is the real donation in dollars, its last act the nearest $0.50",
    },
    lines,
  );
}
