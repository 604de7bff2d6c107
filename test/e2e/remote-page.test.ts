// The Remote page end to end: a real Ray head on 127.0.0.1, the relay in front of it (with a
// token), the production build of the app in headless Chromium. The page connects, submits the
// smoke experiment on screen, shows its live learning curve while the job runs, follows it to
// SUCCEEDED, and the report lands on the Runs page; a reload re-attaches to the job; a second job
// is stopped from the page. Every response the browser receives is scanned for the token.
// COLLAPSE_LAB_SHOTS=DIR saves screenshots of the page connected, running, finished and stopped.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { serveBuild, launchProfile } from "./harness";
import { driverLog, RAY_MISSING, startRayHead, type RayHead } from "../cluster/ray-head";
import { buildRelay } from "../../src/cluster/ray/relay";

const TOKEN = "relay-e2e-token-4c9e21b7";
const SHOTS = process.env.COLLAPSE_LAB_SHOTS;

describe.skipIf(RAY_MISSING)("the Remote page with a real Ray head", () => {
  let head: RayHead | undefined;
  let relay: FastifyInstance | undefined;
  let relayUrl = "";
  let cleanup: (() => Promise<void>) | undefined;
  let base = "";
  let context: BrowserContext;
  const leaks: string[] = [];
  const received: string[] = [];

  beforeAll(async () => {
    const [started, served] = await Promise.all([
      startRayHead({ cpus: 2 }),
      serveBuild("collapse-lab-remote-"),
    ]);
    head = started;
    ({ base, cleanup } = served);
    const tmp = served.tmp;
    relay = buildRelay({ ray: head.address, token: TOKEN, origins: [new URL(base).origin] });
    relayUrl = await relay.listen({ host: "127.0.0.1", port: 0 });
    context = await launchProfile(join(tmp, "profile"));
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    await relay?.close();
    await head?.stop();
    await cleanup?.();
  }, 120_000);

  /** Opens a page that records every response's headers and body, and flags any holding the token. */
  async function open(hash: string): Promise<{ page: Page; errors: string[] }> {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("response", (r) => {
      void (async () => {
        const headers = JSON.stringify(await r.allHeaders());
        const body = await r.body().catch(() => Buffer.alloc(0));
        received.push(r.url());
        if (headers.includes(TOKEN) || body.includes(TOKEN)) leaks.push(r.url());
      })();
    });
    await page.goto(new URL(`./?v=1&preset=persuasion-smoke${hash}`, base).href);
    return { page, errors };
  }

  const shot = async (page: Page, name: string) => {
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `remote-${name}.png`), fullPage: true });
  };

  it("submits the smoke experiment through the relay, shows its live curve, follows it to SUCCEEDED and keeps its report", async () => {
    const { page, errors } = await open("#remote");
    await page.getByTestId("relay-url").fill(relayUrl);
    await page.getByTestId("connect").click();
    await expect
      .poll(() => page.getByTestId("relay-info").textContent(), { timeout: 30_000 })
      .toMatch(/Connected: Ray 2\.\d+\.\d+ at http:\/\/127\.0\.0\.1:\d+/);
    await shot(page, "connected");

    await page.getByTestId("submit").click(); // the relay bundles and uploads the job: some seconds
    const status = page.getByTestId("job-status");
    await status.waitFor({ timeout: 120_000 });
    const id = (await page.getByTestId("remote-job").locator("h3 code").textContent())!;
    expect(id).toMatch(/^collapse-lab-persuasion-smoke-/);

    // the learning curve is drawn from the units' points while the job still runs
    try {
      await page.waitForFunction(
        () =>
          document.querySelector('[data-testid="job-status"]')?.textContent === "RUNNING" &&
          !!document.querySelector(
            '[data-testid="remote-figures"] [data-testid="figure-curves"] svg',
          ),
        undefined,
        { timeout: 240_000, polling: 250 },
      );
    } catch (e) {
      throw new Error(
        `no live curve while ${id} ran (status ${await status.textContent()}):\n${driverLog(head!, id).slice(-3000)}\n${(e as Error).message}`,
        { cause: e },
      );
    }
    await shot(page, "running");
    expect(await page.getByTestId("job-log").textContent()).not.toContain("@@collapse-lab");

    try {
      await expect
        .poll(() => status.textContent(), { timeout: 300_000, interval: 1000 })
        .toBe("SUCCEEDED");
    } catch (e) {
      throw new Error(
        `${id} did not succeed (${await status.textContent()}):\n${driverLog(head!, id).slice(-3000)}\n${(e as Error).message}`,
        { cause: e },
      );
    }
    await page.getByTestId("job-saved").waitFor({ timeout: 30_000 });
    await expect
      .poll(() => page.getByTestId("results-table").locator("tbody tr").count())
      .toBeGreaterThan(0);
    await page
      .getByTestId("job-log")
      .evaluate((el) => el.closest("details")?.setAttribute("open", ""));
    await shot(page, "succeeded");
    // on a phone the page keeps to the screen's width (the job's long id, the log and the table wrap or scroll in their boxes)
    await page.setViewportSize({ width: 360, height: 800 });
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollWidth - innerWidth))
      .toBeLessThanOrEqual(0);
    await shot(page, "succeeded-phone");
    await page.setViewportSize({ width: 1280, height: 900 });

    // the report is a stored run: listed on the Runs page and opened like a local run
    await page.locator('nav a[href="#runs"]').click();
    const row = page.getByTestId("runs-table").locator("tbody tr").filter({ hasText: id });
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    expect(await row.textContent()).toContain("done");
    await row.getByRole("button", { name: "Open" }).click();
    await page.getByTestId("figure-curves").waitFor({ timeout: 30_000 });
    await shot(page, "opened");

    // a reload re-attaches to the job it followed
    await page.goto(new URL("./?v=1&preset=persuasion-smoke#remote", base).href);
    await expect
      .poll(() => page.getByTestId("job-status").textContent(), { timeout: 60_000 })
      .toBe("SUCCEEDED");
    expect(await page.getByTestId("remote-job").locator("h3 code").textContent()).toBe(id);

    // a second job, stopped from the page: it ends as STOPPED and nothing of it is kept
    await page.getByRole("button", { name: "Forget this job" }).click();
    await page.getByTestId("submit").click();
    await expect
      .poll(() => page.getByTestId("remote-job").locator("h3 code").textContent(), {
        timeout: 120_000,
      })
      .not.toBe(id);
    const second = (await page.getByTestId("remote-job").locator("h3 code").textContent())!;
    await expect
      .poll(() => page.getByTestId("job-status").textContent(), { timeout: 120_000 })
      .toMatch(/^(PENDING|RUNNING)$/);
    await page.getByTestId("stop").click();
    await expect
      .poll(() => page.getByTestId("job-status").textContent(), { timeout: 120_000 })
      .toBe("STOPPED");
    await shot(page, "stopped");
    await page.locator('nav a[href="#runs"]').click();
    await page.getByTestId("runs-table").waitFor();
    expect(
      await page.getByTestId("runs-table").locator("tbody tr").filter({ hasText: second }).count(),
    ).toBe(0);

    expect(errors).toEqual([]);
    await page.close();
    expect(received.some((u) => u.startsWith(relayUrl))).toBe(true);
    expect(leaks).toEqual([]);
  }, 600_000);
});
