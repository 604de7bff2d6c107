// The evidence behind docs/science.md lives in the repository: every report under docs/runs/ is
// listed in docs/runs/index.json with the preset, seeds and --set assignments it was run with; each
// parses and its config is exactly that; a merged report holds the seeds of the batches it merges;
// every report docs/science.md cites by path exists and is listed; and every by-type table
// (scripts/by-type.ts) names a committed run and policies, and its first row is recomputed here.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { createBackend } from "../../src/engine/backends/index";
import { byTypeRng, successByType } from "../../src/experiment/by-type";
import { applySet, merge, validateConfig, type ConditionId } from "../../src/experiment/config";
import { openPolicyFolder } from "../../src/experiment/node-policies";
import { policiesBeside } from "../../src/experiment/policies";
import { modelOptions } from "../../src/experiment/pretrain";
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

/**
 * Every JSON file under docs/runs but the index, relative to `docs/runs`; policies folders and the
 * panel rule's diagnostics (docs/runs/panels) are left out.
 */
function jsonFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return name.endsWith(".policies") || path === join(RUNS, "panels") ? [] : jsonFiles(path);
    return name.endsWith(".json") && path !== join(RUNS, "index.json")
      ? [relative(RUNS, path)]
      : [];
  });
}
/** A by-type table (scripts/by-type.ts) is checked on its own, not as a report. */
const isByType = (file: string) => file.endsWith(".by-type.json");
const reportFiles = () => jsonFiles(RUNS).filter((f) => !isByType(f));

describe("docs/runs", () => {
  it("lists every report it holds, once", () => {
    const listed = index.runs.map((r) => r.report);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(reportFiles().sort());
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
      if (isByType(path)) {
        const table = JSON.parse(readFileSync(join(ROOT, path), "utf8")) as ByType;
        expect(listed.has(table.report) || table.report.startsWith("public/recorded/"), path).toBe(
          true,
        );
      } else if (path.startsWith("docs/runs/")) expect(listed.has(path), path).toBe(true);
    }
  });
});

interface ByType {
  report: string;
  dialoguesPerType: number;
  rows: { condition: ConditionId; seed: number; types: { type: string; success: number }[] }[];
}

describe("docs/runs by-type tables", () => {
  it.each(
    jsonFiles(RUNS)
      .filter(isByType)
      .map((f) => [`docs/runs/${f}`] as const),
  )(
    "%s covers its run's policies, and its first row is what the policy scores again",
    async (file) => {
      const table = JSON.parse(readFileSync(join(ROOT, file), "utf8")) as ByType;
      const report = parseReport(readFileSync(join(ROOT, table.report), "utf8"));
      const config = validateConfig(report.config);
      const folder = openPolicyFolder(policiesBeside(join(ROOT, table.report)), config);
      const seeds = report.conditions[0].seeds.map((s) => s.seed);
      const conditions = [...new Set(table.rows.map((r) => r.condition))];
      expect(table.rows.map((r) => `${r.condition} ${r.seed}`)).toEqual(
        conditions.flatMap((c) => seeds.map((s) => `${c} ${s}`)),
      );
      const first = table.rows[0];
      const bench = benchmarkFor(config);
      const opts = modelOptions(bench, config);
      const { backend } = await createBackend(folder.index.backend as "wasm");
      const policy = backend.createModel(folder.checkpoint(first.condition, first.seed), opts);
      try {
        const again = await successByType(
          bench,
          policy,
          table.dialoguesPerType,
          byTypeRng(first.seed),
          config.rl.temperature,
          opts.capacity,
        );
        expect(again.types).toEqual(first.types);
      } finally {
        policy.dispose();
      }
    },
    120_000,
  );
});
