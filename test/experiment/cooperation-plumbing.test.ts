// Every condition's plumbing on the Cooperation benchmark, end to end on tiny models: each episode
// opens with the world's task act and keeps the agent's plan as its hidden state, success is the
// merge rule's, the co-trained partners share the team's reward, the diagnostics and their adaptive
// probe finish, and the report carries CooperBench's calibration and the reference lines (solo too).
import { describe, expect, it } from "vitest";
import { benchmarkFor, benchmarkModule } from "../../src/benchmarks/registry";
import { createBackend } from "../../src/engine/backends/index";
import { CONDITIONS } from "../../src/experiment/config";
import { runExperiment } from "../../src/experiment/experiment";
import { InlineExecutor } from "../../src/experiment/tasks";
import { tinyConfig } from "./tiny-config";

const config = tinyConfig("cooperation-smoke");

describe("Cooperation end to end", () => {
  it("runs every condition and reports the task, the merge, diagnostics, calibration and the solo reference", async () => {
    expect(config.cotrain.reward, "the partner shares the team's success").toBe("cooperative");
    const { backend } = await createBackend("float64");
    const report = await runExperiment(config, new InlineExecutor(backend), {
      backend: "float64",
      preset: "test",
    });
    const bench = benchmarkFor(config);
    const m = benchmarkModule(config.benchmark);
    expect(report.conditions.map((c) => c.id)).toEqual([...CONDITIONS]);
    for (const c of report.conditions) {
      const humans = c.seeds[0].samples.filter((x) => x.opponent === "humans");
      expect(humans.length).toBeGreaterThan(0);
      for (const x of humans) {
        const d = { card: x.card, acts: x.acts, hidden: x.hidden };
        expect(bench.acts[x.acts[0]].name, "every episode opens with the world's task act").toMatch(
          /^task:/,
        );
        // no generator: the task act must follow from the hidden plan alone, not from a draw
        expect(
          bench.envAct!({ card: x.card, acts: [], hidden: x.hidden }, null as never),
          "the task act is the episode's hidden plan",
        ).toBe(x.acts[0]);
        expect(bench.success(d)).toBe(x.success);
        expect(m.outcome(bench, d), "the outcome names the merge").toMatch(
          /both pass|only ours passes|only theirs passes|neither passes|merge conflict in/,
        );
        expect(x.success).toBe(m.outcome(bench, d) === "both pass");
      }
    }
    const [diag] = report.simulators;
    expect(diag.replyTables!.length).toBeGreaterThan(0);
    expect(diag.adaptiveProbe!.dialogues).toBe(16);
    // the panel's networks against the aligned one, and the benchmark's panels exactly, side by side
    expect(diag.panel!.diversity.members.map((m) => m.name)).toEqual(
      config.panel.map((m) => m.name),
    );
    expect(diag.panel!.separation!.dialogues).toBe(16);
    expect(diag.exactPanels!.map((p) => p.kind)).toEqual(["shared-mode", "own-modes", null]);
    const played = (kind: string) =>
      diag
        .exactPanels!.find((p) => p.kind === kind)!
        .diversity.types.filter((t) => t.players.length)
        .map((t) => t.name);
    expect(played("own-modes")).toEqual(["silent", "ignorer", "breaker", "passive", "deferrer"]);
    expect(report.calibration.rows.map((r) => r.name)).toEqual(
      expect.arrayContaining([expect.stringMatching(/success with a partner \/ success alone/)]),
    );
    expect(report.world.referenceLines!.map((l) => l.id)).toEqual([
      "modal-script",
      "adaptive",
      "solo",
      "behaviour",
    ]);
  }, 300_000);
});
