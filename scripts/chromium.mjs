// Where the tests and benchmarks find a Chromium or Chrome: $CHROME_PATH or $CHROMIUM_PATH, then
// the standard install locations on Linux and macOS, then a browser Playwright downloaded. Run as
// a script (`node scripts/chromium.mjs --ensure`, the first step of `npm test`) it makes sure one
// exists: where none does, it installs Debian's Chromium when it can (root and apt-get; not with
// COLLAPSE_LAB_CHROMIUM_INSTALL=no), and otherwise stops with one line saying what to install.
import { accessSync, constants } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The flags every test and benchmark starts it with: WebGPU on (SwiftShader where there is no GPU), nothing fetched from the network. */
export const CHROMIUM_ARGS = [
  "--enable-unsafe-webgpu",
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  "--disable-dev-shm-usage",
];

export const CHROMIUM_CANDIDATES = [
  "/usr/lib/chromium/chromium", // Debian's chromium package (the binary its /usr/bin/chromium wrapper starts)
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/snap/bin/chromium",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
  "/opt/google/chrome/chrome",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
];

const runnable = (path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The first Chromium or Chrome found, or null. An environment variable that names a missing file
 * is an error. COLLAPSE_LAB_CHROMIUM_SEARCH=env looks at the variables only (to check what happens
 * on a machine without a browser).
 */
export async function findChromium(env = process.env) {
  for (const name of ["CHROME_PATH", "CHROMIUM_PATH"]) {
    const path = env[name];
    if (!path) continue;
    if (!runnable(path)) throw new Error(`${name}=${path} is not an executable file`);
    return path;
  }
  if (env.COLLAPSE_LAB_CHROMIUM_SEARCH === "env") return null;
  const found = CHROMIUM_CANDIDATES.find(runnable);
  if (found) return found;
  try {
    const { chromium } = await import("playwright");
    const bundled = chromium.executablePath();
    if (bundled && runnable(bundled)) return bundled;
  } catch {
    // no Playwright browser downloaded
  }
  return null;
}

export const INSTALL_HINT =
  "npm test needs Chromium or Chrome for its browser tests: install Debian's with `sudo apt-get update && sudo apt-get install -y chromium libvulkan1` (or your system's Chromium / Chrome), or set CHROME_PATH to one.";

async function ensure() {
  let path = await findChromium();
  if (path) return path;
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  let apt = false;
  try {
    execFileSync("apt-get", ["--version"], { stdio: "ignore" });
    apt = true;
  } catch {
    // not a Debian-like system
  }
  if (root && apt && process.env.COLLAPSE_LAB_CHROMIUM_INSTALL !== "no") {
    console.error(
      "collapse-lab: no Chromium or Chrome found; installing Debian's chromium (apt-get)…",
    );
    execFileSync("apt-get", ["update"], { stdio: "inherit" });
    execFileSync(
      "apt-get",
      ["install", "-y", "--no-install-recommends", "chromium", "libvulkan1"],
      { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } },
    );
    path = await findChromium();
    if (path) return path;
  }
  console.error(`collapse-lab: ${INSTALL_HINT}`);
  process.exit(1);
}

if (
  process.argv[1] &&
  fileURLToPath(import.meta.url) === process.argv[1] &&
  process.argv.includes("--ensure")
) {
  const path = await ensure().catch((e) => {
    console.error(`collapse-lab: ${e.message}`);
    process.exit(1);
  });
  if (process.argv.includes("--print")) console.log(path);
}
