// The LM lab's endpoint source on a fake LM server over real HTTP on 127.0.0.1 (the benchmark's
// free-text prompts, as vLLM would get them): Direct vs VS with the measures and the requests it
// cost (n in one request, or one request per reply where the server ignores n), γ scored through
// /v1/completions with echo, γ refused with the reason where the base model gives no prompt
// log-probs, a cancel, remote text rendered as text. The API key: kept per URL and dropped when the
// URL changes, sent only to its own server, and in no result, loaded-model info or page text.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { cleanup, render, screen } from "@testing-library/svelte";
import { tick } from "svelte";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import LmPage from "../../src/app/pages/LmPage.svelte";
import { LmLabState, type LabLanguageModel } from "../../src/app/state/lm.svelte";
import { connectEndpoint, type EndpointSpec } from "../../src/app/lib/lm-endpoint";
import { FakeHost } from "./lm-lab.fakes";
import { stubResizeObserver } from "./report-fixture";

stubResizeObserver();
afterEach(() => cleanup());

const KEY = "sk-endpoint-unit-5c2e8a";
const HTMLISH = "<img src=x onerror=alert(1)> I will donate $1.";
const DIRECT = ["I will donate $1.", "No thanks.", "Maybe $0.50 then.", "I will donate $2.", HTMLISH];

interface FakeServer {
  server: Server;
  url: string;
  /** Every request: path, model, Authorization header, and n asked for. */
  seen: { path: string; model?: string; auth?: string; n?: number }[];
  hold?: Promise<void>;
}

/** Word-ish tokens of a text with their offsets (a space sticks to the word before it). */
const tokens = (text: string) => [...text.matchAll(/\S+\s*|\s+/g)].map((m) => ({ tok: m[0], at: m.index }));

/**
 * A fake OpenAI-compatible LM: "fake-instruct" (chat: Direct replies by seed, the VS JSON for a VS
 * prompt), "fake-no-n" (returns one choice whatever n asks), "fake-base" (/completions: a reply
 * to the transcript, and echo with token offsets and log-probs), "fake-no-echo" (/completions
 * without prompt log-probs).
 */
async function fakeServer(opts: { key?: string } = {}): Promise<FakeServer> {
  const seen: FakeServer["seen"] = [];
  const fake: Partial<FakeServer> = { seen };
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
        seen.push({ path, model: b.model as string | undefined, auth: req.headers.authorization, n: b.n as number | undefined });
        if (opts.key && req.headers.authorization !== `Bearer ${opts.key}`) return send(res, 401, { error: { message: "bad key" } });
        if (fake.hold) await fake.hold;
        if (path === "/models") return send(res, 200, { data: ["fake-instruct", "fake-no-n", "fake-base", "fake-no-echo"].map((id) => ({ id })) });
        const n = b.model === "fake-no-n" ? 1 : ((b.n as number | undefined) ?? 1);
        const seed = (b.seed as number | undefined) ?? 0;
        if (path === "/chat/completions") {
          const messages = b.messages as { content: string }[];
          const vs = messages[0].content.includes('"responses"');
          const choices = Array.from({ length: n }, (_, i) => {
            const text = vs ? JSON.stringify({ responses: DIRECT.slice(0, 5).map((t, j) => ({ text: t, probability: [0.4, 0.2, 0.2, 0.1, 0.1][j] })) }) : DIRECT[(seed + i) % DIRECT.length];
            const logprobs = b.logprobs ? { content: [{ token: text, logprob: -1, top_logprobs: [{ token: text, logprob: -1 }] }] } : null;
            return { index: i, message: { role: "assistant", content: text }, logprobs, finish_reason: "stop" };
          });
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
                  logprobs: { tokens: t.map((x) => x.tok), token_logprobs: t.map((x, j) => (j === 0 ? null : -0.05 * x.tok.length - 0.001 * j)), text_offset: t.map((x) => x.at) },
                };
              }
              const text = ` ${DIRECT[(seed + i) % 4]}\nPersuader: ok`;
              return { index, text, logprobs: b.logprobs !== undefined ? { tokens: [text], token_logprobs: [-1] } : null };
            }),
          );
          return send(res, 200, { id: "x", model: b.model, choices });
        }
        send(res, 404, { error: { message: `no route ${path}` } });
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  Object.assign(fake, { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
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

function endpointLab(url: string, model = "fake-instruct", base?: { url?: string; model: string }): { lab: LmLabState; host: EndpointHost } {
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
      expect(lab.loaded.instruct).toMatchObject({ device: "remote", endpoint: { baseUrl: open.url, model, actTexts: false } });
      expect(lab.loaded.instruct!.endpoint!.capabilities.n).toBe(model === "fake-instruct");
      const r = (await lab.runCompare())!;
      expect(r.status, JSON.stringify(lab.error)).toBe("done");
      expect(r.direct.map((x) => x.text)).toEqual(Array.from({ length: 10 }, (_, i) => DIRECT[(1 + i) % 5])); // seed 1, 2, …
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
    expect(none.error!.message).toMatch(/gives no prompt log-probs .* so γ is not computed rather than computed wrong/);
  });

  it("keeps each key with its URL: sent only there, dropped when the URL changes, in no result", async () => {
    const { lab, host } = endpointLab(keyed.url, "fake-instruct", { url: open.url, model: "fake-base" });
    lab.setApiKey("instruct", KEY);
    expect(lab.endpointSpec("instruct").apiKey).toBe(KEY);
    expect(lab.endpointSpec("base").apiKey).toBeUndefined(); // another server
    lab.setEndpointUrl("base", "");
    expect(lab.endpointSpec("base")).toEqual({ baseUrl: keyed.url, model: "fake-base", apiKey: KEY }); // the simulator's server, its key
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
    for (const x of [lab.compare, lab.loaded, lab.error, lab.notice, host.specs.map((s) => s.baseUrl)]) expect(JSON.stringify(x) ?? "").not.toContain(KEY);

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
    expect(screen.getByTestId("caps-instruct").textContent).toContain(`${open.url}: model fake-instruct`);
  });
});
