// A real LM as a held-out panel member on Service: service-smoke shrunk (one seed, `base` only,
// short calls, inline on the float64 reference engine) with a panel of one pretrained network and
// the project's tiny GPT-2 twice — direct and VS — loaded through transformers.js from a folder.
// Every member gets a held-out success in [0, 1]; the diagnostics list the LM members; their
// reply-table rows at two of Service's probe states equal softmax(label log-likelihood / T) of the
// customer's labels under the float64 reference GPT-2, computed outside transformers.js and the
// simulator. The tiny LM is written with a 2,048-token context: Service's prompts (the header and
// a call of up to six exchanges) reach ~1,100 of its byte-level tokens.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { benchmarkModule } from "../../src/benchmarks/registry";
import { createBackend } from "../../src/engine/backends/index";
import { merge, validateConfig, type ExperimentConfig } from "../../src/experiment/config";
import { runExperiment, type RunReport } from "../../src/experiment/experiment";
import { presetConfig } from "../../src/experiment/presets";
import { InlineExecutor } from "../../src/experiment/tasks";
import { TinyGpt2Reference, makeTinyGpt2 } from "../../src/lm/tiny";
import { writeHfFolder } from "../../src/lm/tiny/write-files";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-service-lm-panel-"));
const MODEL = join(tmp, "tiny-gpt2-2k");
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TINY = { d: 16, layers: 1, heads: 2, mlpRatio: 2 };
const LM = makeTinyGpt2({ context: 2048, d: 16, layers: 1, heads: 2 });
const smoke = presetConfig("service-smoke");
const service = benchmarkModule("service");

const config: ExperimentConfig = validateConfig(
  merge(smoke, {
    seeds: 1,
    conditions: ["base"], // one unit: its curve point and final evaluation meet every panel member
    world: { maxExchanges: 6 },
    corpus: { dialogues: 128 },
    simulator: { model: TINY, pretrain: { batch: 16 } },
    policy: { model: TINY, pretrain: { batch: 16 } },
    rl: { steps: 2, prompts: 2, groupSize: 4, evalEvery: 2 },
    panel: [
      smoke.panel[0],
      { name: "tiny-direct", lm: { model: MODEL, mode: "direct", temperature: 30 } },
      { name: "tiny-vs", lm: { model: MODEL, mode: "vs", temperature: 30, k: 3, exponent: 0.5 } },
    ],
    eval: { episodes: 16, curveEpisodes: 8, diagnosticSamples: 16, diagnosticSeeds: 1 },
  }),
);

let report: RunReport;

beforeAll(async () => {
  await writeHfFolder(MODEL, LM.files);
  const { backend } = await createBackend("float64");
  report = await runExperiment(config, new InlineExecutor(backend), {
    backend: "float64",
    preset: "test",
  });
}, 600_000);

describe("an LM panel member on Service", () => {
  it("every panel member, LM or network, has a held-out success in [0, 1], and the mean is over all three", () => {
    expect(report.config.benchmark).toBe("service");
    for (const c of report.conditions) {
      for (const s of c.seeds) {
        expect(Object.keys(s.heldoutByMember)).toEqual([
          smoke.panel[0].name,
          "tiny-direct",
          "tiny-vs",
        ]);
        const values = Object.values(s.heldoutByMember);
        for (const v of values) expect(v >= 0 && v <= 1, String(v)).toBe(true);
        expect(s.heldoutSuccess).toBeCloseTo(values.reduce((a, b) => a + b, 0) / values.length, 12);
      }
    }
    console.log(
      `service-smoke (shrunk) with two tiny-LM panel members: ${(report.timing.totalMs / 1000).toFixed(1)} s`,
    );
  });

  it("the LM members' reply-table rows at Service's probe states equal softmax(label log-likelihood / T) from the float64 reference GPT-2", () => {
    const ref = new TinyGpt2Reference(LM);
    const bench = service.create(config.world);
    const index = new Map(bench.acts.map((a, i) => [a.name, i]));
    const tables = report.simulators[0].replyTables!;
    expect(tables.map((t) => t.id)).toEqual(
      service.probeStates.map((p) => p.id).filter((id) => tables.some((t) => t.id === id)),
    );
    expect(tables.length).toBeGreaterThan(0);
    const softmax = (xs: number[]) => {
      const m = Math.max(...xs);
      const e = xs.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / z);
    };
    // the first probe state (a step: six replies) and the last (a confirmation: three); the float64 forward is slow
    for (const t of [tables[0], tables[tables.length - 1]]) {
      const d = { card: t.card, acts: t.dialogue.map((x) => index.get(x.act)!) };
      const { prompt, acts, continuations } = service.lm!.actLabelPrompt(d);
      expect(acts.map((a) => bench.acts[a].name)).toEqual(t.acts);
      const ids = ref.bpe.encode((prompt as { text: string }).text);
      expect(ids.length + 16).toBeLessThan(2048);
      const scores = continuations.map((c) =>
        ref.logprob([...ids, ...ref.bpe.encode(c)], ids.length),
      );
      const direct = softmax(scores.map((x) => x / 30));
      const vs = softmax(direct.map((p) => 0.5 * Math.log(p)));
      for (const [name, want] of [
        ["tiny-direct", direct],
        ["tiny-vs", vs],
      ] as const) {
        const row = t.rows.find((r) => r.name === name)!;
        expect(row.role).toBe("panel");
        row.probs.forEach((p, i) =>
          expect(Math.abs(p - want[i]), `${t.id} ${name} ${t.acts[i]}`).toBeLessThan(1.5e-4),
        ); // rows are rounded to 4 decimals
      }
    }
  });

  it("the diagnostics list the LM members with null γ and their replies' entropy", () => {
    const d = report.simulators[0];
    for (const name of ["tiny-direct", "tiny-vs"]) {
      const s = d.simulators.find((x) => x.name === name)!;
      expect(s).toMatchObject({ role: "panel", trueGamma: null, gammaMLE: null });
      expect(s.replyEntropy).toBeGreaterThan(0);
    }
    expect(d.unions.find((u) => u.name === "held-out panel")!.members).toEqual([
      smoke.panel[0].name,
      "tiny-direct",
      "tiny-vs",
    ]);
  });
});
