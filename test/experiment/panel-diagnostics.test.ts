// The held-out panel diagnostics (src/experiment/panel-diagnostics.ts): mode agreement and the types
// a member plays against a hand-computed case; a panel that shares the training simulator's mode
// agrees with it everywhere; the own-modes rule gives the weights the benchmarks' own-modes panels
// use; the separation agents' success with humans matches the exact ceilings; and a config can name
// a panel.
import { describe, expect, it } from "vitest";
import { benchmarkFor, benchmarkModule } from "../../src/benchmarks/registry";
import { applySet, defaultConfig, validateConfig } from "../../src/experiment/config";
import {
  exactMembers,
  exactTraining,
  ownModesRule,
  panelDiversity,
  panelKindOf,
  panelSeparation,
  summarizeModes,
  type ModeInputs,
} from "../../src/experiment/panel-diagnostics";
import { presetConfig, PRESETS } from "../../src/experiment/presets";
import { SharpenedPredictive, sharpen } from "../../src/simulators/exact";
import { BayesPredictive } from "../../src/simulators/simulator";

const modes = (...xs: number[]) => Int32Array.from(xs);

describe("summarizeModes", () => {
  // two probe states × three cards of mass 0.2, 0.3 and 0.5, probe-major
  const inputs: ModeInputs = {
    probes: [
      { id: "p0", label: "first" },
      { id: "p1", label: "second" },
    ],
    weights: [0.2, 0.3, 0.5],
    neutral: 2,
    cardText: "card",
    actName: (a) => `act${a}`,
    humans: modes(0, 0, 0, 0, 0, 0),
    types: [
      { name: "t1", modes: modes(1, 1, 1, 0, 0, 2) }, // differs from the humans at p0 everywhere, at p1 on card 2
      { name: "t2", modes: modes(0, 0, 0, 0, 0, 0) }, // never differs: no defining reply
    ],
    training: { name: "train", modes: modes(0, 0, 0, 0, 0, 0) },
    members: [
      { name: "m1", modes: modes(1, 0, 1, 0, 0, 2) },
      { name: "m2", modes: modes(0, 0, 0, 0, 0, 0) },
    ],
  };

  it("gives a member's agreement and the types it plays as computed by hand", () => {
    const d = summarizeModes(inputs);
    const [m1, m2] = d.members;
    // m1 agrees with training at p0 on card 1 only (0.3), at p1 on cards 0 and 1 (0.5)
    expect(m1.agreement[0]).toBeCloseTo(0.3, 12);
    expect(m1.agreement[1]).toBeCloseTo(0.5, 12);
    expect(m1.modeAgreement).toBeCloseTo(0.4, 12);
    // it plays t1 at p0 on cards 0 and 2 (0.7), at p1 on card 2 (0.5): the larger, at p0
    expect(d.types.map((t) => t.name)).toEqual(["t1"]);
    expect(d.types[0].probes).toEqual(["p0", "p1"]);
    expect(d.types[0].replies).toEqual(["act1", "act2"]);
    expect(m1.plays[0]).toBeCloseTo(0.7, 12);
    expect(m1.playsAt).toEqual(["p0"]);
    expect(m1.modes).toEqual(["act1", "act2"]); // on the neutral card (2)
    expect(d.types[0].players).toEqual(["m1"]);
    expect(m2.modeAgreement).toBe(1);
    expect(m2.plays).toEqual([0]);
    expect(m2.playsAt).toEqual([null]);
    expect(d.training.modes).toEqual(["act0", "act0"]);
  });

  it("has no player below half the card mass", () => {
    const d = summarizeModes({
      ...inputs,
      members: [{ name: "m3", modes: modes(0, 1, 0, 0, 0, 0) }], // t1's reply on card 1 only: 0.3
    });
    expect(d.members[0].plays[0]).toBeCloseTo(0.3, 12);
    expect(d.types[0].players).toEqual([]);
  });
});

describe("panelDiversity on a benchmark", () => {
  it("gives agreement 1 to a panel that shares the training simulator's mode", async () => {
    for (const id of ["service", "cooperation", "persuasion"] as const) {
      const c = defaultConfig(id);
      const bench = benchmarkFor(c);
      // the humans' predictive at other sharpness, and itself: the same most likely reply everywhere
      const shared = [3, 1, 40].map((g) => new SharpenedPredictive(`γ ${g}`, bench, bench, g));
      const d = await panelDiversity(bench, benchmarkModule(id).probeStates, exactTraining(c), [
        ...shared,
        new BayesPredictive(bench),
      ]);
      expect(d.probes.length, id).toBe(benchmarkModule(id).probeStates.length);
      for (const m of d.members) {
        expect(m.modeAgreement, `${id}: ${m.name}`).toBe(1);
        expect(m.modes).toEqual(d.training.modes);
        expect(d.types.every((t) => t.players.length === 0)).toBe(true);
      }
    }
  });

  it("sharpening keeps the mode and the zeros", () => {
    const q = sharpen([0, 0.2, 0.5, 0.3], 10);
    expect(q[0]).toBe(0);
    expect(q.indexOf(Math.max(...q))).toBe(2);
    expect(q.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(q[2]).toBeCloseTo(1 / (1 + 0.4 ** 10 + 0.6 ** 10), 12);
  });
});

describe("the own-modes rule", () => {
  it("gives each own-modes family the weight its panel puts on its type", async () => {
    for (const id of ["service", "cooperation"] as const) {
      const c = defaultConfig(id);
      const humans = benchmarkFor(c).humans.types.map((t) => t.prior);
      const own = validateConfig({ ...c, panel: "own-modes" }).panel;
      const rule = await ownModesRule(c);
      expect(rule.map((r) => r.type)).toEqual(
        benchmarkModule(id).typeNames.filter((_, z) => z !== humans.indexOf(Math.max(...humans))),
      );
      for (const r of rule) {
        const family = own.find((m) => m.name === `family-${r.type}`);
        expect(family, `${id}: a family for ${r.type}`).toBeDefined();
        const z = benchmarkModule(id).typeNames.indexOf(r.type);
        expect(r.p, `${id}: ${r.type} is played at some weight`).not.toBeNull();
        expect(family!.prior![z], `${id}: ${r.type}`).toBe(r.p);
        // the rest of its corpus in the humans' proportions
        family!.prior!.forEach((w, k) => {
          if (k !== z) expect(w).toBeCloseTo(((1 - r.p!) * humans[k]) / (1 - humans[z]), 5);
        });
        const chosen = r.steps.find((s) => s.p === r.p)!;
        expect(chosen.mass).toBeGreaterThanOrEqual(0.5);
        for (const s of r.steps.filter((s) => s.p < r.p!)) expect(s.mass).toBeLessThan(0.5);
      }
      // families a and e as in the shared-mode panel; every other member is a rule family
      expect(own.slice(0, 2)).toEqual(
        c.panel.filter((m) => ["family-a", "family-e"].includes(m.name)),
      );
      expect(own).toHaveLength(2 + rule.length);
      // every family of the own-modes panel plays its type exactly
      const d = await panelDiversity(
        benchmarkFor(c),
        benchmarkModule(id).probeStates,
        exactTraining(c),
        exactMembers({ ...c, panel: own }),
      );
      for (const t of d.types.filter((x) => rule.some((r) => r.type === x.name)))
        expect(t.players, `${id}: ${t.name}`).toContain(`family-${t.name}`);
    }
  }, 60_000);
});

describe("panel separation", () => {
  it("plays the reference agents with humans as the exact ceilings say (Persuasion)", async () => {
    const c = defaultConfig("persuasion");
    const bench = benchmarkFor(c);
    const lines = benchmarkModule("persuasion").referenceLines(bench);
    const exact = (id: string) => lines.find((l) => l.id === id)!.humanSuccess;
    const agents = benchmarkModule("persuasion").separationAgents!(bench);
    const n = 4000;
    const s = await panelSeparation(bench, agents, exactTraining(c), [], n, 7);
    const se = (p: number) => Math.sqrt((p * (1 - p)) / n);
    expect(Math.abs(s.humans.script - exact("modal-script"))).toBeLessThan(
      4 * se(exact("modal-script")),
    );
    expect(Math.abs(s.humans.adaptive - exact("adapt-once"))).toBeLessThan(
      4 * se(exact("adapt-once")),
    );
    // the collapsed skeptic is the script's best case
    expect(s.training.script).toBeGreaterThan(s.humans.script);
  }, 60_000);
});

describe("a named panel in a config", () => {
  it("resolves to the benchmark's panel, by name or by --set", () => {
    for (const id of ["service", "cooperation"] as const) {
      const c = defaultConfig(id);
      const panels = benchmarkModule(id).panels!;
      expect(c.panel).toEqual(panels["shared-mode"]);
      expect(panelKindOf(c)).toBe("shared-mode");
      const own = validateConfig(applySet(c, "panel=own-modes"));
      expect(own.panel).toEqual(panels["own-modes"]);
      expect(panelKindOf(own)).toBe("own-modes");
      expect(validateConfig({ ...c, panel: "shared-mode" })).toEqual(c);
    }
  });

  it("refuses an unknown name, naming the benchmark's panels", () => {
    const c = defaultConfig("service");
    expect(() => validateConfig({ ...c, panel: "own-mode" })).toThrow(
      /panel: no panel named "own-mode" \(service's panels: shared-mode, own-modes\)/,
    );
    expect(() => validateConfig({ ...defaultConfig("persuasion"), panel: "own-modes" })).toThrow(
      /persuasion has no named panels/,
    );
  });

  it("leaves every preset's panel as it was: none names the own-modes panel", () => {
    for (const p of PRESETS) expect(panelKindOf(presetConfig(p.id)), p.id).not.toBe("own-modes");
  });
});
