// The CLI's default path: with `--parallel` > 1 the command runs its tasks on worker threads
// (NodeWorkerExecutor), with 1 inline on the main thread. docs/config.md promises the same numbers
// whatever `--parallel` is; this runs the smoke preset both ways and compares every number of the
// two reports exactly. `--no-store` so that every kind of task — pretraining, condition × seed
// units, diagnostics — runs on the executor under test (with the store, pretraining never reaches
// it); two seeds so that the seeds' tasks are spread over both workers and the summaries and
// paired comparisons are more than a copy of one seed.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CONDITIONS } from "../../src/experiment/config";
import type { RunReport } from "../../src/experiment/experiment";
import { runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-parallel-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("collapse-lab run --parallel", () => {
  it(
    "worker threads (--parallel 2) give the same report numbers as the main thread (--parallel 1)",
    { timeout: 500_000 },
    async () => {
      const run = (parallel: number) => {
        const out = join(tmp, `p${parallel}.json`);
        const args = [
          "run",
          "--preset",
          "persuasion-smoke",
          "--seeds",
          "2",
          "--no-store",
          "--parallel",
          String(parallel),
          "--out",
          out,
        ];
        return runCli(args, { timeoutMs: 450_000 }).then((r) => ({ r, out }));
      };
      const [one, two] = await Promise.all([run(1), run(2)]);
      for (const { r } of [one, two]) expect(r.code, r.stderr).toBe(0);
      expect(one.r.stderr).toMatch(/1 worker\(s\)/);
      expect(two.r.stderr).toMatch(/2 worker\(s\)/);
      const a = JSON.parse(readFileSync(one.out, "utf8")) as RunReport;
      const b = JSON.parse(readFileSync(two.out, "utf8")) as RunReport;
      expect([a.env.parallel, b.env.parallel]).toEqual([1, 2]);
      // every model pretrained live, on the executor under test
      for (const r of [a, b]) expect(r.store).toMatchObject({ location: null, loaded: 0 });

      // the run did real work: all six conditions, both seeds, and diagnostics with γ estimates
      expect(b.conditions.map((c) => c.id)).toEqual([...CONDITIONS]);
      for (const c of b.conditions) expect(c.seeds.map((s) => s.seed)).toEqual([0, 1]);
      expect(b.simulators.length).toBeGreaterThan(0);

      // every number: per-seed metrics (curves, histograms, held-out by member), summaries,
      // paired comparisons, pretraining losses, diagnostics and calibration — exactly
      expect(b.conditions).toEqual(a.conditions);
      expect(b.comparisons).toEqual(a.comparisons);
      expect(b.pretraining).toEqual(a.pretraining);
      expect(b.simulators).toEqual(a.simulators);
      expect(b.calibration).toEqual(a.calibration);
      expect(b.world).toEqual(a.world);
      // and so the printed table
      const table = (s: string) => s.slice(s.indexOf("condition"), s.indexOf("wall time"));
      expect(table(two.r.stdout).length).toBeGreaterThan(100);
      expect(table(two.r.stdout)).toBe(table(one.r.stdout));
    },
  );
});
