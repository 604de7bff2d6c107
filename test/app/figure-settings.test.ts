// A figure shows what its URL and controls say: the shown report's settings are compared with the
// URL's, leaf by leaf, for a preset change, a `set=` override and a knob edit, and a recording of
// the same settings (older ones lacking defaulted keys included) is no mismatch.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { flushSync } from "svelte";
import { ExperimentState } from "../../src/app/state/experiment.svelte";
import { configDifferences } from "../../src/experiment/config-diff";
import { parseUrlState } from "../../src/app/lib/url-state";
import { parseReport } from "../../src/experiment/report-schema";
import { presetConfig } from "../../src/experiment/presets";

const recorded = (preset: string) =>
  parseReport(readFileSync(join(process.cwd(), "public/recorded", `${preset}.json`), "utf8"));
const state = (query: string) => {
  const exp = new ExperimentState({
    createExecutor: () => null as never,
    decideBackend: async () => ({ requested: "auto", name: "wasm", reason: "test" }),
    parallelism: 1,
  });
  exp.setUrl(parseUrlState(query).state);
  return exp;
};

describe("configDifferences", () => {
  it("names each differing leaf with both values, and nothing for equal configs", () => {
    const a = presetConfig("persuasion-quick");
    expect(configDifferences(a, structuredClone(a))).toEqual([]);
    const b = { ...structuredClone(a), simulator: { ...a.simulator, gamma: 1 }, parallel: 3 };
    expect(configDifferences(a, b)).toEqual([
      { path: "simulator.gamma", shown: "10", wanted: "1" },
    ]); // parallel does not change results
  });
});

describe("the shown report against the URL", () => {
  it("agrees for each preset's own recording", () => {
    for (const preset of ["persuasion-quick", "persuasion-paper", "persuasion-smoke"]) {
      const exp = state(`?preset=${preset}`);
      exp.showReport(recorded(preset), "recorded");
      flushSync();
      expect(exp.mismatch, preset).toEqual([]);
    }
  });

  it("disagrees after a set= override, a knob edit, other seeds or another preset", () => {
    const exp = state("?preset=persuasion-quick&set=simulator.gamma%3D1");
    exp.showReport(recorded("persuasion-quick"), "recorded");
    flushSync();
    expect(exp.mismatch.map((d) => d.path)).toEqual(["simulator.gamma"]);
    exp.set("simulator.gamma", undefined); // back to the recording's settings
    flushSync();
    expect(exp.mismatch).toEqual([]);
    exp.set("vs.fidelity", 0.5); // a knob edit
    flushSync();
    expect(exp.mismatch).toEqual([{ path: "vs.fidelity", shown: "1", wanted: "0.5" }]);
    exp.setUrl(parseUrlState("?preset=persuasion-quick&seeds=1").state);
    flushSync();
    expect(exp.mismatch.map((d) => d.path)).toEqual(["seeds"]);
    exp.setUrl(parseUrlState("?preset=persuasion-paper").state);
    flushSync();
    expect(exp.mismatch.length).toBeGreaterThan(0);
  });
});
