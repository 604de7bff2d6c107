// The URL is the experiment: parse ∘ format is the identity, bad parts are explained and dropped.
import { describe, expect, it } from "vitest";
import {
  configWith,
  DEFAULT_PRESET,
  formatUrlState,
  parseUrlState,
  withSet,
} from "../../src/app/lib/url-state";

describe("URL state", () => {
  it("round-trips preset, seeds, overrides, backend, embed and page", () => {
    const search =
      "?v=1&preset=persuasion-paper&seeds=7&seedBase=1000&set=simulator.gamma%3D1&set=vs.k%3D3&backend=webgpu&autorun=1&embed=curves";
    const { state, problems } = parseUrlState(search, "#dialogues");
    expect(problems).toEqual([]);
    expect(state).toMatchObject({
      preset: "persuasion-paper",
      seeds: 7,
      seedBase: 1000,
      sets: ["simulator.gamma=1", "vs.k=3"],
      backend: "webgpu",
      autorun: true,
      embed: "curves",
      page: "dialogues",
    });
    expect(formatUrlState(state)).toBe(`${search}#dialogues`);
    const c = configWith(state);
    expect([c.seeds, c.seedBase, c.simulator.gamma, c.vs.k]).toEqual([7, 1000, 1, 3]);
  });

  it("accepts the documented short link exactly as written", () => {
    const { state, problems } = parseUrlState("?preset=persuasion-quick&seeds=1&autorun=1");
    expect(problems).toEqual([]);
    expect(configWith(state).seeds).toBe(1);
    expect(state.autorun).toBe(true);
  });

  it("explains and drops what it cannot read, keeping the rest", () => {
    const { state, problems } = parseUrlState(
      "?v=9&preset=nope&seeds=0&seedBase=x&set=rl.steps%3D-1&set=vs.k%3D4&set=novalue&backend=cuda",
      "#nowhere",
    );
    expect(state.preset).toBe(DEFAULT_PRESET);
    expect(state.seeds).toBeUndefined();
    expect(state.sets).toEqual(["vs.k=4"]);
    expect(state.backend).toBe("auto");
    expect(state.page).toBe("experiment");
    expect(problems).toHaveLength(8);
    expect(problems.join("\n")).toMatch(
      /version 9[\s\S]*unknown preset "nope"[\s\S]*seeds[\s\S]*seedBase[\s\S]*rl\.steps[\s\S]*novalue[\s\S]*cuda[\s\S]*nowhere/,
    );
  });

  it("replaces an override of the same path", () => {
    expect(withSet(["vs.k=3", "rl.steps=5"], "vs.k", 7)).toEqual(["rl.steps=5", "vs.k=7"]);
    expect(withSet(["vs.k=3"], "vs.k", undefined)).toEqual([]);
  });
});
