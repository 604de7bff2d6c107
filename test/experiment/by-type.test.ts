// Success by latent type (src/experiment/by-type.ts) on a committed Cooperation policy: the humans
// of one type are exactly the population's people of that type, and their success rates agree
// with the same policy's dialogues with the whole population grouped by type.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { createBackend } from "../../src/engine/backends/index";
import type { EngineModel } from "../../src/engine/backend";
import { Rng } from "../../src/engine/random";
import { successByType, TypeHumans } from "../../src/experiment/by-type";
import { validateConfig } from "../../src/experiment/config";
import { openPolicyFolder } from "../../src/experiment/node-policies";
import { policiesBeside } from "../../src/experiment/policies";
import { modelOptions } from "../../src/experiment/pretrain";
import { parseReport } from "../../src/experiment/report-schema";
import { evaluate } from "../../src/experiment/runner";
import { Humans } from "../../src/simulators/simulator";

const RUN = "docs/runs/cooperation-paper/seeds-2000-2004";
const config = validateConfig(parseReport(readFileSync(`${RUN}.json`, "utf8")).config);
const bench = benchmarkFor(config);
const opts = modelOptions(bench, config);
let policy: EngineModel;

beforeAll(async () => {
  const folder = openPolicyFolder(policiesBeside(`${RUN}.json`), config);
  const { backend } = await createBackend(folder.index.backend as "wasm");
  policy = backend.createModel(folder.checkpoint("single", 2000), opts);
});
afterAll(() => policy?.dispose());

describe("TypeHumans", () => {
  it("draws only people of its type, with that type's cards", () => {
    const passive = bench.humans.types.findIndex((t) => t.name === "passive");
    const people = new TypeHumans(bench, passive).personas(400, Rng.seed(1));
    expect(people.every((p) => p.type === passive)).toBe(true);
    // the same people as the population's, filtered: first card slot frequencies agree
    const all = new Humans(bench).personas(40_000, Rng.seed(2)).filter((p) => p.type === passive);
    const share = (ps: typeof people) =>
      ps.filter((p) => p.card[0] === all[0].card[0]).length / ps.length;
    const se = Math.sqrt((share(all) * (1 - share(all))) / people.length);
    expect(Math.abs(share(people) - share(all))).toBeLessThan(4.5 * se + 1e-9);
    expect(new TypeHumans(bench, passive).name).toBe("humans:passive");
  });

  it("refuses a type the population does not have", () => {
    expect(() => new TypeHumans(bench, bench.humans.types.length)).toThrow(/no latent type/);
    expect(() => new TypeHumans(bench, -1)).toThrow(/no latent type/);
  });
});

describe("successByType", () => {
  it("agrees with the population's dialogues grouped by type, and its mix with their success", async () => {
    const T = config.rl.temperature;
    const perType = 200;
    const byType = await successByType(bench, policy, perType, Rng.seed(3), T, opts.capacity);
    const n = 2400;
    const { played, outcome } = await evaluate(
      bench,
      policy,
      new Humans(bench),
      n,
      Rng.seed(4),
      T,
      opts.capacity,
    );
    const types = bench.humans.types;
    expect(byType.types.map((t) => t.type)).toEqual(types.map((t) => t.name));
    const rates = byType.types.map((t) => t.success);
    // the policy is not equally good with every type: the check below can tell types apart
    expect(Math.max(...rates) - Math.min(...rates)).toBeGreaterThan(0.3);
    for (const [z] of types.entries()) {
      const mine = played.dialogues.filter((_, i) => played.personas[i].type === z);
      const grouped = mine.filter((d) => bench.success(d)).length / mine.length;
      const p = (grouped + rates[z]) / 2;
      const se = Math.sqrt(p * (1 - p) * (1 / mine.length + 1 / perType));
      expect(Math.abs(grouped - rates[z])).toBeLessThan(4.5 * se + 0.02);
    }
    const se =
      Math.sqrt((outcome.success * (1 - outcome.success)) / n) + 0.5 / Math.sqrt(perType * 6);
    expect(Math.abs(byType.mix - outcome.success)).toBeLessThan(4.5 * se);
  }, 120_000);

  it("refuses a number of dialogues that is not a positive integer", async () => {
    await expect(successByType(bench, policy, 0, Rng.seed(1), 1, opts.capacity)).rejects.toThrow(
      /positive integer/,
    );
  });
});
