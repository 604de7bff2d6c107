// The results table: a recording made before the strategy measures shows the paper's four columns;
// a re-scoring of its policies (docs/runs/rescored/, `collapse-lab evaluate`) adds strategy
// entropy, strategy–type information and strategy modes, with their means and intervals, and says
// what it re-scored.
import { cleanup, render, screen, within } from "@testing-library/svelte";
import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ResultsTable from "../../src/app/components/ResultsTable.svelte";
import { parseReport } from "../../src/experiment/report-schema";
import { collapsed } from "./report-fixture";

const read = (path: string) => parseReport(readFileSync(join(__dirname, "../..", path), "utf8"));
const headers = () =>
  within(screen.getByTestId("results-table"))
    .getAllByRole("columnheader")
    .map((h) => collapsed(h.textContent));

afterEach(cleanup);

describe("ResultsTable", () => {
  it("shows the paper's columns for a report without strategy measures", () => {
    render(ResultsTable, { report: read("public/recorded/persuasion-quick.json") });
    expect(headers()).toEqual([
      "condition",
      "train sim. success %",
      "held-out success %",
      "human success %",
      "policy entropy",
    ]);
  });

  it("adds the strategy measures where the report has them", () => {
    const report = read("docs/runs/rescored/persuasion-quick.json");
    render(ResultsTable, { report });
    expect(headers().slice(5)).toEqual([
      "strategy entropy",
      "strategy–type info",
      "strategy modes",
    ]);
    const single = report.conditions.find((c) => c.id === "single")!.summary.strategyEntropy!;
    const row = screen.getByRole("rowheader", { name: "single" }).closest("tr")!;
    const cells = within(row)
      .getAllByRole("cell")
      .map((c) => collapsed(c.textContent));
    expect(cells[4]).toBe(
      `${single.mean.toFixed(2)} [${single.lo.toFixed(2)}, ${single.hi.toFixed(2)}]`,
    );
    expect(collapsed(screen.getByTestId("rescoring").textContent)).toMatch(
      /^A re-scoring of the trained policies of public\/recorded\/persuasion-quick\.json \(the run's own settings\); from the run: the learning curves;/,
    );
  });

  it("says nothing of a re-scoring for a run's own report", () => {
    render(ResultsTable, { report: read("public/recorded/persuasion-quick.json") });
    expect(screen.queryByTestId("rescoring")).toBeNull();
  });
});
