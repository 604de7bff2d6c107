// The Verbalized Sampling output parser (docs/architecture.md#the-lm-tier; Zhang et al. 2025, arXiv 2510.01171). A VS
// prompt asks a model for k candidate replies with verbalized probabilities, as JSON
// {"responses":[{"text","probability"}]} or as <response><text>…</text><probability>…</probability>
// </response> tags. Small instruct models get the format right only part of the time, so this
// parser reads whatever they emit and never throws on model output: it tries, in order,
//   1. tags (<response>, <text>, <probability>; the last block may be unclosed),
//   2. JSON — fenced or not, inside prose, repaired by `jsonrepair` (trailing commas, single
//      quotes, truncation, missing commas), with other key names and shapes accepted,
//   3. a loose key/value scan for JSON that does not repair (e.g. unescaped quotes in a text),
//   4. a numbered or bulleted list with a probability on each line (`1. "text" (0.4)`),
//   5. the raw text, trimmed, as one candidate with probability 1.
// Every fix-up adds one human-readable warning. The probability rules are in `resolveProbabilities`.
//
// jsonrepair rather than json5: model output is most often broken by truncation (generation hit
// max tokens), missing commas and unescaped quotes, which json5 rejects and jsonrepair repairs;
// it also strips code fences and reads single quotes, and it has no dependencies.
import { jsonrepair } from "jsonrepair";
import type { Rng } from "../engine/random";

export interface VsTextCandidate {
  text: string;
  probability: number; // normalised: the candidates' probabilities sum to 1
}

/** Which reader produced the candidates. */
export type VsFormat = "json" | "tags" | "loose-json" | "list" | "raw" | "empty";

export interface VsParse {
  /** At least one candidate unless the output was empty or whitespace. */
  candidates: VsTextCandidate[];
  warnings: string[];
  format: VsFormat;
}

export interface VsParseOptions {
  /** The number of candidates asked for: more are cut to the first k, fewer are kept; both warn. */
  k?: number;
}

// What a reader found before any clean-up: the text and the probability as written.
interface RawItem {
  text: unknown;
  probability: unknown;
  percentKey?: boolean; // the probability came from a key like "percent"
}

interface Extracted {
  items: RawItem[];
  format: Exclude<VsFormat, "raw" | "empty">;
  warnings: string[];
  /** The output was cut off inside the last item, which may then be incomplete. */
  lastIncomplete: boolean;
}

const TEXT_KEYS = [
  "text",
  "response",
  "reply",
  "content",
  "utterance",
  "message",
  "answer",
  "output",
  "sentence",
  "candidate",
];
const PROB_KEYS = [
  "probability",
  "prob",
  "p",
  "confidence",
  "likelihood",
  "weight",
  "score",
  "percentage",
  "percent",
];
const LIST_KEYS = [
  "responses",
  "replies",
  "candidates",
  "outputs",
  "answers",
  "results",
  "samples",
  "options",
  "items",
];

/**
 * Reads a VS reply into candidates with probabilities that sum to 1. Never throws on model output.
 * @throws only when `opts.k` is given and is not a positive integer (a caller error).
 */
export function parseVs(raw: string, opts: VsParseOptions = {}): VsParse {
  const k = opts.k;
  if (k !== undefined && !(Number.isInteger(k) && k >= 1))
    throw new Error(`parseVs: k must be a positive integer, got ${k}`);
  const text = typeof raw === "string" ? raw : String(raw ?? "");
  const warnings: string[] = [];
  if (text.trim() === "")
    return { candidates: [], warnings: ["the output is empty: no candidates"], format: "empty" };

  const found = readTags(text) ?? readJson(text) ?? readLooseJson(text) ?? readList(text);
  if (!found) {
    return {
      candidates: [{ text: text.trim(), probability: 1 }],
      warnings: [
        "no candidates could be read (no JSON, tags or list): the whole output is one candidate with probability 1",
      ],
      format: "raw",
    };
  }
  warnings.push(...found.warnings);
  const candidates = finish(found, k, warnings);
  if (candidates.length === 0) {
    warnings.push(
      "no candidate had any text: the whole output is one candidate with probability 1",
    );
    return { candidates: [{ text: text.trim(), probability: 1 }], warnings, format: "raw" };
  }
  return { candidates, warnings, format: found.format };
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// From raw items to candidates

function finish(found: Extracted, k: number | undefined, warnings: string[]): VsTextCandidate[] {
  let items = found.items;
  if (found.lastIncomplete && items.length > 1) {
    warnings.push(`the output was cut off inside candidate ${items.length}; it was dropped`);
    items = items.slice(0, -1);
  } else if (found.lastIncomplete) {
    warnings.push("the output was cut off inside the only candidate; it was kept as it is");
  }
  const probs = readProbabilities(items, warnings);

  // texts: clean, drop empty ones, merge duplicates (their probabilities add up: one reply)
  const out: { text: string; p: number | null }[] = [];
  const index = new Map<string, number>();
  items.forEach((item, i) => {
    const t = cleanText(item.text);
    if (t === "") {
      warnings.push(`candidate ${i + 1} has no text; it was dropped`);
      return;
    }
    const key = t.toLowerCase().replace(/\s+/g, " ");
    const j = index.get(key);
    if (j !== undefined) {
      warnings.push(
        `candidate ${i + 1} repeats candidate ${j + 1}; they were merged and their probabilities added`,
      );
      const a = out[j].p;
      const b = probs[i];
      out[j].p = a === null ? b : b === null ? a : a + b;
      return;
    }
    index.set(key, out.length);
    out.push({ text: t, p: probs[i] });
  });

  let kept = out;
  if (k !== undefined && out.length > k) {
    warnings.push(`got ${out.length} candidates but asked for ${k}; kept the first ${k}`);
    kept = out.slice(0, k);
  } else if (k !== undefined && out.length < k && out.length > 0) {
    warnings.push(`got ${out.length} candidate${out.length === 1 ? "" : "s"} but asked for ${k}`);
  }
  if (kept.length === 0) return [];
  const p = resolveProbabilities(
    kept.map((c) => c.p),
    warnings,
  );
  return kept.map((c, i) => ({ text: c.text, probability: p[i] }));
}

/**
 * Missing, unreadable (NaN, words) and negative probabilities become null. "70%" strings (and
 * values under a "percent" key) are percentages. Plain numbers are percentages when some exceed
 * 1, none exceeds 100 and they sum to more than 10 (e.g. 40, 35, 25); other numbers above 1 are
 * relative weights. Without missing candidates both readings normalise to the same result.
 */
function readProbabilities(items: RawItem[], warnings: string[]): (number | null)[] {
  const read = items.map((item, i) => {
    const r = readNumber(item.probability);
    if (r.problem)
      warnings.push(`candidate ${i + 1}: probability ${r.problem}; treated as missing`);
    if (r.value !== null && r.value < 0) {
      warnings.push(`candidate ${i + 1}: negative probability ${r.value}; treated as missing`);
      return { value: null, percent: false };
    }
    return { value: r.value, percent: r.percent || (item.percentKey === true && r.value !== null) };
  });
  const plain = read.filter((r) => r.value !== null && !r.percent).map((r) => r.value!);
  const asPercent =
    plain.some((v) => v > 1) &&
    plain.every((v) => v <= 100) &&
    plain.reduce((a, b) => a + b, 0) > 10;
  if (asPercent || read.some((r) => r.percent))
    warnings.push("probabilities were given as percentages; divided by 100");
  return read.map((r) =>
    r.value === null ? null : r.percent || asPercent ? r.value / 100 : r.value,
  );
}

/**
 * The normalisation rule. With S the sum of the stated probabilities and m candidates without
 * one: if S < 1 each missing one gets an equal share (1 − S)/m of the mass left over; if the
 * stated ones already use it all up (S ≥ 1) each missing one gets their mean S/(n − m), so it is
 * neither lost nor favoured; if none is stated (or all stated ones are 0) all are equal. Then
 * everything is divided by its sum. A sum off 1 by more than 0.01 is reported.
 */
export function resolveProbabilities(
  stated: readonly (number | null)[],
  warnings: string[] = [],
): number[] {
  const n = stated.length;
  if (n === 0) return [];
  // computed in units of the largest stated value when it exceeds 1, so that sums of huge stated
  // numbers (1e308) cannot overflow to Infinity; with every value ≤ 1 the scale is 1
  const scale = Math.max(1, ...stated.map((p) => (p === null ? 0 : p)));
  const known = stated.filter((p): p is number => p !== null).map((p) => p / scale);
  const m = n - known.length;
  const S = known.reduce((s, p) => s + p, 0);
  if (known.length === 0 || !(S > 0)) {
    warnings.push(
      known.length === 0
        ? `no usable probabilities; all ${n} candidates get 1/${n}`
        : `all stated probabilities are 0; all ${n} candidates get 1/${n}`,
    );
    return new Array<number>(n).fill(1 / n);
  }
  const leftOver = S < 1 / scale; // the stated ones sum to less than 1
  let fill = 0;
  if (m > 0) {
    fill = leftOver ? (1 / scale - S) / m : S / known.length;
    warnings.push(
      `${m} candidate${m === 1 ? "" : "s"} without a probability got ${leftOver ? "an equal share of the mass left over" : "the mean stated probability"} (${(fill * scale).toPrecision(3)} each)`,
    );
  }
  const filled = stated.map((p) => (p === null ? fill : p / scale));
  const total = filled.reduce((s, p) => s + p, 0);
  if (Math.abs(total * scale - 1) > 0.01)
    warnings.push(`probabilities sum to ${(total * scale).toPrecision(3)}; normalised to 1`);
  return filled.map((p) => p / total);
}

function readNumber(v: unknown): { value: number | null; percent: boolean; problem?: string } {
  if (v === undefined || v === null)
    return { value: null, percent: false, problem: v === null ? "is null" : undefined };
  if (typeof v === "number")
    return Number.isFinite(v)
      ? { value: v, percent: false }
      : { value: null, percent: false, problem: `is ${v}` };
  if (typeof v === "string") {
    const s = v.trim().replace(/^~|^about\s+/i, "");
    let m = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*%$/i.exec(s);
    if (m) return { value: Number(m[1]), percent: true };
    m = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)$/i.exec(s);
    if (m) return { value: Number(m[1]), percent: false };
    m = /^(\d+)\s*\/\s*(\d+)$/.exec(s);
    if (m && Number(m[2]) > 0) return { value: Number(m[1]) / Number(m[2]), percent: false };
    return {
      value: null,
      percent: false,
      problem: s === "" ? "is empty" : `is not a number (${JSON.stringify(s.slice(0, 20))})`,
    };
  }
  return { value: null, percent: false, problem: `is not a number (${typeof v})` };
}

function cleanText(v: unknown): string {
  if (v === undefined || v === null) return "";
  let t = (
    typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v)
  ).trim();
  for (let again = true; again;) {
    again = false;
    const stripped = t.replace(/^\*\*(.*)\*\*$/s, "$1").trim();
    const m = /^(["'“‘«])([\s\S]*)(["'”’»])$/.exec(stripped);
    const pairs: Record<string, string> = { '"': '"', "'": "'", "“": "”", "‘": "’", "«": "»" };
    if (m && pairs[m[1]] === m[3] && m[2].length > 0) {
      t = m[2].trim();
      again = true;
    } else if (stripped !== t) {
      t = stripped;
      again = true;
    }
  }
  return t;
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// 1. Tags: <response><text>…</text><probability>…</probability></response>

function readTags(raw: string): Extracted | null {
  if (!/<text\s*>/i.test(raw)) return null;
  const hasResponse = /<response\s*>/i.test(raw);
  const opener = hasResponse ? /<response\s*>/gi : /<text\s*>/gi;
  const starts = [...raw.matchAll(opener)].map((m) => m.index!);
  const items: RawItem[] = [];
  let lastIncomplete = false;
  starts.forEach((start, i) => {
    const end = i + 1 < starts.length ? starts[i + 1] : raw.length;
    let block = raw.slice(start, end);
    const close = hasResponse ? /<\/response\s*>/i.exec(block) : null;
    if (close) block = block.slice(0, close.index);
    const text = /<text\s*>([\s\S]*?)(?:<\/text\s*>|<probability\s*>|<\/response\s*>|$)/i.exec(
      block,
    );
    const prob = /<probability\s*>\s*([\s\S]*?)\s*(?:<\/probability\s*>|<|$)/i.exec(block);
    if (!text) return;
    items.push({ text: text[1], probability: prob ? prob[1] : undefined });
    if (i === starts.length - 1) {
      const complete =
        close !== null || (/<\/text\s*>/i.test(block) && /<\/probability\s*>/i.test(block));
      lastIncomplete = !complete;
    }
  });
  if (items.length === 0) return null;
  return { items, format: "tags", warnings: [], lastIncomplete };
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// 2. JSON, possibly fenced, inside prose, broken

interface Region {
  start: number;
  end: number; // exclusive
  closed: boolean; // the opening bracket found its match
}

function readJson(raw: string): Extracted | null {
  // Look inside the first code fence if there is one (an unclosed fence runs to the end).
  const fence = /```[\w-]*[^\S\n]*\n?([\s\S]*?)(?:```|$)/.exec(raw);
  const sources = fence
    ? [{ body: fence[1], offset: fence.index + fence[0].indexOf(fence[1]), fenced: true }]
    : [];
  sources.push({ body: raw, offset: 0, fenced: false });
  for (const src of sources) {
    let tries = 0;
    for (const start of jsonStarts(src.body)) {
      if (++tries > 4) break;
      const region = scanRegion(src.body, start);
      const found = parseRegion(src.body.slice(region.start, region.end), region.closed);
      if (!found) continue;
      const outside =
        (src.fenced
          ? raw.slice(0, fence!.index) + raw.slice(fence!.index + fence![0].length)
          : "") +
        src.body.slice(0, region.start) +
        src.body.slice(region.end);
      const prose = outside.replace(/```[\w-]*/g, "").trim();
      if (prose !== "") found.warnings.unshift(`ignored text around the JSON: ${snippet(prose)}`);
      return found;
    }
  }
  return null;
}

/** Positions of `{` / `[` that look like the start of JSON (not "[laughs]" or "{maybe}"). */
function* jsonStarts(s: string): Generator<number> {
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== "{" && c !== "[") continue;
    const rest = s.slice(i + 1, i + 80).trimStart();
    if (
      rest === "" ||
      /^["'“{[]/.test(rest) ||
      (c === "{" && /^[A-Za-z_]\w*\s*:/.test(rest)) ||
      (c === "[" && /^\]/.test(rest))
    )
      yield i;
  }
}

/**
 * The extent of the JSON value starting at `start`, tracking brackets outside strings. A quote
 * closes a string only when a delimiter (, : } ] or the end of a line) follows it, so unescaped
 * quotes inside a text ("He said "no" twice") do not end it early.
 */
function scanRegion(s: string, start: number): Region {
  const stack: string[] = [];
  const singleQuoted = /^[^"']*'/.test(s.slice(start)); // otherwise an apostrophe is just text
  let quote: string | null = null;
  let lastSignificant = "";
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === "\\") {
        i++;
        continue;
      }
      if (c === quote && /^[^\S\n]*([,:}\]\n]|$)/.test(s.slice(i + 1, i + 40))) quote = null;
      continue;
    }
    if (c === '"' || (c === "'" && singleQuoted && /[{[,:]/.test(lastSignificant))) quote = c;
    else if (c === "{" || c === "[") stack.push(c === "{" ? "}" : "]");
    else if (c === "}" || c === "]") {
      stack.pop();
      if (stack.length === 0) return { start, end: i + 1, closed: true };
    }
    if (!/\s/.test(c)) lastSignificant = c;
  }
  return { start, end: s.length, closed: false };
}

function parseRegion(region: string, closed: boolean): Extracted | null {
  const warnings: string[] = [];
  // JSON has no NaN or Infinity; keep them as strings so the probability reader reports them
  const prepared = region.replace(/(:\s*)(-?Infinity|NaN|undefined)(?=\s*[,}\]]|\s*$)/g, '$1"$2"');
  let value: unknown;
  let repaired = false;
  try {
    value = JSON.parse(prepared);
  } catch {
    repaired = true;
    try {
      value = JSON.parse(jsonrepair(prepared));
    } catch {
      value = undefined;
    }
  }
  const items = value === undefined ? null : itemsOf(value, warnings);
  if (repaired) {
    // Unescaped quotes inside texts can make a repair "succeed" with the candidates cut apart:
    // the key/value scan reads them better whenever it finds more of them.
    const loose = readLooseJson(region);
    if (loose && loose.items.length > (items?.length ?? 0)) return loose;
  }
  if (!items || items.length === 0) return null;
  if (repaired && closed)
    warnings.push(
      "repaired malformed JSON (e.g. trailing commas, single quotes or missing commas)",
    );
  if (!closed)
    warnings.push(
      "the output ends in the middle of the JSON (cut off); the open brackets were closed",
    );
  // single-quoted JSON with apostrophes inside: jsonrepair turns those into double quotes
  if (!region.includes('"'))
    for (const it of items) if (typeof it.text === "string") it.text = it.text.replace(/"/g, "'");
  let lastIncomplete = false;
  if (!closed) {
    const tail = region.replace(/[\s,]+$/, "");
    const last = items[items.length - 1];
    lastIncomplete = !(
      /[}\]]$/.test(tail) ||
      (last.probability === undefined &&
        /["'”]$/.test(tail) &&
        typeof last.text === "string" &&
        !/[{:]/.test(tail.slice(-3)))
    );
  }
  return { items, format: "json", warnings, lastIncomplete };
}

/** Finds the list of candidates in a parsed JSON value, whatever it is called. */
function itemsOf(v: unknown, warnings: string[], depth = 0): RawItem[] | null {
  if (depth > 3) return null;
  if (Array.isArray(v)) {
    const items = v.map((x) => itemOf(x, warnings)).filter((x): x is RawItem => x !== null);
    return items.length ? items : null;
  }
  if (!isRecord(v)) return null;
  const key = findKey(v, LIST_KEYS);
  if (key && Array.isArray(v[key])) return itemsOf(v[key], warnings, depth + 1);
  if (findKey(v, TEXT_KEYS) && !Array.isArray(v[findKey(v, TEXT_KEYS)!])) {
    const one = itemOf(v, warnings);
    return one ? [one] : null;
  }
  for (const x of Object.values(v)) {
    if (Array.isArray(x) && x.length > 0) return itemsOf(x, warnings, depth + 1);
    if (isRecord(x)) {
      const inner = itemsOf(x, warnings, depth + 1);
      if (inner) return inner;
    }
  }
  // {"I might give $1": 0.4, "No thanks": 0.6}: texts as keys
  const entries = Object.entries(v);
  if (entries.length > 0 && entries.every(([, x]) => readNumber(x).value !== null)) {
    warnings.push("the JSON maps texts to probabilities; read each key as a candidate");
    return entries.map(([t, x]) => ({ text: t, probability: x }));
  }
  return null;
}

function itemOf(x: unknown, warnings: string[]): RawItem | null {
  if (typeof x === "string") return { text: x, probability: undefined };
  if (Array.isArray(x))
    return x.length > 0 && typeof x[0] === "string" ? { text: x[0], probability: x[1] } : null;
  if (!isRecord(x)) return null;
  let textKey = findKey(x, TEXT_KEYS);
  if (textKey && isRecord(x[textKey])) return itemOf(x[textKey], warnings); // {"response": {"text", "probability"}}
  const probKey = findKey(x, PROB_KEYS);
  if (!textKey) {
    const strings = Object.entries(x).filter(
      ([k, s]) => typeof s === "string" && k !== probKey && readNumber(s).value === null,
    );
    if (strings.length === 0) return null;
    textKey = strings.reduce((a, b) =>
      (b[1] as string).length > (a[1] as string).length ? b : a,
    )[0];
    warnings.push(`a candidate has no "text" key; read its "${textKey}" field as the text`);
  }
  return {
    text: x[textKey],
    probability: probKey ? x[probKey] : undefined,
    percentKey: probKey !== undefined && /^percent/i.test(probKey),
  };
}

function findKey(o: Record<string, unknown>, names: readonly string[]): string | undefined {
  const keys = Object.keys(o);
  for (const n of names) {
    const k = keys.find((key) => key.trim().toLowerCase() === n);
    if (k !== undefined) return k;
  }
  return undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

// ─────────────────────────────────────────────────────────────────────────────────────────────
// 3. Loose key/value scan, for JSON-like text that no repair makes valid

function readLooseJson(raw: string): Extracted | null {
  const textKey = new RegExp(`["']?(?:${TEXT_KEYS.join("|")})["']?\\s*:\\s*["“]`, "gi");
  const probRe = new RegExp(
    `["']?(?:${PROB_KEYS.join("|")})["']?\\s*:\\s*["']?([^,"'}\\]\\s]+)`,
    "i",
  );
  const hits = [...raw.matchAll(textKey)];
  if (hits.length === 0) return null;
  const items: RawItem[] = [];
  let lastIncomplete = false;
  hits.forEach((h, i) => {
    const from = h.index! + h[0].length;
    const seg = raw.slice(from, i + 1 < hits.length ? hits[i + 1].index! : raw.length);
    // The text ends at the first quote followed by `, "key":` or `}` (a text rarely contains
    // that), else at a quote that ends the segment; with neither the output was cut off in it.
    const end = /["”](?=\s*(?:,\s*["']?\w+["']?\s*:|}))/.exec(seg) ?? /["”](?=[\s,\]]*$)/.exec(seg);
    const text = end ? seg.slice(0, end.index) : seg;
    const after = end ? seg.slice(end.index + 1) : "";
    const prob = probRe.exec(after);
    items.push({ text: text.replace(/\\"/g, '"'), probability: prob ? prob[1] : undefined });
    if (i === hits.length - 1) lastIncomplete = !/}/.test(after);
  });
  return {
    items,
    format: "loose-json",
    warnings: [
      "the JSON is malformed beyond repair (e.g. unescaped quotes in a text); read the texts and probabilities by pattern",
    ],
    lastIncomplete,
  };
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// 4. Numbered or bulleted lines: `1. "I might give $1" (0.4)`, `- Sure! — 40%`, `**Probability:** 0.2`

const NUM = String.raw`(\d*\.?\d+\s*%?)`;
const PROB_LABEL = String.raw`(?:p|prob|probability|likelihood|confidence)`;

function readList(raw: string): Extracted | null {
  const items: RawItem[] = [];
  for (const line0 of raw.split(/\r?\n/)) {
    const line = line0.replace(/\*\*/g, "").replace(/__/g, "").trim();
    if (line === "") continue;
    const probOnly = new RegExp(`^(?:[-*•]\\s*)?${PROB_LABEL}\\s*[:=]\\s*${NUM}\\s*$`, "i").exec(
      line,
    );
    if (probOnly && items.length > 0 && items[items.length - 1].probability === undefined) {
      items[items.length - 1].probability = probOnly[1];
      continue;
    }
    const bullet = /^(?:\(?\d{1,2}[.):]|[-*•]|response\s*\d*\s*[:.)-])\s+(.+)$/i.exec(line);
    if (!bullet) continue;
    let body = bullet[1].trim();
    let probability: string | undefined;
    const patterns = [
      new RegExp(`[([]\\s*(?:${PROB_LABEL}\\s*[:=]?\\s*)?${NUM}\\s*[)\\]]\\s*$`, "i"),
      new RegExp(`[,;|–—-]\\s*(?:${PROB_LABEL}\\s*[:=]?\\s*)?${NUM}\\s*$`, "i"),
      new RegExp(`${PROB_LABEL}\\s*[:=]\\s*${NUM}\\s*\\)?\\s*$`, "i"),
    ];
    for (const re of patterns) {
      const m = re.exec(body);
      if (m) {
        probability = m[1];
        body = body.slice(0, m.index).trim();
        break;
      }
    }
    body = body.replace(/^(?:text|response|reply)\s*\d*\s*:\s*/i, "").replace(/[\s,;:|–—-]+$/, "");
    items.push({ text: body, probability });
  }
  if (items.length === 0 || (items.length < 2 && items.every((i) => i.probability === undefined)))
    return null;
  return {
    items,
    format: "list",
    warnings: ["no JSON or tags found; read the candidates from a list"],
    lastIncomplete: false,
  };
}

const snippet = (s: string) => JSON.stringify(s.length > 40 ? s.slice(0, 37) + "…" : s);

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Selection

export type VsTextSelection = "random" | "prob";

export interface SelectOptions {
  /**
   * τ: candidates with probability below τ are dropped before selection and the rest
   * renormalised; when every candidate is below τ the most probable one is kept (ties: the first).
   */
  tailThreshold?: number;
}

/**
 * Index of the chosen candidate: `random` picks uniformly among the (kept) candidates, as SCOPE's
 * main runs do; `prob` picks by their stated probabilities.
 * @throws on an empty list or a threshold outside [0, 1] (caller errors, not model output).
 */
export function selectCandidate(
  cands: readonly VsTextCandidate[],
  selection: VsTextSelection,
  rng: Rng,
  opts: SelectOptions = {},
): number {
  if (cands.length === 0) throw new Error("selectCandidate: no candidates");
  const tau = opts.tailThreshold ?? 0;
  if (!(tau >= 0 && tau <= 1))
    throw new Error(`selectCandidate: tailThreshold must lie in [0, 1], got ${tau}`);
  let kept = cands.map((_, i) => i).filter((i) => cands[i].probability >= tau);
  if (kept.length === 0)
    kept = [cands.reduce((best, c, i) => (c.probability > cands[best].probability ? i : best), 0)];
  if (selection === "random") return kept[rng.int(kept.length)];
  if (selection !== "prob")
    throw new Error(
      `selectCandidate: unknown selection ${JSON.stringify(selection satisfies never)}`,
    );
  const w = kept.map((i) => Math.max(0, cands[i].probability));
  return w.some((x) => x > 0) ? kept[rng.categorical(w)] : kept[rng.int(kept.length)];
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// CLI

/** `collapse-lab vs-parse`: raw model output in, `{"candidates":[…],"warnings":[…]}` out. */
export function vsParseJson(raw: string, k?: number): string {
  const { candidates, warnings } = parseVs(raw, { k });
  return JSON.stringify({ candidates, warnings });
}
