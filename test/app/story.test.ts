// The narrative's numbers and the generalisation gap, on the shipped paper recording and on
// reports edited so that a fix loses: the sentences follow the numbers, never a script.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/experiment/report-schema";
import { generalisationGaps, points, signed, storyOf } from "../../src/app/lib/story";
import type { RunReport } from "../../src/experiment/experiment";

const paper = parseReport(readFileSync("public/recorded/persuasion-paper.json", "utf8"));
const summary = (r: RunReport, id: string) => r.conditions.find((c) => c.id === id)!.summary;

describe("storyOf", () => {
  it("reads single's fall and each fix's gain from the report's summaries", () => {
    const s = storyOf(paper);
    expect(s.single?.train).toBeCloseTo(100 * summary(paper, "single").trainSuccess.mean, 9);
    expect(s.single?.human).toBeCloseTo(100 * summary(paper, "single").humanSuccess.mean, 9);
    expect(s.fixes.map((f) => f.id)).toEqual(["vs", "population"]);
    for (const f of s.fixes) {
      expect(f.humanGain).toBeCloseTo(
        100 * (summary(paper, f.id).humanSuccess.mean - summary(paper, "single").humanSuccess.mean),
        9,
      );
      expect(f.beats).toBe(true); // the paper recording shows both fixes above single, held-out and with humans
    }
    expect(s.seeds).toBe(paper.config.seeds);
  });

  it("says a fix does not beat single when its numbers say so", () => {
    const edited = structuredClone(paper);
    summary(edited, "vs").heldoutSuccess.mean =
      summary(edited, "single").heldoutSuccess.mean - 0.01;
    const s = storyOf(edited);
    expect(s.fixes.find((f) => f.id === "vs")?.beats).toBe(false);
    expect(s.fixes.find((f) => f.id === "population")?.beats).toBe(true);
  });

  it("has no headline without single, and no fixes it did not run", () => {
    const noSingle = { ...paper, conditions: paper.conditions.filter((c) => c.id !== "single") };
    expect(storyOf(noSingle)).toMatchObject({ single: null, fixes: [] });
    const noVs = { ...paper, conditions: paper.conditions.filter((c) => c.id !== "vs") };
    expect(storyOf(noVs).fixes.map((f) => f.id)).toEqual(["population"]);
  });

  it("formats whole points and signed differences", () => {
    expect(points(89.34)).toBe("89\u202f%");
    expect(signed(11.6)).toBe("+12");
    expect(signed(-3.2)).toBe("−3");
  });
});

describe("generalisationGaps", () => {
  it("pairs each seed's training-simulator success with its held-out and human success", () => {
    const gaps = generalisationGaps(paper);
    expect(gaps.some((g) => g.condition === "base")).toBe(false);
    const single = gaps.find((g) => g.condition === "single" && g.versus === "humans")!;
    const c = paper.conditions.find((x) => x.id === "single")!;
    expect(single.perSeed).toEqual(c.seeds.map((s) => 100 * s.trainSuccess - 100 * s.humanSuccess));
    expect(single.gap.n).toBe(paper.config.seeds);
    // single overfits its simulator; the fixes' gaps are far smaller
    for (const fix of ["vs", "population"]) {
      const g = gaps.find((x) => x.condition === fix && x.versus === "humans")!;
      expect(single.gap.mean - g.gap.mean).toBeGreaterThan(20);
    }
  });

  it("keeps every interval within what a difference of two success rates can be", () => {
    for (const g of generalisationGaps(paper)) {
      expect(g.gap.lo).toBeGreaterThanOrEqual(-100);
      expect(g.gap.hi).toBeLessThanOrEqual(100);
      expect(g.gap.lo).toBeLessThanOrEqual(g.gap.mean);
      expect(g.gap.hi).toBeGreaterThanOrEqual(g.gap.mean);
    }
  });
});
