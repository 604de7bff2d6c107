// The LM lab's endpoint source on a fake LM server over real HTTP on 127.0.0.1 (the benchmark's
// free-text prompts, as vLLM would get them): Direct vs VS with the measures and the requests it
// cost (n in one request, or one request per reply where the server ignores n), γ scored through
// /v1/completions with echo, γ refused with the reason where the base model gives no prompt
// log-probs, a cancel, remote text rendered as text. The API key: kept per URL and dropped when the
// URL changes, sent only to its own server, and in no result, loaded-model info or page text.
// Streaming: the replies in flight show as they stream in (as text), the finished run equals the
// unstreamed one, and a stream that breaks is sent again or ends in a typed error — never a cut-off reply.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { cleanup, render, screen } from "@testing-library/svelte";
import { tick } from "svelte";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import LmPage from "../../src/app/pages/LmPage.svelte";
import { LmLabState, type CompareResult } from "../../src/app/state/lm.svelte";
import { connectEndpoint } from "../../src/app/lib/lm-endpoint";
import type { EndpointSpec, LabLanguageModel } from "../../src/app/lib/lm-contracts";
import { FakeHost } from "./lm-lab.fakes";
import { stubResizeObserver } from "./report-fixture";

stubResizeObserver();
afterEach(() => cleanup());

const KEY = "sk-endpoint-unit-5c2e8a";
const HTMLISH = "<img src=x onerror=alert(1)> I will donate $1.";
const DIRECT = [
  "I will donate $1.",
  "No thanks.",
  "Maybe $0.50 then.",
  "I will donate $2.",
  HTMLISH,
];

interface FakeServer {
  server: Server;
  url: string;
  /** Every request: path, model, Authorization header, and n asked for. */
  seen: {
    path: string;
    model?: string;
    auth?: string;
    n?: number;
    stream?: boolean;
    maxTokens?: number;
    /** The request carried a response_format (the probe's test of json_schema). */
    responseFormat?: boolean;
  }[];
  hold?: Promise<void>;
  /** While set, every streamed reply pauses after its first piece until it resolves. */
  streamGate?: Promise<void>;
  /** Streamed replies whose connection the client closed before the end. */
  cut: number;
}

const MODELS = [
  "fake-instruct",
  "fake-no-n",
  "fake-base",
  "fake-no-echo",
  "fake-stream-first",
  "fake-breaks-once",
  "fake-always-breaks",
];

/** Word-ish tokens of a text with their offsets (a space sticks to the word before it). */
const tokens = (text: string) =>
  [...text.matchAll(/\S+\s*|\s+/g)].map((m) => ({ tok: m[0], at: m.index }));

/**
 * A fake OpenAI-compatible LM: "fake-instruct" (chat: Direct replies by seed, the VS JSON for a VS
 * prompt), "fake-no-n" (returns one choice whatever n asks), "fake-base" (/completions: a reply
 * to the transcript, and echo with token offsets and log-probs), "fake-no-echo" (/completions
 * without prompt log-probs). Chat streams word by word (log-probs on a choice's first piece, as
 * serve sends them); "fake-stream-first" streams only the first of n choices, "fake-breaks-once"
 * drops the connection in the middle of a request's first stream, "fake-always-breaks" ends every
 * stream after its first piece without the closing [DONE].
 */
async function fakeServer(opts: { key?: string } = {}): Promise<FakeServer> {
  const seen: FakeServer["seen"] = [];
  const fake: Partial<FakeServer> = { seen, cut: 0 };
  const streamedBefore = new Set<string>();
  type Choice = { index: number; message: { content: string }; logprobs: unknown };
  const sse = async (res: ServerResponse, body: Record<string, unknown>, choices: Choice[]) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.on("close", () => void (!res.writableEnded && fake.cut!++));
    const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    const again = streamedBefore.has(raw(body));
    streamedBefore.add(raw(body));
    for (const c of body.model === "fake-stream-first" ? choices.slice(0, 1) : choices) {
      for (const [j, { tok }] of tokens(c.message.content).entries()) {
        send({
          choices: [
            {
              index: c.index,
              delta: { content: tok },
              logprobs: j === 0 ? c.logprobs : null,
              finish_reason: null,
            },
          ],
        });
        if (j > 0) continue;
        if (fake.streamGate) await fake.streamGate;
        if (body.model === "fake-breaks-once" && !again) return void res.destroy();
        if (body.model === "fake-always-breaks") return void res.end();
      }
      send({ choices: [{ index: c.index, delta: {}, finish_reason: "stop" }] });
    }
    res.end("data: [DONE]\n\n");
  };
  const raw = (body: Record<string, unknown>) => JSON.stringify(body);
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      void (async () => {
        const b = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
        const path = req.url!.replace(/^\/v1/, "");
        seen.push({
          path,
          model: b.model as string | undefined,
          auth: req.headers.authorization,
          n: b.n as number | undefined,
          stream: b.stream as boolean | undefined,
          maxTokens: b.max_tokens as number | undefined,
          responseFormat: b.response_format !== undefined,
        });
        if (opts.key && req.headers.authorization !== `Bearer ${opts.key}`)
          return send(res, 401, { error: { message: "bad key" } });
        if (fake.hold) await fake.hold;
        if (path === "/models") return send(res, 200, { data: MODELS.map((id) => ({ id })) });
        const n = b.model === "fake-no-n" ? 1 : ((b.n as number | undefined) ?? 1);
        const seed = (b.seed as number | undefined) ?? 0;
        if (path === "/chat/completions") {
          const messages = b.messages as { content: string }[];
          const vs = messages[0].content.includes('"responses"');
          const choices = Array.from({ length: n }, (_, i) => {
            const text = vs
              ? JSON.stringify({
                  responses: DIRECT.slice(0, 5).map((t, j) => ({
                    text: t,
                    probability: [0.4, 0.2, 0.2, 0.1, 0.1][j],
                  })),
                })
              : DIRECT[(seed + i) % DIRECT.length];
            const logprobs = b.logprobs
              ? {
                  content: [
                    { token: text, logprob: -1, top_logprobs: [{ token: text, logprob: -1 }] },
                  ],
                }
              : null;
            return {
              index: i,
              message: { role: "assistant", content: text },
              logprobs,
              finish_reason: "stop",
            };
          });
          if (b.stream) return sse(res, b, choices);
          return send(res, 200, { id: "x", model: b.model, choices });
        }
        if (path === "/completions") {
          const prompts = Array.isArray(b.prompt) ? (b.prompt as string[]) : [b.prompt as string];
          const choices = prompts.flatMap((p, pi) =>
            Array.from({ length: b.echo ? 1 : n }, (_, i) => {
              const index = b.echo ? pi : i;
              if (b.echo) {
                if (b.model === "fake-no-echo") return { index, text: p, logprobs: null };
                const t = tokens(p);
                // a token's log-prob falls with its length and position: every reply scores differently
                return {
                  index,
                  text: p,
                  logprobs: {
                    tokens: t.map((x) => x.tok),
                    token_logprobs: t.map((x, j) =>
                      j === 0 ? null : -0.05 * x.tok.length - 0.001 * j,
                    ),
                    text_offset: t.map((x) => x.at),
                  },
                };
              }
              const text = ` ${DIRECT[(seed + i) % 4]}\nPersuader: ok`;
              return {
                index,
                text,
                logprobs:
                  b.logprobs !== undefined ? { tokens: [text], token_logprobs: [-1] } : null,
              };
            }),
          );
          return send(res, 200, { id: "x", model: b.model, choices });
        }
        send(res, 404, { error: { message: `no route ${path}` } });
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  Object.assign(fake, {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
  });
  return fake as FakeServer;
}

/** A host whose endpoint models are real (src/remote/ over HTTP); nothing else is loaded. */
class EndpointHost extends FakeHost {
  readonly specs: EndpointSpec[] = [];
  constructor() {
    super({ models: [] });
  }
  connectEndpoint(spec: EndpointSpec, signal: AbortSignal): Promise<LabLanguageModel> {
    this.specs.push(spec);
    return connectEndpoint(spec, signal);
  }
}

function endpointLab(
  url: string,
  model = "fake-instruct",
  base?: { url?: string; model: string },
): { lab: LmLabState; host: EndpointHost } {
  const host = new EndpointHost();
  const lab = new LmLabState(host);
  lab.source = "endpoint";
  lab.ids.embedder = "";
  lab.setEndpointUrl("instruct", url);
  lab.endpoints.instruct.model = model;
  if (base) {
    lab.setEndpointUrl("base", base.url ?? "");
    lab.endpoints.base.model = base.model;
  }
  return { lab, host };
}

let keyed: FakeServer;
let open: FakeServer;
beforeAll(async () => {
  keyed = await fakeServer({ key: KEY });
  open = await fakeServer();
});
afterAll(async () => {
  for (const s of [keyed, open]) await new Promise((r) => s?.server.close(r));
});

describe("the LM lab on an endpoint", () => {
  it("runs Direct vs VS through the server: n in one request, or one request per reply where n is ignored", async () => {
    for (const [model, requests] of [
      ["fake-instruct", 3 + 1], // Direct 10 in batches of 4, VS 2 calls in one request
      ["fake-no-n", 10 + 2], // one request per reply
    ] as const) {
      const { lab } = endpointLab(open.url, model);
      lab.n = 10;
      lab.k = 5;
      expect(await lab.load()).toBe(true);
      expect(lab.loaded.instruct).toMatchObject({
        device: "remote",
        endpoint: { baseUrl: open.url, model, actTexts: false },
      });
      expect(lab.loaded.instruct!.endpoint!.capabilities.n).toBe(model === "fake-instruct");
      const r = (await lab.runCompare())!;
      expect(r.status, JSON.stringify(lab.error)).toBe("done");
      expect(r.direct.map((x) => x.text)).toEqual(
        Array.from({ length: 10 }, (_, i) => DIRECT[(1 + i) % 5]),
      ); // seed 1, 2, …
      expect(r.vs.map((c) => c.candidates.length)).toEqual([5, 5]);
      expect(r.measures!.direct.count).toBe(10);
      expect(r.measures!.vsAll.outcomes.parsed).toBeGreaterThan(0);
      expect(r.requests).toBe(requests);
    }
  });

  it("fits γ with the base model's echoed log-probs; refuses it, saying why, where the base model gives none", async () => {
    const { lab } = endpointLab(open.url, "fake-instruct", { model: "fake-base" });
    lab.gammaSamples = 4;
    lab.gammaAllStates = false;
    expect(await lab.load()).toBe(true);
    expect(lab.loaded.base!.endpoint!.capabilities.echoLogprobs).toBe(true);
    const g = (await lab.runGamma())!;
    expect(g.status, JSON.stringify(lab.error)).toBe("done");
    expect(g.report!.samples).toBe(4);
    expect(open.seen.some((s) => s.path === "/completions" && s.model === "fake-base")).toBe(true);

    const none = endpointLab(open.url, "fake-instruct", { model: "fake-no-echo" }).lab;
    expect(await none.load()).toBe(true);
    expect(await none.runGamma()).toBeNull();
    expect(none.error).toMatchObject({ title: "No log-probs", job: "gamma" });
    expect(none.error!.message).toMatch(
      /gives no prompt log-probs .* so γ is not computed rather than computed wrong/,
    );
  });

  it("keeps each key with its URL: sent only there, dropped when the URL changes, in no result", async () => {
    const { lab, host } = endpointLab(keyed.url, "fake-instruct", {
      url: open.url,
      model: "fake-base",
    });
    lab.setApiKey("instruct", KEY);
    expect(lab.endpointSpec("instruct").apiKey).toBe(KEY);
    expect(lab.endpointSpec("base").apiKey).toBeUndefined(); // another server
    lab.setEndpointUrl("base", "");
    expect(lab.endpointSpec("base")).toEqual({
      baseUrl: keyed.url,
      model: "fake-base",
      apiKey: KEY,
    }); // the simulator's server, its key
    lab.setEndpointUrl("base", open.url);

    open.seen.length = 0;
    lab.n = 4;
    lab.k = 2;
    expect(await lab.load()).toBe(true);
    expect((await lab.runCompare())!.status).toBe("done");
    expect(keyed.seen.length).toBeGreaterThan(0);
    expect(keyed.seen.every((s) => s.auth === `Bearer ${KEY}`)).toBe(true);
    expect(open.seen.length).toBeGreaterThan(0);
    expect(open.seen.every((s) => s.auth === undefined)).toBe(true);
    for (const x of [
      lab.compare,
      lab.loaded,
      lab.error,
      lab.notice,
      host.specs.map((s) => s.baseUrl),
    ])
      expect(JSON.stringify(x) ?? "").not.toContain(KEY);

    // typing another URL drops the key, with a note; the old key is not sent there
    lab.setEndpointUrl("instruct", open.url);
    expect(lab.apiKey("instruct")).toBe("");
    expect(lab.keyNote).toMatch(/was cleared/);
    expect(lab.endpointSpec("instruct").apiKey).toBeUndefined();
    // a wrong key is a readable error
    lab.setEndpointUrl("instruct", keyed.url);
    lab.setApiKey("instruct", "sk-wrong-0000");
    expect(await lab.load()).toBe(false);
    expect(lab.error).toMatchObject({ title: "Not authorised", job: "load" });
    expect(lab.error!.message).not.toContain("sk-wrong-0000");
  });

  it("a cancel during a run is a notice; remote text renders as text, the key field as a password", async () => {
    const { lab } = endpointLab(open.url);
    lab.n = 5;
    lab.k = 5;
    expect(await lab.load()).toBe(true);
    let release!: () => void;
    open.hold = new Promise<void>((r) => (release = r));
    const run = lab.runCompare();
    await new Promise((r) => setTimeout(r, 50));
    lab.cancel();
    const cancelled = (await run)!;
    release();
    open.hold = undefined;
    expect(cancelled.status).toBe("cancelled");
    expect(lab.notice?.text).toBe("The Direct vs VS run was cancelled.");
    expect(lab.error).toBeNull();

    lab.seed = 4; // the first Direct reply is the HTML-looking one
    expect((await lab.runCompare())!.status).toBe("done");
    render(LmPage, { lab });
    await tick();
    const direct = screen.getByTestId("direct-replies");
    expect(direct.textContent).toContain(HTMLISH);
    expect(direct.querySelector("img")).toBeNull();
    expect((screen.getByTestId("endpoint-key-instruct") as HTMLInputElement).type).toBe("password");
    expect(screen.getByTestId("caps-instruct").textContent).toContain(
      `${open.url}: model fake-instruct`,
    );
  });

  describe("streamed", () => {
    /** A host whose models never stream: the unstreamed run to compare with. */
    class UnstreamedHost extends EndpointHost {
      override async connectEndpoint(
        spec: EndpointSpec,
        signal: AbortSignal,
      ): Promise<LabLanguageModel> {
        const m = await super.connectEndpoint(spec, signal);
        return {
          id: m.id,
          info: m.info,
          generate: (p, o, c) => m.generate(p, o, { signal: c?.signal }),
          score: (p, c, ctl) => m.score(p, c, ctl),
          requestCount: () => m.requestCount!(),
        };
      }
    }
    const comparable = (r: CompareResult) => ({ ...r, seconds: null });

    async function run(model: string, host: EndpointHost): Promise<CompareResult> {
      const lab = new LmLabState(host);
      lab.source = "endpoint";
      lab.ids.embedder = "";
      lab.setEndpointUrl("instruct", open.url);
      lab.endpoints.instruct.model = model;
      lab.n = 10;
      lab.k = 5;
      expect(await lab.load()).toBe(true);
      const r = (await lab.runCompare())!;
      expect(r.status, JSON.stringify(lab.error)).toBe("done");
      return r;
    }

    it("gives the same replies, outcomes, measures and request count as the unstreamed run", async () => {
      for (const model of ["fake-instruct", "fake-no-n"]) {
        open.seen.length = 0;
        const streamed = await run(model, new EndpointHost());
        expect(open.seen.filter((s) => s.path === "/chat/completions" && s.stream).length).toBe(
          model === "fake-instruct" ? 4 : 12,
        );
        const plain = await run(model, new UnstreamedHost());
        expect(comparable(streamed)).toEqual(comparable(plain));
        expect(streamed.direct.every((r) => r.tokens === 1)).toBe(true); // the streamed log-probs were read
      }
    });

    it("shows the replies in flight as they stream in, as text; the page's live rows give way to the finished replies", async () => {
      const { lab } = endpointLab(open.url);
      lab.n = 5;
      lab.k = 5;
      lab.seed = 4; // the first Direct reply is the HTML-looking one
      expect(await lab.load()).toBe(true);
      let release!: () => void;
      open.streamGate = new Promise<void>((r) => (release = r));
      const running = lab.runCompare();
      render(LmPage, { lab });
      await vi.waitFor(() => expect(lab.live?.texts[0]).toBeTruthy(), {
        timeout: 20_000,
        interval: 20,
      });
      expect(lab.live).toMatchObject({ side: "direct", first: 0 });
      const partial = lab.live!.texts[0];
      expect(HTMLISH.startsWith(partial) && partial.length < HTMLISH.length).toBe(true); // "<img "
      await tick();
      const rows = screen.getAllByTestId("live-reply");
      expect(rows).toHaveLength(4); // the batch in flight
      expect(rows[0].textContent).toContain(partial.trim());
      expect(rows[0].textContent).toContain("writing");
      expect(screen.getByTestId("direct-replies").querySelector("img")).toBeNull();
      expect(lab.compare!.direct).toHaveLength(0); // nothing counted before it is whole
      release();
      open.streamGate = undefined;
      const r = (await running)!;
      expect(r.status).toBe("done");
      expect(r.direct[0].text).toBe(HTMLISH);
      expect(lab.live).toBeNull();
      await tick();
      expect(screen.queryAllByTestId("live-reply")).toHaveLength(0);
      expect(screen.getByTestId("direct-replies").textContent).toContain(HTMLISH);
      expect(screen.getByTestId("direct-replies").querySelector("img")).toBeNull();
    });

    it("a cancel mid-stream closes the stream and counts nothing of it", async () => {
      const { lab } = endpointLab(open.url);
      lab.n = 4;
      lab.k = 4;
      expect(await lab.load()).toBe(true);
      let release!: () => void;
      open.streamGate = new Promise<void>((r) => (release = r));
      const cut = open.cut;
      const running = lab.runCompare();
      await vi.waitFor(() => expect(lab.live?.texts[0]).toBeTruthy(), {
        timeout: 20_000,
        interval: 20,
      });
      lab.cancel();
      const r = (await running)!;
      expect(r.status).toBe("cancelled");
      expect(r.direct).toHaveLength(0);
      expect(lab.live).toBeNull();
      await vi.waitFor(() => expect(open.cut).toBe(cut + 1), { timeout: 20_000, interval: 20 });
      release();
      open.streamGate = undefined;
    });

    it("asks again unstreamed where the stream brings fewer choices than n, and resends a stream that broke; the replies are the unstreamed run's", async () => {
      const plain = await run("fake-instruct", new UnstreamedHost());
      open.seen.length = 0;
      const firstOnly = await run("fake-stream-first", new EndpointHost());
      expect(firstOnly.direct).toEqual(plain.direct);
      expect(firstOnly.vs).toEqual(plain.vs);
      // the probe's requests ask for one token or a response_format; each of the run's 4 requests went again unstreamed
      expect(
        open.seen.filter(
          (s) =>
            s.path === "/chat/completions" && !s.stream && s.maxTokens! > 1 && !s.responseFormat,
        ),
      ).toHaveLength(4);

      open.seen.length = 0;
      const broken = await run("fake-breaks-once", new EndpointHost());
      expect(broken.direct).toEqual(plain.direct);
      expect(broken.vs).toEqual(plain.vs);
      const streams = open.seen.filter((s) => s.path === "/chat/completions" && s.stream).length;
      expect(streams).toBe(2 * 4); // every one of the 4 requests sent twice
    });

    it("a stream that keeps breaking ends in a typed error, with no cut-off reply counted", async () => {
      const { lab } = endpointLab(open.url, "fake-always-breaks");
      lab.n = 5;
      lab.k = 5;
      expect(await lab.load()).toBe(true);
      const r = (await lab.runCompare())!;
      expect(r.status).toBe("error");
      expect(lab.error).toMatchObject({ title: "Unreadable reply", job: "compare" });
      expect(lab.error!.message).toMatch(/the stream ended without its closing \[DONE\] event/);
      expect(r.direct).toHaveLength(0);
      expect(r.measures).toBeNull();
      expect(lab.live).toBeNull();
    });
  });
});
