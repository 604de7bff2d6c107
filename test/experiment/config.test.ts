// ExperimentConfig (docs/architecture.md#contracts): the default and every preset validate; unknown keys and wrong
// types are ConfigErrors that name their path; `--set path=value` parses JSON (else a string),
// needs existing sections and leaves its input alone; unknown presets list the known ones.
import { describe, expect, it } from "vitest";
import {
  applySet,
  CONDITIONS,
  ConfigError,
  DEFAULT_CONFIG,
  defaultConfig,
  merge,
  seedsOf,
  validateConfig,
  type ExperimentConfig,
} from "../../src/experiment/config";
import { PRESETS, presetAt, presetConfig } from "../../src/experiment/presets";

/** The default with one leaf replaced, as a raw (unvalidated) object. */
function withLeaf(path: string, value: unknown): unknown {
  const out = structuredClone(DEFAULT_CONFIG) as unknown as Record<string, unknown>;
  const keys = path.split(".");
  let node = out;
  for (const k of keys.slice(0, -1)) node = node[k] as Record<string, unknown>;
  node[keys[keys.length - 1]] = value;
  return out;
}

function configError(input: unknown): ConfigError {
  try {
    validateConfig(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error("expected a ConfigError, the config validated");
}

describe("validation", () => {
  it("DEFAULT_CONFIG validates to itself", () => {
    expect(validateConfig(structuredClone(DEFAULT_CONFIG))).toEqual(DEFAULT_CONFIG);
    expect(DEFAULT_CONFIG.version).toBe(1);
    expect(DEFAULT_CONFIG.conditions).toEqual([...CONDITIONS]);
  });

  it("every preset validates and is a small override of the default", () => {
    expect(PRESETS.map((p) => p.id)).toEqual(
      expect.arrayContaining(["persuasion-quick", "persuasion-paper", "persuasion-smoke"]),
    );
    const defaultBefore = structuredClone(DEFAULT_CONFIG);
    for (const p of PRESETS) {
      const c = presetConfig(p.id);
      expect(validateConfig(structuredClone(c))).toEqual(c);
      expect(c).toEqual(validateConfig(merge(defaultConfig(p.benchmark), p.overrides)));
      expect(c.benchmark).toBe(p.benchmark);
      expect(p.title.length, p.id).toBeGreaterThan(0);
      expect(p.description.length, p.id).toBeGreaterThan(0);
      // an override only touches keys the default has, or an optional setting the default leaves out
      const OPTIONAL = new Set(["simulator.referenceWorld", "rl.streamSwap"]);
      const known = (base: unknown, patch: unknown, at: string): void => {
        if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return;
        for (const [k, v] of Object.entries(patch)) {
          if (OPTIONAL.has(`${at}${k}`)) continue;
          expect(base, `${p.id}: ${at}${k}`).toHaveProperty([k]);
          known((base as Record<string, unknown>)[k], v, `${at}${k}.`);
        }
      };
      known(defaultConfig(p.benchmark), p.overrides, "");
    }
    expect(DEFAULT_CONFIG).toEqual(defaultBefore); // merging never mutates the default
    expect(presetConfig("persuasion-smoke").seeds).toBe(1);
    // each benchmark has one preset at each scale
    for (const b of ["persuasion", "service", "cooperation"] as const)
      for (const scale of ["paper", "quick", "smoke"] as const)
        expect(presetAt(b, scale).benchmark).toBe(b);
  });

  it("a benchmark's default is the common one with its own world, corpus and panel", () => {
    const s = defaultConfig("service");
    expect(s.benchmark).toBe("service");
    expect(s.rl).toEqual(DEFAULT_CONFIG.rl);
    expect(Object.keys(s.world)).not.toEqual(Object.keys(DEFAULT_CONFIG.world));
    expect(s.panel.map((m) => m.name)).toEqual(DEFAULT_CONFIG.panel.map((m) => m.name));
    expect(defaultConfig("persuasion")).toEqual(DEFAULT_CONFIG);
    // a world section of one benchmark is refused by the other, naming the key
    expect(() => validateConfig({ ...s, world: DEFAULT_CONFIG.world })).toThrow(/world\.\w+/);
    expect(() => validateConfig({ ...DEFAULT_CONFIG, benchmark: "chess" })).toThrow(
      /benchmark: unknown benchmark "chess"; benchmarks: persuasion, service, cooperation/,
    );
  });

  it("unknown keys are errors that name their path", () => {
    const rl = configError(withLeaf("rl.stepz", 3)).message;
    expect(rl).toMatch(/rl\.stepz|\brl: Unrecognized key: "stepz"/);
    expect(configError(withLeaf("simulator.model.depth", 2)).message).toMatch(
      /simulator\.model(\.depth|: Unrecognized key: "depth")/,
    );
    expect(configError({ ...structuredClone(DEFAULT_CONFIG), colour: "red" }).message).toMatch(
      /colour/,
    );
  });

  it("wrong types and ranges are errors that name their path", () => {
    expect(configError(withLeaf("simulator.gamma", "x")).message).toMatch(
      /simulator\.gamma: .*number/,
    );
    expect(configError(withLeaf("simulator.gamma", 0.5)).message).toMatch(/simulator\.gamma/); // γ ≥ 1
    expect(configError(withLeaf("rl.steps", 2.5)).message).toMatch(/rl\.steps/);
    expect(configError(withLeaf("seeds", 0)).message).toMatch(/seeds/);
    expect(configError(withLeaf("vs.selection", "best")).message).toMatch(/vs\.selection/);
    expect(configError(withLeaf("conditions", ["single", "nope"])).message).toMatch(
      /conditions\.1/,
    );
    expect(configError(withLeaf("conditions", [])).message).toMatch(/conditions/);
    expect(configError(withLeaf("version", 2)).message).toMatch(/version/);
    const panel = structuredClone(DEFAULT_CONFIG.panel) as unknown as Record<string, unknown>[];
    panel[1].gamma = "high";
    expect(configError(withLeaf("panel", panel)).message).toMatch(/panel\.1\.gamma/);
    expect(configError(null).message).toMatch(/\(root\)/);
  });

  it("one error lists every problem", () => {
    const bad = withLeaf("rl.steps", "abc") as ExperimentConfig;
    (bad.vs as unknown as Record<string, unknown>).k = -1;
    const m = configError(bad).message;
    expect(m).toMatch(/rl\.steps/);
    expect(m).toMatch(/vs\.k/);
  });

  it("a panel prior needs one weight per latent type", () => {
    const panel = structuredClone(DEFAULT_CONFIG.panel);
    panel[0].prior = [0.5, 0.5];
    expect(configError(withLeaf("panel", panel)).message).toMatch(
      new RegExp(`panel\\.${panel[0].name}\\.prior`),
    );
  });

  it("seedsOf lists seedBase … seedBase + seeds − 1", () => {
    expect(seedsOf({ ...DEFAULT_CONFIG, seeds: 3, seedBase: 7 })).toEqual([7, 8, 9]);
  });
});

describe("applySet", () => {
  const base = structuredClone(DEFAULT_CONFIG);

  it("sets nested values, parsing JSON numbers, strings, arrays, objects", () => {
    const set = (a: string) => applySet(base, a) as ExperimentConfig;
    expect(set("rl.steps=12").rl.steps).toBe(12);
    expect(set("simulator.gamma=1e2").simulator.gamma).toBe(100);
    expect(set("simulator.model.d=24").simulator.model.d).toBe(24);
    expect(set("vs.selection=prob").vs.selection).toBe("prob"); // not JSON: taken as a string
    expect(set('vs.selection="prob"').vs.selection).toBe("prob");
    expect(set('conditions=["base","vs"]').conditions).toEqual(["base", "vs"]);
    expect(set("panel.0.gamma=3").panel[0].gamma).toBe(3);
    expect(
      set('population={"poolSize":4,"snapshotEvery":1,"selection":"latest","draw":"episode"}')
        .population,
    ).toEqual({ poolSize: 4, snapshotEvery: 1, selection: "latest", draw: "episode" });
    expect(set(" seeds = 2 ").seeds).toBe(2);
    expect(set("vs.fidelity=0.5=x").vs.fidelity).toBe("0.5=x"); // only the first = splits
    // the result validates when the value fits
    expect(validateConfig(set("rl.steps=12")).rl.steps).toBe(12);
  });

  it("leaves its input alone and chains", () => {
    const before = structuredClone(base);
    const out = ["rl.steps=5", "vs.k=3", "simulator.gamma=2"].reduce<unknown>(
      applySet,
      base,
    ) as ExperimentConfig;
    expect(base).toEqual(before);
    expect([out.rl.steps, out.vs.k, out.simulator.gamma]).toEqual([5, 3, 2]);
  });

  it("rejects an assignment without = or without a path", () => {
    for (const a of ["foo", "=3", ""]) {
      expect(() => applySet(base, a)).toThrow(ConfigError);
      expect(() => applySet(base, a)).toThrow(/expected path=value/);
    }
  });

  it("rejects a path through a missing section; an unknown leaf is caught by validation, which names it", () => {
    expect(() => applySet(base, "nosuch.key=1")).toThrow(ConfigError);
    expect(() => applySet(base, "nosuch.key=1")).toThrow(/nosuch/);
    expect(() => applySet(base, "rl.steps.x=1")).toThrow(/rl\.steps/);
    expect(configError(applySet(base, "rl.stepz=3")).message).toMatch(/stepz/);
    expect(configError(applySet(base, "rl.steps=abc")).message).toMatch(/rl\.steps/);
    expect(configError(applySet(base, "rl.steps=true")).message).toMatch(/rl\.steps/);
  });
});

describe("presets", () => {
  it("an unknown preset is an error listing the presets", () => {
    expect(() => presetConfig("nope")).toThrow(/unknown preset "nope"/);
    let message = "";
    try {
      presetConfig("nope");
    } catch (e) {
      message = (e as Error).message;
    }
    for (const p of PRESETS) expect(message).toContain(p.id);
  });

  it("presetConfig returns a fresh copy each time", () => {
    const a = presetConfig("persuasion-quick");
    a.rl.steps = 999;
    a.panel[0].gamma = 999;
    const b = presetConfig("persuasion-quick");
    expect(b.rl.steps).not.toBe(999);
    expect(b.panel[0].gamma).not.toBe(999);
  });
});
