// Sweeps in a real browser on the production build: the embedded sweep figure (`?embed=sweep`) of a
// recorded sweep — here a real smoke sweep served as the recorded one — draws one dot and one
// interval per point and comparison, and fits phone to desktop widths; a sweep's folder imported
// on the Runs page shows on the Sweeps page, and a point opens on the Experiment page.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serveBuild, launchProfile } from "./harness";
import { parseReport } from "../../src/experiment/report-schema";
import { gridPoints, summarizeSweep } from "../../src/experiment/sweep";

const ROOT = join(import.meta.dirname, "../..");
const FIXTURE = readFileSync(join(ROOT, "test/fixtures/sweep-smoke/sweep.json"), "utf8");
let cleanup: (() => Promise<void>) | undefined;
let base: string;
let tmp: string;
let context: BrowserContext;

beforeAll(async () => {
  ({ base, tmp, cleanup } = await serveBuild("collapse-lab-sweeps-"));
  context = await launchProfile(join(tmp, "profile"));
}, 180_000);

afterAll(async () => {
  await context?.close();
  await cleanup?.();
});

/** A page whose recorded sweeps are the fixture alone. */
async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  await page.route("**/recorded/sweeps/index.json", (r) =>
    r.fulfill({
      contentType: "application/json",
      body: JSON.stringify({
        format: "collapse-lab/recorded-sweeps@1",
        sweeps: [{ id: "smoke-gamma", title: "Persuasion smoke over γ" }],
      }),
    }),
  );
  await page.route("**/recorded/sweeps/smoke-gamma/sweep.json", (r) =>
    r.fulfill({ contentType: "application/json", body: FIXTURE }),
  );
  await page.goto(new URL(path, base).href);
  return { page, errors };
}

const count = (page: Page, figure: string, mark: string, shape: string) =>
  page.getByTestId(figure).locator(`g[aria-description="${mark}"] ${shape}`).count();

describe("the sweep figure", () => {
  it("embeds a recorded sweep: a dot and an interval per point and comparison, at 390 to 1280 px", async () => {
    const { page, errors } = await open("./?embed=sweep&sweep=smoke-gamma");
    await page.getByTestId("figure-sweep").locator("svg").first().waitFor();
    const lines = 6; // five conditions − single, and the collapse's cost
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(200);
      expect(await count(page, "figure-sweep", "effect", "circle"), `${width} px`).toBe(
        5 * lines * 2,
      );
      expect(await count(page, "figure-sweep", "interval", "line"), `${width} px`).toBe(
        5 * lines * 2,
      );
      expect(await count(page, "figure-sweep-entropy", "interval", "line")).toBe(5 * lines);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow, `${width} px`).toBeLessThanOrEqual(0);
    }
    // the log axis for γ carries the swept values as its ticks
    const ticks = await page
      .getByTestId("figure-sweep")
      .locator('g[aria-label="x-axis tick label"] text')
      .allTextContents();
    expect(ticks.slice(0, 5)).toEqual(["1", "2", "4", "10", "30"]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("says so when the sweep asked for is not there", async () => {
    const { page } = await open("./?embed=sweep&sweep=nope");
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toContain('No sweep "nope" to show.');
    await page.close();
  }, 60_000);
});

describe("a sweep's folder imported on the Runs page", () => {
  it("shows on the Sweeps page, and its point opens as a run", async () => {
    // a sweep folder as `collapse-lab sweep --out` writes it: the recorded smoke run as its γ = 10 point
    const text = readFileSync(join(ROOT, "public/recorded/persuasion-smoke.json"), "utf8");
    const report = parseReport(text);
    const grid = [{ path: "simulator.gamma", values: [10] }];
    const [point] = gridPoints(grid);
    const summary = summarizeSweep(
      { preset: "persuasion-smoke", backend: "wasm", config: report.config, sets: [] },
      grid,
      [{ ...point, report, file: `${point.name}.json` }],
    );
    const dir = join(tmp, "my-sweep");
    mkdirSync(dir);
    writeFileSync(join(dir, "sweep.json"), JSON.stringify(summary));
    writeFileSync(join(dir, `${point.name}.json`), text);

    const { page, errors } = await open("./#runs");
    await page.getByTestId("import-folder").setInputFiles(dir);
    await expect
      .poll(() => page.getByRole("status").filter({ hasText: "Imported" }).textContent())
      .toContain("the sweep my-sweep/sweep.json (1 points; every point's report)");
    await page.getByRole("button", { name: "Show the sweep" }).click();
    await page.getByTestId("sweeps-page").waitFor();
    await expect.poll(() => count(page, "figure-sweep", "effect", "circle")).toBe(5 * 2); // five conditions − single at one point, two panels; no γ = 1: no cost
    await page.getByRole("button", { name: `Open ${point.name}` }).click();
    await page.getByTestId("figure-curves").waitFor();
    expect(page.url()).toContain("preset=persuasion-smoke");
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
