// Measures on LM replies: words and distinct-n (counted by hand), embedding diversity (known
// geometries, scale invariance, clipping of negative cosines), donation amounts read from the
// ways people and models say them, and the histogram against P4G's humans (KS and L1 by hand).
import { describe, expect, it } from "vitest";
import { p4gStats } from "../../src/benchmarks/persuasion/p4g-stats";
import {
  distinctNTexts,
  distinctScores,
  embeddingDiversity,
  embeddingDiversityOf,
  words,
} from "../../src/lm/measures";
import {
  compareDonations,
  gridIndex,
  parseDonation,
} from "../../src/benchmarks/persuasion/lm-measures";
import type { EmbeddingModel } from "../../src/lm/types";

describe("distinct-n over words", () => {
  it("tokenises into lower-case words, keeping dollar amounts and contractions whole", () => {
    expect(words("I'll donate $1.50, OK? Ça va!")).toEqual([
      "i'll",
      "donate",
      "$1.50",
      "ok",
      "ça",
      "va",
    ]);
    expect(words("  ")).toEqual([]);
  });

  it("counts distinct n-grams over all n-grams, within each reply", () => {
    const texts = ["I will donate $1.", "I will donate $2."];
    expect(distinctScores(texts)).toEqual({ distinct1: 5 / 8, distinct2: 4 / 6, distinct3: 3 / 4 });
    expect(distinctNTexts(["No.", "No.", "No."], 1)).toBeCloseTo(1 / 3, 12);
    expect(distinctNTexts(["Okay."], 2)).toBe(0); // no bigrams at all
    expect(distinctNTexts(["a b", "b a"], 2)).toBe(1); // n-grams never cross replies
  });
});

describe("embedding diversity", () => {
  const v = (...x: number[]) => Float32Array.from(x);

  it("is 0 for identical directions and 1 for orthogonal ones, whatever the lengths", () => {
    expect(embeddingDiversity([v(1, 0), v(3, 0), v(0.5, 0)])).toBeCloseTo(0, 7);
    expect(embeddingDiversity([v(1, 0, 0), v(0, 2, 0), v(0, 0, 5)])).toBeCloseTo(1, 12);
  });

  it("clips negative cosines to 0", () => {
    expect(embeddingDiversity([v(1, 0), v(-1, 0)])).toBe(1);
    // cosines: (a,b) = 0.6, (a,c) = −0.6 → 0, (b,c) = −1 → 0; mean 0.2
    expect(embeddingDiversity([v(1, 0), v(0.6, 0.8), v(-0.6, -0.8)])).toBeCloseTo(1 - 0.6 / 3, 6);
  });

  it("refuses fewer than 2 vectors, mixed lengths and zero vectors", () => {
    expect(() => embeddingDiversity([v(1)])).toThrow(/at least 2/);
    expect(() => embeddingDiversity([v(1, 0), v(1)])).toThrow(/vector 1 has 1 entries/);
    expect(() => embeddingDiversity([v(1, 0), v(0, 0)])).toThrow(/zero/);
  });

  it("embeds through an EmbeddingModel", async () => {
    const fake: EmbeddingModel = {
      id: "fake",
      embed: async (texts) => texts.map((t) => (t.startsWith("yes") ? v(1, 0) : v(0, 1))),
    };
    expect(await embeddingDiversityOf(fake, ["yes a", "yes b", "no"])).toBeCloseTo(1 - 1 / 3, 12);
  });
});

describe("parseDonation", () => {
  const cases: [string, number | null][] = [
    ["$1", 1],
    ["I'll donate $1.", 1],
    ["Okay, I will donate $1.50.", 1.5],
    ["$0.50 is fine with me.", 0.5],
    ["I can give 1 dollar.", 1],
    ["Sure, fifty cents.", 0.5],
    ["Maybe twenty-five cents?", 0.25],
    ["I'll give a dollar.", 1],
    ["A dollar fifty sounds fair.", 1.5],
    ["Half a dollar, then.", 0.5],
    ["I'll donate all of it!", 2],
    ["Nothing, sorry.", 0],
    ["I won't donate.", 0],
    ["I’m not going to give anything.", 0],
    ["No thanks, I am not interested.", 0],
    ["I can't afford it right now.", 0],
    ["I will donate $0.00.", 0],
    ["I won't donate $2, but I'll give $0.50.", 0.5],
    ["I'll give $1 out of my $2.", 1],
    ["Out of my $2 payment, I'll give 50 cents.", 0.5],
    ["I'd like to donate $5!", 2],
    ["That sounds good.", null],
    ["How much of the money gets there?", null],
    ["", null],
  ];
  it.each(cases)("%j → %j", (text, expected) => {
    expect(parseDonation(text)).toBe(expected);
  });

  it("keeps the raw value when asked not to clamp", () => {
    expect(parseDonation("I'd like to donate $5!", { clamp: false })).toBe(5);
    expect(parseDonation("I'll give $0.30")).toBe(0.3); // not rounded to the grid
  });
});

describe("donations against P4G's humans", () => {
  const human = p4gStats.donations.histogram.fractions;

  it("rounds to the nearest $0.5, ties up, as the P4G summary", () => {
    expect([0, 0.24, 0.25, 0.5, 0.74, 0.75, 1.74, 1.75, 2].map(gridIndex)).toEqual([
      0, 0, 1, 1, 1, 2, 3, 4, 4,
    ]);
  });

  it("everyone giving $0: KS and L1 by hand", () => {
    const c = compareDonations([0, 0, null, 0]);
    expect(c.counts).toEqual([3, 0, 0, 0, 0]);
    expect(c.fractions).toEqual([1, 0, 0, 0, 0]);
    expect(c.parsed).toBe(3);
    expect(c.unparsed).toBe(1);
    expect(c.mean).toBe(0);
    expect(c.ks).toBeCloseTo(1 - human[0], 12);
    expect(c.l1).toBeCloseTo(1 - human[0] + human[1] + human[2] + human[3] + human[4], 12);
  });

  it("is 0 against itself, and handles nothing parsed", () => {
    const c = compareDonations([0, 0.5, 1, 1, 2], [0.2, 0.2, 0.4, 0, 0.2]);
    expect(c.ks).toBeCloseTo(0, 12);
    expect(c.l1).toBeCloseTo(0, 12);
    expect(c.mean).toBeCloseTo(0.9, 12);
    const none = compareDonations([null, null]);
    expect(none).toMatchObject({
      parsed: 0,
      unparsed: 2,
      ks: null,
      l1: null,
      mean: null,
      fractions: [0, 0, 0, 0, 0],
    });
    expect(() => compareDonations([0], [1])).toThrow(/bins/);
  });

  it("KS is the largest CDF gap", () => {
    const c = compareDonations([2, 2], [0.5, 0, 0, 0, 0.5]);
    expect(c.ks).toBeCloseTo(0.5, 12);
    expect(c.l1).toBeCloseTo(1, 12);
  });
});
