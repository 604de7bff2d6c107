// The Simulators page end to end (production build, headless Chromium): at every width from a
// small phone to a wide screen nothing scrolls sideways — with the panel and the latent types
// shown — and wide tables scroll inside their own box; the γ slider redraws the aligned row in
// the real browser (γ = 1: the reference) with a notice until reset; the same-person view pairs
// single and population on the default recording; π_ref is never written with an underscore.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright";
import { join } from "node:path";
import { serveBuild, launchProfile } from "./harness";

let cleanup: (() => Promise<void>) | undefined;
let base: string;
let context: BrowserContext;
let tmp: string;

beforeAll(async () => {
  ({ base, tmp, cleanup } = await serveBuild("collapse-lab-e2e-sim-"));
  context = await launchProfile(join(tmp, "profile"));
}, 180_000);

afterAll(async () => {
  await context?.close();
  await cleanup?.(); // closes the server and removes the build folder
});

async function open(width: number): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  await page.setViewportSize({ width, height: 800 });
  await page.goto(new URL("./#simulators", base).href);
  await page.getByTestId("reply-chart").waitFor();
  return { page, errors };
}

const cells = (page: Page, role: string) =>
  page
    .locator(`[data-testid="reply-table"] tr[data-role="${role}"] td:not([data-col])`)
    .allTextContents();

describe("the Simulators page", () => {
  it.each([360, 390, 820, 900, 1280, 1920])(
    "at %i px nothing scrolls sideways, with every group shown",
    async (width) => {
      const { page, errors } = await open(width);
      await page.getByLabel("held-out panel", { exact: true }).check();
      await page.getByLabel("humans by latent type", { exact: true }).check();
      await page.getByTestId("multiples-type").waitFor();
      await page.waitForTimeout(300); // charts redraw at their measured width
      const m = await page.evaluate(() => {
        const section = document.querySelector("section.page") as HTMLElement;
        // elements reaching past the viewport, other than the contents of a box that scrolls itself
        const outside = [...section.querySelectorAll("*")]
          .filter(
            (e) =>
              e.getBoundingClientRect().right > innerWidth + 0.5 &&
              !e.parentElement?.closest(".scroll-x, .plot"),
          )
          .map((e) => e.outerHTML.slice(0, 80));
        return {
          doc: document.documentElement.scrollWidth,
          inner: innerWidth,
          section: [section.scrollWidth, section.clientWidth],
          outside,
        };
      });
      expect(m.outside).toEqual([]);
      expect(m.section[0]).toBeLessThanOrEqual(m.section[1]);
      expect(m.doc).toBeLessThanOrEqual(m.inner);
      // wide tables scroll inside their own box
      for (const id of ["reply-table", "diagnostics-table", "unions-table", "side-by-side"]) {
        const box = await page
          .getByTestId(id)
          .evaluate((t) => getComputedStyle(t.closest(".scroll-x")!).overflowX);
        expect(box, id).toBe("auto");
      }
      expect(errors).toEqual([]);
      await page.close();
    },
  );

  it("the γ slider redraws the aligned row at once; reset brings back the run's", async () => {
    const { page, errors } = await open(1280);
    const before = await cells(page, "aligned");
    expect(before).not.toEqual(await cells(page, "reference"));
    await page.getByTestId("gamma-slider").fill("0");
    await expect.poll(() => page.getByTestId("gamma-value").textContent()).toBe("1");
    expect(await cells(page, "aligned")).toEqual(await cells(page, "reference"));
    await page.getByTestId("what-if-differs").waitFor();
    await page.getByTestId("diagnostics-are-the-run").waitFor();
    await page.getByTestId("what-if-reset").click();
    await expect.poll(() => cells(page, "aligned")).toEqual(before);
    expect(await page.getByTestId("what-if-differs").count()).toBe(0);
    const text = await page.locator("section.page").innerText();
    expect(text).not.toMatch(/π_|\^γ/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows single and population with the same person side by side", async () => {
    const { page } = await open(390);
    const view = page.getByTestId("same-person");
    expect(await view.getByTestId("same-person-a").inputValue()).toBe("single");
    expect(await view.getByTestId("same-person-b").inputValue()).toBe("population");
    const header = await view.locator("thead").innerText();
    expect(header).toContain("single");
    expect(header).toContain("population");
    expect(await view.getByTestId("outcome-a").innerText()).toMatch(/success|failure/);
    expect(await view.getByTestId("outcome-b").innerText()).toMatch(/success|failure/);
    expect(await view.getByTestId("unpaired").count()).toBe(0);
    await page.close();
  });
});
