// Your own dialogues in the app (docs/humans.md), in a real browser on the production build: the
// Persuasion for Good corpus (the committed sample where the raw corpus is missing) dropped on the
// Experiment page's settings is kept in IndexedDB and named in the URL, so a reload still has it; a
// bad file chosen next is refused naming its line and field, and changes nothing; the next run's
// humans are the corpus' people, as its stored report says.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext } from "playwright";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { launchProfile, serveBuild } from "./harness";
import { loadP4GDialogues } from "../../src/benchmarks/persuasion/p4g-load";
import { HAVE_P4G, P4G_DATA } from "../benchmarks/p4g-data";

const ROOT = resolve(import.meta.dirname, "../..");
const RUN_TIMEOUT = 300_000;
let cleanup: (() => Promise<void>) | undefined;
let base: string;
let tmp: string;
let context: BrowserContext;

beforeAll(async () => {
  ({ base, tmp, cleanup } = await serveBuild("collapse-lab-humans-"));
  context = await launchProfile(join(tmp, "profile"));
}, 240_000);

afterAll(async () => {
  await context?.close();
  await cleanup?.();
});

const corpus = HAVE_P4G
  ? Buffer.from(loadP4GDialogues(P4G_DATA).text)
  : readFileSync(resolve(ROOT, "examples/dialogues/p4g-sample.jsonl"));
const dialogues = HAVE_P4G ? 289 : 20;
const sha = createHash("sha256").update(corpus).digest("hex");

describe("a dialogue corpus on the Experiment page", () => {
  it(
    "is dropped, kept across a reload, survives a bad file, and plays the humans of the next run",
    async () => {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      const sets = ['conditions=["base"]', "eval.diagnosticSeeds=0"]
        .map((s) => `&set=${encodeURIComponent(s)}`)
        .join("");
      await page.goto(new URL(`./?preset=persuasion-smoke&seeds=1&backend=wasm${sets}`, base).href);
      const now = page.getByTestId("humans-now");
      await now.waitFor();
      expect(await now.textContent()).toMatch(/hand-written population/);

      // a real drop: a DataTransfer holding the file, as a file manager hands it to the page
      const transfer = await page.evaluateHandle(
        ({ b64, name }) => {
          const dt = new DataTransfer();
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          dt.items.add(new File([bytes], name, { type: "application/jsonl" }));
          return dt;
        },
        { b64: corpus.toString("base64"), name: "p4g-dialogues.jsonl" },
      );
      await page.getByTestId("corpus-drop").dispatchEvent("dragover", { dataTransfer: transfer });
      await page.getByTestId("corpus-drop").dispatchEvent("drop", { dataTransfer: transfer });
      await expect
        .poll(() =>
          page
            .getByTestId("corpus-message")
            .textContent()
            .catch(() => ""),
        )
        .toMatch(new RegExp(`p4g-dialogues\\.jsonl: ${dialogues} dialogues`));
      await expect.poll(() => now.textContent()).toMatch(/people of p4g-dialogues\.jsonl/);
      await expect.poll(() => decodeURIComponent(page.url())).toContain(sha);

      await page.reload();
      await expect
        .poll(() => now.textContent())
        .toMatch(new RegExp(`p4g-dialogues\\.jsonl: ${dialogues}\\s+dialogues`));

      const bad = join(tmp, "class.jsonl");
      writeFileSync(
        bad,
        '{"acts":["greeting","agree","ask","$0"]}\n{"acts":["greeting","agre"]}\n',
      );
      await page.getByTestId("corpus-input").setInputFiles(bad);
      const error = page.getByTestId("corpus-error");
      await error.waitFor();
      expect(await error.textContent()).toMatch(
        /class\.jsonl line 2: acts\[1\]: unknown act "agre".*nothing was changed/,
      );
      expect(await now.textContent()).toMatch(/people of p4g-dialogues\.jsonl/);
      expect(await page.getByTestId("corpus-stored").locator("li").count()).toBe(1);
      expect(decodeURIComponent(page.url())).toContain(sha);

      await page.getByTestId("run").click();
      await page.getByTestId("results-table").waitFor({ timeout: RUN_TIMEOUT });
      const report = await page.evaluate(
        () =>
          new Promise<{
            corpora?: { use: string; sha256: string; dialogues: number }[];
            conditions: { seeds: { backoff?: { humans?: { turns: number } } }[] }[];
          }>((done, fail) => {
            const open = indexedDB.open("collapse-lab");
            open.onerror = () => fail(open.error);
            open.onsuccess = () => {
              const get = open.result.transaction("runs").objectStore("runs").getAll();
              get.onsuccess = () =>
                done(get.result.find((r: { status: string }) => r.status === "done").report);
            };
          }),
      );
      expect(report.corpora).toEqual([
        expect.objectContaining({ use: "humans", sha256: sha, dialogues }),
      ]);
      expect(report.conditions[0].seeds[0].backoff?.humans?.turns).toBeGreaterThan(0);
      expect(errors).toEqual([]);
      await page.close();
    },
    RUN_TIMEOUT + 120_000,
  );
});
