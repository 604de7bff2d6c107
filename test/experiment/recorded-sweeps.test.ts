// The recorded sweeps the app shows (public/recorded/sweeps/): the index lists folders that exist;
// each sweep's summary parses, every point's report is there, parses, is the report of its point
// (its config is the point's) and has the differences the summary gives it.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/experiment/report-schema";
import { isEffectMetric, parseSweep, reportMismatch } from "../../src/experiment/sweep";

const DIR = resolve(import.meta.dirname, "../../public/recorded/sweeps");
const index = JSON.parse(readFileSync(join(DIR, "index.json"), "utf8")) as {
  format: string;
  sweeps: { id: string; title: string }[];
};

describe("recorded sweeps", () => {
  it("are listed in an index of folders that exist", () => {
    expect(index.format).toBe("collapse-lab/recorded-sweeps@1");
    for (const s of index.sweeps) {
      expect(s.id).toMatch(/^[A-Za-z0-9._-]+$/);
      expect(existsSync(join(DIR, s.id, "sweep.json")), s.id).toBe(true);
    }
  });

  it("each parses, and every point's report is its point's, with the summary's differences", () => {
    for (const { id } of index.sweeps) {
      const summary = parseSweep(readFileSync(join(DIR, id, "sweep.json"), "utf8"));
      for (const p of summary.points) {
        const report = parseReport(readFileSync(join(DIR, id, p.report), "utf8"));
        expect(reportMismatch(summary, p, report), `${id}/${p.report}`).toBeNull();
        const means = (cs: { a: string; metric: string; difference: { mean: number } }[]) =>
          cs.map((c) => [c.a, c.metric, c.difference.mean]);
        expect(means(p.comparisons), `${id}/${p.name}`).toEqual(
          means(report.comparisons.filter((c) => isEffectMetric(c.metric))),
        );
      }
    }
  });
});
