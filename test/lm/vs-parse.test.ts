// The VS parser (docs/architecture.md#the-lm-tier, #reliability) on a table of outputs written the way small instruct models
// answer a persuadee VS prompt: Qwen2.5-0.5B-Instruct fences its JSON and leaves trailing
// commas or percentages; Llama-3.2-1B-Instruct wraps it in a preamble and a closing note or falls
// back to a numbered list; SmolLM2-135M-Instruct runs out of tokens mid-JSON, repeats itself,
// writes Python dicts or ignores the format. Each row states the texts, the probabilities and
// how many warnings (one per fix-up) the parser must give. Then: the probability rule, k, never
// throwing on junk, and `selectCandidate` with its tail threshold.
import { describe, expect, it } from "vitest";
import { Rng } from "../../src/engine/random";
import {
  parseVs,
  resolveProbabilities,
  selectCandidate,
  type VsFormat,
} from "../../src/lm/vs-parse";

interface Row {
  name: string;
  raw: string;
  k?: number;
  texts: string[];
  probs: number[];
  warnings: number;
  format: VsFormat;
}

const fence = "```";

const TABLE: Row[] = [
  {
    name: "Qwen2.5-0.5B: clean JSON in a json fence",
    k: 5,
    raw: `${fence}json
{
  "responses": [
    {"text": "I'm not sure I want to give away my payment.", "probability": 0.35},
    {"text": "What does Save the Children actually do?", "probability": 0.25},
    {"text": "Sure, I can donate $0.50.", "probability": 0.2},
    {"text": "I'd rather not, money is tight right now.", "probability": 0.15},
    {"text": "Okay, I'll give the full $2!", "probability": 0.05}
  ]
}
${fence}`,
    texts: [
      "I'm not sure I want to give away my payment.",
      "What does Save the Children actually do?",
      "Sure, I can donate $0.50.",
      "I'd rather not, money is tight right now.",
      "Okay, I'll give the full $2!",
    ],
    probs: [0.35, 0.25, 0.2, 0.15, 0.05],
    warnings: 0,
    format: "json",
  },
  {
    name: "Qwen2.5-0.5B: trailing commas after the last item and the list",
    k: 3,
    raw: `${fence}json
{
  "responses": [
    {"text": "That sounds like a good cause.", "probability": 0.5},
    {"text": "How do I know the money gets there?", "probability": 0.3},
    {"text": "No thanks.", "probability": 0.2},
  ],
}
${fence}`,
    texts: ["That sounds like a good cause.", "How do I know the money gets there?", "No thanks."],
    probs: [0.5, 0.3, 0.2],
    warnings: 1, // repaired
    format: "json",
  },
  {
    name: "Llama-3.2-1B: chatty preamble and a closing note around the JSON",
    k: 4,
    raw: `Here are 4 possible responses from the persuadee, with their estimated probabilities:

{"responses": [{"text": "I've never heard of them. Are they legit?", "probability": 0.4}, {"text": "I guess I could spare a dollar.", "probability": 0.3}, {"text": "I already donate to other charities.", "probability": 0.2}, {"text": "Sure, why not!", "probability": 0.1}]}

Note: These probabilities are based on how a typical participant might respond {given the context}.`,
    texts: [
      "I've never heard of them. Are they legit?",
      "I guess I could spare a dollar.",
      "I already donate to other charities.",
      "Sure, why not!",
    ],
    probs: [0.4, 0.3, 0.2, 0.1],
    warnings: 1, // ignored text around the JSON
    format: "json",
  },
  {
    name: "SmolLM2-135M: ran out of tokens inside the second text",
    k: 5,
    raw: `{"responses": [{"text": "I am not sure if I want to donate.", "probability": 0.4}, {"text": "I would like to know more about the`,
    texts: ["I am not sure if I want to donate."],
    probs: [1],
    warnings: 4, // cut off, incomplete candidate dropped, fewer than k, sum 0.4
    format: "json",
  },
  {
    name: "SmolLM2-135M: cut off right after a complete candidate",
    k: 5,
    raw: `{
  "responses": [
    {"text": "I'm happy to help the children.", "probability": 0.6},
    {"text": "Maybe a little bit.", "probability": 0.4},
    `,
    texts: ["I'm happy to help the children.", "Maybe a little bit."],
    probs: [0.6, 0.4],
    warnings: 2, // cut off, fewer than k
    format: "json",
  },
  {
    name: "Qwen2.5-0.5B: probabilities as percentage strings",
    k: 3,
    raw: `${fence}json
{"responses": [{"text": "I can give $1.", "probability": "50%"}, {"text": "Let me think about it.", "probability": "30%"}, {"text": "Not interested.", "probability": "20%"}]}
${fence}`,
    texts: ["I can give $1.", "Let me think about it.", "Not interested."],
    probs: [0.5, 0.3, 0.2],
    warnings: 1, // percentages
    format: "json",
  },
  {
    name: "Llama-3.2-1B: probabilities as bare percentages 0–100",
    k: 3,
    raw: `{"responses": [{"text": "I'd love to help out.", "probability": 45}, {"text": "What percentage goes to overhead?", "probability": 35}, {"text": "I can't afford it.", "probability": 20}]}`,
    texts: ["I'd love to help out.", "What percentage goes to overhead?", "I can't afford it."],
    probs: [0.45, 0.35, 0.2],
    warnings: 1,
    format: "json",
  },
  {
    name: "SmolLM2-135M: a Python list of dicts in single quotes",
    k: 2,
    raw: `[{'text': "I'm not sure about this.", 'probability': 0.7}, {'text': 'Yes, I will donate $1.50', 'probability': 0.3}]`,
    texts: ["I'm not sure about this.", "Yes, I will donate $1.50"],
    probs: [0.7, 0.3],
    warnings: 1, // repaired
    format: "json",
  },
  {
    name: "SmolLM2-135M: single quotes with apostrophes inside the texts",
    k: 2,
    raw: `[{'text': 'I don't have much money', 'probability': 0.6}, {'text': 'That's a great cause', 'probability': 0.4}]`,
    texts: ["I don't have much money", "That's a great cause"],
    probs: [0.6, 0.4],
    warnings: 1,
    format: "json",
  },
  {
    name: "Qwen2.5-0.5B: other key names, probabilities as numeric strings",
    k: 3,
    raw: `{"responses": [{"response": "Okay, I'm listening.", "prob": "0.5"}, {"reply": "Is this a scam?", "confidence": 0.3}, {"content": "I'll give fifty cents.", "likelihood": ".2"}]}`,
    texts: ["Okay, I'm listening.", "Is this a scam?", "I'll give fifty cents."],
    probs: [0.5, 0.3, 0.2],
    warnings: 0,
    format: "json",
  },
  {
    name: "Llama-3.2-1B: one probability missing",
    k: 3,
    raw: `{"responses": [{"text": "I want to help.", "probability": 0.5}, {"text": "Can you tell me more?", "probability": 0.3}, {"text": "No."}]}`,
    texts: ["I want to help.", "Can you tell me more?", "No."],
    probs: [0.5, 0.3, 0.2], // the missing one gets the 0.2 left over
    warnings: 1,
    format: "json",
  },
  {
    name: "SmolLM2-135M: NaN, a negative and a value above 1",
    k: 4,
    raw: `{"responses": [{"text": "A", "probability": NaN}, {"text": "B", "probability": -0.2}, {"text": "C", "probability": 1.5}, {"text": "D", "probability": 0.5}]}`,
    texts: ["A", "B", "C", "D"],
    // stated sum 2 ≥ 1: the two unusable ones get the mean stated value 1; then / 4
    probs: [0.25, 0.25, 0.375, 0.125],
    warnings: 4, // NaN, negative, filled, sum
    format: "json",
  },
  {
    name: "Qwen2.5-0.5B: seven candidates for k = 5",
    k: 5,
    raw: `{"responses": [${["One", "Two", "Three", "Four", "Five", "Six", "Seven"].map((t) => `{"text": "${t}.", "probability": 0.14}`).join(", ")}]}`,
    texts: ["One.", "Two.", "Three.", "Four.", "Five."],
    probs: [0.2, 0.2, 0.2, 0.2, 0.2],
    warnings: 2, // cut to k, sum 0.7
    format: "json",
  },
  {
    name: "SmolLM2-135M: the same reply three times",
    k: 5,
    raw: `{"responses": [{"text": "I'm not sure.", "probability": 0.2}, {"text": "I'm not sure.", "probability": 0.2}, {"text": "Sure!", "probability": 0.2}, {"text": "i'm  not sure.", "probability": 0.2}, {"text": "No.", "probability": 0.2}]}`,
    texts: ["I'm not sure.", "Sure!", "No."],
    probs: [0.6, 0.2, 0.2],
    warnings: 3, // two merges, fewer than k
    format: "json",
  },
  {
    name: "Llama-3.2-1B: an empty text",
    k: 3,
    raw: `{"responses": [{"text": "I'd give $1.", "probability": 0.5}, {"text": "", "probability": 0.3}, {"text": "No thank you.", "probability": 0.2}]}`,
    texts: ["I'd give $1.", "No thank you."],
    probs: [0.5 / 0.7, 0.2 / 0.7],
    warnings: 3, // empty dropped, fewer than k, sum 0.7
    format: "json",
  },
  {
    name: "Llama-3.2-1B: the VS paper's tag format",
    k: 3,
    raw: `<response>
<text>I think I can spare a dollar for the kids.</text>
<probability>0.5</probability>
</response>
<response>
<text>How do I know my money won't be wasted?</text>
<probability>0.3</probability>
</response>
<response>
<text>Not today, sorry.</text>
<probability>0.2</probability>
</response>`,
    texts: [
      "I think I can spare a dollar for the kids.",
      "How do I know my money won't be wasted?",
      "Not today, sorry.",
    ],
    probs: [0.5, 0.3, 0.2],
    warnings: 0,
    format: "tags",
  },
  {
    name: "SmolLM2-135M: tags, the last block cut off",
    k: 3,
    raw: `<response>
<text>I think I can spare a dollar.</text>
<probability>0.45</probability>
</response>
<response>
<text>I'm a bit skeptical of charities.</text>
<probability>0.35</probability>
</response>
<response>
<text>Could you tell me more about`,
    texts: ["I think I can spare a dollar.", "I'm a bit skeptical of charities."],
    probs: [0.45 / 0.8, 0.35 / 0.8],
    warnings: 3, // cut-off candidate dropped, fewer than k, sum 0.8
    format: "tags",
  },
  {
    name: "Llama-3.2-1B: a numbered list with probabilities in parentheses",
    k: 4,
    raw: `Here are four possible replies:

1. "I might give $1" (0.4)
2. "I need to think about it" (0.3)
3. "No, thank you." (0.2)
4. "What do they do exactly?" (0.1)`,
    texts: [
      "I might give $1",
      "I need to think about it",
      "No, thank you.",
      "What do they do exactly?",
    ],
    probs: [0.4, 0.3, 0.2, 0.1],
    warnings: 1, // read from a list
    format: "list",
  },
  {
    name: "Llama-3.2-1B: markdown bullets with bold labels",
    k: 2,
    raw: `Sure! Here are two responses:

- **Response 1:** I'd be happy to donate $2! **Probability:** 60%
- **Response 2:** Can I think about it? **Probability:** 40%`,
    texts: ["I'd be happy to donate $2!", "Can I think about it?"],
    probs: [0.6, 0.4],
    warnings: 2, // list, percentages
    format: "list",
  },
  {
    name: "SmolLM2-135M: ignores the format entirely",
    k: 5,
    raw: `  Hello! As a persuadee, I think donating to Save the Children is a great idea, and I would be happy to give $1.  `,
    texts: [
      "Hello! As a persuadee, I think donating to Save the Children is a great idea, and I would be happy to give $1.",
    ],
    probs: [1],
    warnings: 1,
    format: "raw",
  },
  {
    name: "Qwen2.5-0.5B: unescaped quotes inside the texts",
    k: 2,
    raw: `{"responses": [{"text": "He said "no" twice, so I won't either.", "probability": 0.6}, {"text": "Okay, "fine", I'll give fifty cents.", "probability": 0.4}]}`,
    texts: ['He said "no" twice, so I won\'t either.', 'Okay, "fine", I\'ll give fifty cents.'],
    probs: [0.6, 0.4],
    warnings: 1, // read by pattern
    format: "loose-json",
  },
  {
    name: "Qwen2.5-0.5B: unicode, emoji and typographic quotes",
    k: 3,
    raw: `${fence}json
{"responses": [{"text": "Je donne 1 € — c’est promis 😊", "probability": 0.5}, {"text": "いいえ、結構です。", "probability": 0.3}, {"text": "“Why should I trust them?”", "probability": 0.2}]}
${fence}`,
    texts: ["Je donne 1 € — c’est promis 😊", "いいえ、結構です。", "Why should I trust them?"],
    probs: [0.5, 0.3, 0.2],
    warnings: 0,
    format: "json",
  },
  {
    name: "SmolLM2-135M: a bare list of strings without probabilities",
    k: 3,
    raw: `["I'd give $1", "No thanks", "Maybe later"]`,
    texts: ["I'd give $1", "No thanks", "Maybe later"],
    probs: [1 / 3, 1 / 3, 1 / 3],
    warnings: 1, // no usable probabilities
    format: "json",
  },
  {
    name: "Llama-3.2-1B: texts as keys of an object",
    k: 2,
    raw: `{"I'll donate $1.": 0.7, "No, thanks.": 0.3}`,
    texts: ["I'll donate $1.", "No, thanks."],
    probs: [0.7, 0.3],
    warnings: 1,
    format: "json",
  },
  {
    name: "Qwen2.5-0.5B: every probability 0",
    k: 2,
    raw: `{"responses": [{"text": "Yes.", "probability": 0}, {"text": "No.", "probability": 0.0}]}`,
    texts: ["Yes.", "No."],
    probs: [0.5, 0.5],
    warnings: 1,
    format: "json",
  },
  {
    name: "SmolLM2-135M: an unclosed fence, cut off inside a probability key",
    k: 3,
    raw: `${fence}json
{
  "responses": [
    {"text": "I will donate $0.50.", "probability": 0.5},
    {"text": "I don't trust charities.", "prob`,
    texts: ["I will donate $0.50."],
    probs: [1],
    warnings: 4, // cut off, dropped, fewer than k, sum 0.5
    format: "json",
  },
  {
    name: "Qwen2.5-0.5B: reasoning first, then the fenced JSON",
    k: 2,
    raw: `To simulate the persuadee, I considered that they are agreeable but short of money.

${fence}json
{"responses": [{"text": "I'd like to help, but only a little.", "probability": 0.65}, {"text": "Sorry, I need the money.", "probability": 0.35}]}
${fence}`,
    texts: ["I'd like to help, but only a little.", "Sorry, I need the money."],
    probs: [0.65, 0.35],
    warnings: 1, // ignored text
    format: "json",
  },
  {
    name: "Llama-3.2-1B: nested {response: {text, probability}} objects",
    k: 2,
    raw: `{"responses": [{"response": {"text": "Count me in.", "probability": 0.8}}, {"response": {"text": "I'll pass.", "probability": 0.2}}]}`,
    texts: ["Count me in.", "I'll pass."],
    probs: [0.8, 0.2],
    warnings: 0,
    format: "json",
  },
  {
    name: "SmolLM2-135M: probabilities in words and a fraction",
    k: 3,
    raw: `{"responses": [{"text": "Yes", "probability": "high"}, {"text": "No", "probability": "1/4"}, {"text": "Maybe", "probability": 0.25}]}`,
    texts: ["Yes", "No", "Maybe"],
    probs: [0.5, 0.25, 0.25],
    warnings: 2, // unreadable, filled
    format: "json",
  },
];

describe("parseVs on realistic model outputs", () => {
  it("has at least 20 rows", () => expect(TABLE.length).toBeGreaterThanOrEqual(20));

  it.each(TABLE)("$name", (row) => {
    const r = parseVs(row.raw, { k: row.k });
    expect(r.candidates.map((c) => c.text)).toEqual(row.texts);
    r.candidates.forEach((c, i) =>
      expect(c.probability, `candidate ${i + 1}`).toBeCloseTo(row.probs[i], 10),
    );
    expect(r.candidates.reduce((s, c) => s + c.probability, 0)).toBeCloseTo(1, 12);
    expect(r.warnings, JSON.stringify(r.warnings, null, 1)).toHaveLength(row.warnings);
    for (const w of r.warnings) expect(w.length).toBeGreaterThan(10);
    expect(r.format).toBe(row.format);
  });
});

describe("parseVs edge cases", () => {
  it("an empty output gives no candidates and a warning", () => {
    for (const raw of ["", "   \n\t "]) {
      const r = parseVs(raw, { k: 5 });
      expect(r.candidates).toEqual([]);
      expect(r.warnings).toHaveLength(1);
      expect(r.format).toBe("empty");
    }
  });

  it("without k, any number of candidates is fine", () => {
    const raw = `{"responses": [{"text": "a", "probability": 0.5}, {"text": "b", "probability": 0.5}]}`;
    expect(parseVs(raw)).toEqual({
      candidates: [
        { text: "a", probability: 0.5 },
        { text: "b", probability: 0.5 },
      ],
      warnings: [],
      format: "json",
    });
  });

  it("brackets in ordinary prose are not mistaken for JSON", () => {
    const r = parseVs("[laughs] Okay {maybe} I'll give a dollar.");
    expect(r.format).toBe("raw");
    expect(r.candidates).toEqual([
      { text: "[laughs] Okay {maybe} I'll give a dollar.", probability: 1 },
    ]);
  });

  it("a bad k is a caller error", () => {
    for (const k of [0, -1, 2.5, NaN])
      expect(() => parseVs("x", { k })).toThrow(/k must be a positive integer/);
  });

  it("never throws on junk, and always returns normalised probabilities", () => {
    const rng = Rng.seed(3);
    const pieces = [
      '{"responses": [',
      "{",
      "}",
      "]",
      '"text":',
      "'probability':",
      "0.3",
      "70%",
      "NaN",
      ",",
      "<response>",
      "<text>",
      "</text>",
      "<probability>",
      "```json",
      "1. ",
      "- ",
      "\n",
      '"',
      "'",
      "hello",
      "é😊",
      "\\",
      "null",
      "-1",
      "1e400",
      "{{{{",
      "]]]",
    ];
    for (let t = 0; t < 3000; t++) {
      const n = 1 + rng.int(14);
      const raw = Array.from({ length: n }, () => pieces[rng.int(pieces.length)]).join(
        rng.uniform() < 0.5 ? "" : " ",
      );
      const r = parseVs(raw, { k: 1 + rng.int(6) });
      const total = r.candidates.reduce((s, c) => s + c.probability, 0);
      if (r.candidates.length > 0) expect(total, raw).toBeCloseTo(1, 9);
      for (const c of r.candidates) {
        expect(Number.isFinite(c.probability) && c.probability >= 0, raw).toBe(true);
        expect(typeof c.text).toBe("string");
        expect(c.text.length, raw).toBeGreaterThan(0);
      }
    }
  });
});

describe("resolveProbabilities", () => {
  it("gives missing ones an equal share of the mass left over, or the mean stated value when none is left", () => {
    expect(resolveProbabilities([0.5, null, null])).toEqual([0.5, 0.25, 0.25]);
    const w: string[] = [];
    const p = resolveProbabilities([0.6, 0.6, null], w);
    [0.6, 0.6, 0.6].forEach((x, i) => expect(p[i]).toBeCloseTo(x / 1.8, 12));
    expect(w).toHaveLength(2); // filled, normalised
    expect(resolveProbabilities([null, null])).toEqual([0.5, 0.5]);
    expect(resolveProbabilities([])).toEqual([]);
  });

  it("does not report a sum that is 1 to within 0.01", () => {
    const w: string[] = [];
    resolveProbabilities([0.333, 0.333, 0.333], w);
    expect(w).toEqual([]);
  });
});

describe("selectCandidate", () => {
  const cands = [
    { text: "a", probability: 0.6 },
    { text: "b", probability: 0.3 },
    { text: "c", probability: 0.08 },
    { text: "d", probability: 0.02 },
  ];
  const freq = (selection: "random" | "prob", tailThreshold?: number, n = 40_000) => {
    const rng = Rng.seed(11);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < n; i++) counts[selectCandidate(cands, selection, rng, { tailThreshold })]++;
    return counts.map((c) => c / n);
  };

  /** A frequency from n = 40,000 draws within 4.5 binomial standard errors of p (two-sided ≈ 7e-6 per check). */
  const near = (f: number, p: number, what: string, n = 40_000) => {
    const se = Math.sqrt((p * (1 - p)) / n);
    expect(Math.abs(f - p), `${what}: ${f} vs ${p} (se ${se.toFixed(5)})`).toBeLessThan(4.5 * se);
  };

  it("`random` is uniform, `prob` follows the stated probabilities", () => {
    freq("random").forEach((f, i) => near(f, 0.25, `random ${i}`)); // se 0.0022: ±0.0097
    freq("prob").forEach((f, i) => near(f, cands[i].probability, `prob ${i}`)); // ±0.011 for 0.6 … ±0.0031 for 0.02
  });

  it("the tail threshold drops candidates below τ and renormalises the rest", () => {
    const r = freq("random", 0.1);
    expect(r[2] + r[3]).toBe(0);
    near(r[0], 0.5, "random, τ = 0.1");
    const p = freq("prob", 0.1);
    expect(p[2] + p[3]).toBe(0);
    near(p[0], 0.6 / 0.9, "prob, τ = 0.1");
  });

  it("keeps the most probable candidate when τ drops them all", () => {
    expect(freq("random", 0.9, 200)).toEqual([1, 0, 0, 0]);
    expect(freq("prob", 1, 200)).toEqual([1, 0, 0, 0]);
  });

  it("refuses an empty list or a threshold outside [0, 1]", () => {
    const rng = Rng.seed(1);
    expect(() => selectCandidate([], "random", rng)).toThrow(/no candidates/);
    expect(() => selectCandidate(cands, "prob", rng, { tailThreshold: 1.5 })).toThrow(
      /tailThreshold/,
    );
  });
});
