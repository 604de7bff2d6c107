// The CLI's printout of the panel diagnostics (report-text.ts' panelLines): the run's panel's modes,
// types and separation, then the benchmark's panels exactly, side by side with the run's marked.
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/experiment/config";
import { exactPanels, type DiagnosticsReport } from "../../src/experiment/diagnostics";
import { panelKindOf } from "../../src/experiment/panel-diagnostics";
import { panelLines } from "../../src/experiment/report-text";

describe("panelLines", () => {
  it("prints the run's panel and every named panel of Service, the run's marked", async () => {
    const config = defaultConfig("service");
    const exact = await exactPanels(config, 32);
    const [shared] = exact;
    // the exact shared-mode panel stands in for the run's networks
    const d = {
      seed: 0,
      panel: { diversity: shared.diversity, separation: shared.separation },
      exactPanels: exact,
    } as unknown as DiagnosticsReport;
    const text = panelLines(d, panelKindOf(config)).join("\n");
    for (const m of config.panel) expect(text).toContain(m.name);
    expect(text).toContain("mode agreement %");
    expect(text).toContain("low-skill: confused");
    expect(text).toContain("careful agent against accurate customer's script");
    expect(text).toContain("shared-mode (this run's)");
    const own = text.split("\n").find((l) => l.startsWith("own-modes"))!;
    expect(own).toContain("family-low-skill");
    expect(own).toContain("low-skill, anxious, impatient");
    expect(text.split("\n").find((l) => l.startsWith("shared-mode"))).toContain("none");
  }, 60_000);

  it("prints nothing for a report written before the panel diagnostics", () => {
    expect(panelLines({ seed: 0 } as DiagnosticsReport, null)).toEqual([]);
  });
});
