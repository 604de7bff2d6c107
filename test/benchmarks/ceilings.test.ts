// The exact ceilings of the persuasion world (how much room there is above the modal user's
// script), checked against played episodes and against worlds where the answer is known.
import { describe, expect, it } from "vitest";
import { ceilings } from "../../src/benchmarks/persuasion/ceilings";
import { ACTS } from "../../src/benchmarks/persuasion/world";
import { DEFAULT_PARAMS, type PersuasionParams } from "../../src/benchmarks/persuasion/population";
import { createPersuasion } from "../../src/benchmarks/persuasion/bench";
import { Rng } from "../../src/engine/random";

const world = (patch: Partial<PersuasionParams> = {}) =>
  createPersuasion({ ...DEFAULT_PARAMS, ...patch });

describe("persuasion ceilings", () => {
  const bench = world();
  const c = ceilings(bench.humans);

  it("orders modal script ≤ best script ≤ adapting once ≤ knowing the type ≤ 1, with room above the modal script", () => {
    expect(c.modalType).toBe("skeptic");
    expect(c.modalScript.humanSuccess).toBeLessThanOrEqual(c.bestScript.humanSuccess + 1e-12);
    expect(c.bestScript.humanSuccess).toBeLessThanOrEqual(c.adaptOnce.humanSuccess + 1e-12);
    expect(c.adaptOnce.humanSuccess).toBeLessThanOrEqual(c.typeKnown + 1e-12);
    expect(c.typeKnown).toBeLessThanOrEqual(1);
    // trap 2 of docs/architecture.md#models: the modal user's script must not suit everyone
    expect(c.adaptOnce.humanSuccess - c.modalScript.humanSuccess).toBeGreaterThan(0.2);
  });

  it("the modal script's exact success is what playing it with sampled humans gives", () => {
    const rng = Rng.seed(3);
    const script = c.modalScript.acts.map((n) => ACTS.findIndex((a) => a.name === n));
    let wins = 0;
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const persona = bench.humans.sample(rng);
      const d = { card: persona.card, acts: [] as number[] };
      for (let t = bench.turn(d); t !== "done"; t = bench.turn(d)) {
        d.acts.push(
          t === "agent"
            ? script[d.acts.length / 2]
            : rng.categorical(bench.humans.replyProbs(persona.type, d)),
        );
      }
      if (bench.success(d)) wins++;
    }
    expect(Math.abs(wins / n - c.modalScript.humanSuccess)).toBeLessThan(0.012); // ≈ 3.4 standard errors
  });

  it("reading a reply is worth nothing when neither replies nor cards say anything about the type", () => {
    const blind = ceilings(
      world({ cardInformativeness: 0, replySharpness: 0, reactionWeight: 0 }).humans,
    );
    expect(blind.adaptOnce.humanSuccess).toBeCloseTo(blind.bestScript.humanSuccess, 9);
    expect(blind.typeKnown).toBeGreaterThan(blind.adaptOnce.humanSuccess + 0.2);
  });

  it("with one type everything is that type's best script", () => {
    const one = world({
      types: DEFAULT_PARAMS.types.map((t, i) => ({ ...t, prior: i === 1 ? 1 : 0 })),
    });
    const c1 = ceilings(one.humans);
    expect(c1.modalType).toBe("empathetic");
    for (const v of [c1.bestScript.humanSuccess, c1.adaptOnce.humanSuccess, c1.typeKnown])
      expect(v).toBeCloseTo(c1.modalScript.humanSuccess, 9);
  });
});
