// The Remote page's logic: what a job's log shows (human lines, live curves, the failure's cause,
// the report once it finished), the relay client's errors, what the page remembers, and the
// stored run a finished job becomes.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { marker, reportMarkers } from "../../src/cluster/ray/job-log";
import { parseReport } from "../../src/experiment/report-schema";
import {
  DEFAULT_RELAY,
  loadMemory,
  RelayClient,
  relayBase,
  remoteBackend,
  saveMemory,
  snapshotOf,
  storedRunOf,
  type RemoteJob,
} from "../../src/app/lib/remote-run";
import { DEFAULT_STATE, parseUrlState } from "../../src/app/lib/url-state";

const report = parseReport(
  readFileSync(join(__dirname, "../../public/recorded/persuasion-smoke.json"), "utf8"),
);
const point = (step: number, human: number) => ({
  step,
  train: 0.5,
  heldout: 0.4,
  human,
  entropy: 1.2,
  reward: 0.1,
});

describe("a job's snapshot", () => {
  const running = [
    "collapse-lab on Ray: persuasion-smoke",
    marker({ t: "phase", phase: "train", done: 2, total: 7, detail: "single seed 0" }),
    `(run_task pid=41) ${marker({ t: "unit", progress: { condition: "single", seed: 0, step: 0, steps: 4, point: point(0, 0.3) } })}`,
    `(run_task pid=41) ${marker({ t: "unit", progress: { condition: "single", seed: 0, step: 1, steps: 4 } })}`,
    `(run_task pid=41) ${marker({ t: "unit", progress: { condition: "single", seed: 0, step: 2, steps: 4, point: point(2, 0.35) } })}`,
    // the task was retried: its points come again, and are kept once
    `(run_task pid=57) ${marker({ t: "unit", progress: { condition: "single", seed: 0, step: 0, steps: 4, point: point(0, 0.3) } })}`,
    `(run_task pid=43) ${marker({ t: "unit", progress: { condition: "vs", seed: 0, step: 0, steps: 4, point: point(0, 0.31) } })}`,
    "(run_task pid=41) unit single seed 0: step 2 of 4",
  ].join("\n");

  it("while it runs: the human lines, the phase and the curves by condition and seed", () => {
    const s = snapshotOf({ status: "RUNNING", message: null }, running);
    expect(s.lines).toEqual([
      "collapse-lab on Ray: persuasion-smoke",
      "(run_task pid=41) unit single seed 0: step 2 of 4",
    ]);
    expect(s.lines.join("\n")).not.toContain("@@collapse-lab");
    expect(s.phase).toBe("train 2/7 (single seed 0)");
    expect(s.training).toEqual(["single seed 0: step 0 of 4", "vs seed 0: step 0 of 4"]); // the retried task's latest report counts
    expect(Object.keys(s.curves).sort()).toEqual(["single:0", "vs:0"]);
    expect(s.curves["single:0"].map((p) => p.step)).toEqual([0, 2]);
    expect(s.report).toBeNull();
    expect(s.cause).toBeNull();
  });

  it("keeps the last lines of a long log, and counts them all", () => {
    const log = Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n");
    const s = snapshotOf({ status: "RUNNING" }, log, 10);
    expect(s.lines).toEqual(Array.from({ length: 10 }, (_, i) => `line ${90 + i}`));
    expect(s.lineCount).toBe(100);
  });

  it("when it succeeded: the report from the log; when its parts are missing: why not", () => {
    const done = snapshotOf(
      { status: "SUCCEEDED" },
      [running, ...reportMarkers(report)].join("\n"),
    );
    expect(done.report).toEqual(report);
    expect(done.reportError).toBeNull();
    const cut = snapshotOf({ status: "SUCCEEDED" }, running);
    expect(cut.report).toBeNull();
    expect(cut.reportError).toMatch(/holds no report/);
  });

  it("when it failed: the driver's cause, else Ray's own message", () => {
    const failed = snapshotOf(
      { status: "FAILED", message: "Job entrypoint command failed with exit code 1" },
      `${running}\n${marker({ t: "error", message: "the task unit vs seed 0 crashed: out of memory" })}`,
    );
    expect(failed.cause).toBe("the task unit vs seed 0 crashed: out of memory");
    expect(
      snapshotOf(
        { status: "FAILED", message: "Job entrypoint command failed with exit code 1" },
        "",
      ).cause,
    ).toBe("Job entrypoint command failed with exit code 1");
  });
});

describe("the relay client", () => {
  it("checks the address", () => {
    expect(relayBase(" http://127.0.0.1:8266/ ")).toBe("http://127.0.0.1:8266");
    expect(() => relayBase("127.0.0.1:8266")).toThrow(/not an http\(s\) address|not a URL/);
    expect(() => relayBase("http://user:pw@127.0.0.1:8266")).toThrow(/no credentials/);
  });

  it("passes the relay's error on, and says when it cannot reach it", async () => {
    const calls: string[] = [];
    const answering = (async (url: string, init?: RequestInit) => {
      calls.push(`${init?.method} ${url}`);
      return new Response(JSON.stringify({ error: "the relay does not forward GET /api/jobs/" }), {
        status: 403,
      });
    }) as typeof fetch;
    await expect(
      new RelayClient("http://127.0.0.1:8266", answering).job("raysubmit_1"),
    ).rejects.toThrow("the relay does not forward GET /api/jobs/");
    expect(calls).toEqual(["GET http://127.0.0.1:8266/api/jobs/raysubmit_1"]);
    const down = (async () => {
      throw new TypeError("Failed to fetch");
    }) as typeof fetch;
    await expect(new RelayClient("http://127.0.0.1:8266", down).info()).rejects.toThrow(
      /relay at http:\/\/127\.0\.0\.1:8266 is unreachable.*collapse-lab ray relay --ray/,
    );
    const html = (async () =>
      new Response("<html>not a relay</html>", { status: 200 })) as typeof fetch;
    await expect(new RelayClient("http://127.0.0.1:8266", html).info()).rejects.toThrow(
      /is not JSON/,
    );
  });

  it("runs auto on wasm on the cluster, webgpu when asked", () => {
    expect([remoteBackend("auto"), remoteBackend("wasm"), remoteBackend("webgpu")]).toEqual([
      "wasm",
      "wasm",
      "webgpu",
    ]);
  });
});

describe("what the page remembers", () => {
  const job: RemoteJob = {
    id: "collapse-lab-persuasion-smoke-1",
    relay: "http://127.0.0.1:9000",
    url: { ...DEFAULT_STATE, sets: ["rl.steps=2"], preset: "persuasion-smoke", page: "remote" },
    backend: "wasm",
    title: "persuasion-smoke (modified), 1 seed",
    submittedAt: 1_700_000_000_000,
  };

  it("round-trips the relay and the job; forgets what it cannot read", () => {
    const kept = new Map<string, string>();
    const storage = {
      getItem: (k: string) => kept.get(k) ?? null,
      setItem: (k: string, v: string) => void kept.set(k, v),
    };
    expect(loadMemory(storage)).toEqual({ relay: DEFAULT_RELAY, job: null });
    saveMemory(storage, { relay: "http://127.0.0.1:9000", job });
    expect(loadMemory(storage)).toEqual({ relay: "http://127.0.0.1:9000", job });
    kept.set("collapse-lab:remote", "{not json");
    expect(loadMemory(storage)).toEqual({ relay: DEFAULT_RELAY, job: null });
    kept.set("collapse-lab:remote", JSON.stringify({ relay: "http://x:1", job: { id: 3 } }));
    expect(loadMemory(storage)).toEqual({ relay: "http://x:1", job: null });
  });

  it("a finished job is a done run of the experiment it was, opening on the Experiment page", () => {
    const run = storedRunOf(job, report);
    expect(run).toMatchObject({
      id: `ray-${job.id}`,
      status: "done",
      createdAt: job.submittedAt,
      backend: `${report.env.backend} on Ray`,
      report,
    });
    expect(run.title).toContain(job.id);
    expect(run.url.page).toBe("experiment");
    expect(parseUrlState("", "#remote").state.page).toBe("remote");
  });
});
