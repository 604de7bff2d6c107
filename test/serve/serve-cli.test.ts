// The remote-tier commands as a person runs them (`node bin/collapse-lab.mjs …`) against a
// `serve` on 127.0.0.1 that serves the human types (no engine): remote-probe shows what it
// offers, remote-chat streams a reply (reproducible with a seed) with terminal escapes removed.
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { benchmarkFor } from "../../src/benchmarks/registry";
import type { Dialogue } from "../../src/benchmarks/types";
import { presetConfig } from "../../src/experiment/presets";
import { buildServer } from "../../src/serve/server";
import type { ServedWorld } from "../../src/serve/models";
import { terminalSafe } from "../../src/cli/remote-commands";
import { runCli } from "../cli/harness";

const config = presetConfig("persuasion-smoke");
const bench = benchmarkFor(config);
const V = bench.acts.length;
const world: ServedWorld = {
  bench,
  names: { agent: "Persuader", user: "Persuadee" },
  models: [
    {
      id: "human/skeptic",
      description: "skeptic",
      side: "user",
      distribution: async (ds: Dialogue[]) => {
        const out = new Float64Array(ds.length * V);
        ds.forEach((d, b) => out.set(bench.humans.replyProbs(0, d), b * V));
        return out;
      },
    },
  ],
  defaultCard: bench.humans.cardDistribution()[0].card,
  vs: config.vs,
  source: "test",
  dispose: () => {},
};
let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  app = buildServer({ world });
  await app.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
});
afterAll(() => app?.close());

describe("remote-probe and remote-chat against serve", () => {
  it("remote-probe prints what the server offers", async () => {
    const r = await runCli(["remote-probe", "--base-url", url, "--model", "human/skeptic"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("chat yes, chat log-probs yes, n > 1 yes, completions no");
    const missing = await runCli(["remote-probe", "--base-url", url, "--model", "nobody"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/has no model "nobody"; it lists "human\/skeptic"/);
  });

  it("remote-chat streams the reply (an act's text, or the VS JSON); a seed makes it reproducible", async () => {
    const plain = await runCli([
      "remote-chat",
      "--base-url",
      url,
      "--model",
      "human/skeptic",
      "--system",
      "Persona card: agreeable; caring; rational",
      "--message",
      "Hi! How are you today?",
    ]);
    expect(plain.code).toBe(0);
    expect(bench.acts.filter((x) => x.kind === "user").map((x) => x.templates[0])).toContain(
      plain.stdout.trim(),
    );
    const args = [
      "remote-chat",
      "--base-url",
      url,
      "--model",
      "human/skeptic:vs",
      "--system",
      "Persona card: agreeable; caring; rational",
      "--message",
      "Hi! How are you today?",
      "--seed",
      "5",
    ];
    const [a, b] = [await runCli(args), await runCli(args)];
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout).responses.length).toBe(config.vs.k);
    expect(a.stdout).toBe(b.stdout);
    const bad = await runCli([
      "remote-chat",
      "--base-url",
      url,
      "--model",
      "human/skeptic",
      "--message",
      "Hi! How are you today?",
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/needs the persona card/);
  });

  it("remote text loses terminal escapes and control characters", () => {
    expect(terminalSafe("\u001b[31mred\u001b[0m\u0007 ok\u001b]0;title\u0007\n\tend\u0000")).toBe(
      "red ok\n\tend",
    );
  });
});
