// CITATION.cff against the Citation File Format schema, through `bash scripts/cff-check.sh`
// (cffconvert from PyPI in .py-tools/cffconvert). Without that install the tests skip, saying so,
// unless COLLAPSE_LAB_REQUIRE_CFF=1 (CI), where they fail. What the file says is checked against
// package.json and the app's Cite dialog in test/app/cite.test.ts.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const HAVE_CFF = existsSync(join(ROOT, ".py-tools/cffconvert/bin/cffconvert"));
const REQUIRE_CFF = process.env.COLLAPSE_LAB_REQUIRE_CFF === "1";
if (!HAVE_CFF && !REQUIRE_CFF)
  console.warn(
    "cffconvert is not installed (bash scripts/cff-check.sh): the CITATION.cff validation is skipped",
  );

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-cff-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The script, never installing (a missing install fails here, as it must under REQUIRE). */
const check = (...args: string[]) =>
  spawnSync("bash", ["scripts/cff-check.sh", "--no-install", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });

describe.skipIf(!HAVE_CFF && !REQUIRE_CFF)("CITATION.cff, validated by cffconvert", () => {
  it("is valid", () => {
    const r = check();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("Citation metadata are valid according to schema version 1.2.0.");
  });

  it("a copy without its authors is refused (the check can fail)", () => {
    const broken = readFileSync(join(ROOT, "CITATION.cff"), "utf8").replace(
      /^authors:\n(?: {2}- .*\n)+/m,
      "",
    );
    expect(broken).not.toMatch(/^authors:/m);
    const file = join(tmp, "CITATION.cff");
    writeFileSync(file, broken);
    const r = check(file);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("'authors' is a required property");
  });
});
