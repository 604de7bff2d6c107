// The ScopeMetrics component: SCOPE's metrics drawn as learning curves from a readout, from bare
// series, or from a file the user picks; the skipped lines are counted on screen.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";
import ScopeMetrics from "../../src/app/components/remote/ScopeMetrics.svelte";
import { readScopeMetrics } from "../../src/cluster/scope/metrics";
import { stubResizeObserver } from "./report-fixture";

stubResizeObserver();
afterEach(cleanup);

const LOG = [
  "INFO starting",
  '{"step": 0, "data": {"rollout/raw_reward/mean": 0.25, "train/entropy_loss": 1.5, "eval/p4g_test_haiku": 0.2, "eval/p4g_test_gemini": 0.3}}',
  '{"step": 16, "data": {"rollout/raw_reward/mean": 0.5, "train/entropy_loss": 1.25, "eval/p4g_test_haiku": 0.25, "eval/p4g_test_gemini": 0.35, "perf/step_time": 30}}',
  '{"step": 32, "data": {"rollout/raw_reward/mean": 0.6',
  "{oops}",
  '{"step": 48}',
].join("\n");

const chart = (key: string) => screen.queryByTestId(`scope-chart-${key}`);

describe("ScopeMetrics", () => {
  it("draws reward, entropy and the evaluation panel from a readout and says how many lines were skipped", () => {
    render(ScopeMetrics, { metrics: readScopeMetrics(LOG), picker: false });
    const counts = screen.getByTestId("scope-metrics-counts").textContent!.replace(/\s+/g, " ");
    expect(counts).toContain("2 records read");
    expect(counts).toContain(
      "3 malformed lines skipped (2 not JSON, 0 without a valid step, 1 without a data object)",
    );
    expect(chart("reward")!.textContent).toContain("reward (rollout/raw_reward/mean)");
    expect(chart("entropy")!.textContent).toContain("entropy (train/entropy_loss)");
    const evalChart = chart("eval/")!;
    expect(evalChart.querySelectorAll("svg [aria-label='line'] path")).toHaveLength(2); // one line per panel model
    expect(evalChart.textContent).toContain("p4g_test_haiku");
    expect(chart("perf/step_time")).not.toBeNull();
    expect(screen.queryByTestId("scope-metrics-file")).toBeNull();
  });

  it("draws only the first `initial` groups, and the checkboxes show and hide the others", async () => {
    render(ScopeMetrics, { metrics: readScopeMetrics(LOG), initial: 2 });
    expect(chart("reward")).not.toBeNull();
    expect(chart("entropy")).not.toBeNull();
    expect(chart("eval/")).toBeNull();
    await fireEvent.click(screen.getByLabelText("eval/… (2)"));
    expect(chart("eval/")).not.toBeNull();
    await fireEvent.click(screen.getByLabelText("reward"));
    expect(chart("reward")).toBeNull();
  });

  it("bare series: curves without counts", () => {
    render(ScopeMetrics, {
      series: {
        "rollout/raw_reward/mean": [{ step: 1, value: 0.5 }],
        custom: [{ step: 1, value: 2 }],
      },
      picker: false,
    });
    expect(screen.queryByTestId("scope-metrics-counts")).toBeNull();
    expect(chart("reward")).not.toBeNull();
    expect(chart("custom")).not.toBeNull();
  });

  it("reads a file the user picks, and replaces what was shown", async () => {
    render(ScopeMetrics, { series: { other: [{ step: 1, value: 1 }] } });
    expect(chart("other")).not.toBeNull();
    const file = new File([LOG], "run.log", { type: "text/plain" });
    await fireEvent.change(screen.getByTestId("scope-metrics-file"), { target: { files: [file] } });
    await waitFor(() =>
      expect(screen.getByTestId("scope-metrics-counts").textContent).toContain("run.log"),
    );
    expect(screen.getByTestId("scope-metrics-counts").textContent!.replace(/\s+/g, " ")).toContain(
      "3 malformed lines skipped",
    );
    expect(chart("other")).toBeNull();
    expect(chart("reward")).not.toBeNull();
  });

  it("a file with no metrics says so, with its counts", async () => {
    render(ScopeMetrics, {});
    expect(screen.getByText(/Pick a metrics file/)).toBeTruthy();
    await fireEvent.change(screen.getByTestId("scope-metrics-file"), {
      target: { files: [new File(["just text\n{bad}\n"], "empty.log")] },
    });
    await waitFor(() => expect(screen.getByText(/No metrics in empty\.log yet/)).toBeTruthy());
    expect(screen.getByTestId("scope-metrics-counts").textContent!.replace(/\s+/g, " ")).toContain(
      "1 malformed line skipped",
    );
  });
});
