// The Ray tier's parts that need no cluster: the Jobs API client against real HTTP servers on
// 127.0.0.1 that misbehave, the job-log format and its report round trip, the submission body.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RayJobsClient, RayJobsError, rayAddress } from "../../src/cluster/ray/jobs";
import { plainFetch } from "../../src/cluster/ray/node-http";
import {
  marker,
  readJobLog,
  reportFromLog,
  reportMarkers,
  JobReportError,
} from "../../src/cluster/ray/job-log";
import { runSubmission } from "../../src/cluster/ray/submit";
import { parseReport } from "../../src/experiment/report-schema";
import { presetConfig } from "../../src/experiment/presets";
import { validateConfig } from "../../src/experiment/config";
import { ROOT } from "./ray-head";

const report = parseReport(readFileSync(`${ROOT}/public/recorded/persuasion-smoke.json`, "utf8"));

describe("the job log", () => {
  it("carries the report whole through Ray's line prefixes and other output", () => {
    const lines = reportMarkers(report);
    const log = [
      "collapse-lab on Ray: persuasion-smoke",
      "(run_task pid=123) " +
        marker({ t: "unit", progress: { condition: "single", seed: 0, step: 3, steps: 10 } }),
      ...lines.map((l, i) => (i % 2 ? l : `(raylet) ${l}`)),
      "done",
    ].join("\n");
    expect(reportFromLog(log)).toEqual(report);
    const r = readJobLog(log);
    expect(r.units).toEqual([{ condition: "single", seed: 0, step: 3, steps: 10 }]);
    expect(r.text).toEqual(["collapse-lab on Ray: persuasion-smoke", "done"]);
    expect(r.unreadable).toBe(0);
  });

  it("cuts a big report into lines of bounded length", () => {
    const lines = reportMarkers(report, 1000);
    expect(lines.length).toBeGreaterThan(10);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(1100);
    expect(reportFromLog(lines.reverse().join("\n"))).toEqual(report); // in any order
  });

  it("says what is missing: no report, a part of it, a damaged one, the failure's cause", () => {
    const lines = reportMarkers(report);
    expect(() => reportFromLog("just text")).toThrow(/holds no report/);
    expect(() =>
      reportFromLog(marker({ t: "error", message: "the task unit single seed 0 crashed" })),
    ).toThrow(/it failed: the task unit single seed 0 crashed/);
    const many = reportMarkers(report, 1000);
    expect(many.length).toBeGreaterThan(1);
    expect(() => reportFromLog(many.slice(1).join("\n"))).toThrow(
      new RegExp(`holds ${many.length - 1} of the report's ${many.length} parts`),
    );
    const damaged = lines[0].replace(/"data":"[A-Za-z0-9+/]{8}/, '"data":"AAAAAAAA');
    expect(() => reportFromLog(damaged)).toThrow(JobReportError);
  });

  it("counts marker lines it cannot read and keeps going", () => {
    const r = readJobLog(
      [
        `@@collapse-lab {not json`,
        `@@collapse-lab {"t":"mystery"}`,
        marker({ t: "phase", phase: "train", done: 1, total: 6, detail: "single seed 0" }),
      ].join("\n"),
    );
    expect(r.unreadable).toBe(2);
    expect(r.phases).toHaveLength(1);
  });
});

describe("the submission", () => {
  const config = validateConfig(presetConfig("persuasion-smoke"));
  it("runs driver.py with the backend and task resources, the config in the job's environment", () => {
    const s = runSubmission(
      {
        config,
        backend: "webgpu",
        preset: "persuasion-smoke",
        taskCpus: 2,
        taskHeapMb: 512,
        submissionId: "job-1",
      },
      "gcs://_ray_pkg_0123456789abcdef.zip",
    );
    expect(s.entrypoint).toBe(
      "python driver.py --backend webgpu --preset persuasion-smoke --task-cpus 2 --task-heap-mb 512",
    );
    expect(s.submission_id).toBe("job-1");
    const env = s.runtime_env as { working_dir: string; env_vars: Record<string, string> };
    expect(env.working_dir).toBe("gcs://_ray_pkg_0123456789abcdef.zip");
    expect(validateConfig(JSON.parse(env.env_vars.COLLAPSE_LAB_CONFIG))).toEqual(config);
    expect(s.metadata).toMatchObject({
      "collapse-lab": "run",
      preset: "persuasion-smoke",
      backend: "webgpu",
    });
  });
  it("refuses what a command line cannot carry", () => {
    expect(() =>
      runSubmission({ config, backend: "wasm", python: "python; rm -rf /" }, "gcs://x"),
    ).toThrow(/--python must be a plain command/);
    expect(() =>
      runSubmission({ config, backend: "wasm", submissionId: "a b" }, "gcs://x"),
    ).toThrow(/submission id/);
  });
});

describe("the Jobs API client against misbehaving servers", () => {
  let server: Server;
  let base = "";
  const seen: IncomingMessage[] = [];
  const TOKEN = "ray-token-5d1c7e";
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req);
      const send = (status: number, body: string, type = "application/json") => {
        res.writeHead(status, { "content-type": type });
        res.end(body);
      };
      if (req.url === "/api/version") return send(200, JSON.stringify({ ray_version: "2.60.0" }));
      if (req.url === "/api/jobs/secret") return send(401, `bad token ${TOKEN}`, "text/plain");
      if (req.url === "/api/jobs/html") return send(200, "<html>a proxy page</html>", "text/html");
      if (req.url === "/api/jobs/odd") return send(200, JSON.stringify({ status: "DANCING" }));
      if (req.url === "/api/jobs/ok")
        return send(
          200,
          JSON.stringify({
            submission_id: "ok",
            status: "RUNNING",
            entrypoint: "python driver.py",
          }),
        );
      if (req.url?.startsWith("/api/packages/gcs/"))
        return send(404, "no such package", "text/plain");
      send(500, "boom", "text/plain");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const c = () => new RayJobsClient(base, { token: TOKEN, fetch: plainFetch });

  it("reads a job and sends the token as a Bearer header, without the headers that make Ray refuse writes", async () => {
    expect((await c().info("ok")).status).toBe("RUNNING");
    const req = seen.at(-1)!;
    expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(
      Object.keys(req.headers).filter(
        (h) => h.startsWith("sec-fetch") || h === "origin" || h === "referer",
      ),
    ).toEqual([]);
    expect(await c().hasPackage("_ray_pkg_0123456789abcdef.zip")).toBe(false);
  });

  it("names each failure, and never repeats the token", async () => {
    const err = (await c()
      .info("secret")
      .catch((e: unknown) => e)) as RayJobsError;
    expect(err).toBeInstanceOf(RayJobsError);
    expect(err.kind).toBe("unauthorised");
    expect(err.message).not.toContain(TOKEN);
    await expect(c().info("html")).rejects.toMatchObject({ kind: "malformed-reply" });
    await expect(c().info("odd")).rejects.toThrow(/without a known status/);
    await expect(c().stop("x")).rejects.toMatchObject({ kind: "server-error", status: 500 });
    await expect(c().uploadPackage("../etc/passwd", new Uint8Array(1))).rejects.toThrow(
      /not a Ray package name/,
    );
  });

  it("says a head is unreachable, and refuses addresses that are not http(s) or carry credentials", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(
      new RayJobsClient(`http://127.0.0.1:${port}`, { fetch: plainFetch }).version(),
    ).rejects.toThrow(/unreachable .*is the head running/);
    expect(() => rayAddress("ftp://head:8265")).toThrow(/not an http\(s\) address/);
    expect(() => rayAddress("http://user:pw@head:8265")).toThrow(/no credentials/);
    expect(() => rayAddress("head:8265 x")).toThrow(/not a URL|not an http/);
    expect(rayAddress("http://head:8265/")).toBe("http://head:8265");
  });
});
