// The Simulators page on a real RunReport (a tiny experiment run in beforeAll): the state picker
// switches the reply table and chart to another state; the aligned (collapsed) simulator's reply
// distribution is sharper than the reference's and VS's at every state; the toggles add the panel
// and the latent types; the diagnostics table, the unions and both KLs show the report's numbers;
// a report without diagnostics, or without reply tables, gets a clear message instead.
import { cleanup, fireEvent, render, screen, within } from "@testing-library/svelte";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import SimulatorsPage from "../../src/app/pages/SimulatorsPage.svelte";
import type { RunReport } from "../../src/experiment/experiment";
import { buildReport, stubResizeObserver } from "./report-fixture";

let report: RunReport;
stubResizeObserver();
beforeAll(async () => {
  report = await buildReport();
});
afterEach(() => cleanup());

const rowsOf = (table: HTMLElement) => within(table).getAllByRole("row").slice(1); // without the header
const cell = (row: HTMLElement, col: string) =>
  Number(row.querySelector(`[data-col="${col}"]`)!.textContent!.replace(/[^\d.]/g, ""));
const byRole = (table: HTMLElement, role: string) =>
  rowsOf(table).filter((r) => r.dataset.role === role);

describe("SimulatorsPage", () => {
  it("shows one picker entry per reply table and the four main distributions of the first state", () => {
    render(SimulatorsPage, { report });
    const tables = report.simulators[0].replyTables!;
    expect(tables.length).toBeGreaterThanOrEqual(6);
    const picker = screen.getByLabelText("Dialogue state") as HTMLSelectElement;
    expect(
      within(picker)
        .getAllByRole("option")
        .map((o) => o.textContent),
    ).toEqual(tables.map((t) => t.label));
    const table = screen.getByTestId("reply-table");
    expect(rowsOf(table).map((r) => r.dataset.role)).toEqual([
      "bayes",
      "reference",
      "aligned",
      "vs",
    ]);
    // columns: the user acts of the state, then entropy and top reply
    const header = within(table)
      .getAllByRole("columnheader")
      .map((h) => h.textContent);
    expect(header.slice(1, -2)).toEqual(tables[0].acts);
    // the chart draws one bar per act and series
    const bars = screen.getByTestId("reply-chart").querySelectorAll('g[aria-label="bar"] rect');
    expect(bars.length).toBe(tables[0].acts.length * 4);
  });

  it("the collapsed simulator is sharper than the reference and VS at every state", async () => {
    render(SimulatorsPage, { report });
    const picker = screen.getByLabelText("Dialogue state") as HTMLSelectElement;
    for (const t of report.simulators[0].replyTables!) {
      await fireEvent.change(picker, { target: { value: t.id } });
      const table = screen.getByTestId("reply-table");
      const [reference] = byRole(table, "reference");
      const [aligned] = byRole(table, "aligned");
      const [vs] = byRole(table, "vs");
      expect(cell(aligned, "entropy"), t.id).toBeLessThan(cell(reference, "entropy"));
      expect(cell(aligned, "top"), t.id).toBeGreaterThan(cell(reference, "top"));
      expect(cell(aligned, "entropy"), t.id).toBeLessThan(cell(vs, "entropy"));
    }
  });

  it("picking the donation decision shows its dialogue, in template text, and the amounts as columns", async () => {
    render(SimulatorsPage, { report });
    const ask = report.simulators[0].replyTables!.find((t) => t.id === "ask-after-greeting")!;
    await fireEvent.change(screen.getByLabelText("Dialogue state"), { target: { value: ask.id } });
    const state = screen.getByTestId("state");
    expect(state.textContent).toContain("Would you like to donate some of your payment?"); // the ask act's first template
    expect(state.textContent).toContain(ask.cardText);
    const header = within(screen.getByTestId("reply-table"))
      .getAllByRole("columnheader")
      .map((h) => h.textContent);
    expect(header).toContain("$2");
    expect(header).not.toContain("agree");
    expect(screen.getByTestId("reply-chart").querySelector("figcaption")!.textContent).toContain(
      ask.label,
    );
  });

  it("toggles add the held-out panel and the latent types, and remove them again", async () => {
    render(SimulatorsPage, { report });
    const table = () => screen.getByTestId("reply-table");
    await fireEvent.click(screen.getByLabelText("held-out panel"));
    expect(byRole(table(), "panel").length).toBe(report.config.panel.length);
    await fireEvent.click(screen.getByLabelText("humans by latent type"));
    expect(byRole(table(), "type").map((r) => r.querySelector("th")!.textContent)).toEqual(
      report.world.types.map((t) => `humans: ${t.name}`),
    );
    // the main chart keeps its four series; the panel and the types get small multiples, one chart each
    const bars = screen.getByTestId("reply-chart").querySelectorAll('g[aria-label="bar"] rect');
    expect(bars.length).toBe(report.simulators[0].replyTables![0].acts.length * 4);
    expect(screen.getByTestId("multiples-panel").querySelectorAll("figure.chart").length).toBe(
      report.config.panel.length,
    );
    expect(screen.getByTestId("multiples-type").querySelectorAll("figure.chart").length).toBe(
      report.world.types.length,
    );
    await fireEvent.click(screen.getByLabelText("held-out panel"));
    expect(byRole(table(), "panel").length).toBe(0);
    expect(screen.queryByTestId("multiples-panel")).toBeNull();
  });

  it("lists every simulator's diagnostics, the unions and both KLs", () => {
    render(SimulatorsPage, { report });
    const d = report.simulators[0];
    const table = screen.getByTestId("diagnostics-table");
    const rows = rowsOf(table);
    expect(rows.map((r) => r.querySelector("th")!.textContent)).toEqual(
      d.simulators.map((s) => s.name),
    );
    const aligned = rows.find((r) => r.dataset.role === "aligned")!;
    const cells = within(aligned)
      .getAllByRole("cell")
      .map((c) => c.textContent);
    expect(cells[1]).toBe(report.config.simulator.gamma.toFixed(1));
    expect(cells[2]).toBe(
      `${d.simulators.find((s) => s.role === "aligned")!.gammaMLE!.gamma.toFixed(1)} ± ${d.simulators.find((s) => s.role === "aligned")!.gammaMLE!.se.toFixed(1)}`,
    );
    expect(
      rowsOf(screen.getByTestId("unions-table")).map((r) => r.querySelector("th")!.textContent),
    ).toEqual(d.unions.map((u) => u.name));
    const kl = screen.getByTestId("kl").textContent!;
    expect(kl).toContain(d.referenceKL.toFixed(3));
    expect(kl).toContain(d.alignedKL.toFixed(3));
    const probe = screen.getByTestId("adaptive-probe").textContent!;
    expect(probe).toContain(d.adaptiveProbe!.klDecision!.toFixed(3));
    expect(probe).toContain(d.adaptiveProbe!.klTalk.toFixed(3));
    expect(screen.getByRole("link", { name: "LM lab" }).getAttribute("href")).toBe("#lm");
  });

  it("shows the held-out panel's modes, the types its members play, its separation and the panels exactly", () => {
    render(SimulatorsPage, { report });
    const d = report.simulators[0];
    const panel = d.panel!;
    const modes = screen.getByTestId("panel-modes");
    // one row per probe state and the agreement row; a column per member after the training simulator
    expect(rowsOf(modes)).toHaveLength(panel.diversity.probes.length + 1);
    const header = within(modes)
      .getAllByRole("columnheader")
      .map((h) => h.textContent);
    expect(header).toEqual([
      "probe state",
      "aligned simulator",
      ...report.config.panel.map((m) => m.name),
    ]);
    const agreement = within(screen.getByTestId("mode-agreement"))
      .getAllByRole("cell")
      .slice(1)
      .map((c) => c.textContent);
    expect(agreement).toEqual(
      panel.diversity.members.map((m) => `${(100 * m.modeAgreement).toFixed(0)}\u202f%`),
    );
    // a member's reply that differs from the training simulator's is marked
    const differs = modes.querySelectorAll('td[data-differs="true"]').length;
    const expected = panel.diversity.members.reduce(
      (n, m) => n + m.modes.filter((x, j) => x !== panel.diversity.training.modes[j]).length,
      0,
    );
    expect(differs).toBe(expected);
    expect(rowsOf(screen.getByTestId("panel-types"))).toHaveLength(panel.diversity.types.length);
    const sep = rowsOf(screen.getByTestId("panel-separation"));
    expect(sep.map((r) => r.querySelector("th")!.textContent)).toEqual([
      "humans",
      "aligned simulator",
      ...panel.separation!.members.map((m) => m.name),
      "panel (mean)",
    ]);
    // the fixture's panel is none of Persuasion's named ones: the exact table has its own row
    const exact = rowsOf(screen.getByTestId("exact-panels"));
    expect(exact).toHaveLength(d.exactPanels!.length);
    expect(exact[0].dataset.kind).toBe("own");
    expect(exact[0].textContent).toContain(report.config.panel.map((m) => m.name).join(", "));
  });

  it("says so when a report was written before the panel diagnostics", () => {
    const { panel: _, exactPanels: __, ...old } = report.simulators[0];
    render(SimulatorsPage, { report: { ...report, simulators: [old] } });
    expect(screen.getByTestId("no-panel-diagnostics")).toBeTruthy();
    expect(screen.queryByTestId("exact-panels")).toBeNull();
    expect(screen.getByTestId("diagnostics-table")).toBeTruthy();
  });

  it("says so when the report has no diagnostics, or no reply tables", () => {
    render(SimulatorsPage, {
      report: {
        ...report,
        simulators: [],
        config: { ...report.config, eval: { ...report.config.eval, diagnosticSeeds: 0 } },
      },
    });
    expect(screen.getByTestId("no-diagnostics").textContent).toContain("diagnosticSeeds = 0");
    expect(screen.queryByTestId("reply-table")).toBeNull();
    cleanup();
    const { replyTables: _, ...old } = report.simulators[0];
    render(SimulatorsPage, { report: { ...report, simulators: [old] } });
    expect(screen.getByTestId("no-reply-tables")).toBeTruthy();
    expect(screen.getByTestId("diagnostics-table")).toBeTruthy();
  });
});
