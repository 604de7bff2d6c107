// "Same person, different policy" on a real RunReport: the runner's final evaluation draws the
// same people for every condition in its first batch (the model capacity), so the recorded
// dialogues with humans of that batch pair up by (seed, index) with the same card and latent
// type in every condition; later ones are left out (the fixture's batch is 8 of 12 recorded); the
// pairing is checked, a pair that disagrees is left out and counted; the view shows both
// dialogues of the picked person side by side with each outcome.
import { readFileSync } from "node:fs";
import { cleanup, fireEvent, render, screen, within } from "@testing-library/svelte";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import SamePerson from "../../src/app/components/simulators/SamePerson.svelte";
import { pairSamples, renderPair } from "../../src/app/lib/same-person";
import type { RunReport } from "../../src/experiment/experiment";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { modelOptions } from "../../src/experiment/pretrain";
import { buildReport, collapsed, stubResizeObserver } from "./report-fixture";

let report: RunReport;
stubResizeObserver();
beforeAll(async () => {
  report = await buildReport();
});
afterEach(() => cleanup());
const batch = () => modelOptions(benchmarkFor(report.config), report.config).capacity;

const humans = (r: RunReport, c: string, seed: number) =>
  r.conditions
    .find((x) => x.id === c)!
    .seeds.find((s) => s.seed === seed)!
    .samples.filter((s) => s.opponent === "humans");

describe("pairSamples", () => {
  it("pairs the first batch's dialogues with humans of two conditions: same seed, same index, same card and type", () => {
    const { pairs, unpaired, later } = pairSamples(report, "single", "vs", batch());
    const seeds = report.conditions.find((c) => c.id === "single")!.seeds;
    const recorded = seeds.map((s) => humans(report, "single", s.seed).length);
    expect(batch()).toBeLessThan(recorded[0]); // the fixture records more than one batch: the rule is exercised
    expect(unpaired).toBe(0);
    expect(pairs.length).toBe(recorded.reduce((n, r) => n + Math.min(r, batch()), 0));
    expect(later).toBe(recorded.reduce((n, r) => n + Math.max(0, r - batch()), 0));
    for (const p of pairs) {
      expect(p.index).toBeLessThan(batch());
      expect(p.a).toBe(humans(report, "single", p.seed)[p.index]);
      expect(p.b).toBe(humans(report, "vs", p.seed)[p.index]);
      expect(p.b.card).toEqual(p.a.card);
      expect(p.b.type).toBe(p.a.type);
    }
    // the runner really shares the people of the first batch: all three conditions, every seed
    for (const s of seeds) {
      const people = (c: string) =>
        humans(report, c, s.seed)
          .slice(0, batch())
          .map((x) => [x.card, x.type]);
      expect(people("single")).toEqual(people("base"));
      expect(people("vs")).toEqual(people("base"));
    }
  });

  it("leaves out and counts a pair whose person differs", () => {
    const tampered: RunReport = structuredClone(report);
    const s = humans(tampered, "vs", tampered.conditions[0].seeds[0].seed)[1];
    s.type = (s.type + 1) % tampered.world.types.length;
    const { pairs, unpaired } = pairSamples(tampered, "single", "vs", batch());
    expect(unpaired).toBe(1);
    expect(
      pairs.find((p) => p.seed === tampered.conditions[0].seeds[0].seed && p.index === 1),
    ).toBeUndefined();
  });

  it("renders both dialogues with the same wording draws and finds where they part", () => {
    const bench = benchmarkFor(report.config);
    const [p] = pairSamples(report, "single", "vs", batch()).pairs;
    const r = renderPair(bench, p);
    expect(r.a.map((l) => l.act)).toEqual(p.a.acts.map((a) => bench.acts[a].name));
    expect(r.b.map((l) => l.act)).toEqual(p.b.acts.map((a) => bench.acts[a].name));
    const same = renderPair(bench, { ...p, b: p.a });
    expect(same.firstDifference).toBe(-1);
    expect(same.b.map((l) => l.text)).toEqual(same.a.map((l) => l.text));
    if (r.firstDifference >= 0) {
      expect(p.a.acts.slice(0, r.firstDifference)).toEqual(p.b.acts.slice(0, r.firstDifference));
      expect(p.a.acts[r.firstDifference]).not.toBe(p.b.acts[r.firstDifference]);
      expect(r.b.slice(0, r.firstDifference)).toEqual(r.a.slice(0, r.firstDifference));
    }
  });
});

describe("the shipped recordings", () => {
  it.each(["persuasion-quick", "persuasion-paper"])(
    "%s: every recorded dialogue of single and population with humans is with the same person",
    (name) => {
      const rec = JSON.parse(readFileSync(`public/recorded/${name}.json`, "utf8")) as RunReport;
      const firstBatch = modelOptions(benchmarkFor(rec.config), rec.config).capacity;
      const { pairs, unpaired, later } = pairSamples(rec, "single", "population", firstBatch);
      expect([unpaired, later]).toEqual([0, 0]);
      expect(pairs.length).toBe(rec.config.seeds * 12);
    },
  );
});

describe("SamePerson view", () => {
  it("defaults to single against another trained policy and shows the picked person's two dialogues and outcomes", async () => {
    render(SamePerson, { report });
    // the fixture has no population condition: the right side falls back to another trained one
    expect((screen.getByTestId("same-person-a") as HTMLSelectElement).value).toBe("single");
    expect((screen.getByTestId("same-person-b") as HTMLSelectElement).value).toBe("vs");
    const picker = screen.getByTestId("person-picker") as HTMLSelectElement;
    const { pairs } = pairSamples(report, "single", "vs", batch());
    expect(within(picker).getAllByRole("option").length).toBe(pairs.length);
    const p = pairs[3];
    await fireEvent.change(picker, { target: { value: p.key } });
    const type = report.world.types[p.type].name;
    expect(picker.selectedOptions[0].textContent).toContain(type);
    expect(collapsed(picker.selectedOptions[0].textContent)).toContain(
      `single ${p.a.success ? "✓" : "✗"}, vs ${p.b.success ? "✓" : "✗"}`,
    );
    expect(screen.getByTestId("person").textContent).toContain(type);
    const table = screen.getByTestId("side-by-side");
    const body = table.querySelectorAll("tbody tr");
    expect(body.length).toBe(Math.max(p.a.acts.length, p.b.acts.length));
    const bench = benchmarkFor(report.config);
    const cells = (side: number) =>
      [...body].map((r) => r.querySelectorAll("td")[side].dataset.act).filter((a) => a);
    expect(cells(0)).toEqual(p.a.acts.map((a) => bench.acts[a].name));
    expect(cells(1)).toEqual(p.b.acts.map((a) => bench.acts[a].name));
    expect(screen.getByTestId("outcome-a").textContent).toContain(
      p.a.success ? "success" : "failure",
    );
    expect(screen.getByTestId("outcome-b").textContent).toContain(
      p.b.success ? "success" : "failure",
    );
    expect(screen.getByTestId("later").textContent).toContain(`first batch of ${batch()}`);
    const tally = screen.getByTestId("tally").textContent!;
    expect(tally).toContain(
      `single succeeded (a donation of at least $1) with ${pairs.filter((x) => x.a.success).length}`,
    );
  });

  it("switching a side re-pairs with that condition", async () => {
    render(SamePerson, { report });
    await fireEvent.change(screen.getByTestId("same-person-b"), { target: { value: "base" } });
    const { pairs } = pairSamples(report, "single", "base", batch());
    expect(screen.getByTestId("outcome-b").textContent).toContain(
      pairs[0].b.success ? "success" : "failure",
    );
    expect(screen.getByTestId("side-by-side").querySelector("thead")!.textContent).toContain(
      "base",
    );
  });
});
