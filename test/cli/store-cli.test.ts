// The store of pretrained models through the real command: `run` loads from public/pretrained/
// by default and says so, `--no-store` pretrains live with the same numbers, and `store` keeps
// intact files and pretrains a broken one again, naming it, and stores other seeds than a preset's
// own when asked.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/experiment/experiment";
import { presetConfig } from "../../src/experiment/presets";
import { pretrainJobs } from "../../src/experiment/pretrain";
import { jobKey, type StoreIndex } from "../../src/experiment/store";
import { ROOT, runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-store-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cli = (args: string[], timeoutMs?: number) => runCli(args, { timeoutMs });

// the smoke preset's `base` condition alone: seven models to pretrain, little else
const SMALL = [
  "run",
  "--preset",
  "persuasion-smoke",
  "--set",
  'conditions=["base"]',
  "--set",
  "eval.diagnosticSeeds=0",
  "--parallel",
  "1",
];

describe("collapse-lab run and the store", () => {
  it(
    "loads every model from the store by default; --no-store pretrains them live, to the same numbers",
    { timeout: 300_000 },
    async () => {
      const stored = await cli([...SMALL, "--out", join(tmp, "stored.json")]);
      expect(stored.code, stored.stderr).toBe(0);
      expect(stored.stderr).toContain(
        "pretraining: 7 of 7 models from the store (public/pretrained)",
      );
      expect(stored.stdout).toMatch(/pretraining [\d.]+ s: 7 of 7 models from the store/);
      const live = await cli([...SMALL, "--no-store", "--out", join(tmp, "live.json")]);
      expect(live.code, live.stderr).toBe(0);
      expect(live.stderr).toContain("pretraining: every model live (--no-store)");
      expect(live.stdout).toMatch(/pretraining [\d.]+ s: every model live/);

      const a = JSON.parse(readFileSync(join(tmp, "stored.json"), "utf8")) as RunReport;
      const b = JSON.parse(readFileSync(join(tmp, "live.json"), "utf8")) as RunReport;
      expect(a.store).toEqual({
        location: "public/pretrained",
        loaded: 7,
        trained: 0,
        messages: [],
      });
      expect(b.store).toEqual({ location: null, loaded: 0, trained: 7, messages: [] });
      expect(a.pretraining[0].models!.map((m) => m.source)).toEqual(Array(7).fill("store"));
      expect(b.pretraining[0].models!.map((m) => m.source)).toEqual(Array(7).fill("trained"));
      expect(a.conditions).toEqual(b.conditions);
      expect(a.pretraining.map(({ models: _, ...nll }) => nll)).toEqual(
        b.pretraining.map(({ models: _, ...nll }) => nll),
      );
    },
  );
});

describe("collapse-lab store", () => {
  it(
    "keeps intact models and pretrains a broken one again, naming it",
    { timeout: 200_000 },
    async () => {
      const dir = join(tmp, "store");
      cpSync(join(ROOT, "public/pretrained"), dir, {
        recursive: true,
        filter: (f) => !f.endsWith(".lock"),
      }); // not the lock of a store writing there now
      const args = ["store", "--preset", "persuasion-smoke", "--dir", dir, "--parallel", "1"];
      const intact = await cli(args);
      expect(intact.code, intact.stderr).toBe(0);
      expect(intact.stderr).toContain(
        "store " + dir + ": 9 models asked for, 9 already stored, 0 to pretrain on wasm",
      );

      const c = presetConfig("persuasion-smoke");
      const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as StoreIndex;
      const file = index.models[jobKey(c, { kind: "reference", seed: 0 }, "wasm")].file;
      const original = readFileSync(join(dir, file));
      writeFileSync(join(dir, file), original.subarray(0, 1000));
      const broken = await cli(args);
      expect(broken.code, broken.stderr).toBe(0);
      expect(broken.stderr).toContain(
        `${dir}/${file} is unusable (1000 bytes, index.json says ${original.length})`,
      );
      expect(broken.stderr).toContain("1 model(s) pretrained and stored, 8 kept");
      expect(readFileSync(join(dir, file)).equals(original)).toBe(true); // pretrained again, bit for bit
    },
  );

  it(
    "stores the models of other seeds than the preset's own with --seeds and --seed-base",
    { timeout: 200_000 },
    async () => {
      const dir = join(tmp, "other-seeds");
      const r = await cli([
        "store",
        "--preset",
        "persuasion-smoke",
        "--seeds",
        "1",
        "--seed-base",
        "7",
        "--dir",
        dir,
        "--parallel",
        "1",
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        `store ${dir}: 9 models asked for, 0 already stored, 9 to pretrain on wasm`,
      );
      const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as StoreIndex;
      const c = { ...presetConfig("persuasion-smoke"), seeds: 1, seedBase: 7 };
      expect(Object.keys(index.models).sort()).toEqual(
        pretrainJobs(c, 7)
          .map((j) => jobKey(c, j, "wasm"))
          .sort(),
      );

      const prune = await cli([
        "store",
        "--preset",
        "persuasion-smoke",
        "--seed-base",
        "7",
        "--dir",
        dir,
        "--prune",
      ]);
      expect(prune.code).toBe(2);
      expect(prune.stderr).toContain("--prune keeps only the models of the presets' own seeds");
    },
  );
});
