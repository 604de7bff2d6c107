// The empirical population (docs/humans.md#the-empirical-population): at a state enough of the
// corpus' people reached it answers with their replies' frequencies; elsewhere it backs off, level
// by level, and counts which level answered.
import { describe, expect, it } from "vitest";
import type { CorpusDialogue } from "../../src/benchmarks/dialogue-file";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { Rng } from "../../src/engine/random";
import { presetConfig } from "../../src/experiment/presets";
import { EmpiricalSimulator, EmpiricalTable } from "../../src/simulators/empirical";

const bench = benchmarkFor(
  presetConfig("persuasion-smoke") as { benchmark: string; world: unknown },
);
const id = (name: string) => bench.acts.findIndex((a) => a.name === name);
const dialogue = (names: string, card: number[] | null = null): CorpusDialogue => ({
  card,
  acts: names.split(" ").map(id),
});
const state = (names: string) => ({ card: [], acts: names ? names.split(" ").map(id) : [] });
const share = (p: Float64Array, name: string) => p[id(name)];

// six people greeted: three agreed, three stayed neutral; after a credibility appeal two objected
const CORPUS = [
  dialogue("greeting agree ask $1"),
  dialogue("greeting agree ask $2"),
  dialogue("greeting agree credibility object-trust ask $0"),
  dialogue("greeting neutral credibility object-trust ask $0"),
  dialogue("greeting neutral credibility agree ask $0.5"),
  dialogue("greeting neutral ask $0"),
];
const table = new EmpiricalTable(bench, CORPUS);

describe("the empirical table", () => {
  it("answers a state enough people reached with their replies", () => {
    const r = table.predict(state("greeting"), 5);
    expect(r.level).toBe("state");
    expect(share(r.p, "agree")).toBe(0.5);
    expect(share(r.p, "neutral")).toBe(0.5);
  });

  it("backs off to the last exchange, the last act and the marginal, each when the longer one has too few people", () => {
    // three people were asked right after a neutral reply or an agreement; the decision's last exchange
    const ask = table.predict(state("greeting neutral credibility object-trust ask"), 1);
    expect(ask.level).toBe("state");
    expect(share(ask.p, "$0")).toBe(1);
    // an unseen history whose last exchange (credibility, object-trust, ask) two people had
    const lastExchange = table.predict(state("emotion agree credibility object-trust ask"), 2);
    expect(lastExchange.level).toBe("last exchange");
    expect(share(lastExchange.p, "$0")).toBe(1);
    // an unseen last exchange; six people were asked at all, so "ask" alone answers at minCount 5
    const lastAct = table.predict(state("emotion agree logical neutral ask"), 5);
    expect(lastAct.level).toBe("last act");
    expect(share(lastAct.p, "$0")).toBeCloseTo(3 / 6);
    expect(share(lastAct.p, "$2")).toBeCloseTo(1 / 6);
    // the first act never gets a last exchange or last act of its own: it is the whole state
    const marginal = table.predict(state("greeting"), 7);
    expect(marginal.level).toBe("marginal");
    expect(share(marginal.p, "agree")).toBeCloseTo(4 / 9); // every talk reply in the corpus
    expect(share(marginal.p, "object-trust")).toBeCloseTo(2 / 9);
  });

  it("is uniform over the allowed acts where the corpus has no reply of the kind at all", () => {
    const asksOnly = new EmpiricalTable(bench, [dialogue("ask $1"), dialogue("ask $0")]);
    const r = asksOnly.predict(state("greeting"), 1);
    expect(r.level).toBe("uniform");
    const talk = bench.maskClasses[bench.userClass(state("greeting"))].allowed;
    for (const a of talk) expect(r.p[a]).toBeCloseTo(1 / talk.length);
    expect(r.p.reduce((a, b) => a + b, 0)).toBeCloseTo(1);
  });
});

describe("the empirical simulator", () => {
  it("draws people of the corpus as personas and counts the level of every reply", async () => {
    const card = bench.humans.cardDistribution()[3].card;
    const sim = new EmpiricalSimulator(
      "humans",
      new EmpiricalTable(bench, [dialogue("greeting agree ask $1", card), ...CORPUS.slice(1)]),
      5,
    );
    const personas = sim.personas(200, Rng.seed(1));
    expect(personas.every((p) => p.type === -1 && p.card.length === bench.cardLen)).toBe(true);
    expect(personas.some((p) => p.card.join() === card.join())).toBe(true);
    const states = [state("greeting"), state("logical"), state("greeting neutral ask")];
    const replies = await sim.reply(states, personas.slice(0, 3), Rng.seed(2));
    expect(bench.acts[replies[2]].kind).toBe("outcome");
    expect(sim.usage.turns).toBe(3);
    expect(sim.usage.levels.state).toBe(1); // greeting: six people
    expect(sim.usage.levels.marginal).toBe(1); // logical: nobody
    expect(sim.usage.levels["last act"]).toBe(1); // …neutral ask: six were asked
  });
});
