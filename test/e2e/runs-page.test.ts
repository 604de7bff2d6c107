// The Runs page in a real browser on the production build: the shipped recordings are listed
// (fetched from public/recorded/), two of them compare side by side, and the page's own section
// fits the viewport from phone to desktop widths (wide tables scroll inside their own box); an
// imported run compares with the paper's recording in one click.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { serveBuild, launchProfile } from "./harness";
import { PRESETS } from "../../src/experiment/presets";

let cleanup: (() => Promise<void>) | undefined;
let base: string;
let context: BrowserContext;

beforeAll(async () => {
  let tmp: string;
  ({ base, tmp, cleanup } = await serveBuild("collapse-lab-runs-"));
  context = await launchProfile(join(tmp, "profile"));
}, 180_000);

afterAll(async () => {
  await context?.close();
  await cleanup?.(); // closes the server and removes the build folder
});

const title = (id: string) => PRESETS.find((p) => p.id === id)!.title;

async function openRuns(): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(new URL("./#runs", base).href);
  await page.getByTestId("recordings-table").waitFor();
  return { page, errors };
}

/**
 * The Runs section's overflow at the current viewport: its own scroll width, its box against
 * innerWidth, and the document's width with the shell's header hidden (an absolutely positioned
 * descendant can widen the document without widening the section).
 */
const measure = (page: Page) =>
  page.getByTestId("runs-page").evaluate((s) => {
    const box = s.getBoundingClientRect();
    const header = document.querySelector("body header") as HTMLElement | null;
    if (header) header.style.display = "none";
    const documentWidth = document.documentElement.scrollWidth;
    if (header) header.style.display = "";
    return {
      scrollWidth: s.scrollWidth,
      clientWidth: s.clientWidth,
      left: box.left,
      right: box.right,
      documentWidth,
      innerWidth,
    };
  });

describe("the Runs page", () => {
  it("lists persuasion-paper's recording, and comparing it with persuasion-quick's shows both tables", async () => {
    const { page, errors } = await openRuns();
    const paper = page
      .getByTestId("recordings-table")
      .locator('tr[data-preset="persuasion-paper"]');
    await expect.poll(() => paper.textContent()).toContain(title("persuasion-paper"));
    expect(await page.getByTestId("recording-error").count()).toBe(0);

    await page.getByTestId("compare-left").selectOption("rec:persuasion-paper");
    await page.getByTestId("compare-right").selectOption("rec:persuasion-quick");
    const compare = page.getByTestId("compare");
    await expect.poll(() => compare.getByTestId("results-table").count()).toBe(2);
    const headings = await compare.locator("h4").allTextContents();
    expect(headings).toEqual([
      `${title("persuasion-paper")} (recording)`,
      `${title("persuasion-quick")} (recording)`,
    ]);
    // the paper's six conditions and quick's four, each under its own header row
    expect(await compare.getByTestId("results-table").nth(0).locator("tbody tr").count()).toBe(6);
    expect(await compare.getByTestId("results-table").nth(1).locator("tbody tr").count()).toBe(4);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("compares an imported run with the paper's recording in one click, and fits 360 to 1920 px", async () => {
    const { page, errors } = await openRuns();
    const file = readFileSync(join(__dirname, "../../public/recorded/persuasion-quick.json"));
    await page
      .getByTestId("import")
      .setInputFiles({ name: "my-quick-run.json", mimeType: "application/json", buffer: file });
    const row = page
      .getByTestId("runs-table")
      .locator("tbody tr")
      .filter({ hasText: "my-quick-run.json" });
    await row.getByRole("button", { name: "Compare with the paper's figure" }).click();
    const compare = page.getByTestId("compare");
    await expect
      .poll(() => compare.locator("h4").allTextContents())
      .toEqual([
        "my-quick-run.json (persuasion-quick)",
        `${title("persuasion-paper")} (recording)`,
      ]);
    expect(await compare.getByTestId("results-table").count()).toBe(2);
    for (const width of [360, 390, 820, 900, 1280, 1920]) {
      await page.setViewportSize({ width, height: 800 });
      await page.waitForTimeout(100);
      const m = await measure(page);
      expect(m.scrollWidth, `${width} px`).toBeLessThanOrEqual(m.clientWidth);
      expect(m.left, `${width} px`).toBeGreaterThanOrEqual(0);
      expect(m.right, `${width} px`).toBeLessThanOrEqual(m.innerWidth);
      expect(m.documentWidth, `${width} px`).toBeLessThanOrEqual(m.innerWidth);
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
