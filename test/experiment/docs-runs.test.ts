// The evidence behind docs/science.md lives in the repository: every report under docs/runs/ is
// listed in docs/runs/index.json with the preset, seeds and --set assignments it was run with; each
// parses and its config is exactly that; a merged report holds the seeds of the batches it merges;
// and every report docs/science.md cites by path exists and is listed.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { applySet, merge, validateConfig } from "../../src/experiment/config";
import { presetConfig } from "../../src/experiment/presets";
import { parseReport } from "../../src/experiment/report-schema";

const ROOT = resolve(import.meta.dirname, "../..");
const RUNS = join(ROOT, "docs/runs");

interface Entry {
  report: string;
  preset: string;
  seeds: number;
  seedBase: number;
  set: string[];
  policies?: string;
  rescores?: string; // a re-scoring (collapse-lab evaluate) of this recorded report's policies
}
const index = JSON.parse(readFileSync(join(RUNS, "index.json"), "utf8")) as { runs: Entry[] };

/** Every report file under docs/runs (a policies folder's index is not a report). */
function reportFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    // policies, and the panel rule's diagnostics (docs/runs/panels), are no run reports
    if (statSync(path).isDirectory())
      return name.endsWith(".policies") || path === join(RUNS, "panels") ? [] : reportFiles(path);
    return name.endsWith(".json") && path !== join(RUNS, "index.json")
      ? [relative(RUNS, path)]
      : [];
  });
}

describe("docs/runs", () => {
  it("lists every report it holds, once", () => {
    const listed = index.runs.map((r) => r.report);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(reportFiles(RUNS).sort());
  });

  it.each(index.runs.map((r) => [r.report, r] as const))(
    "%s parses and was run with the config its entry names",
    (_, entry) => {
      const report = parseReport(readFileSync(join(RUNS, entry.report), "utf8"));
      expect(report.preset).toBe(entry.preset);
      const named = validateConfig(
        entry.set.reduce<unknown>(
          (c, a) => applySet(c, a),
          merge(presetConfig(entry.preset), { seeds: entry.seeds, seedBase: entry.seedBase }),
        ),
      );
      expect(report.config).toEqual(named);
      const seeds = Array.from({ length: entry.seeds }, (_, i) => entry.seedBase + i);
      for (const c of report.conditions) expect(c.seeds.map((s) => s.seed)).toEqual(seeds);
      if (entry.rescores)
        expect((report as { rescoring?: { report?: string } }).rescoring?.report).toBe(
          entry.rescores,
        );
      if (entry.policies) {
        const policies = join(RUNS, entry.policies);
        const files = JSON.parse(readFileSync(join(policies, "index.json"), "utf8")) as unknown;
        expect(files, `${entry.policies}/index.json`).toBeTruthy();
      }
    },
  );

  it("every report docs/science.md cites by path is in the repository (and listed, under docs/runs)", () => {
    const text = readFileSync(join(ROOT, "docs/science.md"), "utf8");
    const cited = [
      ...text.matchAll(/(docs\/runs\/[\w./-]+\.json|public\/recorded\/[\w./=-]+\.json)/g),
    ].map((m) => m[1]);
    expect(cited.length).toBeGreaterThan(0);
    const listed = new Set(index.runs.map((r) => `docs/runs/${r.report}`));
    for (const path of cited) {
      expect(existsSync(join(ROOT, path)), path).toBe(true);
      if (path.startsWith("docs/runs/")) expect(listed.has(path), path).toBe(true);
    }
  });
});
