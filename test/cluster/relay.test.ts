// The relay between the app's Remote page and Ray, against a fake Ray dashboard (a real HTTP
// server on 127.0.0.1 that records every request): what it forwards and what it refuses before
// anything reaches Ray, the token (upstream as a Bearer header, never in a reply, even when Ray
// echoes it), CORS for the listed origins only, and a bad config named by its path.
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Command } from "commander";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { buildRelay } from "../../src/cluster/ray/relay";
import { registerRelayCommand } from "../../src/cli/relay-command";
import { presetConfig } from "../../src/experiment/presets";
import { validateConfig } from "../../src/experiment/config";

const TOKEN = "ray-cluster-token-9f3a1c";
const APP = "http://127.0.0.1:5178";

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

let upstream: Server;
let ray = "";
const seen: Seen[] = [];
let relay: FastifyInstance;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        authorization: req.headers.authorization,
        body: req.method === "PUT" ? "(a package)" : Buffer.concat(chunks).toString(),
      });
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const ours = { "collapse-lab": "run", preset: "persuasion-smoke" };
      const key = `${req.method} ${req.url}`;
      if (key === "GET /api/version") return json(200, { ray_version: "2.60.0" });
      if (key === "GET /api/jobs/job-1")
        return json(200, {
          submission_id: "job-1",
          status: "RUNNING",
          entrypoint: "python driver.py",
          metadata: ours,
          runtime_env: { env_vars: { HF_TOKEN: "hf-secret-1" } },
        });
      if (key === "GET /api/jobs/job-1/logs")
        return json(200, {
          logs: `collapse-lab on Ray\nthe job printed ${req.headers.authorization}\n`,
        });
      if (key === "POST /api/jobs/job-1/stop") return json(200, { stopped: true });
      if (key === "GET /api/jobs/theirs")
        return json(200, {
          submission_id: "theirs",
          status: "RUNNING",
          entrypoint: "python train.py",
          metadata: {},
        });
      // a misbehaving dashboard that repeats the request's headers in its error page
      if (key === "GET /api/jobs/echo") {
        res.writeHead(500, { "content-type": "text/plain" });
        return res.end(`internal error handling ${JSON.stringify(req.headers)}`);
      }
      if (req.method === "GET" && req.url?.startsWith("/api/packages/gcs/"))
        return json(404, { error: "no such package" });
      if (req.method === "PUT" && req.url?.startsWith("/api/packages/gcs/")) return json(200, {});
      if (key === "POST /api/jobs/") return json(200, { submission_id: "raysubmit_abc" });
      json(404, { error: `no ${key}` });
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  ray = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  relay = buildRelay({ ray, token: TOKEN, origins: [APP] });
  await relay.ready();
});

afterAll(async () => {
  await relay?.close();
  await new Promise<void>((r) => upstream.close(() => r()));
});

const headersText = (r: LightMyRequestResponse) => JSON.stringify(r.headers);
/** Sends a request from the app's origin (unless told otherwise); the reply must never hold the token. */
async function ask(
  method: "GET" | "POST" | "PUT" | "DELETE" | "OPTIONS",
  url: string,
  opts: { origin?: string | null; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.origin !== null) headers.origin = opts.origin ?? APP;
  const r = await relay.inject({
    method,
    url,
    headers,
    ...(opts.body === undefined ? {} : { payload: opts.body as object }),
  });
  expect(r.body).not.toContain(TOKEN);
  expect(headersText(r)).not.toContain(TOKEN);
  return r;
}

describe("the relay", () => {
  it("forwards a collapse-lab job's status, log and stop, with the token upstream as a Bearer header", async () => {
    seen.length = 0;
    const info = await ask("GET", "/api/jobs/job-1");
    expect(info.statusCode).toBe(200);
    expect(info.json()).toMatchObject({
      submission_id: "job-1",
      status: "RUNNING",
      metadata: { preset: "persuasion-smoke" },
    });
    expect(info.body).not.toContain("hf-secret-1"); // the job's runtime_env stays on the cluster's side
    const logs = await ask("GET", "/api/jobs/job-1/logs");
    expect(logs.json().logs).toContain("collapse-lab on Ray");
    expect(logs.json().logs).toContain("the job printed Bearer [redacted]");
    expect((await ask("POST", "/api/jobs/job-1/stop")).json()).toEqual({ stopped: true });
    expect((await ask("GET", "/relay/info")).json()).toEqual({ ray: "2.60.0", address: ray });
    expect(seen.length).toBeGreaterThanOrEqual(4);
    for (const s of seen) expect(s.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toContain("POST /api/jobs/job-1/stop");
  });

  it("refuses everything else before it reaches Ray", async () => {
    seen.length = 0;
    const refused: [Parameters<typeof ask>[0], string, number][] = [
      ["GET", "/api/jobs/", 403], // every job on the cluster
      ["DELETE", "/api/jobs/job-1", 403],
      ["POST", "/api/jobs/", 403], // a job of the page's own making
      ["GET", "/api/packages/gcs/_ray_pkg_0123456789abcdef.zip", 403],
      ["PUT", "/api/packages/gcs/_ray_pkg_0123456789abcdef.zip", 403],
      ["GET", "/api/cluster_status", 403],
      ["GET", "/api/jobs/job-1/logs/tail", 403],
      ["GET", "/", 404],
      ["GET", "/metrics", 404],
      ["GET", "/api/jobs/not%20an%20id", 400],
    ];
    for (const [method, url, status] of refused) {
      const r = await ask(method, url);
      expect(r.statusCode, `${method} ${url}`).toBe(status);
      expect(typeof r.json().error, `${method} ${url}`).toBe("string");
    }
    expect((await ask("GET", "/api/jobs/")).json().error).toMatch(
      /does not forward the list of every job/,
    );
    expect(seen).toEqual([]);
    // a job collapse-lab did not submit: its status is read (to know), nothing of it is forwarded
    const theirs = await ask("GET", "/api/jobs/theirs/logs");
    expect(theirs.statusCode).toBe(403);
    expect(theirs.json().error).toMatch(/not submitted by collapse-lab/);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(["GET /api/jobs/theirs"]);
  });

  it("keeps the token out of an upstream failure that repeats it, and says what failed (502)", async () => {
    const r = await ask("GET", "/api/jobs/echo");
    expect(r.statusCode).toBe(502);
    expect(r.json().error).toMatch(
      /^Ray: the Ray dashboard at http:\/\/127\.0\.0\.1:\d+ failed \(500\)/,
    );
    expect(r.json().error).toContain("[redacted]");
    const missing = await ask("GET", "/api/jobs/nope");
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toMatch(/not found/);
  });

  it("says an unreachable Ray is unreachable (502)", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const lost = buildRelay({ ray: `http://127.0.0.1:${port}`, token: TOKEN, origins: [APP] });
    const r = await lost.inject({ method: "GET", url: "/relay/info", headers: { origin: APP } });
    expect(r.statusCode).toBe(502);
    expect(r.json().error).toMatch(/unreachable/);
    await lost.close();
  });

  it("gives CORS headers to the listed origins only, and refuses requests from any other", async () => {
    const ok = await ask("GET", "/relay/info");
    expect(ok.headers["access-control-allow-origin"]).toBe(APP);
    const preflight = await ask("OPTIONS", "/relay/submit", {
      headers: {
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe(APP);
    expect(String(preflight.headers["access-control-allow-methods"])).toContain("POST");

    seen.length = 0;
    for (const [method, url] of [
      ["GET", "/relay/info"],
      ["POST", "/api/jobs/job-1/stop"], // a "simple" request: no preflight would stop it
    ] as const) {
      const r = await ask(method, url, {
        origin: "https://evil.example",
        headers: { "access-control-request-method": "POST" },
      });
      expect(r.statusCode, `${method} ${url}`).toBe(403);
      expect(r.headers["access-control-allow-origin"]).toBeUndefined();
      expect(r.json().error).toMatch(/does not serve pages from https:\/\/evil\.example/);
    }
    // its preflight gets no CORS headers either, so the browser sends nothing after it
    const evilPreflight = await ask("OPTIONS", "/relay/submit", {
      origin: "https://evil.example",
      headers: { "access-control-request-method": "POST" },
    });
    expect(evilPreflight.headers["access-control-allow-origin"]).toBeUndefined();
    expect(seen).toEqual([]);
    // no Origin (curl, a script on this machine): served, without CORS headers
    const local = await ask("GET", "/relay/info", { origin: null });
    expect(local.statusCode).toBe(200);
    expect(local.headers["access-control-allow-origin"]).toBeUndefined();
    // a page that rebinds its own name to 127.0.0.1 (its requests then name its host)
    const rebound = await ask("GET", "/relay/info", {
      origin: null,
      headers: { host: "attacker.example:8266" },
    });
    expect(rebound.statusCode).toBe(403);
  });

  it("refuses a bad submission with 400, naming the config's path, before anything reaches Ray", async () => {
    seen.length = 0;
    const config = validateConfig(presetConfig("persuasion-smoke"));
    const bad = { ...config, rl: { ...config.rl, steps: -3 } };
    const r = await ask("POST", "/relay/submit", {
      body: { config: bad, preset: "persuasion-smoke", backend: "wasm" },
    });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toMatch(/config is not valid: .*rl\.steps/);
    const extra = await ask("POST", "/relay/submit", {
      body: { config: { ...config, surprise: 1 }, backend: "wasm" },
    });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().error).toContain("surprise: unknown key");
    expect(
      (await ask("POST", "/relay/submit", { body: { config, backend: "tpu" } })).json().error,
    ).toMatch(/^backend: one of wasm, webgpu, float64/);
    expect(
      (await ask("POST", "/relay/submit", { body: { config, backend: "wasm", preset: "a b" } }))
        .statusCode,
    ).toBe(400);
    expect(
      (await ask("POST", "/relay/submit", { body: { backend: "wasm" } })).json().error,
    ).toMatch(/^config: required/);
    expect((await ask("POST", "/relay/submit", { body: [1, 2] })).statusCode).toBe(400);
    expect(seen).toEqual([]);
  });

  it("submits a valid config as a run: the package goes up once, then the job, each with the token", async () => {
    seen.length = 0;
    const config = validateConfig(presetConfig("persuasion-smoke"));
    const r = await ask("POST", "/relay/submit", {
      body: { config, preset: "persuasion-smoke", backend: "wasm" },
    });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ id: "raysubmit_abc" });
    const calls = seen.map((s) => `${s.method} ${s.url.replace(/_ray_pkg_[0-9a-f]+/, "PKG")}`);
    expect(calls).toEqual([
      "GET /api/packages/gcs/PKG.zip",
      "PUT /api/packages/gcs/PKG.zip",
      "POST /api/jobs/",
    ]);
    for (const s of seen) expect(s.authorization).toBe(`Bearer ${TOKEN}`);
    const job = JSON.parse(seen[2].body) as {
      entrypoint: string;
      runtime_env: { env_vars: Record<string, string> };
    };
    expect(job.entrypoint).toBe("python driver.py --backend wasm --preset persuasion-smoke");
    expect(validateConfig(JSON.parse(job.runtime_env.env_vars.COLLAPSE_LAB_CONFIG))).toEqual(
      config,
    );
  });
});

describe("collapse-lab ray relay", () => {
  const usage = (m: string): never => {
    throw new Error(`usage: ${m}`);
  };
  const program = () => {
    const p = new Command().exitOverride();
    const ray = p.command("ray");
    registerRelayCommand(ray, {
      integer: () => (v: string) => Number(v),
      collect: (v, prev) => [...prev, v],
      usageError: usage,
    });
    return p;
  };

  it("refuses a token variable that is unset, and an origin with a path", async () => {
    delete process.env.RELAY_TEST_TOKEN_UNSET;
    await expect(
      program().parseAsync(
        ["ray", "relay", "--ray", ray, "--token-env", "RELAY_TEST_TOKEN_UNSET"],
        { from: "user" },
      ),
    ).rejects.toThrow(/RELAY_TEST_TOKEN_UNSET: that environment variable is empty or unset/);
    await expect(
      program().parseAsync(
        ["ray", "relay", "--ray", ray, "--cors-origin", "http://127.0.0.1:5178/app"],
        { from: "user" },
      ),
    ).rejects.toThrow(/an origin is scheme:\/\/host\[:port\]/);
    await expect(
      program().parseAsync(["ray", "relay", "--ray", "ftp://x"], { from: "user" }),
    ).rejects.toThrow(/not an http\(s\) address/);
  });
});
