// The Simulators page's what-if closed forms against the engine's own code: the aligned row is
// the engine's π_ref^γ (`sharpenLogp`); `vsSampled` is the exact distribution of VS's sampler
// (`verbalize` + `select`, checked with many seeded draws); at the run's settings the closed forms
// reproduce the rows the engine recorded in every shipped recording; the sentence about the
// aligned simulator is built from the numbers shown.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  concentrationSentence,
  gammaToPosition,
  positionToGamma,
  repliesToCover,
  sharpen,
  vsSampled,
  whatIfRows,
} from "../../src/app/lib/reply-what-if";
import { Rng } from "../../src/engine/random";
import type { RunReport } from "../../src/experiment/experiment";
import { select, verbalize, vsExponent } from "../../src/simulators/vs";

const Q = [0.05, 0.3, 0.02, 0.4, 0.0, 0.15, 0.08];
const close = (a: number[], b: number[], tol: number) =>
  a.forEach((x, i) =>
    expect(Math.abs(x - b[i]), `entry ${i}: ${x} vs ${b[i]}`).toBeLessThanOrEqual(tol),
  );

describe("sharpen (π_ref^γ renormalised)", () => {
  it("is the reference at γ = 1, sharper above, keeps zeros and sums to 1", () => {
    close(sharpen(Q, 1), Q, 1e-12);
    const s = sharpen(Q, 10);
    expect(s.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(s[4]).toBe(0);
    expect(Math.max(...s)).toBeGreaterThan(0.9);
    const z = Q.reduce((a, x) => a + x ** 3, 0);
    close(
      sharpen(Q, 3),
      Q.map((x) => x ** 3 / z),
      1e-12,
    );
  });
});

describe("vsSampled against VS's sampler", () => {
  const draws = (q: number[], k: number, selection: "random" | "prob", n: number) => {
    const rng = Rng.seed(42);
    const counts = q.map(() => 0);
    for (let i = 0; i < n; i++) counts[select(verbalize(q, k, rng), selection, rng)]++;
    return counts.map((c) => c / n);
  };
  it("random selection: exactly q, for any k", () => {
    for (const k of [1, 3, 8]) close(vsSampled(Q, k, "random"), Q, 1e-15);
  });
  it.each([1, 2, 5, 12])(
    "prob selection, k = %i: the exact sum over subsets matches 200 000 draws",
    (k) => {
      const n = 200_000;
      const exact = vsSampled(Q, k, "prob");
      expect(exact.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
      const mc = draws(Q, k, "prob", n);
      // 5 standard errors of a share estimated from n draws
      exact.forEach((p, i) =>
        expect(Math.abs(mc[i] - p), `act ${i}, k ${k}`).toBeLessThanOrEqual(
          5 * Math.sqrt((p * (1 - p)) / n) + 1e-9,
        ),
      );
      if (k === 1) close(exact, Q, 1e-12);
      if (k > 1) expect(exact[3]).toBeGreaterThan(Q[3]); // picking by probability favours the likeliest listed reply
    },
  );
  it("prob selection tends to q as k grows", () => {
    const gap = (k: number) =>
      Math.max(...vsSampled(Q, k, "prob").map((p, i) => Math.abs(p - Q[i])));
    expect(gap(40)).toBeLessThan(gap(5));
    expect(gap(400)).toBeLessThan(0.01);
  });
});

describe("whatIfRows at the run's settings reproduce the engine's recorded rows", () => {
  for (const name of ["persuasion-smoke", "persuasion-quick", "persuasion-paper"]) {
    it(name, () => {
      const report = JSON.parse(readFileSync(`public/recorded/${name}.json`, "utf8")) as RunReport;
      const w = {
        gamma: report.config.simulator.gamma,
        fidelity: report.config.vs.fidelity,
        k: report.config.vs.k,
        selection: report.config.vs.selection,
      };
      let checked = 0;
      for (const d of report.simulators) {
        for (const t of d.replyTables ?? []) {
          const row = (role: string) => t.rows.find((r) => r.role === role)!.probs;
          const c = whatIfRows(row("reference"), w);
          // recorded rows have 4 significant digits and came from float32 log-probs
          close(c.aligned, row("aligned"), 2e-3);
          close(c.verbalized, row("vs"), 2e-3);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(0);
    });
  }
  it("φ = 0 makes VS the aligned simulator, φ = 1 the reference", () => {
    expect(vsExponent(10, 0)).toBe(10);
    close(
      whatIfRows(Q, { gamma: 10, fidelity: 0, k: 5, selection: "random" }).vs,
      sharpen(Q, 10),
      1e-12,
    );
    close(whatIfRows(Q, { gamma: 10, fidelity: 1, k: 5, selection: "random" }).vs, Q, 1e-12);
  });
});

describe("the γ slider's log scale", () => {
  it("maps 1, 10 and 100 to the ends and the middle and round-trips the run's γ exactly", () => {
    expect(positionToGamma(0)).toBe(1);
    expect(positionToGamma(0.5)).toBe(10);
    expect(positionToGamma(1)).toBe(100);
    for (const g of [1, 2, 4, 7.5, 10, 30, 100])
      expect(positionToGamma(gammaToPosition(g))).toBe(g);
  });
});

describe("concentrationSentence", () => {
  const acts = ["agree", "ask-why", "object-cost", "object-trust", "share-personal"];
  it("names two replies, with their shares, when the top one holds well under 90 %", () => {
    const s = concentrationSentence(
      acts,
      {
        aligned: [0.36, 0.35, 0.2, 0.06, 0.03],
        reference: [0.25, 0.25, 0.2, 0.15, 0.15],
        bayes: [0.2, 0.2, 0.2, 0.2, 0.2],
      },
      10,
    );
    expect(s).toContain("36\u202f% on “agree” and 35\u202f% on “ask-why”");
    expect(s).not.toMatch(/almost all/);
    expect(s).toContain("3 replies hold 90 % of its mass");
    expect(s).toContain("Bayes predictive of real people needs 5");
  });
  it("says one reply when it holds 90 % or more", () => {
    const s = concentrationSentence(
      acts,
      { aligned: [0.93, 0.05, 0.01, 0.01, 0], reference: [0.4, 0.3, 0.2, 0.05, 0.05] },
      10,
    );
    expect(s).toContain("puts 93\u202f% of its mass on one reply, “agree”; 1 reply holds 90 %");
    expect(repliesToCover([0.4, 0.3, 0.2, 0.05, 0.05])).toBe(3);
  });
  it("says there is no collapse at γ = 1", () => {
    expect(
      concentrationSentence(acts, { aligned: Q.slice(0, 5), reference: Q.slice(0, 5) }, 1),
    ).toMatch(/^With γ = 1 the aligned simulator is the reference itself/);
  });
});

describe("concentrationSentence near the ends", () => {
  it("does not round 99.7 % up to all of the mass", () => {
    const s = concentrationSentence(
      ["a", "b", "c"],
      { aligned: [0.997, 0.002, 0.001], reference: [0.5, 0.3, 0.2] },
      30,
    );
    expect(s).toContain("puts over 99\u202f% of its mass on one reply, “a”");
  });
});
