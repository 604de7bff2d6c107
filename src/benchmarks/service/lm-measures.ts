// Service's outcome in a real LM's reply text (the LM lab, docs/architecture.md#the-lm-tier): whether the customer says
// the phone works. The outcome is 1 (resolved: "Yes, it works now!", "fixed") or 0 (not resolved:
// "still doesn't work", or the call ends without a fix — "Bye", "forget it", a transfer), and
// null when a reply says neither ("Done.", "Sorry, where is that?"). The same reading turns the
// module's outcome words (bench.ts' outcomeOf: "fixed" → 1, "confirmed, not fixed", "transferred
// (could not be fixed)", "customer left" → 0) into numbers.
//
// There is nothing real to compare these with: τ²-bench telecom publishes success rates of agents,
// not what its simulated or real customers say, so the comparison's `human` is empty and its KS
// and L1 are null (the lab shows the replies' own histogram).
import type { OutcomeComparison } from "../types";

export const RESOLVED_GRID = [0, 1]; // not resolved, resolved

// A clause gives no verdict when it asks or hedges ("does it work now?", "I don't know if it works").
const UNSURE =
  /\b(?:if|whether|maybe|might|perhaps|hope|not\s+sure|don't\s+know|let\s+me|i'll\s+(?:try|check|see))\b/;
const NOT_WORKING = [
  /\b(?:doesn't|does\s+not|isn't|is\s+not|won't|will\s+not|didn't|did\s+not|not)\s+(?:\w+\s+)?(?:work|working|fixed|solved|resolved|help|helped|go(?:ing)?\s+through|connect(?:ing)?)\b/,
  /\bstill\s+(?:nothing|no\b|the\s+same|broken|can't|cannot|can\s+not|not\b)/,
  /\b(?:can't|cannot|can\s+not)\s+(?:\w+\s+)?(?:send|browse|call|connect|make\s+calls|get\s+online)\b/,
  /\b(?:no\s+(?:luck|change|difference|signal|service)|same\s+(?:problem|thing|as\s+before)|nothing\s+(?:changed|happens|happened)|not\s+yet)\b/,
];
const NEGATION = /n't\b|\b(?:not|never|no|cannot|without)\b/;
const WORKS = [
  /\bwork(?:s|ed|ing)\b/,
  /\b(?:fixed|solved|resolved|sorted)\b/,
  /\bback\s+to\s+normal\b/,
  /\b(?:signal|service|data|internet|bars?)\s+(?:is|are)\s+back\b/,
  /\bi\s+can\s+(?:now\s+)?(?:send|browse|call|connect|make\s+calls|get\s+online)\b/,
  /\bit'?s\s+(?:fine|good|ok(?:ay)?)\s+now\b/,
];
const SELF_WORKING = /\bi(?:'m|\s+am|'ll|\s+will)?\s+(?:still\s+)?work/; // "I'm working on it": about the customer, not the phone
// The call ends unresolved: the customer leaves, or the outcome words of a transfer or a timeout.
const ENDS =
  /\b(?:bye|goodbye|forget\s+it|hang(?:ing)?\s+up|hung\s+up|give\s+up|(?:go|going)\s+to\s+the\s+(?:shop|store)|don't\s+have\s+time|no\s+time\s+for\s+this|i'm\s+done|had\s+enough|customer\s+left|transferr?(?:ed|ing)|out\s+of\s+time)\b/;

/** One clause's verdict: 1 works, 0 does not, null neither (a question, a hedge, no such words). */
function clauseVerdict(clause: string, question: boolean): 0 | 1 | null {
  const c = clause.replace(/\bno\s+(?:problem|worries)\b/g, "");
  if (question || UNSURE.test(c)) return null;
  const worksWord = WORKS.some((re) => re.test(c)) && !SELF_WORKING.test(c);
  if (NOT_WORKING.some((re) => re.test(c)) || (worksWord && NEGATION.test(c))) return 0;
  return worksWord ? 1 : null;
}

/**
 * Whether a reply says the phone works: 1 resolved, 0 not resolved, null when it says neither.
 * The text is cut into clauses (at . ! ? ; , … and "but"); the last clause that says whether the
 * phone works decides ("It worked for a second, but now it doesn't work" → 0); with none, a reply
 * that ends the call ("I don't have time for this. Bye.") is 0. Questions and hedges decide nothing.
 */
export function parseResolved(text: string): number | null {
  const t = text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/\bbut\b/g, ",");
  let verdict: 0 | 1 | null = null;
  for (const m of t.matchAll(/([^.!?;,…\n]+)([.!?;,…\n]*)/g)) {
    const v = clauseVerdict(m[1], m[2].includes("?"));
    if (v !== null) verdict = v;
  }
  if (verdict !== null) return verdict;
  return ENDS.test(t) ? 0 : null;
}

/** The outcomes' histogram on {0, 1}: no real reference (see the header), so `human` is empty and KS, L1 null. */
export function compareResolved(values: readonly (number | null)[]): OutcomeComparison {
  const counts = RESOLVED_GRID.map(() => 0);
  let parsed = 0;
  let sum = 0;
  for (const v of values) {
    if (v === null) continue;
    if (!Number.isFinite(v)) throw new Error(`compareResolved: outcome ${v} is not a number`);
    counts[v >= 0.5 ? 1 : 0]++;
    parsed++;
    sum += v;
  }
  return {
    amounts: [...RESOLVED_GRID],
    counts,
    fractions: counts.map((c) => (parsed ? c / parsed : 0)),
    human: [],
    parsed,
    unparsed: values.length - parsed,
    mean: parsed ? sum / parsed : null,
    ks: null,
    l1: null,
  };
}
