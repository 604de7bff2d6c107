// The Simulators page's γ and φ sliders on a real RunReport: they start at the run's values and
// redraw the aligned and VS rows (table and chart) at once — γ = 1 makes the aligned simulator the
// reference, φ = 0 makes VS the aligned simulator — with a plain notice while they differ from the
// run and a reset; the sentence about the aligned simulator follows the numbers shown; no literal
// "π_ref" on the page.
import { cleanup, fireEvent, render, screen, within } from "@testing-library/svelte";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import SimulatorsPage from "../../src/app/pages/SimulatorsPage.svelte";
import { sharpen } from "../../src/app/lib/reply-what-if";
import type { RunReport } from "../../src/experiment/experiment";
import { buildReport, stubResizeObserver } from "./report-fixture";

let report: RunReport;
stubResizeObserver();
beforeAll(async () => {
  report = await buildReport();
});
afterEach(() => cleanup());

const rowOf = (role: string) =>
  within(screen.getByTestId("reply-table"))
    .getAllByRole("row")
    .find((r) => r.dataset.role === role)!;
const probs = (role: string) =>
  within(rowOf(role))
    .getAllByRole("cell")
    .slice(0, -2)
    .map((c) => c.textContent);
/** Bar widths of one series in the main chart, by its fill colour. */
const widths = (fill: string) =>
  [...screen.getByTestId("reply-chart").querySelectorAll(`g[aria-label="bar"] rect`)]
    .filter((r) => (r.getAttribute("fill") ?? r.parentElement?.getAttribute("fill")) === fill)
    .map((r) => Number(r.getAttribute("width")));
const ALIGNED = "#D55E00";
const REFERENCE = "#0072B2";
const VS = "#009E73";

describe("Simulators page sliders", () => {
  it("start at the run's values: no notice, reset disabled, the aligned row is the recorded one", () => {
    render(SimulatorsPage, { report });
    expect(screen.getByTestId("gamma-value").textContent).toBe(
      String(report.config.simulator.gamma),
    );
    expect(screen.getByTestId("phi-value").textContent).toBe(report.config.vs.fidelity.toFixed(2));
    expect(screen.queryByTestId("what-if-differs")).toBeNull();
    expect(screen.queryByTestId("diagnostics-are-the-run")).toBeNull();
    expect((screen.getByTestId("what-if-reset") as HTMLButtonElement).disabled).toBe(true);
    const recorded = report.simulators[0].replyTables![0].rows.find(
      (r) => r.role === "aligned",
    )!.probs;
    probs("aligned").forEach((p, i) =>
      expect(Math.abs(Number(p) - recorded[i])).toBeLessThanOrEqual(0.011),
    );
  });

  it("γ = 1 makes the aligned row equal the reference, in the table and the chart; reset brings the run back", async () => {
    render(SimulatorsPage, { report });
    const before = widths(ALIGNED);
    expect(before.length).toBe(report.simulators[0].replyTables![0].acts.length);
    expect(before).not.toEqual(widths(REFERENCE));
    await fireEvent.input(screen.getByTestId("gamma-slider"), { target: { value: "0" } });
    expect(screen.getByTestId("gamma-value").textContent).toBe("1");
    expect(probs("aligned")).toEqual(probs("reference"));
    // equal up to the renormalisation of a row recorded with 4 significant digits
    widths(ALIGNED).forEach((w, i) => expect(w).toBeCloseTo(widths(REFERENCE)[i], 1));
    expect(rowOf("aligned").querySelector("th")!.textContent).toBe("aligned, γ = 1");
    expect(screen.getByTestId("what-if-differs").textContent).toContain(
      `γ = ${report.config.simulator.gamma}`,
    );
    expect(screen.getByTestId("diagnostics-are-the-run")).toBeTruthy();
    expect(screen.getByTestId("finding").textContent).toMatch(
      /^With γ = 1 the aligned simulator is the reference itself/,
    );
    await fireEvent.click(screen.getByTestId("what-if-reset"));
    expect(screen.getByTestId("gamma-value").textContent).toBe(
      String(report.config.simulator.gamma),
    );
    expect(screen.queryByTestId("what-if-differs")).toBeNull();
    expect(widths(ALIGNED)).toEqual(before);
  });

  it("a larger γ sharpens the aligned row exactly as π_ref^γ; φ = 0 makes VS the aligned simulator", async () => {
    render(SimulatorsPage, { report });
    const reference = report.simulators[0].replyTables![0].rows.find(
      (r) => r.role === "reference",
    )!.probs;
    await fireEvent.input(screen.getByTestId("gamma-slider"), { target: { value: "1" } });
    expect(screen.getByTestId("gamma-value").textContent).toBe("100");
    expect(probs("aligned")).toEqual(sharpen(reference, 100).map((p) => p.toFixed(2)));
    expect(probs("vs")).toEqual(probs("reference")); // the run's φ = 1: VS gives back the reference
    await fireEvent.input(screen.getByTestId("phi-slider"), { target: { value: "0" } });
    expect(probs("vs")).toEqual(probs("aligned"));
    widths(VS).forEach((w, i) => expect(w).toBeCloseTo(widths(ALIGNED)[i], 1));
    expect(rowOf("vs").querySelector("th")!.textContent).toBe("VS, φ = 0");
  });

  it("picking by probability with k candidates draws the exact sampled distribution, not q_φ", async () => {
    render(SimulatorsPage, { report });
    await fireEvent.input(screen.getByTestId("phi-slider"), { target: { value: "0.5" } });
    const random = probs("vs");
    await fireEvent.change(screen.getByTestId("selection-select"), { target: { value: "prob" } });
    await fireEvent.change(screen.getByTestId("k-input"), { target: { value: "2" } });
    expect(rowOf("vs").querySelector("th")!.textContent).toBe("VS, φ = 0.5, k = 2 by prob.");
    expect(probs("vs")).not.toEqual(random);
    const top = (ps: (string | null)[]) => Math.max(...ps.map(Number));
    expect(top(probs("vs"))).toBeGreaterThanOrEqual(top(random)); // favours the likelier listed reply
  });

  it("the sentence about the aligned simulator uses the shown numbers, and π_ref is never written with an underscore", async () => {
    render(SimulatorsPage, { report });
    const picker = screen.getByLabelText("Dialogue state") as HTMLSelectElement;
    for (const t of report.simulators[0].replyTables!) {
      await fireEvent.change(picker, { target: { value: t.id } });
      const finding = screen.getByTestId("finding").textContent!;
      const top = Number(
        rowOf("aligned")
          .querySelector('[data-col="top"]')!
          .textContent!.replace(/[^\d.]/g, ""),
      );
      // the table's rounded top share; a share that rounds to 100 % without being all of it reads "over 99 %"
      expect(finding, t.id).toContain(top === 100 ? "puts " : `puts ${top}\u202f%`);
      if (top === 100) expect(finding, t.id).toMatch(/puts (100|over 99)\u202f%/);
      expect(finding).not.toMatch(/almost all/);
    }
    const text = document.body.textContent!;
    expect(text).not.toMatch(/π_|\^γ/);
    expect(document.body.innerHTML).toContain("π<sub>ref</sub>");
  });
});
