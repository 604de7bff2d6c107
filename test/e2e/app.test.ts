// The app end to end: a production build served by Vite's preview server on 127.0.0.1, driven
// in the system's headless Chromium (WebGPU on SwiftShader). Runs execute in the app's web
// workers exactly as a user's would.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serveBuild, launchProfile } from "./harness";
import { parseReport } from "../../src/experiment/report-schema";
import { DEFAULT_PRESET, formatUrlState, parseUrlState } from "../../src/app/lib/url-state";
import { presetConfig } from "../../src/experiment/presets";
import { parse } from "@retorquere/bibtex-parser";

const RUN_TIMEOUT = 480_000;

let base: string;
let context: BrowserContext;
let tmp: string;
let cleanup: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ base, tmp, cleanup } = await serveBuild("collapse-lab-e2e-"));
  context = await launchProfile(join(tmp, "profile"), { acceptDownloads: true });
}, 300_000); // a production build (tens of seconds alone, minutes on a busy machine) and a browser start

afterAll(async () => {
  await context?.close();
  await cleanup?.(); // closes the server and removes the build, the profile and the downloads
});

/** Opens a page and collects console errors and uncaught exceptions. */
async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(new URL(path, base).href);
  return { page, errors };
}

describe("the app", () => {
  it(
    "loads with no console errors and shows the experiment controls",
    { timeout: 300_000 },
    async () => {
      const { page, errors } = await open("./");
      await page.getByTestId("run").waitFor();
      expect(await page.title()).toContain("collapse-lab");
      // settled: everything the page does on load has ended — the recorded run shown, then (in
      // workers, one after the other) the speed measured for the estimate and backend auto's
      // WebGPU-against-wasm timing, each stored when done
      const stored = () =>
        page.evaluate(() =>
          Object.keys(localStorage)
            .map((k) => k.replace(/:v1:.*/, ""))
            .sort(),
        );
      await expect
        .poll(stored, { timeout: 240_000, interval: 500 })
        .toEqual(expect.arrayContaining(["collapse-lab:backend-bench", "collapse-lab:speed"]));
      expect(errors).toEqual([]);
      await page.close();
    },
  );

  it("round-trips the URL: settings in the link show in the controls and stay in the address bar", async () => {
    const query = "?v=1&preset=persuasion-smoke&seeds=2&set=simulator.gamma%3D4&backend=wasm";
    const { page, errors } = await open(`./${query}#dialogues`);
    await page.getByRole("link", { name: "Experiment" }).click();
    await expect.poll(() => page.locator("#knob-simulator-gamma").inputValue()).toBe("4");
    expect(await page.locator("#seeds").inputValue()).toBe("2");
    expect(await page.locator("#backend").inputValue()).toBe("wasm");
    const url = new URL(page.url());
    expect(parseUrlState(url.search, url.hash).state).toEqual(parseUrlState(query).state);
    expect(formatUrlState(parseUrlState(query).state)).toBe(query);
    // a change in the controls is written back to the address bar
    await page.locator("#knob-simulator-gamma").fill("6");
    await page.locator("#knob-simulator-gamma").press("Tab");
    await expect
      .poll(() => new URL(page.url()).searchParams.getAll("set"))
      .toEqual(["simulator.gamma=6"]);
    // a choice knob writes a string value
    await page.locator("#knob-cotrain-anchor").selectOption("reverse");
    await expect
      .poll(() => new URL(page.url()).searchParams.getAll("set"))
      .toEqual(["simulator.gamma=6", 'cotrain.anchor="reverse"']);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("explains a bad URL and falls back to the default instead of a blank page", async () => {
    const { page } = await open("./?preset=no-such-preset&seeds=-3&set=rl.stepz%3D5&backend=tpu");
    const problems = page.getByTestId("url-problem");
    await problems.first().waitFor();
    const text = (await problems.allTextContents()).join("\n");
    expect(text).toContain('unknown preset "no-such-preset"');
    expect(text).toContain("seeds");
    expect(text).toContain("rl.stepz");
    expect(text).toContain("tpu");
    await expect.poll(() => page.locator("#preset").inputValue()).toBe(DEFAULT_PRESET);
    await page.getByTestId("run").waitFor();
    await page.close();
  });

  it(
    "runs persuasion-smoke on the webgpu backend (SwiftShader) in workers, exports a valid RunReport, and keeps the run across a reload",
    async () => {
      const t0 = Date.now();
      const { page, errors } = await open(
        "./?preset=persuasion-smoke&seeds=1&backend=webgpu&autorun=1",
      );
      await page.getByTestId("results-table").waitFor({ timeout: RUN_TIMEOUT });
      console.info(
        `persuasion-smoke on webgpu: ${((Date.now() - t0) / 1000).toFixed(1)} s in headless Chromium`,
      );
      expect(await page.getByTestId("backend").textContent()).toBe("webgpu");
      expect(await page.getByTestId("results-table").locator("tbody tr").count()).toBe(6);

      const download = page.waitForEvent("download");
      await page.getByRole("button", { name: "Download the RunReport (JSON)" }).click();
      const file = join(tmp, "report.json");
      await (await download).saveAs(file);
      const report = parseReport(readFileSync(file, "utf8"));
      expect(report.env.backend).toBe("webgpu");
      expect(report.conditions.map((c) => c.id)).toEqual([
        "base",
        "single",
        "ensemble",
        "vs",
        "cotrain",
        "population",
      ]);

      await page.goto(new URL("./#runs", base).href);
      const row = page
        .getByTestId("runs-table")
        .locator("tbody tr")
        .filter({ hasText: "persuasion-smoke" });
      await row.first().waitFor();
      expect(await row.first().textContent()).toContain("done");
      expect(errors).toEqual([]);
      await page.close();
    },
    RUN_TIMEOUT + 60_000,
  );

  it("opens the Cite dialog from any page: BibTeX that parses, and Copy puts it on the clipboard", async () => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: new URL(base).origin,
    });
    const { page, errors } = await open("./#runs");
    const dialog = page.getByTestId("cite-dialog");
    for (const nav of ["Runs", "Play", "LM lab"]) {
      await page.getByRole("link", { name: nav, exact: true }).click();
      expect(await dialog.isVisible()).toBe(false);
      await page.getByTestId("cite-open").click();
      await dialog.waitFor({ state: "visible" });
      for (const which of ["paper", "tool"]) {
        const shown = (await page.getByTestId(`bibtex-${which}`).textContent()) ?? "";
        const lib = parse(shown, { sentenceCase: false });
        expect(lib.errors, which).toEqual([]);
        expect(lib.entries.map((e) => e.type)).toEqual(["misc"]);
        await page.getByTestId(`copy-${which}`).click();
        await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(shown);
      }
      expect(await page.getByTestId("bibtex-paper").textContent()).toContain(
        "eprint        = {2608.12253}",
      );
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it("rejects a bad imported file with a clear message", async () => {
    const bad = join(tmp, "bad.json");
    writeFileSync(bad, JSON.stringify({ schema: "collapse-lab/run-report@1", conditions: "many" }));
    const { page } = await open("./#runs");
    await page.getByTestId("import").setInputFiles(bad);
    const error = page.getByTestId("import-error");
    await error.waitFor();
    expect(await error.textContent()).toMatch(/Could not import bad\.json: RunReport is malformed/);
    await page.close();
  });

  it(
    "runs persuasion-quick with one seed to the end inside workers, exactly as the shared link says",
    async () => {
      const t0 = Date.now();
      const { page, errors } = await open("./?preset=persuasion-quick&seeds=1&autorun=1");
      await page.getByTestId("results-table").waitFor({ timeout: RUN_TIMEOUT });
      const backend = await page.getByTestId("backend").textContent();
      console.info(
        `persuasion-quick, 1 seed: ${((Date.now() - t0) / 1000).toFixed(1)} s in headless Chromium on ${backend} (auto)`,
      );
      expect(["wasm", "webgpu"]).toContain(backend);
      expect(await page.getByTestId("results-table").locator("tbody tr").count()).toBe(
        presetConfig("persuasion-quick").conditions.length,
      );
      expect(errors).toEqual([]);
      await page.close();
    },
    RUN_TIMEOUT + 60_000,
  );

  it(
    "a reload mid-run keeps the finished tasks in IndexedDB, and Resume on the Runs page continues from them",
    async () => {
      // a profile of its own, so the run is the only one stored
      const own = await launchProfile(join(tmp, "profile-reload"));
      try {
        const page = await own.newPage();
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(e.message));
        await page.goto(
          new URL("./?preset=persuasion-smoke&seeds=2&backend=wasm&autorun=1", base).href,
        );
        // the stored run and its finished units' timings, read from IndexedDB as the app wrote them
        const stored = () =>
          page.evaluate(
            () =>
              new Promise<{ status: string; id: string; units: Record<string, number> } | null>(
                (done, fail) => {
                  const req = indexedDB.open("collapse-lab");
                  req.onerror = () => fail(req.error);
                  req.onsuccess = () => {
                    const db = req.result;
                    const tx = db.transaction(["runs", "tasks"]);
                    const runs = tx.objectStore("runs").getAll();
                    const tasks = tx.objectStore("tasks").getAll();
                    tx.oncomplete = () => {
                      db.close();
                      const run = runs.result[0] as { id: string; status: string } | undefined;
                      if (!run) return done(null);
                      const units: Record<string, number> = {};
                      for (const t of tasks.result as {
                        key: string;
                        value: { timing?: { evalMs: number } };
                      }[])
                        if (t.key.startsWith("unit:") && t.value.timing)
                          units[t.key] = t.value.timing.evalMs;
                      done({ id: run.id, status: run.status, units });
                    };
                  };
                },
              ),
          );
        await expect
          .poll(async () => Object.keys((await stored())?.units ?? {}).length, {
            timeout: RUN_TIMEOUT,
            interval: 100,
          })
          .toBeGreaterThan(0);
        await page.reload();
        const before = (await stored())!;
        expect(before.status).toBe("running"); // reloaded part-way: not every unit had finished
        const kept = Object.keys(before.units);
        expect(kept.length).toBeLessThan(12);

        await page.goto(new URL("./#runs", base).href);
        const row = page.getByTestId("runs-table").locator("tbody tr");
        await row.first().waitFor();
        expect(await row.count()).toBe(1);
        expect(await row.first().textContent()).toMatch(/running \(\d+\/\d+\)/);
        await row.first().getByRole("button", { name: "Resume" }).click();
        await page.getByTestId("results-table").waitFor({ timeout: RUN_TIMEOUT });
        await expect.poll(async () => (await stored())?.status, { timeout: 30_000 }).toBe("done");

        const after = (await stored())!;
        expect(after.id).toBe(before.id);
        const report = await page.evaluate(
          (id) =>
            new Promise<{
              timing: { units: { condition: string; seed: number; evalMs: number }[] };
            }>((done) => {
              const req = indexedDB.open("collapse-lab");
              req.onsuccess = () => {
                const get = req.result.transaction("runs").objectStore("runs").get(id);
                get.onsuccess = () => done(get.result.report);
              };
            }),
          before.id,
        );
        expect(report.timing.units).toHaveLength(12);
        // a unit finished before the reload was not trained again: its timing is the kept task's
        for (const key of kept) {
          const [, condition, seed] = key.split(":");
          const unit = report.timing.units.find(
            (u) => u.condition === condition && u.seed === Number(seed),
          );
          expect(unit?.evalMs, key).toBe(before.units[key]);
        }
        expect(errors).toEqual([]);
      } finally {
        await own.close();
      }
    },
    2 * RUN_TIMEOUT,
  );
});
