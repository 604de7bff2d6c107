// The Play page in a real browser on the production build, against the persuasion-smoke
// recording's shipped policies: a class study link opened by two players (two browser profiles,
// so two IndexedDBs), full dialogues played with the keyboard only at 1280 and 390 px, no
// condition name anywhere in the DOM until each decision, the blocks scheme balanced over the six
// conditions, the results table, JSON / CSV export, and the merge of both players' files (a
// duplicate and a bad file named, nothing stored lost across a reload). A recording without
// policies says so. With the LM lab's tiny models loaded, a reply written in one's own words is read
// as an act and kept. `PLAY_SCREENSHOTS=dir` keeps screenshots of the page at both widths.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serveBuild, SLOW_PAGE_MS, launchProfile } from "./harness";
import { CONDITIONS } from "../../src/experiment/config";
import { formatPlaySetup } from "../../src/app/lib/play-link";

let cleanup: (() => Promise<void>) | undefined;
let base: string;
let tmp: string;
const contexts: BrowserContext[] = [];
const pages = new Map<string, Page>();
const SHOTS = process.env.PLAY_SCREENSHOTS;
const STUDY = formatPlaySetup({
  run: { kind: "recorded", preset: "persuasion-smoke" },
  conditions: [...CONDITIONS],
  scheme: "blocks",
  dialogues: 6,
  study: "e2e-room",
});
const studyUrl = () => new URL(`./?play=${encodeURIComponent(STUDY)}#play`, base).href;
const CONDITION_WORDS = new RegExp(`\\b(${CONDITIONS.join("|")})\\b`, "i");

beforeAll(async () => {
  ({ base, tmp, cleanup } = await serveBuild("collapse-lab-play-"));
}, 180_000);

afterAll(async () => {
  for (const c of contexts) await c.close();
  await cleanup?.();
});

async function openPlayer(name: string, width: number): Promise<{ page: Page; errors: string[] }> {
  const context = await launchProfile(join(tmp, `profile-${name}`), {
    viewport: { width, height: 900 },
    acceptDownloads: true,
    serviceWorkers: "block", // a test routes the policies' requests, which a service worker would answer first
  });
  contexts.push(context);
  context.setDefaultTimeout(SLOW_PAGE_MS);
  const page = context.pages()[0] ?? (await context.newPage());
  pages.set(name, page);
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(studyUrl());
  try {
    await expect
      .poll(() => page.getByTestId("play-start").isEnabled(), { timeout: SLOW_PAGE_MS })
      .toBe(true);
  } catch (e) {
    throw new Error(
      `Start stayed off: ${await page.getByTestId("play-setup").innerText()} / ${errors.join("; ")}`,
      { cause: e },
    );
  }
  return { page, errors };
}

/** Tabs until the element with this test id has the focus (keyboard only), at most `max` presses. */
async function tabTo(page: Page, testid: string, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (
      await page.evaluate(
        (id) => document.activeElement?.getAttribute("data-testid") === id,
        testid,
      )
    )
      return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`Tab never reached ${testid}`);
}

const blindOk = (page: Page) =>
  page.evaluate((re) => !new RegExp(re, "i").test(document.body.innerHTML), CONDITION_WORDS.source);
const fits = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth <= innerWidth);

/**
 * One full dialogue with the keyboard: Enter on Start (focused by Tab the first time), Enter on
 * the first reply, then the digit `key` for every later reply and the decision. Checks the page is
 * blind and fits the screen at every turn; returns the revealed condition.
 */
async function playDialogue(page: Page, key: string): Promise<string> {
  await tabTo(page, "play-start");
  await page.keyboard.press("Enter");
  let first = true;
  for (let turn = 0; turn < 12; turn++) {
    await page
      .locator('[data-testid="play-options"] button, [data-testid="play-reveal"]')
      .first()
      .waitFor();
    if (await page.getByTestId("play-reveal").count()) break;
    expect(await blindOk(page)).toBe(true);
    expect(await fits(page)).toBe(true);
    if (first) {
      // the first reply has the focus when the persuader has spoken
      expect(
        await page.evaluate(
          () => document.activeElement?.closest('[data-testid="play-options"]') !== null,
        ),
      ).toBe(true);
      await page.keyboard.press("Enter");
      first = false;
    } else await page.keyboard.press(key);
    await page.waitForFunction(() => !document.querySelector('[data-testid="play-thinking"]'));
  }
  const condition = (await page.getByTestId("revealed-condition").textContent())!;
  expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe(
    "play-next",
  );
  if (SHOTS)
    await page.screenshot({
      path: join(SHOTS, `play-reveal-${page.viewportSize()!.width}.png`),
      fullPage: true,
    });
  await page.keyboard.press("Enter"); // next dialogue: back to the setup
  await page.getByTestId("play-start").waitFor();
  return condition;
}

async function exportFile(page: Page, testid: string, name: string): Promise<string> {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId(testid).click(),
  ]);
  const path = join(tmp, name);
  await download.saveAs(path);
  return path;
}

describe("the Play page", { timeout: 360_000 }, () => {
  let fileA: string;
  let fileB: string;

  it("player A plays six dialogues with the keyboard at 1280 px: blind until each decision, one per condition, counted, exported", async () => {
    const { page, errors } = await openPlayer("a", 1280);
    expect(await page.getByTestId("study-summary").textContent()).toContain(
      "Please play 6 dialogues: 0 done, 6 to go",
    );
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, "play-setup-1280.png"), fullPage: true });
    }
    const revealed: string[] = [];
    for (let i = 0; i < 6; i++) {
      if (SHOTS && i === 1) {
        await tabTo(page, "play-start");
        await page.keyboard.press("Enter");
        await page.getByTestId("play-options").waitFor();
        await page.screenshot({ path: join(SHOTS, "play-dialogue-1280.png"), fullPage: true });
        await page.reload(); // an unfinished dialogue is not kept: the same dialogue is drawn again
        await expect
          .poll(() => page.getByTestId("play-start").isEnabled(), { timeout: SLOW_PAGE_MS })
          .toBe(true);
      }
      revealed.push(await playDialogue(page, ["2", "3", "4"][i % 3]));
    }
    expect([...revealed].sort()).toEqual([...CONDITIONS].sort()); // blocks of six: each condition once
    expect(await page.getByTestId("study-summary").textContent()).toContain("6 done — thank you");
    for (const c of CONDITIONS) {
      const cells = await page
        .getByTestId("play-results")
        .locator(`tr[data-condition="${c}"] td`)
        .allTextContents();
      expect(cells.slice(0, 2)).toEqual(["1", "1"]); // one dialogue, one player
      // one dialogue: the exact binomial interval, never zero-width
      expect(cells[2]).toMatch(/^(0\.0 \[0\.0, 97\.5\]|100\.0 \[2\.5, 100\.0\])$/);
      expect(cells[4]).toMatch(/^\d+\.\d$/); // the run's simulated humans beside it
    }
    if (SHOTS)
      await page.screenshot({ path: join(SHOTS, "play-results-1280.png"), fullPage: true });
    fileA = await exportFile(page, "export-json", "player-a.json");
    const json = JSON.parse(readFileSync(fileA, "utf8")) as {
      format: string;
      records: { condition: string; acts: string[]; study: string }[];
    };
    expect(json.format).toBe("collapse-lab/play-results@1");
    expect(json.records.map((r) => r.condition).sort()).toEqual([...CONDITIONS].sort());
    expect(json.records.every((r) => r.study === "e2e-room" && r.acts.length >= 2)).toBe(true);
    const csv = readFileSync(await exportFile(page, "export-csv", "player-a.csv"), "utf8")
      .trim()
      .split(/\r?\n/);
    expect(csv).toHaveLength(7);
    expect(csv[0]).toMatch(/^dialogue,study,player,index,run,condition,/);
    expect(errors).toEqual([]);
  });

  it("player B plays two dialogues on a 390 px wide screen without sideways scrolling, and exports", async () => {
    const { page, errors } = await openPlayer("b", 390);
    expect(await fits(page)).toBe(true);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, "play-setup-390.png"), fullPage: true });
    await tabTo(page, "play-start");
    await page.keyboard.press("Enter");
    await page.getByTestId("play-options").waitFor();
    expect(await fits(page)).toBe(true);
    if (SHOTS)
      await page.screenshot({ path: join(SHOTS, "play-dialogue-390.png"), fullPage: true });
    await page.reload();
    await expect
      .poll(() => page.getByTestId("play-start").isEnabled(), { timeout: SLOW_PAGE_MS })
      .toBe(true);
    const revealed = [await playDialogue(page, "1"), await playDialogue(page, "5")];
    expect(new Set(revealed).size).toBe(2); // the first block: no condition twice
    expect(await fits(page)).toBe(true);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, "play-results-390.png"), fullPage: true });
    fileB = await exportFile(page, "export-json", "player-b.json");
    expect(
      (JSON.parse(readFileSync(fileB, "utf8")) as { records: unknown[] }).records,
    ).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it("merges both players' files into one table: the duplicate counted once, the bad file named, all kept across a reload", async () => {
    // the lecturer's view: the Play page without the class link's lock
    const page = pages.get("a")!;
    await page.goto(new URL("./#play", base).href);
    await page.getByTestId("merge-input").waitFor({ state: "attached" });
    const bad = join(tmp, "not-a-results-file.json");
    writeFileSync(
      bad,
      '{"format": "collapse-lab/play-results@1", "exportedAt": "x", "records": [{"id": "x"}]}',
    );
    await page.getByTestId("merge-input").setInputFiles([fileA, fileB]);
    await expect
      .poll(() => page.getByTestId("merge-messages").textContent())
      .toContain("player-b.json: 2 dialogues added");
    await page.getByTestId("merge-input").setInputFiles([fileA, bad]);
    await expect
      .poll(() => page.getByTestId("merge-problem").allTextContents())
      .toEqual([
        expect.stringMatching(
          /^not-a-results-file\.json: malformed — records\.0\.\w+: .+ — skipped$/,
        ),
      ]);
    expect(await page.getByTestId("merge-messages").textContent()).toContain(
      "player-a.json: 0 dialogues added, 6 already merged (duplicates) left out",
    );
    const check = async () => {
      const table = page.getByTestId("merged-results");
      expect(await page.getByTestId("merged-results-caption").textContent()).toContain(
        "Merged: 8 dialogues from 2 files, 2 players",
      );
      const n = await Promise.all(
        CONDITIONS.map(async (c) =>
          Number((await table.locator(`tr[data-condition="${c}"] td`).first().textContent()) ?? 0),
        ),
      );
      expect(n.reduce((a, b) => a + b, 0)).toBe(8);
    };
    await check();
    await page.reload();
    await page.getByTestId("merged-results").waitFor();
    await check();
  });

  it("with the LM lab's tiny models loaded, a reply written in one's own words is read as an act, sent, and kept", async () => {
    const { page, errors } = await openPlayer("c", 1280);
    await page.getByRole("link", { name: "LM lab" }).click(); // in-app navigation: the tab's LM lab stays loaded
    await page.getByTestId("source-tiny").check();
    await page.getByTestId("device").selectOption("wasm");
    await page.getByTestId("load").click();
    await page.getByTestId("device-instruct").waitFor({ timeout: 120_000 });
    await page.getByRole("link", { name: "Play" }).click();
    await expect
      .poll(() => page.getByTestId("play-start").isEnabled(), { timeout: SLOW_PAGE_MS })
      .toBe(true);
    await page.getByTestId("play-start").click();
    await page.getByTestId("play-options").waitFor();
    const box = page.getByLabel(/in your own words/);
    await box.fill("I will think about it, 1 2 3");
    await box.press("Enter");
    const reading = page.getByTestId("play-reading");
    await reading.waitFor({ timeout: 60_000 });
    expect(await reading.textContent()).toMatch(/^\s*Read as “.+”/);
    if (SHOTS)
      await page.screenshot({ path: join(SHOTS, "play-own-words-1280.png"), fullPage: true });
    await reading.getByRole("button", { name: "Send" }).click();
    for (let turn = 0; turn < 12; turn++) {
      await page
        .locator('[data-testid="play-options"] button, [data-testid="play-reveal"]')
        .first()
        .waitFor();
      if (await page.getByTestId("play-reveal").count()) break;
      expect(await blindOk(page)).toBe(true);
      await page.keyboard.press("1");
      await page.waitForFunction(() => !document.querySelector('[data-testid="play-thinking"]'));
    }
    await page.getByTestId("play-reveal").waitFor();
    const file = JSON.parse(
      readFileSync(await exportFile(page, "export-json", "player-c.json"), "utf8"),
    ) as { records: { ownWords?: { at: number; text: string }[] }[] };
    expect(file.records[0].ownWords).toEqual([{ at: 1, text: "I will think about it, 1 2 3" }]);
    expect(errors).toEqual([]);
  });

  it("a recording without policies says so clearly; the class link carries the setup", async () => {
    const page = pages.get("a")!;
    // every preset's recording ships its policies now: the paper's are made absent, as on a host that lacks them
    await page.route("**/recorded/persuasion-paper.policies/**", (route) =>
      route.fulfill({ status: 404, body: "" }),
    );
    await page.goto(new URL("./#play", base).href);
    await expect
      .poll(() => page.getByTestId("play-start").isEnabled(), { timeout: SLOW_PAGE_MS })
      .toBe(true);
    await page.getByTestId("play-run").selectOption("recorded/persuasion-paper");
    await expect
      .poll(() => page.getByTestId("play-unavailable").textContent(), { timeout: SLOW_PAGE_MS })
      .toContain("The recording of persuasion-paper has no trained policies yet");
    expect(await page.getByTestId("play-start").isDisabled()).toBe(true);
    await page.getByTestId("play-run").selectOption("recorded/persuasion-smoke");
    await expect
      .poll(() => page.getByTestId("play-start").isEnabled(), { timeout: SLOW_PAGE_MS })
      .toBe(true);
    await page.getByTestId("make-link").click();
    const link = await page.getByTestId("class-link").inputValue();
    expect(new URL(link).hash).toBe("#play");
    expect(new URL(link).searchParams.get("play")).toMatch(
      /^run:recorded\/persuasion-smoke;conditions:base,single,ensemble,vs,cotrain,population;scheme:blocks;dialogues:4;study:study-\w+$/,
    );
  });
});
