// Typed errors of the remote tier (model servers over the OpenAI-compatible API), each with a
// message a person can act on. Messages name the server by its base URL and never carry an API
// key: `redact` removes a key a server might echo back in an error body.

export type RemoteErrorKind =
  | "unreachable" // no connection (refused, reset, DNS), after the retries
  | "timeout" // no reply within the timeout, after the retries
  | "unauthorised" // 401 / 403
  | "model-not-found" // 404 naming the model, or a model the server does not list
  | "not-offered" // an endpoint or a feature the server does not offer (404 on a path, no log-probs)
  | "no-logprobs" // log-probs were asked for and the reply has none
  | "malformed-reply" // not JSON, truncated, or JSON in no known format
  | "rate-limited" // 429 after the retries
  | "server-error" // 5xx after the retries
  | "bad-request" // another 4xx: the server's own message says why
  | "cancelled"; // the caller's AbortSignal fired

const NAMES: Record<RemoteErrorKind, string> = {
  unreachable: "RemoteUnreachableError",
  timeout: "RemoteTimeoutError",
  unauthorised: "RemoteUnauthorisedError",
  "model-not-found": "RemoteModelNotFoundError",
  "not-offered": "RemoteNotOfferedError",
  "no-logprobs": "RemoteNoLogprobsError",
  "malformed-reply": "RemoteMalformedReplyError",
  "rate-limited": "RemoteRateLimitedError",
  "server-error": "RemoteServerError",
  "bad-request": "RemoteBadRequestError",
  cancelled: "RemoteCancelledError",
};

export class RemoteError extends Error {
  constructor(
    readonly kind: RemoteErrorKind,
    message: string,
    readonly status?: number, // the HTTP status, where there was a reply
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = NAMES[kind];
  }
}

/** The kind of a remote error, also for one that crossed a worker boundary (by name); null for others. */
export function remoteErrorKind(e: unknown): RemoteErrorKind | null {
  if (e instanceof RemoteError) return e.kind;
  const name = (e as { name?: unknown } | null)?.name;
  for (const [kind, n] of Object.entries(NAMES) as [RemoteErrorKind, string][])
    if (n === name) return kind;
  return null;
}

/** `text` with every occurrence of `secret` (when given and not trivially short) replaced. */
export function redact(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join("[redacted]");
}
