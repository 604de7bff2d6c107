// The LM lab's endpoint mode end to end: a production build served by Vite's preview server and
// `collapse-lab serve` instances on 127.0.0.1 (the persuasion population's latent types as models,
// no engine), in the system's headless Chromium. The page connects (the probe's findings shown),
// runs Direct vs VS through the server (act texts, VS from the :vs twin) and renders the
// measures; γ on a base model without log-probs is refused with a reason. CORS is serve's own: a
// server that does not allow the page's origin ends in a readable message in the page, as do a
// wrong key and an unknown model. The API key is in no URL, request to another server, storage
// (IndexedDB, localStorage, sessionStorage), page text or server log line.
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright";
import type { FastifyInstance } from "fastify";
import { CHROMIUM, CHROMIUM_ARGS, serveBuild, SLOW_PAGE_MS } from "./harness";
import { benchmarkFor } from "../../src/benchmarks/registry";
import type { Dialogue } from "../../src/benchmarks/types";
import { presetConfig } from "../../src/experiment/presets";
import { buildServer } from "../../src/serve/server";
import type { ServedWorld } from "../../src/serve/models";

const RUN_TIMEOUT = 90_000;
const KEY = "sk-lab-e2e-7f3a9c1d2b";
const SHOTS = process.env.LM_ENDPOINT_SHOTS; // a folder: screenshots at 1280 and 390 px are written there

const config = presetConfig("persuasion-smoke");
const bench = benchmarkFor(config);
const V = bench.acts.length;
const world: ServedWorld = {
  bench,
  names: { agent: "Persuader", user: "Persuadee" },
  models: bench.humans.types.map((t, type) => ({
    id: `human/${t.name}`,
    description: t.description,
    side: "user" as const,
    distribution: async (ds: Dialogue[]) => {
      const out = new Float64Array(ds.length * V);
      ds.forEach((d, b) => out.set(bench.humans.replyProbs(type, d), b * V));
      return out;
    },
  })),
  defaultCard: bench.humans.cardDistribution()[0].card,
  vs: config.vs,
  source: "e2e",
  dispose: () => {},
};
const MODEL = world.models[0].id;

interface Served {
  app: FastifyInstance;
  url: string;
  log: string[];
  authorizations: (string | undefined)[];
}

async function serve(opts: { corsOrigins: string[]; apiKey?: string }): Promise<Served> {
  const log: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const app = buildServer({ world, ...opts, onRequest: (l) => log.push(l) });
  app.addHook(
    "onRequest",
    async (req) =>
      void (req.method !== "OPTIONS" && authorizations.push(req.headers.authorization)),
  );
  await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    app,
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`,
    log,
    authorizations,
  };
}

let base: string;
let origin: string;
let browser: Browser;
let cleanup: (() => Promise<void>) | undefined;
let keyed: Served; // requires KEY, allows the page's origin
let open: Served; // no key, allows the page's origin (the base model's server)
let foreign: Served; // allows another origin only
const servers: Served[] = [];

beforeAll(async () => {
  ({ base, cleanup } = await serveBuild("collapse-lab-lm-endpoint-e2e-"));
  origin = new URL(base).origin;
  keyed = await serve({ corsOrigins: [origin], apiKey: KEY });
  open = await serve({ corsOrigins: [origin] });
  foreign = await serve({ corsOrigins: ["http://elsewhere.example"] });
  servers.push(keyed, open, foreign);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}, 300_000); // a production build (tens of seconds alone, minutes on a busy machine) and a browser start

afterAll(async () => {
  await browser?.close();
  await Promise.all(servers.map((s) => s.app.close()));
  await cleanup?.();
});

/** A page on the LM lab in endpoint mode, recording console errors and every request with its headers. */
async function labPage(
  context: BrowserContext,
  width = 1280,
): Promise<{ page: Page; errors: string[]; requests: { url: string; auth?: string }[] }> {
  const page = await context.newPage();
  await page.setViewportSize({ width, height: 900 });
  const errors: string[] = [];
  const requests: { url: string; auth?: string }[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  // a request still in flight when the test closes its context has no headers left to read: dropped
  // (the checks ran before); any other failure to read them is still an error
  const closed = (e: Error) => {
    if (!/has been closed/.test(e.message)) throw e;
  };
  context.on(
    "request",
    (r) =>
      void r
        .allHeaders()
        .then((h) => requests.push({ url: r.url(), auth: h.authorization }), closed),
  );
  await page.goto(new URL("./#lm", base).href);
  await page.getByTestId("source-endpoint").check();
  await page.getByTestId("model-embedder").fill(""); // offline: no embedder from the hub
  return { page, errors, requests };
}

async function connect(
  page: Page,
  role: "instruct" | "base",
  url: string,
  model: string,
  key?: string,
) {
  await page.getByTestId(`endpoint-url-${role}`).fill(url);
  await page.getByTestId(`endpoint-model-${role}`).fill(model);
  if (key !== undefined) await page.getByTestId(`endpoint-key-${role}`).fill(key);
}

/** Everything the page keeps in IndexedDB, localStorage and sessionStorage, as one string. */
async function storedEverywhere(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const out: unknown[] = [{ ...localStorage }, { ...sessionStorage }];
    for (const info of await indexedDB.databases()) {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = indexedDB.open(info.name!);
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      for (const store of [...db.objectStoreNames]) {
        const all = await new Promise<unknown[]>((resolve, reject) => {
          const r = db.transaction(store).objectStore(store).getAll();
          r.onsuccess = () => resolve(r.result);
          r.onerror = () => reject(r.error);
        });
        out.push({ db: info.name, store, all });
      }
      db.close();
    }
    return JSON.stringify(out, (_k, v: unknown) =>
      v instanceof ArrayBuffer || ArrayBuffer.isView(v)
        ? `[${(v as ArrayBuffer).byteLength} bytes]`
        : v,
    );
  });
}

/** The model panel, and the compare panel down to the measures, as PNGs in SHOTS. */
async function shots(page: Page, tag: string) {
  await page
    .locator("section.models")
    .screenshot({ path: `${SHOTS}/lm-endpoint-${tag}-models.png` });
  const top = await page.locator("section.compare").boundingBox();
  const end = await page.getByTestId("measures").boundingBox();
  if (top && end)
    await page.screenshot({
      path: `${SHOTS}/lm-endpoint-${tag}-compare.png`,
      fullPage: true,
      clip: {
        x: 0,
        y: top.y,
        width: page.viewportSize()!.width,
        height: end.y + end.height - top.y + 40,
      },
    });
}

describe("the LM lab on an endpoint (collapse-lab serve)", () => {
  it(
    "connects with a key, shows what the server offers, runs Direct vs VS with the measures, refuses γ without log-probs; the key goes nowhere else",
    async () => {
      const context = await browser.newContext();
      context.setDefaultNavigationTimeout(SLOW_PAGE_MS);
      const { page, errors, requests } = await labPage(context);
      const missing: string[] = [];
      page.on("response", (r) => r.status() === 404 && missing.push(r.url()));
      expect(await page.getByTestId("load").textContent()).toBe("Connect");
      await connect(page, "instruct", keyed.url, MODEL, KEY);
      await connect(page, "base", open.url, world.models[1].id); // another server: it must not get the key
      await page.getByTestId("load").click();
      await page.getByTestId("caps-base").waitFor({ timeout: RUN_TIMEOUT });
      expect(await page.getByTestId("device-instruct").textContent()).toBe(keyed.url);
      expect(await page.getByTestId("caps-instruct").textContent()).toContain(
        "chat yes, chat log-probs yes, n > 1 yes, completions no",
      );
      expect(await page.getByTestId("loaded").textContent()).toContain("reads act texts only");
      expect(await page.getByTestId("act-text-note").count()).toBe(1);

      await page.getByTestId("n").fill("10");
      await page.getByTestId("k").fill("5");
      await page.getByTestId("run-compare").click();
      await page.getByTestId("measures").waitFor({ timeout: RUN_TIMEOUT });
      expect(await page.getByTestId("direct-replies").locator("li").count()).toBe(10);
      expect(await page.getByTestId("vs-call").count()).toBe(2);
      const cells = async (row: string) =>
        page.locator(`[data-testid="measures"] tr[data-row="${row}"] td`).allTextContents();
      // serve's VS answers with at most k candidates, one per act it gives mass to
      const [nDirect, nAll, nSelected] = (await cells("count")).map(Number);
      expect([nDirect, nSelected]).toEqual([10, 2]);
      expect(nAll).toBeGreaterThanOrEqual(2);
      expect(nAll).toBeLessThanOrEqual(10);
      for (const v of (await cells("distinct1")).map(Number)) expect(v).toBeGreaterThan(0);
      // Direct: 3 batches of ≤ 4 replies (n honoured), VS: 1 call of 2 rows → 4 requests
      expect(await page.getByTestId("compare-summary").textContent()).toContain(
        "4 requests to the server",
      );
      // every reply is an act's text said by the persuadee; VS candidates are read as JSON
      const userTexts = new Set(bench.acts.flatMap((a) => a.templates));
      for (const t of await page
        .getByTestId("direct-replies")
        .locator("li .text")
        .allTextContents())
        expect(userTexts.has(t), t).toBe(true);
      expect(await page.getByTestId("vs-call").first().textContent()).toContain("read as json");

      // γ: the base model (a serve simulator) offers no /v1/completions, so no log-probs: refused with the reason
      expect(await page.getByTestId("run-gamma").isDisabled()).toBe(true);
      expect(await page.getByTestId("gamma-no-logprobs").textContent()).toMatch(
        /No log-probs\. γ needs the base model's log-probabilities .* offers no \/v1\/completions/,
      );

      if (SHOTS) await shots(page, "1280");

      // the key: only to its own server, in no URL, storage, page text or log line
      const withKey = requests.filter((r) => r.auth !== undefined);
      expect(withKey.length).toBeGreaterThan(0);
      for (const r of withKey) {
        expect(r.url.startsWith(keyed.url + "/")).toBe(true);
        expect(r.auth).toBe(`Bearer ${KEY}`);
      }
      expect(open.authorizations.length).toBeGreaterThan(0);
      expect(open.authorizations.every((a) => a === undefined)).toBe(true);
      expect(keyed.authorizations.every((a) => a === `Bearer ${KEY}`)).toBe(true);
      for (const r of requests) expect(r.url).not.toContain(KEY);
      expect(page.url()).not.toContain(KEY);
      expect(await storedEverywhere(page)).not.toContain(KEY);
      expect(await page.locator("body").innerText()).not.toContain(KEY);
      expect(await page.content()).not.toContain(KEY);
      for (const s of servers) for (const line of s.log) expect(line).not.toContain(KEY);
      // the probe's try of /v1/completions, which serve does not offer, is the only 404 (the browser logs each)
      expect(missing.length).toBeGreaterThan(0);
      for (const u of missing) expect(u).toMatch(/\/v1\/completions$/);
      expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
      expect(errors.length).toBe(missing.length);
      await context.close();
    },
    RUN_TIMEOUT * 2,
  );

  it(
    "a wrong key, an unknown model and an origin the server does not allow each end in a readable message; changing the URL drops the key",
    async () => {
      const context = await browser.newContext();
      context.setDefaultNavigationTimeout(SLOW_PAGE_MS);
      const { page } = await labPage(context, 390);
      const loadError = () => page.getByTestId("load-error").textContent();

      await connect(page, "instruct", keyed.url, MODEL, "sk-wrong-key-123");
      await page.getByTestId("load").click();
      await page.getByTestId("load-error").waitFor({ timeout: RUN_TIMEOUT });
      expect(await loadError()).toMatch(
        /^Not authorised\..*refused the request \(401.*check the API key given for this server/,
      );

      await page.getByTestId("endpoint-key-instruct").fill(KEY);
      await page.getByTestId("endpoint-model-instruct").fill("human/nobody");
      await page.getByTestId("load").click();
      await page
        .getByTestId("load-error")
        .getByText(/Model not found/)
        .waitFor({ timeout: RUN_TIMEOUT });
      expect(await loadError()).toContain(`has no model "human/nobody"; it lists "${MODEL}"`);
      if (SHOTS)
        await page
          .locator("section.models")
          .screenshot({ path: `${SHOTS}/lm-endpoint-390-error.png` });

      // a new URL drops the key typed for the old one (it must not follow to another server)
      await page.getByTestId("endpoint-url-instruct").fill(foreign.url);
      expect(await page.getByTestId("endpoint-key-instruct").inputValue()).toBe("");
      expect(await page.getByTestId("key-note").textContent()).toContain("was cleared");
      await page.getByTestId("endpoint-model-instruct").fill(MODEL);
      await page.getByTestId("load").click();
      await page
        .getByTestId("load-error")
        .getByText(/Server unreachable/)
        .waitFor({ timeout: RUN_TIMEOUT });
      expect(await loadError()).toContain(`does not allow requests from ${origin} (CORS)`);
      expect(await loadError()).toContain("--cors-origin");
      expect(foreign.authorizations.every((a) => a === undefined)).toBe(true);

      await connect(page, "instruct", open.url, MODEL);
      await page.getByTestId("load").click();
      await page.getByTestId("caps-instruct").waitFor({ timeout: RUN_TIMEOUT });
      await page.getByTestId("n").fill("4");
      await page.getByTestId("k").fill("2");
      await page.getByTestId("run-compare").click();
      await page.getByTestId("measures").waitFor({ timeout: RUN_TIMEOUT });
      if (SHOTS) await shots(page, "390");
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow).toBe(0);
      await context.close();
    },
    RUN_TIMEOUT * 2,
  );
});
