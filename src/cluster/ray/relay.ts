// The relay between the app's Remote page and a Ray cluster. Ray's dashboard sends no CORS headers
// (a page cannot call it) and a cluster's token must not live in a web page, so this small
// fastify server on 127.0.0.1 holds the token and forwards only what the page needs, for
// collapse-lab's own jobs: a job's status, its log, stopping it. `POST /relay/submit` takes a
// config and submits it here (the page cannot bundle the job's code); `GET /relay/info` says
// which Ray it reaches. Everything else is refused and never reaches Ray.
//
// Only the listed origins get CORS headers, and a request from any other origin is refused
// outright (a page elsewhere could otherwise submit or stop jobs with a "simple" request that
// needs no preflight). The Host header must name this machine (against DNS rebinding). The token
// goes upstream as `Authorization: Bearer …` and is cut out of every response body.
import Fastify, { type FastifyInstance } from "fastify";
import cors from "@fastify/cors";
import type { BackendName } from "../../engine/backend";
import { ConfigError, validateConfig } from "../../experiment/config";
import { corpusRefs } from "../../experiment/corpora";
import { RayJobsClient, RayJobsError, type RayJobInfo } from "./jobs";
import { plainFetch } from "./node-http";
import { submitRun, type RunJobOptions } from "./submit";

export interface RelayOptions {
  /** The Ray dashboard, e.g. http://HEAD:8265. */
  ray: string;
  /** The cluster's token, sent upstream only. */
  token?: string;
  /** Origins the app is served from (exact, e.g. http://127.0.0.1:5178). */
  origins: string[];
  /** Host names the relay answers to besides 127.0.0.1, localhost and [::1]; null: any (listening on every interface). */
  hosts?: string[] | null;
  fetch?: typeof fetch;
  /** Called once per answered request with its method, path and status (never a header). */
  onRequest?: (line: string) => void;
  /** Notes while submitting (the package upload). */
  onNote?: (message: string) => void;
  /** The submission itself (tests may count calls); default submitRun. */
  submit?: (client: RayJobsClient, opts: RunJobOptions) => Promise<{ id: string }>;
}

/** What the page reads of a job (Ray's reply also holds the job's runtime_env, which may carry secrets). */
export type RelayJobInfo = Pick<
  RayJobInfo,
  | "submission_id"
  | "status"
  | "message"
  | "error_type"
  | "start_time"
  | "end_time"
  | "metadata"
  | "driver_exit_code"
>;

export interface RelayInfo {
  ray: string; // Ray's version
  address: string; // the dashboard the relay forwards to
}

const BACKENDS: readonly BackendName[] = ["wasm", "webgpu", "float64"];
const JOB_ID = /^[A-Za-z0-9_.-]{1,100}$/;
const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];

class RelayError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Jobs the relay serves: those collapse-lab submitted (a run, or a SCOPE launch). */
const isOurs = (info: RayJobInfo) =>
  !!info.metadata?.["collapse-lab"] || info.metadata?.tool === "collapse-lab";

const hostName = (host: string) =>
  (host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]).toLowerCase();

export function buildRelay(opts: RelayOptions): FastifyInstance {
  const client = new RayJobsClient(opts.ray, {
    token: opts.token,
    fetch: opts.fetch ?? plainFetch,
  });
  const submit =
    opts.submit ?? ((c: RayJobsClient, o: RunJobOptions) => submitRun(c, o, opts.onNote));
  const origins = new Set(opts.origins);
  const hosts =
    opts.hosts === null ? null : new Set([...LOOPBACK, ...(opts.hosts ?? []).map(hostName)]);
  const token = opts.token || undefined;
  const redact = (s: string) =>
    token
      ? s
          .split(token)
          .join("[redacted]")
          .split(JSON.stringify(token).slice(1, -1))
          .join("[redacted]")
      : s;

  const app = Fastify({ logger: false, bodyLimit: 1 << 20 });
  void app.register(cors, { origin: [...origins], methods: ["GET", "POST"] });

  app.addHook("onRequest", async (req) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin))
      throw new RelayError(
        403,
        `the relay does not serve pages from ${origin}; start it with --cors-origin ${origin} to allow that origin`,
      );
    if (hosts && !hosts.has(hostName(req.headers.host ?? "")))
      throw new RelayError(
        403,
        `the relay answers to ${[...hosts].join(", ")} only, not to the host "${req.headers.host ?? ""}"`,
      );
  });
  // the last word on every body that leaves: no token in it, whatever upstream said
  app.addHook("onSend", async (_req, _reply, payload) =>
    typeof payload === "string" ? redact(payload) : payload,
  );
  app.addHook("onResponse", async (req, reply) =>
    opts.onRequest?.(`${req.method} ${req.url} → ${reply.statusCode}`),
  );

  app.setErrorHandler((err, _req, reply) => {
    let status: number;
    let message: string;
    if (err instanceof RelayError) [status, message] = [err.status, err.message];
    else if (err instanceof RayJobsError)
      [status, message] = [err.kind === "not-found" ? 404 : 502, `Ray: ${err.message}`];
    else if (err instanceof ConfigError)
      [status, message] = [400, `the config is not valid: ${err.message}`];
    else {
      const code = (err as { statusCode?: number }).statusCode;
      [status, message] =
        code && code < 500
          ? [code, `the request could not be read: ${(err as Error).message}`]
          : [500, `the relay failed: ${(err as Error).message}`];
    }
    void reply.status(status).send({ error: message });
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.status(404).send({
      error: `the relay has no ${req.method} ${req.url.split("?")[0]}; it serves /relay/info, /relay/submit and a job's status, log and stop`,
    });
  });

  /** The job, if collapse-lab submitted it; Ray's not-found otherwise. */
  async function ourJob(id: string): Promise<RayJobInfo> {
    if (id === "")
      throw new RelayError(
        403,
        "the relay does not forward the list of every job: ask for one job by its id",
      );
    if (!JOB_ID.test(id))
      throw new RelayError(400, `"${id}" is not a job id (letters, digits, ".", "_" and "-")`);
    const info = await client.info(id);
    if (!isOurs(info))
      throw new RelayError(
        403,
        `job ${id} was not submitted by collapse-lab; the relay serves collapse-lab's jobs only`,
      );
    return info;
  }

  app.get("/relay/info", async (): Promise<RelayInfo> => ({
    ray: await client.version(),
    address: client.address,
  }));

  app.post("/relay/submit", async (req): Promise<{ id: string }> => {
    const body = req.body as { config?: unknown; preset?: unknown; backend?: unknown } | null;
    if (!body || typeof body !== "object" || Array.isArray(body))
      throw new RelayError(400, "send a JSON object: { config, preset?, backend }");
    if (!BACKENDS.includes(body.backend as BackendName))
      throw new RelayError(
        400,
        `backend: one of ${BACKENDS.join(", ")}, not ${JSON.stringify(body.backend)}`,
      );
    if (body.preset !== undefined && (typeof body.preset !== "string" || !JOB_ID.test(body.preset)))
      throw new RelayError(400, `preset: a preset id, not ${JSON.stringify(body.preset)}`);
    if (body.config === undefined)
      throw new RelayError(400, "config: required (the experiment's resolved config)");
    const config = validateConfig(body.config);
    const corpora = corpusRefs(config);
    if (corpora.length)
      throw new RelayError(
        400,
        `${corpora[0].path}: a Ray job does not carry dialogue corpora (docs/humans.md); run this experiment in the app or with collapse-lab run`,
      );
    const { id } = await submit(client, {
      config,
      backend: body.backend as BackendName,
      preset: body.preset as string | undefined,
    });
    return { id };
  });

  app.get("/api/jobs/:id", async (req): Promise<RelayJobInfo> => {
    const i = await ourJob((req.params as { id: string }).id);
    return {
      submission_id: i.submission_id,
      status: i.status,
      message: i.message ?? null,
      error_type: i.error_type ?? null,
      start_time: i.start_time ?? null,
      end_time: i.end_time ?? null,
      metadata: i.metadata ?? null,
      driver_exit_code: i.driver_exit_code ?? null,
    };
  });

  app.get("/api/jobs/:id/logs", async (req): Promise<{ logs: string }> => {
    const { id } = req.params as { id: string };
    await ourJob(id);
    return { logs: await client.logs(id) };
  });

  app.post("/api/jobs/:id/stop", async (req): Promise<{ stopped: boolean }> => {
    const { id } = req.params as { id: string };
    await ourJob(id);
    return { stopped: await client.stop(id) };
  });

  // the rest of Ray's API (every job's list, deleting jobs, packages, …) stays on the cluster's side
  app.route({
    method: ["GET", "POST", "PUT", "DELETE", "PATCH"],
    url: "/api/*",
    handler: async (req) => {
      throw new RelayError(
        403,
        `the relay does not forward ${req.method} ${req.url.split("?")[0]}: only a job's status, log and stop`,
      );
    },
  });

  return app;
}
