// What the service worker precaches from the store (scripts/service-worker.mjs): the models of
// every preset that runs live in minutes, found by the scale its id ends in, and nothing else.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PRESETS } from "../../src/experiment/presets";
import { storeFiles } from "../../scripts/service-worker.mjs";

const index = JSON.parse(readFileSync("public/pretrained/index.json", "utf8")) as {
  models: Record<string, { file: string; presets: string[] }>;
};

describe("the store files precached with the app", () => {
  it("are the models of the quick and smoke presets, named by a scale every preset id ends in", () => {
    for (const p of PRESETS) expect(p.id).toMatch(new RegExp(`-${p.scale}$`));
    const live = new Set(PRESETS.filter((p) => p.scale !== "paper").map((p) => p.id));
    const want = Object.values(index.models)
      .filter((m) => m.presets.some((p) => live.has(p)))
      .map((m) => `pretrained/${m.file}`);
    const got = storeFiles(["quick", "smoke"]);
    expect(new Set(want)).toEqual(got);
    expect(got.size).toBeGreaterThan(0);
    expect(got.size).toBeLessThan(Object.keys(index.models).length); // the paper presets' are cached on use
    for (const f of got) expect(existsSync(`public/${f}`), f).toBe(true);
  });
});
