// The seeded generator: streams of neighbouring seeds (and of forks and splits) must look
// independent; small seeds once gave first draws near 1 and correlated streams.
import { describe, expect, it } from "vitest";
import { Rng } from "../../src/engine/random";

const N = 2000;
const firstDraws = (make: (i: number) => Rng) =>
  Array.from({ length: N }, (_, i) => make(i).uniform());

/** Kolmogorov–Smirnov distance of samples from Uniform(0, 1). */
function ksUniform(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.max(
    ...s.map((x, i) => Math.max(Math.abs((i + 1) / s.length - x), Math.abs(x - i / s.length))),
  );
}

function correlation(a: number[], b: number[]): number {
  const ma = a.reduce((x, y) => x + y) / a.length;
  const mb = b.reduce((x, y) => x + y) / b.length;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < a.length; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) ** 2;
    sbb += (b[i] - mb) ** 2;
  }
  return sab / Math.sqrt(saa * sbb);
}

// KS critical value at α = 0.001 for n = 2000 is 1.95 / √n ≈ 0.044; correlation |r| < 4 / √n ≈ 0.09
const KS_MAX = 1.95 / Math.sqrt(N);
const R_MAX = 4 / Math.sqrt(N);

describe("Rng seeding", () => {
  it("first draws of seeds 0, 1, 2, … are uniform", () => {
    expect(ksUniform(firstDraws((i) => Rng.seed(i)))).toBeLessThan(KS_MAX);
  });

  it("the first draws of forks and splits are uniform", () => {
    expect(ksUniform(firstDraws((i) => Rng.seed(7).fork(i)))).toBeLessThan(KS_MAX);
    expect(ksUniform(firstDraws((i) => Rng.seed(i).fork(100)))).toBeLessThan(KS_MAX);
    expect(ksUniform(firstDraws((i) => Rng.seed(i).split()))).toBeLessThan(KS_MAX);
  });

  it("neighbouring seeds give uncorrelated streams", () => {
    for (const s of [0, 100, 1000]) {
      const a = Rng.seed(s);
      const b = Rng.seed(s + 1);
      const xs = Array.from({ length: N }, () => a.uniform());
      const ys = Array.from({ length: N }, () => b.uniform());
      expect(Math.abs(correlation(xs, ys))).toBeLessThan(R_MAX);
    }
  });

  it("is deterministic and seed-sensitive", () => {
    expect(Rng.seed(5).uniform()).toBe(Rng.seed(5).uniform());
    expect(Rng.seed(5).uniform()).not.toBe(Rng.seed(6).uniform());
  });
});
