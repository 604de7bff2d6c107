// The ensemble as in SCOPE: the single simulator's family and other simulator families
// (ensemble.members: a corpus type mixture, a corpus size and a γ of their own), disjoint from the
// held-out panel and from each other, checked at config validation with errors that name the
// path. Each family is pretrained as a panel member with the same settings would be, and trained
// against at its own γ. Configs without members keep the old ensemble (k networks of the single
// simulator's family). Models are tiny and pretrain for a few steps.
import { describe, expect, it } from "vitest";
import { createBackend } from "../../src/engine/backends/index";
import { createOpponents } from "../../src/experiment/conditions";
import {
  applySet,
  ConfigError,
  DEFAULT_CONFIG,
  merge,
  validateConfig,
  type ExperimentConfig,
} from "../../src/experiment/config";
import { presetConfig, PRESETS } from "../../src/experiment/presets";
import { benchmarkFor } from "../../src/benchmarks/registry";
import {
  assemblePretrained,
  describeJob,
  modelOptions,
  pretrainJobs,
  runPretrainJob,
  type PretrainJob,
  type PretrainResult,
} from "../../src/experiment/pretrain";
import type { NeuralSimulator } from "../../src/simulators/neural";

const set = (c: unknown, ...assignments: string[]) =>
  assignments.reduce((x, a) => applySet(x, a), c);
const invalid = (c: unknown) => () => validateConfig(c);

/** A family as validation compares them: the normalised type mixture, the corpus size and γ. */
function family(
  c: ExperimentConfig,
  m: { prior?: number[]; corpusScale?: number; gamma?: number },
) {
  const prior = m.prior
    ? m.prior.map((w) => w / m.prior!.reduce((a, b) => a + b, 0))
    : benchmarkFor(c).humans.types.map((t) => t.prior);
  return JSON.stringify([prior.map((p) => p.toFixed(9)), m.corpusScale, m.gamma]);
}

describe("ensemble families in the config", () => {
  it("the Persuasion presets use distinct families, none of them the panel's or the single simulator's", () => {
    for (const p of PRESETS.filter((x) => x.benchmark === "persuasion")) {
      const c = presetConfig(p.id);
      expect(c.ensemble.k, p.id).toBe(3);
      expect(c.ensemble.members.length, p.id).toBe(2);
      const families = [
        family(c, { corpusScale: 1, gamma: c.simulator.gamma }), // the single simulator's, the ensemble's first member
        ...c.ensemble.members.map((m) => family(c, m)),
      ];
      expect(new Set(families).size, p.id).toBe(3);
      for (const m of c.panel) expect(families, `${p.id}: ${m.name}`).not.toContain(family(c, m));
      const offsets = [...c.ensemble.members, ...c.panel].map((m) => m.seedOffset);
      expect(new Set(offsets).size, p.id).toBe(offsets.length);
    }
  });

  it("rejects a member of a panel member's family, naming the path and the panel member", () => {
    const b = DEFAULT_CONFIG.panel[1]; // family-b: γ 8, its own mixture, 1 ×
    const c = set(
      DEFAULT_CONFIG,
      `ensemble.members.1=${JSON.stringify({ name: "copy", gamma: b.gamma, prior: b.prior, corpusScale: b.corpusScale, seedOffset: 300 })}`,
    );
    expect(invalid(c)).toThrow(ConfigError);
    expect(invalid(c)).toThrow(/ensemble\.members\[1\]: the same family as panel member family-b/);
    // the same mixture written with other weights (×2) is the same family
    const scaled = set(
      DEFAULT_CONFIG,
      `ensemble.members.0=${JSON.stringify({ name: "copy", gamma: b.gamma, prior: b.prior!.map((w) => 2 * w), corpusScale: b.corpusScale, seedOffset: 300 })}`,
    );
    expect(invalid(scaled)).toThrow(
      /ensemble\.members\[0\]: the same family as panel member family-b/,
    );
    // one setting apart is another family (γ 9 instead of 8)
    const other = set(
      DEFAULT_CONFIG,
      `ensemble.members.1=${JSON.stringify({ name: "near-b", gamma: 9, prior: b.prior, corpusScale: b.corpusScale, seedOffset: 300 })}`,
    );
    expect(validateConfig(other).ensemble.members[1].name).toBe("near-b");
    // a panel member with the humans' mixture (family-a) matches a member without a prior
    const a = DEFAULT_CONFIG.panel[0];
    expect(
      invalid(
        set(
          DEFAULT_CONFIG,
          `ensemble.members.0=${JSON.stringify({ name: "x", gamma: a.gamma, corpusScale: a.corpusScale, seedOffset: 300 })}`,
        ),
      ),
    ).toThrow(/ensemble\.members\[0\]: the same family as panel member family-a/);
  });

  it("rejects members of one family, of the single simulator's family, and shared seed offsets or names", () => {
    const [f] = DEFAULT_CONFIG.ensemble.members;
    expect(
      invalid(
        set(
          DEFAULT_CONFIG,
          `ensemble.members.1=${JSON.stringify({ ...f, name: "twin", seedOffset: 299 })}`,
        ),
      ),
    ).toThrow(/ensemble\.members\[1\]: the same family as ensemble\.members\[0\] \(family-f\)/);
    expect(
      invalid(
        set(
          DEFAULT_CONFIG,
          `ensemble.members.0=${JSON.stringify({ name: "x", gamma: DEFAULT_CONFIG.simulator.gamma, corpusScale: 1, seedOffset: 300 })}`,
        ),
      ),
    ).toThrow(/ensemble\.members\[0\]: the same family as the single simulator's/);
    expect(invalid(set(DEFAULT_CONFIG, "ensemble.members.1.seedOffset=201"))).toThrow(
      /ensemble\.members\[1\]\.seedOffset: 201 is also ensemble\.members\[0\]'s/,
    );
    expect(invalid(set(DEFAULT_CONFIG, "ensemble.members.1.seedOffset=103"))).toThrow(
      /ensemble\.members\[1\]\.seedOffset: 103 is also panel member family-c's/,
    );
    expect(invalid(set(DEFAULT_CONFIG, 'ensemble.members.0.name="family-c"'))).toThrow(
      /ensemble\.members\[0\]\.name: "family-c" is also a panel member's/,
    );
    // simulator.gamma stays free: the γ knob may take a panel member's γ (family-a's 4), with the ensemble too
    expect(validateConfig(set(DEFAULT_CONFIG, "simulator.gamma=4")).simulator.gamma).toBe(4);
  });

  it("checks k against the families listed, the mixtures' length, and every member's keys", () => {
    expect(invalid(set(DEFAULT_CONFIG, "ensemble.k=4"))).toThrow(
      /ensemble\.k: 4, but ensemble\.members lists 2 families .*ensemble\.members=\[\]/,
    );
    expect(validateConfig(set(DEFAULT_CONFIG, "ensemble.k=2")).ensemble.k).toBe(2); // the single simulator and the first family
    expect(invalid(set(DEFAULT_CONFIG, "ensemble.members.0.prior=[1,2,3]"))).toThrow(
      /ensemble\.members\[0\]\.prior: expected one weight per latent type \(4: skeptic, empathetic, frugal, social\), got 3/,
    );
    expect(invalid(set(DEFAULT_CONFIG, "ensemble.members.0.prior=[0,0,0,0]"))).toThrow(
      /ensemble\.members\[0\]\.prior: a type mixture needs some positive weight/,
    );
    expect(invalid(set(DEFAULT_CONFIG, "ensemble.members.0.corpusScale=null"))).toThrow(
      /ensemble\.members\.0\.corpusScale/,
    );
    expect(invalid(set(DEFAULT_CONFIG, "ensemble.members.0.lm=1"))).toThrow(
      /ensemble\.members\.0\.lm: unknown key/,
    );
    const service = presetConfig("service-quick");
    expect(
      invalid(
        set(
          service,
          `ensemble.members=[${JSON.stringify({ name: "x", gamma: 5, prior: [1, 1, 1], corpusScale: 0.5, seedOffset: 300 })}]`,
        ),
      ),
    ).toThrow(
      /ensemble\.members\[0\]\.prior: expected one weight per latent type \(4: accurate, low-skill, anxious, impatient\), got 3/,
    );
  });

  it("configs without members (saved runs, old links) keep k networks of the single simulator's family", () => {
    const old = structuredClone(DEFAULT_CONFIG) as unknown as { ensemble: unknown };
    old.ensemble = { k: 5 };
    const c = validateConfig(old);
    expect(c.ensemble).toEqual({ k: 5, members: [] });
    expect(pretrainJobs(c, 0).filter((j) => j.kind === "ensemble")).toEqual(
      [1, 2, 3, 4].map((member) => ({ kind: "ensemble", seed: 0, member })),
    );
    expect(describeJob(c, { kind: "ensemble", seed: 0, member: 2 })).toBe("ensemble simulator 3");
    // Service's presets keep that form
    for (const id of ["service-quick", "service-smoke", "service-paper"])
      expect(presetConfig(id).ensemble, id).toEqual({ k: 3, members: [] });
  });
});

const TINY = { d: 16, layers: 1, heads: 2, mlpRatio: 2 };
/** A run small enough to pretrain every model in seconds. */
function tiny(base: ExperimentConfig, patch: unknown = {}): ExperimentConfig {
  return validateConfig(
    merge(
      merge(base, {
        seeds: 1,
        seedBase: 0,
        conditions: ["single", "ensemble"],
        corpus: { dialogues: 64 },
        simulator: { model: TINY, pretrain: { steps: 3, batch: 16, lr: 3e-3 } },
        policy: { model: TINY, pretrain: { steps: 3, batch: 16, lr: 3e-3 } },
        rl: { prompts: 2, groupSize: 4 },
      }),
      patch,
    ),
  );
}

async function pretrainEverything(c: ExperimentConfig, seed: number) {
  const { backend } = await createBackend("float64");
  const results = new Map<PretrainJob, PretrainResult>();
  for (const job of pretrainJobs(c, seed)) results.set(job, await runPretrainJob(backend, c, job));
  return { backend, pretrained: assemblePretrained(c, seed, results), results };
}

const weights = (r: PretrainResult) => r.checkpoint.tensors.map((t) => Array.from(t.data));

describe("ensemble families in a run", () => {
  it("each family is pretrained as a panel member of the same settings would be, and trained against at its own γ", async () => {
    const c = tiny(DEFAULT_CONFIG);
    const { backend, pretrained } = await pretrainEverything(c, 0);
    expect(pretrained.ensemble.map((e) => [e.name, e.gamma])).toEqual([
      ["aligned simulator", null], // the run's simulator.gamma
      ["family-f", 5],
      ["family-g", 12],
    ]);
    expect(pretrained.ensemble[0].result).toBe(pretrained.reference);
    // family-f's network is what a panel member with its corpus settings and seed offset gives
    const f = c.ensemble.members[0];
    const asPanel = tiny(DEFAULT_CONFIG, {
      ensemble: { members: [] },
      panel: [
        {
          name: "f-held-out",
          gamma: 2,
          prior: f.prior,
          corpusScale: f.corpusScale,
          seedOffset: f.seedOffset,
        },
      ],
    });
    const panelF = await runPretrainJob(backend, asPanel, { kind: "panel", seed: 0, member: 0 });
    expect(weights(pretrained.ensemble[1].result)).toEqual(weights(panelF));
    expect(weights(pretrained.ensemble[2].result)).not.toEqual(weights(panelF));
    expect(weights(pretrained.ensemble[1].result)).not.toEqual(weights(pretrained.reference));

    const opponents = createOpponents("ensemble", {
      backend,
      bench: benchmarkFor(c),
      config: c,
      pretrained,
      opts: modelOptions(benchmarkFor(c), c),
    })!;
    const sims = opponents.evaluationSimulators() as NeuralSimulator[];
    expect(sims.map((s) => [s.name, s.gamma])).toEqual([
      ["aligned simulator", c.simulator.gamma],
      ["family-f", 5],
      ["family-g", 12],
    ]);
    opponents.dispose();
  }, 120_000);

  it("works on Service, whose panel and types are its own", async () => {
    const members = [
      {
        name: "family-f",
        gamma: 5,
        prior: [0.5, 0.2, 0.1, 0.2],
        corpusScale: 0.75,
        seedOffset: 201,
      },
      {
        name: "family-g",
        gamma: 12,
        prior: [0.25, 0.25, 0.25, 0.25],
        corpusScale: 0.5,
        seedOffset: 202,
      },
    ];
    const c = tiny(presetConfig("service-smoke"), { ensemble: { k: 3, members } });
    const { pretrained } = await pretrainEverything(c, 0);
    expect(pretrained.ensemble.map((e) => [e.name, e.gamma])).toEqual([
      ["aligned simulator", null], // the run's simulator.gamma
      ["family-f", 5],
      ["family-g", 12],
    ]);
    expect(weights(pretrained.ensemble[1].result)).not.toEqual(
      weights(pretrained.ensemble[2].result),
    );
  }, 120_000);
});
