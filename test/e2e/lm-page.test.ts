// The LM lab page end to end: a production build served by Vite's preview server on 127.0.0.1,
// in the system's headless Chromium. The tiny test models are built in the page, loaded into the
// LM worker on wasm (ORT's wasm served by the app), and Direct vs VS runs there; replies, the
// numbers and the outcome chart must render with no console errors and no request leaving the
// origin; a Service preset's link opens the lab on Service's customer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright";
import { CHROMIUM, CHROMIUM_ARGS, serveBuild, SLOW_PAGE_MS } from "./harness";
const RUN_TIMEOUT = 90_000;

let base: string;
let browser: Browser;
let cleanup: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ base, cleanup } = await serveBuild("collapse-lab-lm-e2e-"));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}, 300_000); // a production build (tens of seconds alone, minutes on a busy machine) and a browser start

afterAll(async () => {
  await browser?.close();
  await cleanup?.(); // closes the server and removes the build
});

describe("the LM lab page", () => {
  it(
    "loads the tiny test models on wasm and runs Direct vs VS in the LM worker: replies, numbers and chart render, no console errors",
    async () => {
      const t0 = Date.now();
      const context = await browser.newContext();
      context.setDefaultNavigationTimeout(SLOW_PAGE_MS);
      const page = await context.newPage();
      const errors: string[] = [];
      const foreign: string[] = [];
      page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
      page.on("pageerror", (e) => errors.push(e.message));
      context.on(
        "request",
        (r) => !r.url().startsWith(base) && !/^(blob|data):/.test(r.url()) && foreign.push(r.url()),
      );
      await page.goto(new URL("./#lm", base).href);
      // the recorded real-LM example shows before any model is loaded, from the built app's own files
      await page.getByTestId("recorded-badge").waitFor({ timeout: RUN_TIMEOUT });
      expect(await page.getByTestId("recorded-model").textContent()).toBe("SmolLM2-135M-Instruct");

      await page.getByTestId("source-tiny").check();
      expect(await page.getByTestId("source-tiny").locator("..").textContent()).toContain(
        "random weights that write gibberish",
      );
      await page.getByTestId("device").selectOption("wasm");
      await page.getByTestId("load").click();
      await page.getByTestId("device-embedder").waitFor({ timeout: RUN_TIMEOUT });
      for (const role of ["instruct", "base", "embedder"])
        expect(await page.getByTestId(`device-${role}`).textContent()).toBe("wasm");
      expect(await page.getByTestId("load-progress").textContent()).toContain("100");
      await page.getByTestId("tiny-warning").waitFor();

      await page.getByTestId("n").fill("4");
      await page.getByTestId("k").fill("2");
      await page.getByTestId("max-tokens").fill("16");
      await page.getByTestId("run-compare").click();
      await page.getByTestId("measures").waitFor({ timeout: RUN_TIMEOUT });
      console.info(
        `LM lab, tiny models on wasm, load + Direct vs VS (N = 4, k = 2): ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );

      expect(await page.getByTestId("direct-replies").locator("li").count()).toBe(4);
      expect(await page.getByTestId("vs-call").count()).toBe(2);
      expect(await page.getByTestId("vs-call").first().textContent()).toMatch(
        /read as (json|tags|loose-json|list|raw)/,
      );
      const cells = async (row: string) =>
        page.locator(`[data-testid="measures"] tr[data-row="${row}"] td`).allTextContents();
      expect((await cells("count"))[0]).toBe("4");
      for (const row of ["distinct1", "distinct2", "distinct3", "embedding"]) {
        const values = (await cells(row)).slice(0, 2).map(Number);
        for (const v of values) expect(v, row).toBeGreaterThanOrEqual(0);
        for (const v of values) expect(v, row).toBeLessThanOrEqual(1);
      }
      expect((await cells("parsed"))[0]).toMatch(/^\d of 4$/);
      expect(
        await page.getByTestId("outcome-chart").locator('g[aria-label="bar"] rect').count(),
      ).toBe(20);
      expect(await page.getByTestId("compare-error").count()).toBe(0);
      expect(errors).toEqual([]);
      expect(foreign).toEqual([]);
      await context.close();
    },
    RUN_TIMEOUT * 2,
  );

  it(
    "opens on Service from a Service preset's link and runs Direct vs VS with its customer prompts: verdicts, no real-data rows, no console errors",
    async () => {
      const context = await browser.newContext();
      context.setDefaultNavigationTimeout(SLOW_PAGE_MS);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(new URL("./?preset=service-smoke#lm", base).href);
      expect(await page.getByTestId("benchmark").inputValue()).toBe("service");
      expect(await page.getByTestId("dialogue").textContent()).toContain("System: [Ticket]");
      await page.getByTestId("source-tiny").check();
      await page.getByTestId("device").selectOption("wasm");
      await page.getByTestId("load").click();
      await page.getByTestId("device-embedder").waitFor({ timeout: RUN_TIMEOUT });
      await page.getByTestId("n").fill("4");
      await page.getByTestId("k").fill("2");
      await page.getByTestId("max-tokens").fill("16");
      await page.getByTestId("run-compare").click();
      await page.getByTestId("measures").waitFor({ timeout: RUN_TIMEOUT });
      const rows = await page
        .locator('[data-testid="measures"] tbody tr')
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-row")));
      expect(rows).toContain("parsed");
      expect(rows).not.toContain("ks");
      expect(await page.getByTestId("direct-replies").locator("li").count()).toBe(4);
      expect(
        await page.getByTestId("outcome-chart").locator('g[aria-label="bar"] rect').count(),
      ).toBe(6); // two verdicts × Direct, VS all, VS selected
      expect(await page.getByTestId("compare-error").count()).toBe(0);
      expect(errors).toEqual([]);
      await context.close();
    },
    RUN_TIMEOUT * 2,
  );
});
