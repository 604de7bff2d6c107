// Real LMs as held-out panel members: a tiny experiment (persuasion-smoke shrunk, inline on the
// float64 reference engine) whose panel holds one pretrained network and the project's tiny GPT-2
// twice — direct and VS — loaded through transformers.js from a folder. The report gives every
// member a held-out success in [0, 1] and the LM members diagnostics with null γ; the same config
// twice gives the same numbers; a missing folder fails before any task runs, in-process and
// through the CLI. The tiny LM is written with a 1024-token context (the game's prompts reach
// ~600 of its byte-level tokens, more than the 128 of the backend tests' copy) and one d16 layer.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBackend } from "../../src/engine/backends/index";
import {
  ConfigError,
  merge,
  validateConfig,
  type ExperimentConfig,
} from "../../src/experiment/config";
import { runExperiment, type RunReport } from "../../src/experiment/experiment";
import { isLocalModel, modelSource } from "../../src/experiment/lm-simulators";
import { presetConfig } from "../../src/experiment/presets";
import { panelJobs } from "../../src/experiment/pretrain";
import { InlineExecutor, type Executor, type Task } from "../../src/experiment/tasks";
import { TinyGpt2Reference, makeTinyGpt2 } from "../../src/lm/tiny";
import { actLabelPrompt } from "../../src/benchmarks/persuasion/lm-prompts";
import { createPersuasion } from "../../src/benchmarks/persuasion/bench";
import { writeHfFolder } from "../../src/lm/tiny/write-files";

const ROOT = resolve(import.meta.dirname, "../..");
const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-lm-panel-"));
const MODEL = join(tmp, "tiny-gpt2-1k");
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TINY = { d: 16, layers: 1, heads: 2, mlpRatio: 2 };
const LM = makeTinyGpt2({ context: 1024, d: 16, layers: 1, heads: 2 });
const smoke = presetConfig("persuasion-smoke");

function configWith(panelLm: { model: string }): ExperimentConfig {
  return validateConfig(
    merge(smoke, {
      seeds: 1,
      conditions: ["base"], // one unit: its curve point and final evaluation meet every panel member
      corpus: { dialogues: 128 },
      simulator: { model: TINY, pretrain: { batch: 16 } },
      policy: { model: TINY, pretrain: { batch: 16 } },
      rl: { steps: 2, prompts: 2, groupSize: 4, evalEvery: 2 },
      panel: [
        smoke.panel[0],
        { name: "tiny-direct", lm: { model: panelLm.model, mode: "direct", temperature: 30 } },
        {
          name: "tiny-vs",
          lm: { model: panelLm.model, mode: "vs", temperature: 30, k: 3, exponent: 0.5 },
        },
      ],
      eval: { episodes: 16, curveEpisodes: 8, diagnosticSamples: 16, diagnosticSeeds: 1 },
    }),
  );
}

/** InlineExecutor that counts the tasks it was given and times the units. */
class CountingExecutor implements Executor {
  readonly parallelism = 1;
  readonly kinds: Task["kind"][] = [];
  unitMs = 0;
  constructor(readonly inner: InlineExecutor) {}
  async run<T extends Task>(task: T, onProgress?: Parameters<Executor["run"]>[1]) {
    this.kinds.push(task.kind);
    const t = performance.now();
    const r = await this.inner.run(task, onProgress);
    if (task.kind === "unit") this.unitMs += performance.now() - t;
    return r;
  }
  async close() {}
}

async function run(
  config: ExperimentConfig,
): Promise<{ report: RunReport; executor: CountingExecutor }> {
  const { backend } = await createBackend("float64");
  const executor = new CountingExecutor(new InlineExecutor(backend));
  return {
    report: await runExperiment(config, executor, { backend: "float64", preset: "test" }),
    executor,
  };
}

function inUnit(x: number): void {
  expect(x).toBeGreaterThanOrEqual(0);
  expect(x).toBeLessThanOrEqual(1);
}

describe("LM panel members: config", () => {
  it("an LM member is {name, lm}; network keys and vs-only keys are errors naming their path; existing panels stay valid", () => {
    expect(() => validateConfig(smoke)).not.toThrow();
    const withPanel = (panel: unknown) => () => validateConfig({ ...smoke, panel });
    expect(withPanel([{ name: "x", lm: { model: "./m", mode: "direct" } }])).not.toThrow();
    expect(withPanel([{ name: "x", gamma: 3, lm: { model: "./m", mode: "direct" } }])).toThrow(
      /panel\.0\.gamma: an LM member/,
    );
    expect(withPanel([{ name: "x", lm: { model: "./m", mode: "direct", k: 3 } }])).toThrow(
      /panel\.0\.lm\.k: only for mode "vs"/,
    );
    expect(withPanel([{ name: "x", lm: { model: "./m", mode: "sample" } }])).toThrow(ConfigError);
    expect(withPanel([{ name: "x", gamma: 3 }])).toThrow(
      /panel\.0\.corpusScale: required for a pretrained panel member/,
    );
  });

  it("LM members get no pretraining job; network members keep their config index", () => {
    const c = configWith({ model: "./m" });
    expect(panelJobs(c, 7)).toEqual([{ kind: "panel", seed: 7, member: 0 }]);
    expect(panelJobs(smoke, smoke.seedBase)).toHaveLength(smoke.panel.length);
  });

  it("a path is a local folder, anything else a hub id", () => {
    for (const m of ["/abs/tiny", "./tiny", "../models/tiny", "~/models/tiny", "C:\\models\\tiny"])
      expect(isLocalModel(m), m).toBe(true);
    for (const m of ["HuggingFaceTB/SmolLM2-135M", "gpt2", "Xenova/all-MiniLM-L6-v2"])
      expect(isLocalModel(m), m).toBe(false);
    expect(modelSource({ model: "/abs/models/tiny/", mode: "direct" })).toEqual({
      id: "tiny",
      localModelPath: "/abs/models/",
      allowRemote: false,
    });
    expect(modelSource({ model: "./tiny", mode: "direct" }).localModelPath).toBe(
      process.cwd() + "/",
    );
    expect(modelSource({ model: "HuggingFaceTB/SmolLM2-135M", mode: "vs", dtype: "q8" })).toEqual({
      id: "HuggingFaceTB/SmolLM2-135M",
      allowRemote: true,
      dtype: "q8",
    });
  });
});

describe("LM panel members in an experiment", () => {
  let first: Awaited<ReturnType<typeof run>>;

  beforeAll(async () => {
    await writeHfFolder(MODEL, LM.files);
    first = await run(configWith({ model: MODEL }));
  }, 300_000);

  it("every panel member, LM or network, has a held-out success in [0, 1], and the mean is over all three", () => {
    const { report, executor } = first;
    expect(executor.kinds.filter((k) => k === "pretrain")).toHaveLength(3); // reference, policy, the network member: nothing for the LMs
    for (const c of report.conditions) {
      for (const s of c.seeds) {
        expect(Object.keys(s.heldoutByMember)).toEqual([
          smoke.panel[0].name,
          "tiny-direct",
          "tiny-vs",
        ]);
        for (const v of Object.values(s.heldoutByMember)) inUnit(v);
        const values = Object.values(s.heldoutByMember);
        expect(s.heldoutSuccess).toBeCloseTo(values.reduce((a, b) => a + b, 0) / values.length, 12);
        for (const p of s.curve) inUnit(p.heldout);
      }
    }
    console.log(
      `unit (curve point + final evaluation, 3 panel members) ${(executor.unitMs / 1000).toFixed(1)} s; whole run ${(report.timing.totalMs / 1000).toFixed(1)} s`,
    );
  });

  it("the LM members' reply-table rows equal softmax(label log-likelihood / T) from the float64 reference GPT-2 (VS: its power q ∝ p^0.5)", () => {
    // an oracle outside transformers.js and the simulator: the tiny model's plain float64 forward
    const ref = new TinyGpt2Reference(LM);
    const bench = createPersuasion();
    const index = new Map(bench.acts.map((a, i) => [a.name, i]));
    const tables = first.report.simulators[0].replyTables!;
    expect(tables.length).toBeGreaterThan(0);
    for (const t of tables) {
      const d = { card: t.card, acts: t.dialogue.map((x) => index.get(x.act)!) };
      const { prompt, acts, continuations } = actLabelPrompt(d);
      const ids = ref.bpe.encode((prompt as { text: string }).text);
      const scores = continuations.map((c) =>
        ref.logprob([...ids, ...ref.bpe.encode(c)], ids.length),
      );
      const softmax = (xs: number[]) => {
        const m = Math.max(...xs);
        const e = xs.map((x) => Math.exp(x - m));
        const z = e.reduce((a, b) => a + b, 0);
        return e.map((x) => x / z);
      };
      const direct = softmax(scores.map((x) => x / 30)); // temperature 30
      const vs = softmax(direct.map((p) => 0.5 * Math.log(p))); // exponent 0.5
      const byName = (p: number[]) => t.acts.map((name) => p[acts.indexOf(index.get(name)!)]);
      for (const [name, want] of [
        ["tiny-direct", byName(direct)],
        ["tiny-vs", byName(vs)],
      ] as const) {
        const row = t.rows.find((r) => r.name === name)!;
        expect(row.probs.length, `${t.id} ${name}`).toBe(want.length);
        row.probs.forEach((p, i) =>
          expect(Math.abs(p - want[i]), `${t.id} ${name} ${t.acts[i]}`).toBeLessThan(1.5e-4),
        ); // rows are rounded to 4 decimals
      }
      expect(
        Math.max(...direct) - Math.min(...direct),
        "the rows are not uniform: the check can tell models apart",
      ).toBeGreaterThan(1e-3);
    }
  });

  it("diagnostics list the LM members with null γ, SCOPE's estimators, and reply-table rows that are distributions", () => {
    const d = first.report.simulators[0];
    for (const name of ["tiny-direct", "tiny-vs"]) {
      const s = d.simulators.find((x) => x.name === name)!;
      expect(s).toMatchObject({
        role: "panel",
        trueGamma: null,
        gammaMLE: null,
        referenceAware: null,
      });
      expect(s.modeCoverage).toBeGreaterThanOrEqual(0);
      expect(s.replyEntropy).toBeGreaterThan(0);
      for (const t of d.replyTables!) {
        const row = t.rows.find((r) => r.name === name)!;
        expect(row.role).toBe("panel");
        expect(row.probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 3);
      }
    }
    const network = d.simulators.find((x) => x.name === smoke.panel[0].name)!;
    expect(network.trueGamma).toBe(smoke.panel[0].gamma);
    expect(network.gammaMLE).not.toBeNull();
    expect(d.unions.find((u) => u.name === "held-out panel")!.members).toEqual([
      smoke.panel[0].name,
      "tiny-direct",
      "tiny-vs",
    ]);
  });

  it("the same config twice gives identical numbers", { timeout: 300_000 }, async () => {
    const again = await run(configWith({ model: MODEL }));
    expect(again.report.conditions).toEqual(first.report.conditions);
    expect(again.report.simulators).toEqual(first.report.simulators);
  });

  it("a missing model folder fails at the start, naming the member and the path, before any task runs", async () => {
    const missing = join(tmp, "no-such-model");
    const { backend } = await createBackend("float64");
    const executor = new CountingExecutor(new InlineExecutor(backend));
    await expect(
      runExperiment(configWith({ model: missing }), executor, { backend: "float64" }),
    ).rejects.toThrow(`panel member tiny-direct: model not found at ${missing} (no such folder)`);
    expect(executor.kinds).toEqual([]); // "at the start": no task (no pretraining) ran; speed is no part of the claim
    // a folder that exists but is no model folder
    await expect(
      runExperiment(configWith({ model: tmp }), executor, { backend: "float64" }),
    ).rejects.toThrow(
      /panel member tiny-direct: model not found at .*\(the folder has no config\.json\)/,
    );
  });

  it(
    "the CLI: --set 'panel=[…]' with a missing folder exits 1 with that message before pretraining",
    { timeout: 60_000 },
    async () => {
      const rel = "./" + relative(ROOT, join(tmp, "gone"));
      const panel = JSON.stringify([
        smoke.panel[0],
        { name: "smol", lm: { model: rel, mode: "vs" } },
      ]);
      const r = await new Promise<{ code: number | null; stderr: string }>((done, fail) => {
        const child = spawn(
          process.execPath,
          [
            "bin/collapse-lab.mjs",
            "run",
            "--preset",
            "persuasion-smoke",
            "--parallel",
            "1",
            "--set",
            `panel=${panel}`,
          ],
          { cwd: ROOT, env: { ...process.env, COLLAPSE_LAB_CACHE: "off" } },
        );
        let stderr = "";
        child.stderr.on("data", (b) => (stderr += b));
        child.on("error", fail);
        child.on("close", (code) => done({ code, stderr }));
      });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(
        `collapse-lab: panel member smol: model not found at ${join(tmp, "gone")} (no such folder)`,
      );
      expect(r.stderr).not.toMatch(/^pretrain/m);
    },
  );
});
