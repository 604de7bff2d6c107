// The strategy measures on Service's reference agents with 8,000 humans (strategy-check.ts;
// `npx tsx scripts/strategy-check.ts` prints them): per-turn policy entropy sees the blind script's
// shuffled fixes (0.67 nats) and nothing of the careful agent's adapting (0); strategy entropy given
// the intent ranks them the other way. What the strategies tell about the user's type is pinned as
// measured: the blind script's tell more, because the type ends its dialogues (most low-skill,
// anxious and impatient customers leave it), which is the user's doing, not the agent's adapting.
import { describe, expect, it } from "vitest";
import type { ServiceBenchmark } from "../../src/benchmarks/service/bench";
import { service } from "../../src/benchmarks/service/index";
import { referenceStrategies } from "../../src/benchmarks/service/strategy-check";
import { actId } from "../../src/benchmarks/service/world";

const bench = service.create(service.defaultWorld) as ServiceBenchmark;

describe("Service's strategy view", () => {
  it("reads the intent from the ticket and the set of the agent's acts", () => {
    const names = [
      "ticket:mms",
      "query-account",
      "account:ok",
      "fix:grant-permission",
      "failed-fix",
      "fix:grant-permission",
      "did-fix",
      "confirm",
    ];
    const d = { card: [0, 0, 0], acts: names.map(actId), hidden: [] };
    expect(service.strategy.task(bench, d)).toBe("ticket:mms");
    // each act once, in vocabulary order: the repeat and the order make no other strategy
    expect(service.strategy.signature(bench, d).split(" ").sort()).toEqual(
      ["confirm", "fix:grant-permission", "query-account"].sort(),
    );
  });
});

describe("the reference agents over 8,000 human dialogues", () => {
  const [blind, careful] = referenceStrategies(bench, 8000, 1);

  it("per-turn entropy: 0.67 nats for the shuffled script, 0 for the careful agent", () => {
    expect(blind.policyEntropy).toBeCloseTo(0.67, 2);
    expect(careful.policyEntropy).toBe(0);
    expect(careful.success - blind.success).toBeGreaterThan(0.2);
  });

  it("strategy entropy given the intent: the careful agent's is higher", () => {
    expect(blind.measures.entropy).toBeGreaterThan(3.2);
    expect(blind.measures.entropy).toBeLessThan(3.45);
    expect(careful.measures.entropy).toBeGreaterThan(4.3);
    expect(careful.measures.entropy).toBeLessThan(4.6);
    expect(careful.measures.modes).toBeGreaterThan(blind.measures.modes);
  });

  it("information about the type: the blind script's strategies carry more, after the bias", () => {
    expect(blind.measures.typeInformation).toBeGreaterThan(0.45);
    expect(careful.measures.typeInformation).toBeGreaterThan(0.05);
    expect(careful.measures.typeInformation).toBeLessThan(0.15);
    // most of the careful agent's plug-in MI is the bias of ~1,300 strategies over 8,000 dialogues
    expect(careful.measures.typeInformationPlugIn).toBeGreaterThan(
      2 * careful.measures.typeInformation,
    );
    // why: the minority types (low-skill, anxious, impatient) leave the blind script, not the careful agent
    for (const t of [1, 2, 3]) expect(blind.left[t]).toBeGreaterThan(0.6);
    for (const t of [1, 2]) expect(careful.left[t]).toBeLessThan(0.1);
  });
});
