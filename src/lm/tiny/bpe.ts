// A small byte-level BPE tokenizer in GPT-2's format (Radford et al. 2019; Hugging Face
// tokenizers' ByteLevel + BPE) for the tiny test LM, and a plain reference encoder/decoder that
// the tests hold transformers.js's tokenizer to. Every byte is a token, so any text round-trips;
// a few dozen merges of common English pieces make ordinary words multi-byte tokens.

/** GPT-2's reversible map from bytes to printable unicode characters (space → "Ġ"). */
export function bytesToUnicode(): string[] {
  const keep: number[] = [];
  for (let b = 33; b <= 126; b++) keep.push(b); // "!" … "~"
  for (let b = 161; b <= 172; b++) keep.push(b); // "¡" … "¬"
  for (let b = 174; b <= 255; b++) keep.push(b); // "®" … "ÿ"
  const map = new Array<string>(256);
  let extra = 0;
  for (let b = 0; b < 256; b++)
    map[b] = keep.includes(b) ? String.fromCodePoint(b) : String.fromCodePoint(256 + extra++);
  return map;
}

/** GPT-2's pre-tokenizer pattern (contractions, letters, digits, other, whitespace). */
export const GPT2_SPLIT =
  /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** Pieces the merges build, left to right; a leading space is written as a space here. */
const PIECES = [
  " the",
  " and",
  " to",
  " of",
  " you",
  " I",
  " a",
  " is",
  " that",
  " in",
  " it",
  " for",
  " would",
  " like",
  " not",
  " can",
  " help",
  " donate",
  " money",
  " children",
  " Save",
  " Children",
  " $",
  " $1",
  " $5",
  "00",
  "ing",
  "ed",
  "er",
  "re",
  "on",
  "an",
  "he",
  "ll",
  ".",
  ",",
  "!",
  "?",
  "'s",
  " be",
  " we",
  " my",
  " do",
  " no",
  " yes",
  " Yes",
  " No",
  " think",
  " sure",
  " maybe",
];

export interface BpeTokenizerSpec {
  /** token string (byte-level alphabet) → id; bytes first in GPT-2's order, then merges. */
  vocab: Map<string, number>;
  merges: [string, string][];
  /** Special tokens after the vocabulary, in id order. */
  specials: string[];
}

export function buildBpe(specials: string[]): BpeTokenizerSpec {
  const b2u = bytesToUnicode();
  // GPT-2 orders the byte tokens as its bytes_to_unicode table lists them: printable first
  const order = [...b2u.entries()]
    .sort((a, b) => a[1].codePointAt(0)! - b[1].codePointAt(0)!)
    .map(([, c]) => c);
  const vocab = new Map<string, number>();
  order.forEach((c) => vocab.set(c, vocab.size));
  const merges: [string, string][] = [];
  const enc = new TextEncoder();
  for (const piece of PIECES) {
    const chars = [...enc.encode(piece)].map((b) => b2u[b]);
    let left = chars[0];
    for (const c of chars.slice(1)) {
      const merged = left + c;
      if (!vocab.has(merged)) {
        merges.push([left, c]);
        vocab.set(merged, vocab.size);
      }
      left = merged;
    }
  }
  specials.forEach((s) => vocab.set(s, vocab.size));
  return { vocab, merges, specials };
}

/** tokenizer.json (Hugging Face tokenizers format) for a byte-level BPE tokenizer. */
export function bpeTokenizerJson(spec: BpeTokenizerSpec): Record<string, unknown> {
  const byteLevel = {
    type: "ByteLevel",
    add_prefix_space: false,
    trim_offsets: true,
    use_regex: true,
  };
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: spec.specials.map((content) => ({
      id: spec.vocab.get(content),
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries([...spec.vocab].filter(([t]) => !spec.specials.includes(t))),
      merges: spec.merges.map(([a, b]) => `${a} ${b}`),
    },
  };
}

/** Reference byte-level BPE: what the tokenizer.json above must compute. */
export class ReferenceBpe {
  readonly #spec: BpeTokenizerSpec;
  readonly #ranks: Map<string, number>;
  readonly #b2u = bytesToUnicode();
  readonly #u2b: Map<string, number>;
  readonly #byId: string[];

  constructor(spec: BpeTokenizerSpec) {
    this.#spec = spec;
    this.#ranks = new Map(spec.merges.map(([a, b], i) => [`${a} ${b}`, i]));
    this.#u2b = new Map(this.#b2u.map((c, b) => [c, b]));
    this.#byId = [];
    for (const [t, id] of spec.vocab) this.#byId[id] = t;
  }

  encode(text: string): number[] {
    const ids: number[] = [];
    const specials = this.#spec.specials;
    // special tokens are matched first, as added tokens are
    const parts = specials.length
      ? text.split(
          new RegExp(
            `(${specials.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`,
          ),
        )
      : [text];
    for (const part of parts) {
      if (part === "") continue;
      if (specials.includes(part)) {
        ids.push(this.#spec.vocab.get(part)!);
        continue;
      }
      for (const word of part.match(GPT2_SPLIT) ?? []) {
        const symbols = [...new TextEncoder().encode(word)].map((b) => this.#b2u[b]);
        for (const s of this.#bpe(symbols)) ids.push(this.#spec.vocab.get(s)!);
      }
    }
    return ids;
  }

  /** Merges the lowest-ranked adjacent pair until none is mergeable (Sennrich et al. 2016). */
  #bpe(symbols: string[]): string[] {
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const r = this.#ranks.get(`${symbols[i]} ${symbols[i + 1]}`);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) return symbols;
      const [a, b] = [symbols[best], symbols[best + 1]];
      const next: string[] = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === a && symbols[i + 1] === b) {
          next.push(a + b);
          i++;
        } else next.push(symbols[i]);
      }
      symbols = next;
    }
  }

  decode(ids: number[], { skipSpecial = true } = {}): string {
    let out = "";
    let bytes: number[] = [];
    const flush = () => {
      out += new TextDecoder().decode(Uint8Array.from(bytes));
      bytes = [];
    };
    for (const id of ids) {
      const t = this.#byId[id];
      if (t === undefined) throw new Error(`token id ${id} outside the vocabulary`);
      if (this.#spec.specials.includes(t)) {
        flush();
        if (!skipSpecial) out += t;
      } else for (const c of t) bytes.push(this.#u2b.get(c)!);
    }
    flush();
    return out;
  }
}
