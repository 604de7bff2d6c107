// The sweep's pure parts: reading --set-grid, the grid's points and their configs (bad grids
// refused by name), pretraining shared between points, the summary (paired differences and the
// collapse's cost, paired by seed), reading a summary back, and its printed table.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { applySet, validateConfig, type ConditionId } from "../../src/experiment/config";
import {
  comparisons,
  conditionReport,
  type RunReport,
  type TaskCache,
} from "../../src/experiment/experiment";
import { presetConfig } from "../../src/experiment/presets";
import { parseReport } from "../../src/experiment/report-schema";
import type { SeedMetrics } from "../../src/experiment/runner";
import { pairedDifference } from "../../src/experiment/stats";
import {
  gridPoints,
  parseGridSpec,
  parseSweep,
  planSweep,
  reportMismatch,
  sharePretraining,
  splitTopLevel,
  summarizeSweep,
  SweepError,
  type SweepAxis,
} from "../../src/experiment/sweep";
import { formatSweep } from "../../src/experiment/sweep-text";

const smoke = validateConfig(presetConfig("persuasion-smoke"));
const resolveSets = (sets: string[]) => validateConfig(sets.reduce(applySet, smoke as unknown));

describe("--set-grid", () => {
  it("splits values at top-level commas only, reading each as --set does", () => {
    expect(splitTopLevel('1,[2,3],{"a":[4,5]},"x,y"')).toEqual([
      "1",
      "[2,3]",
      '{"a":[4,5]}',
      '"x,y"',
    ]);
    expect(parseGridSpec("simulator.gamma=1, 2,4,10,30")).toEqual({
      path: "simulator.gamma",
      values: [1, 2, 4, 10, 30],
    });
    expect(parseGridSpec('conditions=["single","vs"],["single"]').values).toEqual([
      ["single", "vs"],
      ["single"],
    ]);
    expect(parseGridSpec("vs.selection=random,prob").values).toEqual(["random", "prob"]);
  });

  it("refuses a spec without values, an empty value and a value given twice", () => {
    expect(() => parseGridSpec("simulator.gamma")).toThrow(/expected path=value/);
    expect(() => parseGridSpec("simulator.gamma= ")).toThrow(/no values/);
    expect(() => parseGridSpec("simulator.gamma=1,,2")).toThrow(/value 2 is empty/);
    expect(() => parseGridSpec("simulator.gamma=1,2,1.0")).toThrow(
      /1\.0 is given twice \(as 1 and 1\.0\)/,
    );
  });
});

describe("the grid's points", () => {
  it("are the product of the axes, the last varying fastest, with file-safe names", () => {
    const grid: SweepAxis[] = [
      { path: "simulator.gamma", values: [1, 10] },
      { path: "conditions", values: [["single", "vs"], ["single"]] },
    ];
    const points = gridPoints(grid);
    expect(points.map((p) => p.values)).toEqual([
      [1, ["single", "vs"]],
      [1, ["single"]],
      [10, ["single", "vs"]],
      [10, ["single"]],
    ]);
    expect(points[0].name).toBe("simulator.gamma=1_conditions=__single_,_vs__");
    expect(points[0].name).toMatch(/^[A-Za-z0-9._=,+-]+$/);
    expect(points[3].sets).toEqual(["simulator.gamma=10", 'conditions=["single"]']);
    expect(new Set(points.map((p) => p.name)).size).toBe(4);
  });

  it("resolve as run resolves --set, after the sweep's own --set", () => {
    const points = planSweep([{ path: "simulator.gamma", values: [1, 4] }], ["vs.k=3"], (sets) =>
      resolveSets(["vs.k=3", ...sets]),
    );
    expect(points.map((p) => [p.config.simulator.gamma, p.config.vs.k])).toEqual([
      [1, 3],
      [4, 3],
    ]);
    expect(points[1].config).toEqual(resolveSets(["vs.k=3", "simulator.gamma=4"]));
  });

  it("refuses by name an unknown path, a value the schema refuses, a path given twice and two points that are one experiment", () => {
    const plan = (grid: SweepAxis[], sets: string[] = []) =>
      planSweep(grid, sets, (s) => resolveSets([...sets, ...s]));
    expect(() => plan([{ path: "simulator.gama", values: [1] }])).toThrow(
      /^--set-grid simulator\.gama=1: .*simulator\.gama: unknown key/,
    );
    expect(() => plan([{ path: "simulator.gamma", values: [2, 0.5] }])).toThrow(
      /^--set-grid simulator\.gamma=0\.5: .*simulator\.gamma/,
    );
    expect(() => plan([{ path: "vs.k", values: [1] }], ["vs.k=2"])).toThrow(
      /vs\.k is given by --set and by --set-grid/,
    );
    expect(() =>
      plan([
        { path: "vs.k", values: [1] },
        { path: "vs.k", values: [2] },
      ]),
    ).toThrow(/--set-grid vs\.k is given twice/);
    expect(() => plan([])).toThrow(SweepError);
    // the whole vs section, set after vs.k, makes vs.k=5 and vs.k=6 the same experiment
    expect(() =>
      plan([
        { path: "vs.k", values: [5, 6] },
        { path: "vs", values: [{ k: 5, selection: "random", fidelity: 1 }] },
      ]),
    ).toThrow(/the points vs\.k=5_vs=.* and vs\.k=6_vs=.* are the same experiment/);
  });
});

describe("pretraining shared between points", () => {
  const mapCache = () => {
    const map = new Map<string, unknown>();
    const cache: TaskCache = {
      get: async (k) => map.get(k),
      put: async (k, v) => void map.set(k, v),
    };
    return { map, cache };
  };

  it("hands one point's pretrained model to another, copied into its own cache; other tasks stay the point's", async () => {
    const shared = new Map<string, unknown>();
    const a = mapCache();
    const b = mapCache();
    let taken = 0;
    const pointA = sharePretraining(a.cache, shared);
    const pointB = sharePretraining(b.cache, shared, () => taken++);
    await pointA.put("pretrain:abc", "model");
    await pointA.put("unit:single:0", "metrics");
    expect(await pointB.get("pretrain:abc")).toBe("model");
    expect(b.map.get("pretrain:abc")).toBe("model");
    expect(await pointB.get("unit:single:0")).toBeUndefined();
    expect(await pointB.get("pretrain:other")).toBeUndefined();
    expect(taken).toBe(1);
  });

  it("shares what a point read from its own cache (a sweep continued after a stop)", async () => {
    const shared = new Map<string, unknown>();
    const a = mapCache();
    a.map.set("pretrain:abc", "kept");
    expect(await sharePretraining(a.cache, shared).get("pretrain:abc")).toBe("kept");
    expect(await sharePretraining(mapCache().cache, shared).get("pretrain:abc")).toBe("kept");
  });
});

/** A report with the given metrics per condition and seed (only what a summary reads). */
function fakeReport(
  config: ReturnType<typeof resolveSets>,
  metrics: Partial<Record<ConditionId, { seed: number; human: number; heldout: number }[]>>,
): RunReport {
  const seedMetrics = (s: { seed: number; human: number; heldout: number }): SeedMetrics => ({
    seed: s.seed,
    trainSuccess: 0.9,
    heldoutSuccess: s.heldout,
    humanSuccess: s.human,
    humanReward: s.human / 2,
    policyEntropy: 1 + s.human,
    distinct2: 0.5,
    heldoutByMember: { a: s.heldout },
    strategyHistogram: {},
    curve: [],
    samples: [],
  });
  const conditions = Object.entries(metrics).map(([id, seeds]) =>
    conditionReport(id as ConditionId, seeds.map(seedMetrics)),
  );
  return {
    config,
    conditions,
    comparisons: comparisons(conditions),
    timing: { totalMs: 1000, pretrainMs: 0, trainMs: 0, diagnosticsMs: 0 },
  } as unknown as RunReport;
}

describe("the summary", () => {
  const grid: SweepAxis[] = [{ path: "simulator.gamma", values: [1, 10] }];
  const specs = gridPoints(grid);
  const atOne = fakeReport(resolveSets(["simulator.gamma=1"]), {
    single: [
      { seed: 0, human: 0.6, heldout: 0.5 },
      { seed: 1, human: 0.5, heldout: 0.55 },
      { seed: 2, human: 0.7, heldout: 0.5 },
    ],
    vs: [
      { seed: 0, human: 0.55, heldout: 0.5 },
      { seed: 1, human: 0.5, heldout: 0.5 },
      { seed: 2, human: 0.6, heldout: 0.45 },
    ],
  });
  // seeds listed in another order: the cost pairs them by seed
  const atTen = fakeReport(resolveSets(["simulator.gamma=10"]), {
    single: [
      { seed: 2, human: 0.4, heldout: 0.4 },
      { seed: 0, human: 0.45, heldout: 0.42 },
      { seed: 1, human: 0.42, heldout: 0.5 },
    ],
    vs: [
      { seed: 0, human: 0.6, heldout: 0.5 },
      { seed: 1, human: 0.55, heldout: 0.52 },
      { seed: 2, human: 0.62, heldout: 0.48 },
    ],
  });
  const run = { preset: "persuasion-smoke", backend: "wasm", config: smoke, sets: [] };
  const summary = summarizeSweep(run, grid, [
    { ...specs[0], report: atOne, file: `${specs[0].name}.json` },
    { ...specs[1], report: atTen, file: `${specs[1].name}.json` },
  ]);

  it("carries each point's paired differences vs single as its report has them", () => {
    expect(summary.points[1].comparisons).toEqual(
      atTen.comparisons.map(({ a, b, metric, difference }) => ({ a, b, metric, difference })),
    );
    expect(summary.points[1].report).toBe("simulator.gamma=10.json");
  });

  it("takes the collapse's cost single(γ = 1) − single(γ) paired by seed", () => {
    const cost = summary.points[1].cost!;
    expect(cost.baseline).toBe("simulator.gamma=1");
    const human = cost.effects.find((e) => e.metric === "humanSuccess")!.difference;
    expect(human).toEqual(pairedDifference([0.6, 0.5, 0.7], [0.45, 0.42, 0.4]));
    expect(human.mean).toBeCloseTo((0.15 + 0.08 + 0.3) / 3, 12);
    const zero = summary.points[0].cost!.effects[0].difference;
    expect([zero.mean, zero.lo, zero.hi, zero.p]).toEqual([0, 0, 0, 1]);
    expect(summary.costNotes).toBeUndefined();
  });

  it("gives no cost where γ = 1 is not swept, and says why where a point cannot have one", () => {
    const noOne = summarizeSweep(
      run,
      [{ path: "simulator.gamma", values: [10] }],
      [
        {
          ...gridPoints([{ path: "simulator.gamma", values: [10] }])[0],
          report: atTen,
          file: "x.json",
        },
      ],
    );
    expect(noOne.points[0].cost).toBeUndefined();
    expect(noOne.costNotes).toBeUndefined();
    const noSingle = fakeReport(resolveSets(["simulator.gamma=10"]), {
      vs: [{ seed: 0, human: 0.5, heldout: 0.5 }],
    });
    const s = summarizeSweep(run, grid, [
      { ...specs[0], report: atOne, file: "a.json" },
      { ...specs[1], report: noSingle, file: "b.json" },
    ]);
    expect(s.points[1].cost).toBeUndefined();
    expect(s.costNotes).toEqual([
      "simulator.gamma=10: no cost (the point has no single condition)",
    ]);
  });

  it("pairs each point with the γ = 1 point of its other settings", () => {
    const two: SweepAxis[] = [
      { path: "simulator.gamma", values: [1, 10] },
      { path: "vs.k", values: [3, 5] },
    ];
    const pts = gridPoints(two);
    const s = summarizeSweep(
      run,
      two,
      pts.map((p) => ({ ...p, report: p.values[0] === 1 ? atOne : atTen, file: `${p.name}.json` })),
    );
    expect(s.points.map((p) => p.cost?.baseline)).toEqual([
      "simulator.gamma=1_vs.k=3",
      "simulator.gamma=1_vs.k=5",
      "simulator.gamma=1_vs.k=3",
      "simulator.gamma=1_vs.k=5",
    ]);
  });

  it("reads back from its JSON, and bad summaries are refused with the reason", () => {
    const text = JSON.stringify(summary);
    expect(parseSweep(text)).toEqual(JSON.parse(text));
    expect(() => parseSweep("{")).toThrow(/not JSON/);
    expect(() => parseSweep(JSON.stringify({ schema: "collapse-lab/run-report@1" }))).toThrow(
      /not a sweep summary/,
    );
    const bad = JSON.parse(text) as { points: { report: string; values: unknown[] }[] };
    bad.points[0].report = "../../etc/passwd.json";
    expect(() => parseSweep(JSON.stringify(bad))).toThrow(/points\.0\.report/);
    const short = JSON.parse(text) as { points: { values: unknown[] }[] };
    short.points[1].values = [];
    expect(() => parseSweep(JSON.stringify(short))).toThrow(/has 0 values for 1 swept settings/);
  });

  it("prints one row per comparison and the cost under each point", () => {
    const text = formatSweep(summary);
    expect(text).toContain("sweep of persuasion-smoke over simulator.gamma: 2 points, 3 seed(s)");
    const lines = text.split("\n");
    const at = lines.findIndex((l) => l.startsWith("simulator.gamma=10"));
    expect(lines[at + 1]).toMatch(/^ {2}vs − single +[-\d.]+ \[/);
    expect(lines[at + 2]).toMatch(/^ {2}collapse's cost: single\(γ = 1\) − single +[-\d.]+ \[.*p /);
  });
});

describe("a point's report", () => {
  it("is recognised by its config, and another config is named", () => {
    const report = parseReport(
      readFileSync(
        resolve(import.meta.dirname, "../../public/recorded/persuasion-smoke.json"),
        "utf8",
      ),
    );
    const grid: SweepAxis[] = [
      { path: "simulator.gamma", values: [report.config.simulator.gamma, 1] },
    ];
    const [p, q] = gridPoints(grid);
    const summary = summarizeSweep(
      { preset: "persuasion-smoke", backend: "wasm", config: report.config, sets: [] },
      grid,
      [
        { ...p, report, file: "p.json" },
        { ...q, report, file: "q.json" },
      ],
    );
    expect(reportMismatch(summary, summary.points[0], report)).toBeNull();
    expect(reportMismatch(summary, summary.points[1], report)).toBe(
      "its simulator.gamma is 10, the point's is 1",
    );
  });
});
