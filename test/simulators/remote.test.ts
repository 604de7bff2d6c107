// The remote simulator over real HTTP on 127.0.0.1: against `serve` (human types, exact
// distributions known in closed form) it scores states by log-probs exactly, by sampled replies
// approximately, and by VS candidates; behind a proxy that misbehaves on purpose (no log-probs,
// replies that say no act, 500 and 429) it falls back or retries and counts what it did; with the
// text protocol it scores act labels from /completions' echoed log-probs of a fake vLLM-like server
// and classifies free-text replies.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { benchmarkFor, benchmarkModule } from "../../src/benchmarks/registry";
import type { Dialogue } from "../../src/benchmarks/types";
import { presetConfig } from "../../src/experiment/presets";
import { buildServer } from "../../src/serve/server";
import type { ServedWorld } from "../../src/serve/models";
import { RemoteClient } from "../../src/remote/client";
import { RemoteSimulator } from "../../src/simulators/remote";
import { RemoteError } from "../../src/remote/errors";
import { RemoteLanguageModel } from "../../src/remote/remote-lm";
import { LmSimulator } from "../../src/simulators/lm";

const config = presetConfig("persuasion-smoke");
const bench = benchmarkFor(config);
const V = bench.acts.length;
const act = (n: string) => bench.acts.findIndex((a) => a.name === n);
const card = bench.humans.cardDistribution()[3].card;
const states: Dialogue[] = [
  { card, acts: [act("greeting")] },
  { card, acts: [act("greeting"), act("agree"), act("emotion")] },
  { card, acts: [act("greeting"), act("neutral"), act("ask")] },
];

/** A served world of the human types alone: no engine, exact distributions. */
const world: ServedWorld = {
  bench,
  names: { agent: "Persuader", user: "Persuadee" },
  models: bench.humans.types.map((t, i) => ({
    id: `human/${t.name}`,
    description: t.name,
    side: "user" as const,
    distribution: async (ds: Dialogue[]) => {
      const out = new Float64Array(ds.length * V);
      ds.forEach((d, b) => out.set(bench.humans.replyProbs(i, d), b * V));
      return out;
    },
  })),
  defaultCard: card,
  vs: config.vs,
  source: "test",
  dispose: () => {},
};
const type0 = `human/${bench.humans.types[0].name}`;
const exact = (d: Dialogue) => bench.humans.replyProbs(0, d);

let app: FastifyInstance;
let serveUrl: string;
let proxy: Server;
let proxyUrl: string;
/** What the proxy does to each chat reply (the JSON body), per request number; default: pass it on. */
let mangle: (
  n: number,
  body: Record<string, unknown>,
) => { status?: number; headers?: Record<string, string>; body: unknown } = (_n, body) => ({
  body,
});
let proxied = 0;

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1`;
};

beforeAll(async () => {
  app = buildServer({ world });
  await app.listen({ port: 0, host: "127.0.0.1" });
  serveUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
  proxy = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", async () => {
      const upstream = await fetch(serveUrl + req.url!.replace(/^\/v1/, ""), {
        method: req.method,
        headers: { "content-type": "application/json" },
        body: req.method === "POST" ? body : undefined,
      });
      const json = (await upstream.json()) as Record<string, unknown>;
      const out = req.url!.endsWith("/chat/completions") ? mangle(proxied++, json) : { body: json };
      res.writeHead(out.status ?? upstream.status, {
        "content-type": "application/json",
        ...out.headers,
      });
      res.end(JSON.stringify(out.body));
    });
  });
  proxyUrl = await listen(proxy);
});
afterAll(async () => {
  await app?.close();
  await new Promise<void>((r) => proxy.close(() => r()));
});

const sim = (
  baseUrl: string,
  opts: Partial<ConstructorParameters<typeof RemoteSimulator>[2]> = {},
) =>
  new RemoteSimulator(bench, new RemoteClient({ baseUrl, retries: 3, backoffMs: 5 }), {
    model: type0,
    ...opts,
  });

describe("RemoteSimulator against collapse-lab serve", () => {
  it("scores a state from log-probs exactly, once per state", async () => {
    const s = sim(serveUrl);
    const p = await s.distribution([...states, states[0]]);
    states.forEach((d, b) => {
      const want = exact(d);
      for (let a = 0; a < V; a++) expect(p[b * V + a]).toBeCloseTo(want[a], 12);
    });
    await s.distribution(states); // cached: no more requests
    expect(s.stats).toMatchObject({
      scoring: "logprobs",
      states: 3,
      requests: 3,
      logprobStates: 3,
      fallbacks: 0,
      unmapped: 0,
    });
  });

  it("estimates a state from n sampled replies when asked to sample", async () => {
    const s = sim(serveUrl, { scoring: "sample", samples: 400 });
    const p = await s.distribution(states);
    states.forEach((d, b) => {
      const want = exact(d);
      for (let a = 0; a < V; a++) expect(Math.abs(p[b * V + a] - want[a])).toBeLessThan(0.1);
    });
    expect(s.stats).toMatchObject({
      scoring: "sample",
      sampledStates: 3,
      replies: 1200,
      unmapped: 0,
      requests: 21,
    }); // n ≤ 64 a request, 7 a state
  });

  it("VS reads the served :vs candidates with the project's parser", async () => {
    // by stated probability, the merged candidates give back q over the listed acts
    const s = sim(serveUrl, { mode: "vs", k: 60, selection: "prob" });
    const p = await s.distribution([states[1]]);
    const want = exact(states[1]);
    for (let a = 0; a < V; a++) {
      if (want[a] === 0) expect(p[a]).toBe(0);
      else expect(Math.abs(p[a] - want[a])).toBeLessThan(0.05);
    }
    expect(s.stats.scoring).toBe("vs");
    expect(s.stats.unmapped).toBe(0);
  });
});

describe("RemoteSimulator behind a proxy that misbehaves", () => {
  it("falls back to sampling when the replies carry no log-probs, and counts it", async () => {
    mangle = (_n, body) => {
      for (const c of body.choices as { logprobs?: unknown }[]) delete c.logprobs;
      return { body };
    };
    const s = sim(proxyUrl, { samples: 64 });
    const p = await s.distribution(states);
    for (let b = 0; b < states.length; b++)
      expect(p.subarray(b * V, (b + 1) * V).reduce((x, y) => x + y, 0)).toBeCloseTo(1, 12);
    expect(s.stats).toMatchObject({
      scoring: "sample",
      fallbacks: 3,
      logprobStates: 0,
      sampledStates: 3,
      replies: 192,
    });
    await s.distribution([{ card, acts: [act("emotion")] }]); // later states sample straight away
    expect(s.stats).toMatchObject({ fallbacks: 3, sampledStates: 4 });
  });

  it("with scoring logprobs, missing log-probs are an error, not a guess", async () => {
    const e = await sim(proxyUrl, { scoring: "logprobs" })
      .distribution([states[0]])
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RemoteError);
    expect((e as RemoteError).kind).toBe("no-logprobs");
  });

  it("counts replies that say no allowed act, and never uses them", async () => {
    mangle = (_n, body) => {
      (body.choices as { message: { content: string } }[]).forEach((c, i) => {
        if (i % 4 === 0) c.message.content = "Banana.";
      });
      return { body };
    };
    const s = sim(proxyUrl, { scoring: "sample", samples: 40 });
    await s.distribution([states[0]]);
    expect(s.stats).toMatchObject({ replies: 40, unmapped: 10, unmappedStates: 0 });
    mangle = (_n, body) => {
      for (const c of body.choices as { message: { content: string } }[])
        c.message.content = "Banana.";
      return { body };
    };
    const t = sim(proxyUrl, { scoring: "sample", samples: 8 });
    const p = await t.distribution([states[0]]);
    const allowed = [...p].filter((x) => x > 0);
    expect(new Set(allowed).size).toBe(1); // uniform over the allowed acts, and said so:
    expect(t.stats).toMatchObject({ replies: 8, unmapped: 8, unmappedStates: 1 });
  });

  it("retries 500 and 429 (Retry-After) and still gives the exact numbers", async () => {
    mangle = (n, body) =>
      n === 0
        ? { status: 500, body: { error: { message: "boom" } } }
        : n === 1
          ? { status: 429, headers: { "retry-after": "0" }, body: { error: { message: "busy" } } }
          : { body };
    proxied = 0;
    const s = sim(proxyUrl);
    const p = await s.distribution([states[2]]);
    const want = exact(states[2]);
    for (let a = 0; a < V; a++) expect(p[a]).toBeCloseTo(want[a], 12);
    expect(s.stats).toMatchObject({ scoring: "logprobs", requests: 3, retries: 2 });
    mangle = (_n, body) => ({ body });
  });
});

describe("RemoteSimulator with the text protocol (a fake vLLM-like server)", () => {
  /** A token's log-prob: a fixed function of the token and where it stands. */
  const tokenLp = (tok: string, at: number) => {
    let h = 2166136261 ^ at;
    for (const ch of tok) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    return -0.2 - 5 * ((h >>> 0) / 2 ** 32);
  };
  const tokenize = (text: string) =>
    [...text.matchAll(/\s?\S+|\s+/g)].map((m) => ({ tok: m[0], at: m.index }));
  let fake: Server;
  let fakeUrl: string;
  let chatReplies: string[] = [];

  beforeAll(async () => {
    fake = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const b = JSON.parse(body) as {
          model: string;
          prompt?: string | string[];
          n?: number;
          prompt_logprobs?: number;
        };
        res.writeHead(200, { "content-type": "application/json" });
        if (req.url === "/v1/completions") {
          // model "fake-vllm": echo without offsets, but vLLM's prompt_logprobs
          const vllm = b.model === "fake-vllm";
          const choices = (typeof b.prompt === "string" ? [b.prompt] : b.prompt!).map(
            (text, index) => {
              const toks = tokenize(text);
              if (vllm && b.prompt_logprobs !== undefined)
                return {
                  index,
                  text: " x",
                  logprobs: null,
                  prompt_logprobs: [
                    null,
                    ...toks.slice(1).map((t, j) => ({
                      [String(100 + j)]: {
                        logprob: tokenLp(t.tok, t.at),
                        rank: 1,
                        decoded_token: t.tok,
                      },
                    })),
                  ],
                };
              return {
                index,
                text: text + " x",
                logprobs: {
                  tokens: [...toks.map((t) => t.tok), " x"],
                  token_logprobs: [null, ...toks.slice(1).map((t) => tokenLp(t.tok, t.at)), -1],
                  ...(vllm ? {} : { text_offset: [...toks.map((t) => t.at), text.length] }),
                },
              };
            },
          );
          res.end(JSON.stringify({ id: "cmpl", model: "fake", choices }));
        } else {
          res.end(
            JSON.stringify({
              id: "chat",
              model: "fake",
              choices: Array.from({ length: b.n ?? 1 }, (_, i) => ({
                index: i,
                message: { role: "assistant", content: chatReplies[i % chatReplies.length] },
              })),
            }),
          );
        }
      });
    });
    fakeUrl = await listen(fake);
  });
  afterAll(() => new Promise<void>((r) => fake.close(() => r())));

  it.each(["fake", "fake-vllm"])(
    "scores each act label from the prompt log-probs (%s: echo, else prompt_logprobs), all labels in one request",
    async (model) => {
      const s = new RemoteSimulator(bench, new RemoteClient({ baseUrl: fakeUrl }), {
        model,
        protocol: "text",
      });
      const d = states[1];
      const p = await s.distribution([d]);
      const { prompt, acts, continuations } = benchmarkModule("persuasion").lm!.actLabelPrompt(
        d,
        "text",
      );
      const text = (prompt as { text: string }).text;
      const scores = continuations.map((c) =>
        tokenize(text + c)
          .filter((t) => t.at >= text.length)
          .reduce((sum, t) => sum + tokenLp(t.tok, t.at), 0),
      );
      const z = scores.reduce((a, x) => a + Math.exp(x), 0);
      acts.forEach((a, i) => expect(p[a]).toBeCloseTo(Math.exp(scores[i]) / z, 12));
      expect(s.stats).toMatchObject({ requests: model === "fake" ? 1 : 2, logprobStates: 1 }); // vLLM's: echo tried once, then prompt_logprobs
    },
  );

  it("RemoteLanguageModel: the lm tier's LanguageModel over the same server (LmSimulator gives the same numbers)", async () => {
    const lm = new RemoteLanguageModel(new RemoteClient({ baseUrl: fakeUrl }), "fake");
    const d = states[0];
    const viaLm = await new LmSimulator(bench, lm, { promptStyle: "text" }).distribution([d]);
    const viaRemote = await new RemoteSimulator(bench, new RemoteClient({ baseUrl: fakeUrl }), {
      model: "fake",
      protocol: "text",
    }).distribution([d]);
    for (let a = 0; a < V; a++) expect(viaLm[a]).toBeCloseTo(viaRemote[a], 14);
    await expect(lm.score({ chat: [{ role: "user", content: "x" }] }, ["a"])).rejects.toThrow(
      /needs the model's chat template/,
    );
    chatReplies = ["Okay."];
    const g = await lm.generate({ chat: [{ role: "user", content: "x" }] }, { n: 2, seed: 1 });
    expect(g.map((x) => x.text)).toEqual(["Okay.", "Okay."]);
    const t = await lm.generate({ text: "Hello there" });
    expect(t[0].text).toBe("Hello there x");
  });

  it("classifies free-text replies: stated donations to the nearest amount, talk by its label's words", async () => {
    const s = new RemoteSimulator(bench, new RemoteClient({ baseUrl: fakeUrl }), {
      model: "fake",
      protocol: "text",
      scoring: "sample",
      samples: 4,
    });
    chatReplies = [
      "Fine, I'll give $1.50 to them.",
      "Nothing from me, $0.",
      "Hmm, let me think about it.",
      "I can do $2.",
    ];
    const decision = states[2];
    const p = await s.distribution([decision]);
    const amount = (n: string) => p[act(n)];
    expect([amount("$1.5"), amount("$0"), amount("$2")]).toEqual([1 / 3, 1 / 3, 1 / 3]); // the unmapped reply is not used
    expect(s.stats).toMatchObject({ replies: 4, unmapped: 1 });
    chatReplies = ["Money is tight for me right now, sorry.", "Blue whales are large."];
    const t = new RemoteSimulator(bench, new RemoteClient({ baseUrl: fakeUrl }), {
      model: "fake",
      protocol: "text",
      scoring: "sample",
      samples: 2,
    });
    const q = await t.distribution([states[0]]);
    expect(q[act("object-cost")]).toBe(1);
    expect(t.stats).toMatchObject({ replies: 2, unmapped: 1 });
  });
});

describe("RemoteSimulator on the Service benchmark (world moves in the chat)", () => {
  it("scores Service states exactly through serve, card and [Ticket] messages included", async () => {
    const sc = presetConfig("service-smoke");
    const sb = benchmarkFor(sc);
    const SV = sb.acts.length;
    const types = sb.humans.types;
    const svcWorld: ServedWorld = {
      bench: sb,
      names: { agent: "Agent", user: "Customer" },
      models: [
        {
          id: "human/0",
          description: types[0].name,
          side: "user",
          distribution: async (ds) => {
            const out = new Float64Array(ds.length * SV);
            ds.forEach((d, b) => out.set(sb.humans.replyProbs(0, d), b * SV));
            return out;
          },
        },
      ],
      defaultCard: sb.humans.cardDistribution()[0].card,
      vs: sc.vs,
      source: "test",
      dispose: () => {},
    };
    const svc = buildServer({ world: svcWorld });
    await svc.listen({ port: 0, host: "127.0.0.1" });
    try {
      const url = `http://127.0.0.1:${(svc.server.address() as AddressInfo).port}/v1`;
      const client = new RemoteClient({ baseUrl: url });
      const example = (await client.models()).find((m) => m.id === "human/0")!.example_messages!;
      expect(example[1].content).toMatch(/^\[Ticket\]/);
      const caps = await client.probe("human/0");
      expect(caps).toMatchObject({ chat: true, chatLogprobs: true, n: true });
      const s = new RemoteSimulator(sb, client, { model: "human/0" });
      const { exampleDialogue } = await import("../../src/simulators/act-text");
      const d = exampleDialogue(sb, "user");
      const p = await s.distribution([d]);
      const want = sb.humans.replyProbs(0, d);
      for (let a = 0; a < SV; a++) expect(p[a]).toBeCloseTo(want[a], 12);
    } finally {
      await svc.close();
    }
  });
});
