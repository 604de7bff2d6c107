// The real command for the CLI tests: `node bin/collapse-lab.mjs …` from the project root, with
// colours off, the run cache off (a test that uses it names its folder in COLLAPSE_LAB_CACHE), a
// time limit that kills it and says which command hung, optional stdin and extra environment
// variables.
import { spawn } from "node:child_process";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  opts: { timeoutMs?: number; stdin?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliResult> {
  const timeoutMs = opts.timeoutMs ?? 180_000;
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["bin/collapse-lab.mjs", ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        COLLAPSE_LAB_CACHE: "off",
        ...opts.env,
        NO_COLOR: "1",
        FORCE_COLOR: "0",
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => (stdout += b));
    child.stderr.on("data", (b) => (stderr += b));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(
        new Error(`collapse-lab ${args.join(" ")} did not finish in ${timeoutMs} ms\n${stderr}`),
      );
    }, timeoutMs);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
  });
}
