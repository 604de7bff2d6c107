// Donations in a real LM's reply text (the LM lab, docs/architecture.md#the-lm-tier): the amount read from the words,
// and the histogram of the amounts against the humans of Persuasion for Good (p4g-stats.json),
// with the KS statistic and the L1 distance.
import type { OutcomeComparison } from "../types";
import { TOY_DONATION_AMOUNTS, p4gStats } from "./p4g-stats";

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Donations in reply text

const UNITS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
}; // prettier-ignore
const TENS: Record<string, number> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const NUMBER_WORD = String.raw`(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[-\s](?:one|two|three|four|five|six|seven|eight|nine))?|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)`;

function wordValue(w: string): number {
  const [t, u] = w.split(/[-\s]+/);
  return t in TENS ? TENS[t] + (u ? UNITS[u] : 0) : UNITS[t];
}

const DIGITS = String.raw`(\d*\.\d+|\d+(?:\.\d+)?)`;

// Each pattern: a regex over lower-cased text and how to read its match as dollars.
const AMOUNT_PATTERNS: [RegExp, (m: RegExpExecArray) => number][] = [
  [
    new RegExp(String.raw`\b(?:a|one)\s+(?:dollar|buck)\s+(?:and\s+)?fifty(?:\s+cents)?\b`, "g"),
    () => 1.5,
  ],
  [/\bhalf\s+(?:a|one)\s+(?:dollar|buck)\b/g, () => 0.5],
  [/\bhalf\s+(?:of\s+)?(?:my|the|it|this)\b(?:\s+(?:payment|bonus|money|pay|earnings))?/g, () => 1],
  [new RegExp(String.raw`\$\s*${DIGITS}`, "g"), (m) => Number(m[1])],
  [new RegExp(String.raw`\b${DIGITS}\s*(?:dollars?|bucks?|usd)\b`, "g"), (m) => Number(m[1])],
  [new RegExp(String.raw`\b${DIGITS}\s*(?:cents?\b|¢)`, "g"), (m) => Number(m[1]) / 100],
  [new RegExp(String.raw`\b(${NUMBER_WORD})\s+(?:dollars?|bucks?)\b`, "g"), (m) => wordValue(m[1])],
  [new RegExp(String.raw`\b(${NUMBER_WORD})\s+cents?\b`, "g"), (m) => wordValue(m[1]) / 100],
  [/\b(?:a|one)\s+(?:dollar|buck)\b/g, () => 1],
  [
    /\b(?:all\s+of\s+it|everything|all\s+(?:of\s+)?my\s+(?:payment|bonus|money|earnings)|the\s+(?:whole|full|entire)\s+(?:amount|payment|bonus|thing))\b/g,
    () => 2,
  ],
];

const ZERO =
  /\bnothing\b|\bzero\b|\bno\s+donation\b|\b(?:won't|will\s+not|wont|can't|cannot|can\s+not|don't|do\s+not|not\s+going\s+to|not\s+gonna|am\s+not|i'm\s+not|rather\s+not|decline\s+to|refuse\s+to)\s+(?:want\s+to\s+|be\s+able\s+to\s+|able\s+to\s+)?(?:donate|give|contribute|afford|be\s+donating|be\s+giving)\b|\b(?:i'll|i\s+will|i'd\s+rather)\s+pass\b|\bnot\s+interested\b/;
const NEGATION = /n't\b|\b(?:not|never|no|cannot|without)\b/;
const NOT_THE_DONATION = /\b(?:out\s+of|of|from)\s+(?:my|the|your)\s*$/; // "… out of my $2"

export interface DonationParseOptions {
  /** Clamp to [0, 2] dollars, the range a P4G participant could give (default true). */
  clamp?: boolean;
}

/**
 * The donation a reply states, in dollars, or null when it states none. Amounts: "$1", "$0.50",
 * "1.5 dollars", "50 cents", "fifty cents", "a dollar", "a dollar fifty", "half a dollar", "all
 * of it" ($2). An amount in a negated clause ("I won't give $2, but …") or naming the payment
 * ("… out of my $2") is skipped and the first remaining one wins; with none, a refusal ("nothing",
 * "I won't donate", "not interested") is 0. The value is kept as stated (not rounded to the
 * $0.50 grid) and clamped to [0, 2]: P4G's own summary drops out-of-range donations, but an LM
 * saying "$5" means "as much as I can", which is $2 here.
 */
export function parseDonation(text: string, opts: DonationParseOptions = {}): number | null {
  const t = text.toLowerCase().replace(/[’‘]/g, "'");
  const hits: { start: number; end: number; value: number }[] = [];
  for (const [re, read] of AMOUNT_PATTERNS) {
    re.lastIndex = 0;
    for (let m = re.exec(t); m; m = re.exec(t))
      hits.push({ start: m.index, end: m.index + m[0].length, value: read(m) });
  }
  hits.sort((a, b) => a.start - b.start || b.end - a.end);
  let lastEnd = -1;
  for (const h of hits) {
    if (h.start < lastEnd) continue; // overlaps an earlier, longer reading
    lastEnd = h.end;
    const before = t.slice(0, h.start);
    const clause = before.slice(
      Math.max(before.search(/[^.,;:!?]*$/), before.lastIndexOf(" but ") + 5),
    );
    if (NOT_THE_DONATION.test(before)) continue;
    if (NEGATION.test(clause) && !/\b(?:more\s+than|up\s+to|at\s+most|only)\b/.test(clause))
      continue;
    if (!Number.isFinite(h.value)) continue;
    return opts.clamp === false ? h.value : Math.min(2, Math.max(0, h.value));
  }
  return ZERO.test(t) ? 0 : null;
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Against the humans of Persuasion for Good

export type DonationComparison = OutcomeComparison;

/** Nearest grid index of a donation in [0, 2]: rounded to $0.5, ties up (as the P4G summary). */
export const gridIndex = (dollars: number) =>
  Math.min(TOY_DONATION_AMOUNTS.length - 1, Math.max(0, Math.floor(dollars * 2 + 0.5)));

/** The histogram of donations (null = no donation stated) against P4G's humans. */
export function compareDonations(
  donations: readonly (number | null)[],
  human: readonly number[] = p4gStats.donations.histogram.fractions,
): DonationComparison {
  const amounts = [...TOY_DONATION_AMOUNTS];
  if (human.length !== amounts.length)
    throw new Error(
      `compareDonations: the human histogram has ${human.length} bins, the grid ${amounts.length}`,
    );
  const counts = new Array<number>(amounts.length).fill(0);
  let parsed = 0;
  let sum = 0;
  for (const d of donations) {
    if (d === null) continue;
    if (!Number.isFinite(d)) throw new Error(`compareDonations: donation ${d} is not a number`);
    counts[gridIndex(d)]++;
    parsed++;
    sum += d;
  }
  const fractions = counts.map((c) => (parsed ? c / parsed : 0));
  let ks = 0;
  let l1 = 0;
  let F = 0;
  let G = 0;
  for (let i = 0; i < amounts.length; i++) {
    F += fractions[i];
    G += human[i];
    ks = Math.max(ks, Math.abs(F - G));
    l1 += Math.abs(fractions[i] - human[i]);
  }
  return {
    amounts,
    counts,
    fractions,
    human: [...human],
    parsed,
    unparsed: donations.length - parsed,
    mean: parsed ? sum / parsed : null,
    ks: parsed ? ks : null,
    l1: parsed ? l1 : null,
  };
}
