// A client of Ray's Jobs REST API (the dashboard's /api/jobs/ and /api/packages/), the parts
// collapse-lab uses: upload a working-directory package, submit a job, read its status and logs,
// stop it. Plain fetch, so it runs in Node and, through the relay, in a page. Errors are
// RayJobsErrors whose messages name the address and say what to do; a token never appears in them.

export type RayJobStatus = "PENDING" | "RUNNING" | "STOPPED" | "SUCCEEDED" | "FAILED";
export const TERMINAL_STATUSES: readonly RayJobStatus[] = ["STOPPED", "SUCCEEDED", "FAILED"];

/** What GET /api/jobs/{id} answers, the fields collapse-lab reads. */
export interface RayJobInfo {
  submission_id: string;
  status: RayJobStatus;
  entrypoint: string;
  message?: string | null;
  error_type?: string | null;
  start_time?: number | null; // ms since the epoch
  end_time?: number | null;
  metadata?: Record<string, string> | null;
  driver_exit_code?: number | null;
}

export interface RayJobSubmission {
  entrypoint: string;
  submission_id?: string;
  runtime_env?: Record<string, unknown>;
  metadata?: Record<string, string>;
  entrypoint_num_cpus?: number;
  entrypoint_num_gpus?: number;
}

export type RayJobsErrorKind =
  "unreachable" | "unauthorised" | "not-found" | "refused" | "malformed-reply" | "server-error";

export class RayJobsError extends Error {
  constructor(
    readonly kind: RayJobsErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "RayJobsError";
  }
}

export interface RayJobsClientOptions {
  token?: string; // sent as `Authorization: Bearer …` (a cluster with token auth)
  fetch?: typeof fetch;
  timeoutMs?: number; // per request; uploads get four times as long
}

const STATUSES = new Set<string>(["PENDING", "RUNNING", "STOPPED", "SUCCEEDED", "FAILED"]);

/** The dashboard's address as given (`http://HEAD:8265`), checked and without a trailing slash. */
export function rayAddress(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RayJobsError(
      "refused",
      `"${raw}" is not a URL: give the Ray dashboard's address, e.g. http://127.0.0.1:8265`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new RayJobsError(
      "refused",
      `"${raw}" is not an http(s) address: give the Ray dashboard's, e.g. http://127.0.0.1:8265`,
    );
  if (url.username || url.password)
    throw new RayJobsError(
      "refused",
      `put no credentials in the address ${url.origin}: pass a token instead`,
    );
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

export class RayJobsClient {
  readonly address: string;
  readonly #token?: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(address: string, opts: RayJobsClientOptions = {}) {
    this.address = rayAddress(address);
    this.#token = opts.token || undefined;
    this.#fetch = opts.fetch ?? ((...a) => fetch(...a));
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  async #request(
    method: string,
    path: string,
    body?: BodyInit,
    contentType?: string,
    timeoutMs = this.#timeoutMs,
  ): Promise<Response> {
    const headers: Record<string, string> = {};
    if (contentType) headers["content-type"] = contentType;
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    let res: Response;
    try {
      res = await this.#fetch(`${this.address}${path}`, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const why =
        (e as Error).name === "TimeoutError"
          ? `no reply within ${Math.round(timeoutMs / 1000)} s`
          : ((e as { cause?: Error }).cause?.message ?? (e as Error).message);
      throw new RayJobsError(
        "unreachable",
        `the Ray dashboard at ${this.address} is unreachable (${why}); is the head running, and is this its dashboard address (port 8265 by default)?`,
      );
    }
    if (res.ok) return res;
    const text = (await res.text().catch(() => "")).slice(0, 400).trim();
    const said = text ? `: ${this.#token ? text.split(this.#token).join("[redacted]") : text}` : "";
    if (res.status === 401 || res.status === 403)
      throw new RayJobsError(
        "unauthorised",
        `the Ray dashboard at ${this.address} refused the request (${res.status}): give the cluster's token${said}`,
        res.status,
      );
    if (res.status === 404)
      throw new RayJobsError(
        "not-found",
        `${this.address}${path}: not found (404)${said}`,
        res.status,
      );
    if (res.status >= 500)
      throw new RayJobsError(
        "server-error",
        `the Ray dashboard at ${this.address} failed (${res.status})${said}`,
        res.status,
      );
    throw new RayJobsError(
      "refused",
      `the Ray dashboard at ${this.address} refused ${method} ${path} (${res.status})${said}`,
      res.status,
    );
  }

  async #json(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await this.#request(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      body === undefined ? undefined : "application/json",
    );
    const text = await res.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new RayJobsError(
        "malformed-reply",
        `the Ray dashboard at ${this.address} answered ${method} ${path} with something that is not JSON: ${text.slice(0, 120)}`,
      );
    }
  }

  /** Ray's version, from /api/version: a cheap check that the address is a Ray dashboard. */
  async version(): Promise<string> {
    const v = (await this.#json("GET", "/api/version")) as { ray_version?: unknown };
    if (typeof v?.ray_version !== "string")
      throw new RayJobsError(
        "malformed-reply",
        `${this.address} answered /api/version without a ray_version: is it a Ray dashboard?`,
      );
    return v.ray_version;
  }

  /** Whether a package (`gcs://_ray_pkg_….zip`'s name) is already on the cluster. */
  async hasPackage(name: string): Promise<boolean> {
    try {
      await this.#request("GET", `/api/packages/gcs/${encodeURIComponent(name)}`);
      return true;
    } catch (e) {
      if (e instanceof RayJobsError && e.kind === "not-found") return false;
      throw e;
    }
  }

  /** Uploads a working-directory zip; it is then `gcs://NAME` in a runtime_env. */
  async uploadPackage(name: string, zip: Uint8Array): Promise<string> {
    if (!/^_ray_pkg_[0-9a-f]{16,64}\.zip$/.test(name))
      throw new RayJobsError("refused", `"${name}" is not a Ray package name (_ray_pkg_<hex>.zip)`);
    await this.#request(
      "PUT",
      `/api/packages/gcs/${name}`,
      zip as unknown as BodyInit,
      "application/octet-stream",
      4 * this.#timeoutMs,
    );
    return `gcs://${name}`;
  }

  async submit(job: RayJobSubmission): Promise<string> {
    const r = (await this.#json("POST", "/api/jobs/", job)) as {
      submission_id?: unknown;
      job_id?: unknown;
    };
    const id = r?.submission_id ?? r?.job_id;
    if (typeof id !== "string")
      throw new RayJobsError(
        "malformed-reply",
        `the Ray dashboard at ${this.address} accepted the job but named no submission id`,
      );
    return id;
  }

  async info(id: string): Promise<RayJobInfo> {
    const r = (await this.#json(
      "GET",
      `/api/jobs/${encodeURIComponent(id)}`,
    )) as Partial<RayJobInfo> | null;
    if (!r || typeof r.status !== "string" || !STATUSES.has(r.status))
      throw new RayJobsError(
        "malformed-reply",
        `the Ray dashboard at ${this.address} described job ${id} without a known status`,
      );
    return {
      ...r,
      submission_id: typeof r.submission_id === "string" ? r.submission_id : id,
      entrypoint: String(r.entrypoint ?? ""),
      status: r.status,
    };
  }

  /** The job's whole log so far (the driver's output, with its tasks' output forwarded into it). */
  async logs(id: string): Promise<string> {
    const r = (await this.#json("GET", `/api/jobs/${encodeURIComponent(id)}/logs`)) as {
      logs?: unknown;
    } | null;
    if (typeof r?.logs !== "string")
      throw new RayJobsError(
        "malformed-reply",
        `the Ray dashboard at ${this.address} sent job ${id}'s logs in an unknown shape`,
      );
    return r.logs;
  }

  /** Asks Ray to stop the job; true when it was running and is being stopped. */
  async stop(id: string): Promise<boolean> {
    const r = (await this.#json("POST", `/api/jobs/${encodeURIComponent(id)}/stop`)) as {
      stopped?: unknown;
    } | null;
    return r?.stopped === true;
  }
}

export const isTerminal = (s: RayJobStatus) => TERMINAL_STATUSES.includes(s);
