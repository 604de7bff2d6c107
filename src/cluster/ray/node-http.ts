// A fetch for Node that sends only the headers it is given. Node's own fetch adds
// `Sec-Fetch-Mode: cors`, and Ray's dashboard takes any Sec-Fetch-* header for a browser and
// refuses every write from one (405), so the CLI and the relay speak to Ray through this.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

export const plainFetch: typeof fetch = (input, init = {}) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body = init.body;
    if (
      body !== undefined &&
      body !== null &&
      typeof body !== "string" &&
      !(body instanceof Uint8Array)
    ) {
      reject(new TypeError("plainFetch sends string or byte bodies only"));
      return;
    }
    const req = (url.protocol === "https:" ? httpsRequest : httpRequest)(
      url,
      { method: init.method ?? "GET", headers, signal: init.signal ?? undefined },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v);
          const status = res.statusCode ?? 502;
          const nullBody = status === 204 || status === 304;
          resolve(
            new Response(nullBody ? null : Buffer.concat(chunks), {
              status,
              statusText: res.statusMessage,
              headers: h,
            }),
          );
        });
      },
    );
    req.on("error", (e) => reject(new TypeError("fetch failed", { cause: e })));
    if (body !== undefined && body !== null) req.end(body);
    else req.end();
  });
