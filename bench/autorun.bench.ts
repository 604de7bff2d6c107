// How long a visitor waits: the production build in headless Chromium (system Chromium, as the
// end-to-end tests use it), `/?preset=…&autorun=1` on a backend, timed from navigation to the
// results table of the live run. Prints the time and the run's backend; asserts nothing.
// Usage: npm run bench:autorun [-- --preset persuasion-quick --backend wasm]
import { parseArgs } from "node:util";
import { join } from "node:path";
import { chromium } from "playwright";
import { CHROMIUM, CHROMIUM_ARGS, serveBuild } from "../test/e2e/harness";

const { values } = parseArgs({
  options: {
    preset: { type: "string", default: "persuasion-quick" },
    backend: { type: "string", default: "wasm" },
    timeout: { type: "string", default: "1800" },
  },
});
const { base, tmp, cleanup } = await serveBuild("collapse-lab-autorun-");
const context = await chromium.launchPersistentContext(join(tmp, "profile"), {
  executablePath: CHROMIUM,
  headless: true,
  args: CHROMIUM_ARGS,
});
try {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const url = new URL(`./?preset=${values.preset}&backend=${values.backend}&autorun=1`, base).href;
  const t0 = performance.now();
  await page.goto(url);
  let last = "";
  const ticker = setInterval(async () => {
    const text = await page
      .locator(".status")
      .innerText()
      .catch(() => "");
    const line = text.split("\n").find((l) => /training|pretraining|diagnosing/.test(l)) ?? "";
    if (line && line !== last)
      console.error(`${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s  ${line}`);
    last = line;
  }, 5000);
  await page.getByTestId("results-table").waitFor({ timeout: 1000 * Number(values.timeout) });
  clearInterval(ticker);
  const s = (performance.now() - t0) / 1000;
  const backend = await page.getByTestId("backend").innerText();
  console.log(
    `${values.preset}: page load → results table of the live run in ${s.toFixed(1)} s (backend ${backend}, headless Chromium, ${errors.length} page errors)`,
  );
  for (const e of errors) console.log(`  page error: ${e}`);
} finally {
  await context.close();
  await cleanup(); // the server and the build folder
}
