// A held-out panel member served by `collapse-lab serve` gives the same evaluation numbers as the
// same simulator in-process (same config, same seeds): two runs of persuasion-smoke's `base`
// condition, one with family-a as a network, one with family-a as a remote member behind serve.
// The served run needs an API key: it must reach the server and appear in no URL, no note and no
// report; and a key entered for one base URL is never sent to another.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { createBackend } from "../../src/engine/backends";
import type { EngineBackend } from "../../src/engine/backend";
import { merge, validateConfig, type ExperimentConfig } from "../../src/experiment/config";
import { runExperiment, type RunReport } from "../../src/experiment/experiment";
import { nodeStore } from "../../src/experiment/node-store";
import { presetConfig } from "../../src/experiment/presets";
import { InlineExecutor } from "../../src/experiment/tasks";
import { loadServedWorld, type ServedWorld } from "../../src/serve/models";
import { buildServer } from "../../src/serve/server";
import { RemoteClient } from "../../src/remote/client";
import { apiKeyFor, rememberApiKey } from "../../src/remote/secrets";
import { remoteLines } from "../../src/experiment/report-text";

const KEY = "sk-panel-test-7f3a9c1e5b";
const KEY_ENV = "COLLAPSE_LAB_TEST_REMOTE_KEY";
let backend: EngineBackend;
let world: ServedWorld;
let app: FastifyInstance;
let baseUrl: string;
const served: string[] = []; // serve's request lines: method, URL, model, status

beforeAll(async () => {
  backend = (await createBackend("wasm")).backend;
  world = await loadServedWorld({
    config: presetConfig("persuasion-smoke"),
    label: "persuasion-smoke",
    backend,
    store: nodeStore(),
  });
  app = buildServer({ world, apiKey: KEY, onRequest: (l) => served.push(l) });
  await app.listen({ port: 0, host: "127.0.0.1" });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
  process.env[KEY_ENV] = KEY;
});
afterAll(async () => {
  delete process.env[KEY_ENV];
  await app?.close();
  world?.dispose();
});

async function run(config: ExperimentConfig, notes: string[]): Promise<RunReport> {
  return runExperiment(config, new InlineExecutor(backend), {
    backend: "wasm",
    store: nodeStore(),
    onNote: (m) => notes.push(m),
  });
}

describe("a remote panel member in an experiment", () => {
  it("gives the in-process numbers, reports how it scored, and keeps the key out of everything", async () => {
    const base = merge(presetConfig("persuasion-smoke"), {
      conditions: ["base"],
      eval: { diagnosticSeeds: 0 },
    });
    const inProcess = validateConfig({ ...base, panel: [base.panel[0]] });
    const remote = validateConfig({
      ...base,
      panel: [
        {
          name: base.panel[0].name,
          remote: { baseUrl, model: "panel/family-a", mode: "direct", apiKeyEnv: KEY_ENV },
        },
      ],
    });
    const notesA: string[] = [];
    const notesB: string[] = [];
    const a = await run(inProcess, notesA);
    const b = await run(remote, notesB);
    const [sa, sb] = [a.conditions[0].seeds[0], b.conditions[0].seeds[0]];
    expect(sb.heldoutByMember).toEqual(sa.heldoutByMember);
    expect(sb.heldoutSuccess).toBe(sa.heldoutSuccess);
    expect(sb.curve.map((p) => p.heldout)).toEqual(sa.curve.map((p) => p.heldout));
    expect(sb.humanSuccess).toBe(sa.humanSuccess);

    // how it scored, in the report
    const stats = (sb as { remoteSimulators?: Record<string, unknown>[] }).remoteSimulators!;
    expect(stats).toHaveLength(1);
    expect(stats[0]).toMatchObject({
      name: "family-a",
      model: "panel/family-a",
      scoring: "logprobs",
      fallbacks: 0,
      unmapped: 0,
      unmappedStates: 0,
    });
    expect(stats[0].states as number).toBeGreaterThan(5);
    expect(
      notesB.some((n) => n.startsWith("panel member family-a:") && /chat log-probs yes/.test(n)),
    ).toBe(true); // probed once and shown
    // an act-text member is never asked for JSON: its probe does not try response_format
    expect(notesB.some((n) => /JSON schema no/.test(n) && !/response_format/.test(n))).toBe(true);

    // the key: sent (serve answers only with it), and nowhere else
    expect(served.length).toBeGreaterThan(5);
    expect(
      served.filter((l) => l.includes("/chat/completions")).every((l) => / → 200/.test(l)),
    ).toBe(true);
    for (const text of [JSON.stringify(b), ...notesB, ...served]) expect(text).not.toContain(KEY);
    expect(JSON.stringify(b.config)).toContain(KEY_ENV); // the report names the variable, not the key
  });

  it("single trained against serve's aligned simulator gives the in-process numbers", async () => {
    const base = merge(presetConfig("persuasion-smoke"), {
      conditions: ["single"],
      eval: { diagnosticSeeds: 0 },
    });
    const inProcess = validateConfig({ ...base, panel: [base.panel[0]] });
    const remote = validateConfig(
      merge(inProcess, {
        simulator: {
          remote: { single: { baseUrl, model: "aligned", mode: "direct", apiKeyEnv: KEY_ENV } },
        },
      }),
    );
    const [a, b] = [await run(inProcess, []), await run(remote, [])];
    const [sa, sb] = [a.conditions[0].seeds[0], b.conditions[0].seeds[0]];
    expect(sb.trainSuccess).toBe(sa.trainSuccess);
    expect(sb.curve).toEqual(sa.curve);
    expect(sb.humanSuccess).toBe(sa.humanSuccess);
    const stats = (sb as { remoteSimulators?: Record<string, unknown>[] }).remoteSimulators!;
    expect(stats.map((s) => s.name)).toEqual(["remote simulator"]);
    expect(stats[0]).toMatchObject({ scoring: "logprobs", fallbacks: 0 });
  });

  it("a server without log-probs: the member samples instead, and the report and the CLI say how often", async () => {
    // a proxy in front of serve that drops every reply's logprobs
    const proxy = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", async () => {
        const up = await fetch(baseUrl + req.url!.replace(/^\/v1/, ""), {
          method: req.method,
          headers: {
            "content-type": "application/json",
            authorization: req.headers.authorization ?? "",
          },
          body: req.method === "POST" ? body : undefined,
        });
        const json = (await up.json()) as { choices?: { logprobs?: unknown }[] };
        for (const c of json.choices ?? []) delete c.logprobs;
        res.writeHead(up.status, { "content-type": "application/json" });
        res.end(JSON.stringify(json));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
    try {
      const base = merge(presetConfig("persuasion-smoke"), {
        conditions: ["base"],
        eval: { diagnosticSeeds: 0 },
      });
      const config = validateConfig({
        ...base,
        panel: [
          {
            name: "no-logprobs",
            remote: {
              baseUrl: proxyUrl,
              model: "panel/family-a",
              mode: "direct",
              samples: 8,
              apiKeyEnv: KEY_ENV,
            },
          },
        ],
      });
      const notes: string[] = [];
      const report = await run(config, notes);
      expect(notes.some((n) => /panel member no-logprobs: .*\n.*chat log-probs no/.test(n))).toBe(
        true,
      );
      const stats = (
        report.conditions[0].seeds[0] as { remoteSimulators?: Record<string, number | string>[] }
      ).remoteSimulators![0];
      expect(stats).toMatchObject({ scoring: "sample", logprobStates: 0, unmapped: 0 });
      expect(stats.fallbacks as number).toBeGreaterThan(0);
      expect(stats.sampledStates).toBe(stats.states);
      expect(stats.replies).toBe(8 * (stats.states as number));
      const lines = remoteLines(report).join("\n");
      expect(lines).toContain(
        `no-logprobs (panel/family-a at ${proxyUrl}, direct, acts): ${stats.states} from sampled replies, ${stats.fallbacks} of them after log-probs were missing (fallback)`,
      );
      expect(lines).toContain(`0 of ${stats.replies} replies said no allowed act`);
    } finally {
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it("a wrong key fails the run before pretraining with a readable error that holds no key", async () => {
    process.env.COLLAPSE_LAB_TEST_WRONG_KEY = "sk-wrong-0000000000";
    const base = merge(presetConfig("persuasion-smoke"), {
      conditions: ["base"],
      eval: { diagnosticSeeds: 0 },
    });
    const config = validateConfig({
      ...base,
      panel: [
        {
          name: "r",
          remote: {
            baseUrl,
            model: "aligned",
            mode: "direct",
            apiKeyEnv: "COLLAPSE_LAB_TEST_WRONG_KEY",
          },
        },
      ],
    });
    const e = (await run(config, []).catch((x: unknown) => x)) as Error;
    delete process.env.COLLAPSE_LAB_TEST_WRONG_KEY;
    expect(e.message).toMatch(/^panel member r: .* refused the request \(401/);
    expect(e.message).not.toContain("sk-wrong");
  });

  it("a key entered for one base URL is sent to that server only", async () => {
    const headers: IncomingHttpHeaders[] = [];
    const other: Server = createServer((req, res) => {
      headers.push(req.headers);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [] }));
    });
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/v1`;
    rememberApiKey(baseUrl, "sk-entered-for-serve-only");
    expect(apiKeyFor(`${baseUrl}/`)).toBe("sk-entered-for-serve-only");
    expect(apiKeyFor(otherUrl)).toBeUndefined();
    await new RemoteClient({ baseUrl: otherUrl, apiKey: apiKeyFor(otherUrl) }).models();
    expect(headers[0].authorization).toBeUndefined();
    expect(JSON.stringify(new RemoteClient({ baseUrl, apiKey: apiKeyFor(baseUrl) }))).not.toContain(
      "sk-entered",
    );
    await new Promise<void>((r) => other.close(() => r()));
  });
});
