// Every condition's plumbing on the Service benchmark, end to end on tiny models: hidden faults reach
// the dialogues and their samples, the world's own moves (tickets, screens, look-ups) are played in
// rollouts, the diagnostics and their adaptive probe finish (a probe that ignored the world's moves
// never would), pass^k is reported, and the report carries Service's calibration and reference lines.
import { describe, expect, it } from "vitest";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { createBackend } from "../../src/engine/backends/index";
import { CONDITIONS } from "../../src/experiment/config";
import { runExperiment } from "../../src/experiment/experiment";
import { InlineExecutor } from "../../src/experiment/tasks";
import { tinyConfig } from "./tiny-config";

const config = tinyConfig("service-smoke");

describe("Service end to end", () => {
  it("runs every condition and reports hidden state, world moves, pass^k, diagnostics and calibration", async () => {
    const { backend } = await createBackend("float64");
    const report = await runExperiment(config, new InlineExecutor(backend), {
      backend: "float64",
      preset: "test",
    });
    const bench = benchmarkFor(config);
    expect(report.conditions.map((c) => c.id)).toEqual([...CONDITIONS]);
    for (const c of report.conditions) {
      const s = c.seeds[0];
      expect(s.humanPassK).toHaveLength(4);
      for (let j = 1; j < 4; j++)
        expect(s.humanPassK![j]).toBeLessThanOrEqual(s.humanPassK![j - 1] + 1e-12);
      const humans = s.samples.filter((x) => x.opponent === "humans");
      expect(humans.length).toBeGreaterThan(0);
      for (const x of humans) {
        expect(x.hidden, `${c.id}: a human dialogue keeps its faults`).toBeDefined();
        expect(bench.acts[x.acts[0]].kind, "every episode opens with the world's ticket").toBe(
          "env",
        );
        expect(bench.success({ card: x.card, acts: x.acts, hidden: x.hidden })).toBe(x.success);
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
    expect(played("own-modes")).toEqual(["low-skill", "anxious", "impatient"]);
    expect(
      diag.adaptiveProbe!.klDecision,
      "no customer act ends a dialogue with an outcome",
    ).toBeNull();
    expect(report.calibration.rows.map((r) => r.name)).toContain("pass^4, dual control");
    expect(report.world.referenceLines!.map((l) => l.id)).toEqual(
      expect.arrayContaining(["modal-script", "careful"]),
    );
  }, 300_000);
});
