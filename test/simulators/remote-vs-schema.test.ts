// The remote VS simulator with the text protocol over real HTTP on 127.0.0.1 (`serve` with fake text
// models): against a server that honours response_format json_schema it asks once (the probe's
// test) and then sends every VS call the VS schema with room for its longest reply, and reads the
// constrained candidates into the state's distribution; against one that ignores the format it
// sends none, as before.
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { benchmarkFor, benchmarkModule } from "../../src/benchmarks/registry";
import type { Dialogue } from "../../src/benchmarks/types";
import { presetConfig } from "../../src/experiment/presets";
import { vsConstrainedMaxTokens, vsJsonSchema } from "../../src/lm/vs-schema";
import { RemoteClient } from "../../src/remote/client";
import type { ServedTextModel, TextSampling } from "../../src/serve/gguf";
import { buildServer } from "../../src/serve/server";
import { RemoteSimulator } from "../../src/simulators/remote";

const bench = benchmarkFor(presetConfig("persuasion-smoke"));
const lm = benchmarkModule("persuasion").lm!;
const K = 3;

/** Writes the probe's answer or K VS candidates stating donations when asked for JSON; words otherwise. */
function fakeText(id: string, honours: boolean, seen: TextSampling[]): ServedTextModel {
  const write = (s: TextSampling) => {
    if (!honours || s.format?.type !== "json_schema") return "I am not sure, honestly.";
    if ("answer" in (s.format.schema.properties as object)) return '{"answer":"yes"}';
    const texts = ["I'll give $2.", "I'll give $2.", "I'll give $0."];
    return JSON.stringify({ responses: texts.map((text) => ({ text, probability: 0.3 })) });
  };
  return {
    id,
    description: id,
    runtime: "test",
    contextSize: 4096,
    async chat(_messages, s) {
      seen.push(s);
      return {
        promptTokens: 3,
        choices: [{ text: write(s), finish: "stop" as const, tokens: 4, logprobs: null }],
      };
    },
    async dispose() {},
  };
}

const honoured: TextSampling[] = [];
const ignored: TextSampling[] = [];
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  app = buildServer({
    textModels: [fakeText("constrains", true, honoured), fakeText("ignores", false, ignored)],
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
});
afterAll(() => app?.close());

// the two states where a donation is due: the VS candidates' donations map to the decision acts
const decisions: Dialogue[] = lm.states
  .map((s) => ({
    card: [...lm.cards[0].card],
    acts: s.acts.map((n) => bench.acts.findIndex((a) => a.name === n)),
  }))
  .filter((d) => lm.decisionDue(d))
  .slice(0, 2);

const simulator = (model: string) =>
  new RemoteSimulator(bench, new RemoteClient({ baseUrl, retries: 0 }), {
    model,
    mode: "vs",
    protocol: "text",
    k: K,
    selection: "prob",
  });

describe("the remote VS simulator and response_format", () => {
  it("sends the VS schema to a server that honours it, after one test, and reads the candidates", async () => {
    expect(decisions).toHaveLength(2);
    const sim = simulator("constrains");
    const p = await sim.distribution(decisions);
    const formats = honoured.map((s) => s.format);
    expect(formats).toHaveLength(3); // the probe's test, then one VS call per state
    expect(formats[0]).toMatchObject({
      type: "json_schema",
      schema: { properties: { answer: expect.anything() } },
    });
    const vs = { type: "json_schema", schema: vsJsonSchema(K, 64).schema };
    expect(formats.slice(1)).toEqual([vs, vs]);
    expect(honoured.slice(1).every((s) => s.maxTokens === vsConstrainedMaxTokens(K, 64))).toBe(
      true,
    );
    // each state's row: the candidates' donations, by stated probability ($2 twice, merged: 0.6; $0: 0.3)
    const V = bench.acts.length;
    const row = [...p.slice(0, V)].filter((x) => x > 0).sort();
    expect(row).toHaveLength(2);
    expect(row[0]).toBeCloseTo(1 / 3, 12);
    expect(row[1]).toBeCloseTo(2 / 3, 12);
    expect(sim.stats.unmappedStates).toBe(0);
  });

  it("sends no format to a server that ignores it", async () => {
    await simulator("ignores").distribution(decisions);
    expect(ignored.map((s) => s.format)).toEqual([
      { type: "json_schema", schema: expect.objectContaining({ type: "object" }) }, // the test
      null,
      null,
    ]);
    expect(ignored.slice(1).every((s) => s.maxTokens === 64 * K)).toBe(true);
  });
});
