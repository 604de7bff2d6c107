// The remote client against a server that misbehaves on purpose (node:http on 127.0.0.1): 429
// with Retry-After, 500, dropped connections, slow replies past the timeout, truncated JSON, a
// reply in no known format, missing log-probs, 401, 404. Each must end in a retry that succeeds
// or a typed RemoteError with a readable message — never a crash or a silently wrong number.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RemoteClient, retryAfterMs } from "../../src/remote/client";
import { RemoteError } from "../../src/remote/errors";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

let server: Server;
let baseUrl: string;
let script: Handler[] = []; // one handler per request, in order; the last one repeats
let seen: { method: string; url: string; auth?: string; body: string; at: number }[] = [];

const chatReply = (content = "hi", extra: Record<string, unknown> = {}) => ({
  id: "c1",
  object: "chat.completion",
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop", ...extra }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});
const ok =
  (json: unknown, status = 200, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(typeof json === "string" ? json : JSON.stringify(json));
  };

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        auth: req.headers.authorization,
        body,
        at: Date.now(),
      });
      const h = script.length > 1 ? script.shift()! : script[0];
      h(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  script = [];
  seen = [];
});

const client = (o: Partial<ConstructorParameters<typeof RemoteClient>[0]> = {}) =>
  new RemoteClient({ baseUrl, timeoutMs: 2000, retries: 3, backoffMs: 10, ...o });
const ask = (c: RemoteClient) =>
  c.chat({ model: "m", messages: [{ role: "user", content: "hello" }] });

async function failure(p: Promise<unknown>): Promise<RemoteError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e, "expected a RemoteError").toBeInstanceOf(RemoteError);
  return e as RemoteError;
}

describe("RemoteClient faults", () => {
  it("waits what Retry-After asks on 429, then succeeds", async () => {
    script = [
      ok({ error: { message: "slow down" } }, 429, { "retry-after": "1" }),
      ok(chatReply("after the wait")),
    ];
    const retries: number[] = [];
    const r = await ask(client({ onRetry: (i) => retries.push(i.waitMs) }));
    expect(r.choices[0].message.content).toBe("after the wait");
    expect(retries).toEqual([1000]);
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(950);
  });

  it("caps Retry-After at maxWaitMs and reads HTTP dates", async () => {
    expect(
      retryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT", Date.parse("Wed, 21 Oct 2015 07:27:58 GMT")),
    ).toBe(2000);
    expect(retryAfterMs("soon")).toBeNull();
    script = [ok({}, 429, { "retry-after": "3600" }), ok(chatReply())];
    const waits: number[] = [];
    await ask(client({ maxWaitMs: 50, onRetry: (i) => waits.push(i.waitMs) }));
    expect(waits).toEqual([50]);
  });

  it("a 429 that never ends is a rate-limited error after a bounded number of attempts", async () => {
    script = [ok({ error: { message: "quota" } }, 429, { "retry-after": "0" })];
    const e = await failure(ask(client({ retries: 2 })));
    expect(e.kind).toBe("rate-limited");
    expect(e.status).toBe(429);
    expect(e.message).toMatch(/429: quota .*gave up after 3 attempts/);
    expect(seen).toHaveLength(3);
  });

  it("retries a 500 and succeeds; a lasting 500 is a server error", async () => {
    script = [ok({ error: { message: "boom" } }, 500), ok(chatReply("ok"))];
    expect((await ask(client())).choices[0].message.content).toBe("ok");
    script = [ok({ error: "still broken" }, 503)];
    const e = await failure(ask(client({ retries: 1 })));
    expect(e.kind).toBe("server-error");
    expect(e.message).toContain("still broken");
  });

  it("a dropped connection is retried; a server that always drops it is unreachable", async () => {
    script = [(req) => req.socket.destroy(), ok(chatReply("second try"))];
    expect((await ask(client())).choices[0].message.content).toBe("second try");
    script = [(req) => req.socket.destroy()];
    const e = await failure(ask(client({ retries: 1 })));
    expect(e.kind).toBe("unreachable");
    expect(e.message).toMatch(/could not reach http:\/\/127\.0\.0\.1:\d+\/v1/);
  });

  it("a connection cut in the middle of the body is retried", async () => {
    const cut: Handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "500" });
      res.write('{"id":"c1","choices":[');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    script = [cut, ok(chatReply("whole"))];
    expect((await ask(client())).choices[0].message.content).toBe("whole");
  });

  it("a reply slower than the timeout is retried, then a timeout error", async () => {
    const slow: Handler = (_req, res) =>
      setTimeout(() => ok(chatReply("late"))(_req, res, ""), 400);
    script = [slow, ok(chatReply("fast"))];
    expect((await ask(client({ timeoutMs: 150 }))).choices[0].message.content).toBe("fast");
    script = [slow];
    const e = await failure(ask(client({ timeoutMs: 150, retries: 1 })));
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(/no reply from .* within 150 ms .*gave up after 2 attempts/);
  });

  it("truncated JSON is retried, then a malformed-reply error quoting the body", async () => {
    script = [ok('{"id":"c1","choices":[{"index":0,'), ok(chatReply("fine"))];
    expect((await ask(client())).choices[0].message.content).toBe("fine");
    script = [ok('{"id":"c1","choi')];
    const e = await failure(ask(client({ retries: 1 })));
    expect(e.kind).toBe("malformed-reply");
    expect(e.message).toMatch(/not JSON \(truncated\?\): \{"id":"c1","choi/);
  });

  it("JSON in no known format is a malformed-reply error that names the field", async () => {
    script = [ok({ id: "x", model: "m", result: "hello" })];
    const e = await failure(ask(client({ retries: 0 })));
    expect(e.kind).toBe("malformed-reply");
    expect(e.message).toMatch(/no known format \(choices: /);
    script = [
      ok({
        id: "x",
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: 42 } }],
      }),
    ];
    expect((await failure(ask(client({ retries: 0 })))).message).toMatch(
      /choices\.0\.message\.content/,
    );
  });

  it("log-probs asked for and missing are a no-logprobs error, not a silent zero", async () => {
    script = [ok(chatReply("no numbers"))];
    const e = await failure(
      client().chat({
        model: "m",
        messages: [{ role: "user", content: "x" }],
        logprobs: true,
        top_logprobs: 3,
      }),
    );
    expect(e.kind).toBe("no-logprobs");
    script = [ok({ id: "x", model: "m", choices: [{ index: 0, text: "a", logprobs: null }] })];
    expect(
      (await failure(client().completions({ model: "m", prompt: "x", logprobs: 1, echo: true })))
        .kind,
    ).toBe("no-logprobs");
  });

  it("401 is unauthorised at once (no retry), and the key is redacted from what the server echoes", async () => {
    const key = "sk-test-SECRET-123456";
    script = [ok({ error: { message: `invalid key ${key}` } }, 401)];
    const e = await failure(ask(client({ apiKey: key })));
    expect(e.kind).toBe("unauthorised");
    expect(seen).toHaveLength(1);
    expect(seen[0].auth).toBe(`Bearer ${key}`);
    expect(e.message).not.toContain(key);
    expect(e.message).toContain("[redacted]");
  });

  it("404 naming the model is model-not-found; on another path it is not-offered", async () => {
    script = [ok({ error: { message: "The model `nope` does not exist." } }, 404)];
    expect((await failure(ask(client()))).kind).toBe("model-not-found");
    script = [ok("Not Found", 404)];
    expect((await failure(client().completions({ model: "m", prompt: "x" }))).kind).toBe(
      "not-offered",
    );
  });

  it("an unreachable server (nothing listening) is an unreachable error", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r())); // a port nobody listens on now
    const e = await failure(
      new RemoteClient({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        retries: 1,
        backoffMs: 5,
      }).models(),
    );
    expect(e.kind).toBe("unreachable");
    expect(e.message).toMatch(/ECONNREFUSED/);
  });

  it("cancellation stops a request and its retries", async () => {
    script = [(_req, res) => setTimeout(() => ok(chatReply())(_req, res, ""), 1000)];
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const e = await failure(
      client().chat({ model: "m", messages: [{ role: "user", content: "x" }] }, ac.signal),
    );
    expect(e.kind).toBe("cancelled");
  });

  it("a stream cut before [DONE] is an error, not a short text", async () => {
    script = [
      (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "Hel" } }] })}\n\n`,
        );
        setTimeout(() => res.socket?.destroy(), 20);
      },
    ];
    const got: string[] = [];
    const e = await failure(
      (async () => {
        for await (const d of client().chatStream({
          model: "m",
          messages: [{ role: "user", content: "x" }],
        }))
          got.push(d.content);
      })(),
    );
    expect(got).toEqual(["Hel"]);
    expect(e.kind).toBe("malformed-reply");
  });

  it("a stream's frames are read with every line ending SSE allows, comments and multi-line data", async () => {
    const delta = (content: string) =>
      JSON.stringify({ choices: [{ index: 0, delta: { content } }] });
    const [open, close] = [delta("B").slice(0, 12), delta("B").slice(12)];
    // written in pieces, some cut between \r and \n, so a frame may span chunks
    const pieces = [
      `data: ${delta("A")}\r\n\r`,
      `\n: a comment line, ignored\r\r`,
      `data: ${open}\ndata: ${close}\n\n`, // one event's data on two lines, joined by \n
      `data: ${delta("C")}\r\rdata: ${delta("D")}\r`,
      `\n\r\ndata: [DONE]\r\r`,
    ];
    script = [
      (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const next = () => {
          const p = pieces.shift();
          if (p === undefined) return res.end();
          res.write(p);
          setTimeout(next, 5);
        };
        next();
      },
    ];
    const got: string[] = [];
    for await (const d of client().chatStream({
      model: "m",
      messages: [{ role: "user", content: "x" }],
    }))
      got.push(d.content);
    expect(got).toEqual(["A", "B", "C", "D"]);
  });

  it("a stream whose event never ends is refused, not buffered without bound", async () => {
    script = [
      (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: ${"x".repeat(9 * 1024 * 1024)}`);
      },
    ];
    const e = await failure(
      (async () => {
        for await (const _ of client().chatStream({
          model: "m",
          messages: [{ role: "user", content: "x" }],
        }))
          void _;
      })(),
    );
    expect(e.kind).toBe("malformed-reply");
    expect(e.message).toMatch(/grew past \d+ characters/);
  });

  it("a stream that goes silent past the timeout is a timeout error", async () => {
    script = [
      (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "Hi" } }] })}\n\n`,
        );
        setTimeout(() => res.end(), 1000); // silent until then
      },
    ];
    const e = await failure(
      (async () => {
        for await (const _ of client({ timeoutMs: 150 }).chatStream({
          model: "m",
          messages: [{ role: "user", content: "x" }],
        }))
          void _;
      })(),
    );
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(/silent for 150 ms/);
  });

  it("never follows a redirect, so the key cannot travel to another server", async () => {
    const other = createServer((req, res) => {
      seen.push({
        method: req.method!,
        url: `other:${req.url}`,
        auth: req.headers.authorization,
        body: "",
        at: Date.now(),
      });
      res.end("{}");
    });
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
    script = [
      (_req, res) => {
        res.writeHead(307, {
          location: `http://127.0.0.1:${(other.address() as AddressInfo).port}/v1/models`,
        });
        res.end();
      },
    ];
    const e = await failure(client({ apiKey: "sk-stay-home-12345", retries: 0 }).models());
    await new Promise<void>((r) => other.close(() => r()));
    expect(e.kind).toBe("bad-request");
    expect(e.message).toMatch(/answered with a redirect, which this client never follows/);
    expect(seen).toHaveLength(1); // not retried
    expect(seen.filter((x) => x.url.startsWith("other:"))).toEqual([]);
    expect(e.message).not.toContain("sk-stay-home");
  });

  it("refuses base URLs with credentials or a query string", () => {
    expect(() => new RemoteClient({ baseUrl: "http://user:pw@127.0.0.1/v1" })).toThrow(
      /credentials in a URL are refused/,
    );
    expect(() => new RemoteClient({ baseUrl: "http://127.0.0.1/v1?api_key=x" })).toThrow(
      /query string/,
    );
    expect(() => new RemoteClient({ baseUrl: "ftp://x" })).toThrow(/only http and https/);
  });
});
