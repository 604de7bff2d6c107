// A real single-node Ray head for the tests, on 127.0.0.1: Ray from .ray/venv (bash scripts/ray.sh),
// usage statistics off, every port its own (two test files may each run one at once), its own
// temporary folder. `ray start --block` stops everything it started when it gets SIGTERM.
// Without the install the tests skip, unless COLLAPSE_LAB_REQUIRE_RAY=1 (CI), where they fail.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
export const RAY_BIN = join(ROOT, ".ray/venv/bin");
export const HAVE_RAY = existsSync(join(RAY_BIN, "ray"));
export const REQUIRE_RAY = process.env.COLLAPSE_LAB_REQUIRE_RAY === "1";
/** Why the Ray tests skip here ("" when they run). */
export const RAY_MISSING =
  HAVE_RAY || REQUIRE_RAY ? "" : "Ray is not installed (bash scripts/ray.sh)";

/** n distinct free ports: every listener stays open until all are chosen, so the OS cannot hand out one port twice. */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((done, fail) => {
          const s = createServer();
          s.once("error", fail);
          s.listen(0, "127.0.0.1", () => done(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
  return ports;
}

export interface RayHead {
  /** The dashboard (Jobs API), http://127.0.0.1:PORT. */
  address: string;
  /** The head's temporary folder: every process it starts runs from under it. */
  tempDir: string;
  /** Process ids of live processes whose command line mentions `pattern` and this head's folder. */
  processes(pattern: string): number[];
  stop(): Promise<void>;
}

/** PATH with the venv first: the job's entrypoint runs `python` from the head's environment. */
export const rayEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  PATH: `${RAY_BIN}:${process.env.PATH ?? ""}`,
  RAY_USAGE_STATS_ENABLED: "0",
  RAY_ADDRESS: "",
  RAY_API_SERVER_ADDRESS: "",
});

export async function startRayHead(opts: { cpus?: number } = {}): Promise<RayHead> {
  if (!HAVE_RAY)
    throw new Error(
      `Ray is required here (COLLAPSE_LAB_REQUIRE_RAY=1) but ${join(RAY_BIN, "ray")} is missing: run bash scripts/ray.sh`,
    );
  const tempDir = mkdtempSync("/tmp/rayt-"); // Ray's socket paths must stay short
  const ports = await freePorts(9);
  const [
    gcs,
    dashboard,
    agentHttp,
    agentGrpc,
    envAgent,
    metrics,
    client,
    nodeManager,
    objectManager,
  ] = ports;
  const args = [
    "start",
    "--head",
    "--block",
    "--disable-usage-stats",
    `--num-cpus=${opts.cpus ?? 2}`,
    "--num-gpus=0",
    "--node-ip-address=127.0.0.1",
    `--port=${gcs}`,
    "--dashboard-host=127.0.0.1",
    `--dashboard-port=${dashboard}`,
    `--dashboard-agent-listen-port=${agentHttp}`,
    `--dashboard-agent-grpc-port=${agentGrpc}`,
    `--runtime-env-agent-port=${envAgent}`,
    `--metrics-export-port=${metrics}`,
    `--ray-client-server-port=${client}`,
    `--node-manager-port=${nodeManager}`,
    `--object-manager-port=${objectManager}`,
    `--temp-dir=${tempDir}`,
  ];
  const child: ChildProcess = spawn(join(RAY_BIN, "ray"), args, {
    env: rayEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (b) => (out += b));
  child.stderr!.on("data", (b) => (out += b));
  const address = `http://127.0.0.1:${dashboard}`;
  const processes = (pattern: string) => {
    let ps: string;
    try {
      ps = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
    } catch {
      return [];
    }
    return ps
      .split("\n")
      .filter((l) => l.includes(pattern) && l.includes(tempDir) && !l.includes("ps -eo"))
      .map((l) => Number(l.trim().split(/\s+/)[0]));
  };
  const stop = async () => {
    if (child.exitCode === null) {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([gone, new Promise((r) => setTimeout(r, 60_000))]);
    }
    for (const pid of processes("")) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone already */
      }
    }
    rmSync(tempDir, { recursive: true, force: true });
  };
  // the dashboard answers once the head is up (tens of seconds on a busy machine)
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`ray start exited with ${child.exitCode}:\n${out.slice(-3000)}`);
    }
    try {
      const r = await fetch(`${address}/api/version`);
      if (r.ok) {
        const jobs = await fetch(`${address}/api/jobs/`); // the job manager starts after the version route
        if (jobs.ok) break;
      }
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `the Ray head did not answer at ${address} within 180 s:\n${out.slice(-3000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { address, tempDir, processes, stop };
}

/** The log of a job's driver, straight from the head's folder (for messages when a test fails). */
export function driverLog(head: RayHead, id: string): string {
  try {
    const dir = execFileSync("find", [head.tempDir, "-name", `job-driver-${id}.log`], {
      encoding: "utf8",
    })
      .trim()
      .split("\n")[0];
    return dir ? readFileSync(dir, "utf8") : "";
  } catch {
    return "";
  }
}
