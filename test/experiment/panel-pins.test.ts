// What a new held-out panel must leave as it was (docs/science.md#the-held-out-panels): the humans,
// the training simulator (γ = 10 over the reference), the reference's corpus and the calibration.
// Every calibration row of Service and Cooperation is pinned, and so are the store keys of the
// reference, the base policy and the ensemble of their paper presets, with either panel.
import { describe, expect, it } from "vitest";
import { benchmarkFor, benchmarkModule } from "../../src/benchmarks/registry";
import { Rng } from "../../src/engine/random";
import { applySet, validateConfig } from "../../src/experiment/config";
import type { PretrainJob } from "../../src/experiment/pretrain";
import { presetConfig } from "../../src/experiment/presets";
import { jobKey } from "../../src/experiment/store";

const PINS = {
  service: {
    prior: [0.48, 0.2, 0.17, 0.15],
    calibration: [
      ["success, dual control (behaviour agent, pass^1)", 0.34, 0.383875, 0.08],
      ["success, agent operates the phone itself (solo)", 0.52, 0.467625, 0.08],
      ["success, agent given the gold plan", 0.73, 0.729, 0.08],
      ["pass^4, dual control", 0.19, 0.2425, 0.08],
      ["success, no-service tasks", 0.66, 0.6665836653386454, 0.15],
      ["success, mobile-data tasks", 0.3, 0.35637891520244463, 0.15],
      ["success, mms tasks", 0.18, 0.236959098992294, 0.15],
      ["success, fixes of 2 user actions", 0.54, 0.5315126050420168, 0.2],
      ["success, fixes of ≥ 9 user actions", 0, 0, 0.1],
      ["tasks that cannot be fixed (exact)", 0.18, 0.18317199206650972, 0.03],
      ["mean user actions of a fix (exact)", 4.2, 4.154293919282266, 0.3],
    ],
    keys: {
      reference: "1fa8c67ba0e69795a1cc8c1edb8c61d5a5bf31586e0de5c16c92499b8e6da098",
      policy: "ab03a97c5580ee4ef2798ffc25050c463209c0ea11b057094210940495d7f121",
      ensemble1: "a5b67f136a39883298e3de4ec7d52c5b4f4231aa67ffb1895e735abd7d00fe85",
      ensemble2: "8c397efcfcec4a278673604f878651dc1b63e586cdfb9429aa04793827d33309",
    },
  },
  cooperation: {
    prior: [0.38, 0.11, 0.12, 0.16, 0.12, 0.11],
    calibration: [
      [
        "success with a partner / success alone (behaviour agent, same tasks)",
        0.55,
        0.5679687108258538,
        0.15,
      ],
      ["merge conflicts, plan stated in the first turn", 0.29, 0.22591857000993049, 0.12],
      ["merge conflicts, no plan in the first turn", 0.52, 0.45307350623298465, 0.12],
      ["feature pairs whose plans share a file (exact)", 0.77, 0.7717, 0.03],
      ["failed episodes caused by expectation", 0.42, 0.3604289173296437, 0.1],
      ["failed episodes caused by commitment", 0.32, 0.3344863369076444, 0.1],
      ["failed episodes caused by communication", 0.26, 0.3050847457627119, 0.1],
    ],
    keys: {
      reference: "bba7a04a272c41d1a01d10479a6b3d0b2bea9d6a4a2353d8cbef3f8f443c5cf1",
      policy: "b1de8826674f978705dbb31d81ab4d90131401351336a123c8b80cdf8dffbfaa",
      ensemble1: "a813484f03f6126b2eb88b304ea003b28b21d39b7ad1e2a86a816040048c8313",
      ensemble2: "48d29ad9fe235416578c9cfcdb6c18527a3e5d7503af9303b56963c3a5e3f5af",
    },
  },
} as const;

describe.each(Object.entries(PINS))("%s, whichever panel", (id, pin) => {
  const shared = presetConfig(`${id}-paper`);
  const own = validateConfig(applySet(shared, "panel=own-modes"));

  it("keeps the humans, γ = 10 and every calibration row", () => {
    const bench = benchmarkFor(shared);
    expect(bench.humans.types.map((t) => t.prior)).toEqual(pin.prior);
    for (const c of [shared, own]) expect(c.simulator.gamma).toBe(10);
    const rows = benchmarkModule(id).calibration(bench, shared.corpus, Rng.seed(12345)).rows;
    expect(rows.map((r) => r.name)).toEqual(pin.calibration.map((r) => r[0]));
    rows.forEach((r, i) => {
      const [name, real, fitted, tolerance] = pin.calibration[i];
      expect(r.real, name).toBe(real);
      expect(r.fitted, name).toBeCloseTo(fitted, 10);
      expect(r.tolerance, name).toBe(tolerance);
      expect(Math.abs(r.fitted - r.real), `${name} within its tolerance`).toBeLessThanOrEqual(
        r.tolerance,
      );
    });
  }, 60_000);

  it("keeps the store keys of the reference, the base policy and the ensemble", () => {
    const seed = shared.seedBase;
    const jobs: Record<keyof typeof pin.keys, PretrainJob> = {
      reference: { kind: "reference", seed },
      policy: { kind: "policy", seed },
      ensemble1: { kind: "ensemble", seed, member: 1 },
      ensemble2: { kind: "ensemble", seed, member: 2 },
    };
    for (const [name, job] of Object.entries(jobs))
      for (const c of [shared, own])
        expect(jobKey(c, job, "wasm"), name).toBe(pin.keys[name as keyof typeof pin.keys]);
  });
});
