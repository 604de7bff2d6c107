// Seeded sampling: frequencies follow the model's distribution, masks are respected, γ
// sharpens, and the same seed gives the same draws.
import { describe, it, expect } from "vitest";
import { sampleNext, generate } from "../../src/engine/sampling";
import { Float64Backend } from "../../src/engine/backends/float64";
import { Rng } from "../../src/engine/random";
import { FORBIDDEN, MASKS, TINY, randomCheckpoint } from "./fixtures";

describe("sampling", () => {
  const cpu = new Float64Backend();
  const rows = 200;
  const model = cpu.createModel(randomCheckpoint(TINY, 4), { capacity: rows, masks: MASKS });
  const T = TINY.context;
  const tokens = new Int32Array(rows * T); // every row the same context, so every row the same distribution
  const pos = new Int32Array(rows).fill(1);
  const cls = new Int32Array(rows).fill(1);

  it("draws follow the distribution and never hit a forbidden token", async () => {
    const lp = await model.nextLogprobs(
      tokens.subarray(0, T),
      1,
      Int32Array.of(1),
      Int32Array.of(1),
    );
    const p = Array.from(lp).map(Math.exp);
    const counts = new Array<number>(TINY.vocab).fill(0);
    const rng = Rng.seed(9);
    const rounds = 20;
    for (let r = 0; r < rounds; r++) {
      const d = await sampleNext(model, tokens, rows, pos, cls, rng);
      d.tokens.forEach((t) => counts[t]++);
    }
    const n = rows * rounds;
    for (const v of FORBIDDEN) expect(counts[v]).toBe(0);
    p.forEach((pv, v) => {
      const sd = Math.sqrt(n * pv * (1 - pv));
      expect(Math.abs(counts[v] - n * pv), `token ${v}`).toBeLessThan(4 * sd + 1);
    });
  });

  it("γ > 1 sharpens: the modal token gets more mass", async () => {
    const at = (logitScale: number) =>
      model.nextLogprobs(tokens.subarray(0, T), 1, Int32Array.of(1), Int32Array.of(1), {
        logitScale,
      });
    const [p1, p5] = [Array.from(await at(1)).map(Math.exp), Array.from(await at(5)).map(Math.exp)];
    const mode = p1.indexOf(Math.max(...p1));
    expect(p5[mode]).toBeGreaterThan(p1[mode]);
    expect(p5.indexOf(Math.max(...p5))).toBe(mode);
  });

  it("the same seed gives the same sequences; generate fills only its range", async () => {
    const run = async (seed: number) => {
      const t = new Int32Array(4 * T);
      const logp = await generate(model, t, 4, Rng.seed(seed), { from: 2, to: 5, cls: () => 1 });
      return { t, logp };
    };
    const [a, b] = [await run(1), await run(1)];
    expect(b).toEqual(a);
    for (let r = 0; r < 4; r++) {
      expect(a.t[r * T + 1]).toBe(0);
      expect(a.t[r * T + 5]).toBe(0);
      expect(a.logp[r * T + 2]).toBeLessThan(0);
      expect(a.logp[r * T + 5]).toBe(0);
    }
    await expect(
      generate(model, new Int32Array(T), 1, Rng.seed(0), { from: 0, to: 3 }),
    ).rejects.toThrow(/range/);
  });
});

describe("Rng", () => {
  it("is reproducible, splits into independent streams, and draws normals with unit variance", () => {
    const a = Rng.seed(1);
    const b = Rng.seed(1);
    expect([a.uniform(), a.uniform()]).toEqual([b.uniform(), b.uniform()]);
    expect(a.fork(1).uniform()).not.toBe(a.fork(2).uniform());
    expect(a.fork(3).uniform()).toBe(a.fork(3).uniform()); // fork does not advance the parent
    const r = Rng.seed(5);
    const xs = Array.from({ length: 20000 }, () => r.normal());
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    const v = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(v - 1)).toBeLessThan(0.04);
    expect(() => Rng.seed(1.5)).toThrow(/integer/);
  });
});
