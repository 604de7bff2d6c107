// How `npm test` finds a browser (scripts/chromium.mjs): an explicit path wins, a wrong one is
// named, and on a machine with none (simulated: the search looks at the variables only) the test
// command stops before running anything, with one line that says what to install.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findChromium, INSTALL_HINT } from "../../scripts/chromium.mjs";

const dir = mkdtempSync(join(tmpdir(), "collapse-lab-chromium-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SCRIPT = resolve(import.meta.dirname, "../../scripts/chromium.mjs");

describe("findChromium", () => {
  it("takes CHROME_PATH (or CHROMIUM_PATH) when it names an executable", async () => {
    const fake = join(dir, "chrome");
    writeFileSync(fake, "#!/bin/sh\n");
    chmodSync(fake, 0o755);
    expect(await findChromium({ CHROME_PATH: fake })).toBe(fake);
    expect(await findChromium({ CHROMIUM_PATH: fake })).toBe(fake);
  });

  it("names a variable that points nowhere instead of looking elsewhere", async () => {
    await expect(findChromium({ CHROME_PATH: join(dir, "missing") })).rejects.toThrow(
      /CHROME_PATH=.*missing is not an executable file/,
    );
  });

  it("finds nothing where there is nothing to find", async () => {
    expect(await findChromium({ COLLAPSE_LAB_CHROMIUM_SEARCH: "env" })).toBeNull();
  });
});

describe("node scripts/chromium.mjs --ensure", () => {
  it("prints the browser it found", () => {
    const fake = join(dir, "chrome2");
    writeFileSync(fake, "#!/bin/sh\n");
    chmodSync(fake, 0o755);
    const r = spawnSync(process.execPath, [SCRIPT, "--ensure", "--print"], {
      env: { ...process.env, CHROME_PATH: fake },
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(fake);
  });

  it("without a browser and without installing: exit 1 and one line saying what to install", () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      COLLAPSE_LAB_CHROMIUM_SEARCH: "env",
      COLLAPSE_LAB_CHROMIUM_INSTALL: "no",
    };
    delete env.CHROME_PATH;
    delete env.CHROMIUM_PATH;
    const r = spawnSync(process.execPath, [SCRIPT, "--ensure"], { env, encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([`collapse-lab: ${INSTALL_HINT}`]);
    expect(INSTALL_HINT).toMatch(/apt-get install -y chromium libvulkan1/);
  });
});
