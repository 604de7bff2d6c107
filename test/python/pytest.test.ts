// The Python package (python/: RunReports as pandas frames, collapse-lab serve through the OpenAI
// client) under its own tests: pytest in the virtual environment scripts/python.sh makes
// (.py/venv, exact pins), on a real recording and a real `serve` it starts on 127.0.0.1. The
// package is rebuilt from the working tree first, so pytest tests these sources. Without the
// environment the test is skipped, saying so, unless COLLAPSE_LAB_REQUIRE_PYTHON=1 (CI).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../cli/harness";

const PYTHON = join(ROOT, ".py/venv/bin/python");
const HAVE_PYTHON = existsSync(PYTHON);
if (!HAVE_PYTHON) {
  if (process.env.COLLAPSE_LAB_REQUIRE_PYTHON === "1")
    throw new Error(
      `the Python test environment is not in ${PYTHON} (COLLAPSE_LAB_REQUIRE_PYTHON=1): run bash scripts/python.sh`,
    );
  console.warn(
    `the Python test environment is not in ${PYTHON}: the Python package's tests are skipped (bash scripts/python.sh makes it)`,
  );
}

/** Runs the venv's Python with `args` in `cwd`; resolves with its exit code and output. */
function python(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(PYTHON, args, {
      cwd,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
    });
    let output = "";
    child.stdout.on("data", (b) => (output += b));
    child.stderr.on("data", (b) => (output += b));
    child.on("error", fail);
    child.on("close", (code) => done({ code, output }));
  });
}

describe.skipIf(!HAVE_PYTHON)("the Python package", () => {
  it("passes its tests under pytest", async () => {
    const built = await python(
      [
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--no-build-isolation",
        "--force-reinstall",
        "./python",
      ],
      ROOT,
    );
    expect(built.code, built.output).toBe(0);
    const r = await python(["-m", "pytest", "-q", "-p", "no:cacheprovider"], join(ROOT, "python"));
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(/\d+ passed/);
    expect(r.output).not.toMatch(/failed|error|skipped/i);
  }, 600_000);
});
