// The Remote page's logic, apart from the page: a client of the relay (`collapse-lab ray relay`,
// src/cluster/ray/relay.ts), what a job's log says (the human lines, the live learning curves,
// the failure's cause, the report once it finished), the run the Runs page keeps of a finished
// job, and what the page remembers across reloads (the relay's URL, the job it follows).
import type { BackendName } from "../../engine/backend";
import type { ExperimentConfig } from "../../experiment/config";
import type { RunReport } from "../../experiment/experiment";
import type { CurvePoint } from "../../experiment/runner";
import { readJobLog, reportFromLog } from "../../cluster/ray/job-log";
import type { RayJobStatus } from "../../cluster/ray/jobs";
import type { RelayInfo, RelayJobInfo } from "../../cluster/ray/relay";
import type { StoredRun } from "./run-store";
import type { BackendChoice, UrlState } from "./url-state";

export type { RelayInfo, RelayJobInfo, RayJobStatus };

export const DEFAULT_RELAY = "http://127.0.0.1:8266";
export const POLL_MS = 2000;
export const TERMINAL: readonly RayJobStatus[] = ["SUCCEEDED", "FAILED", "STOPPED"];
const START_HINT = "start it with: collapse-lab ray relay --ray http://HEAD:8265";

export class RelayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RelayError";
  }
}

/** The relay's address as typed, checked, without a trailing slash. */
export function relayBase(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new RelayError(`"${raw}" is not a URL: give the relay's address, e.g. ${DEFAULT_RELAY}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new RelayError(
      `"${raw}" is not an http(s) address: give the relay's, e.g. ${DEFAULT_RELAY}`,
    );
  if (url.username || url.password)
    throw new RelayError(
      "put no credentials in the relay's address: the relay holds the cluster's token",
    );
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** The Ray backend a URL's backend choice runs on: auto is wasm, the CLI's default (a worker's GPU only when asked for). */
export const remoteBackend = (choice: BackendChoice): BackendName =>
  choice === "webgpu" ? "webgpu" : "wasm";

export class RelayClient {
  readonly base: string;
  readonly #fetch: typeof fetch;

  constructor(base: string, fetchFn: typeof fetch = (...a) => fetch(...a)) {
    this.base = relayBase(base);
    this.#fetch = fetchFn;
  }

  async #call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await this.#fetch(`${this.base}${path}`, {
        method,
        headers: body === undefined ? undefined : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new RelayError(
        `the relay at ${this.base} is unreachable (is it running, and does it allow this page's origin ${originOf()}?); ${START_HINT}`,
      );
    }
    const text = await res.text();
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new RelayError(
        `${this.base}${path} answered ${res.status} with something that is not JSON: is ${this.base} a collapse-lab relay?`,
      );
    }
    if (!res.ok) {
      const said = (data as { error?: unknown })?.error;
      throw new RelayError(
        typeof said === "string" ? said : `${this.base}${path} failed (${res.status})`,
      );
    }
    return data as T;
  }

  info(): Promise<RelayInfo> {
    return this.#call("GET", "/relay/info");
  }
  async submit(run: {
    config: ExperimentConfig;
    preset?: string;
    backend: BackendName;
  }): Promise<string> {
    return (await this.#call<{ id: string }>("POST", "/relay/submit", run)).id;
  }
  job(id: string): Promise<RelayJobInfo> {
    return this.#call("GET", `/api/jobs/${encodeURIComponent(id)}`);
  }
  async logs(id: string): Promise<string> {
    return (await this.#call<{ logs: string }>("GET", `/api/jobs/${encodeURIComponent(id)}/logs`))
      .logs;
  }
  async stop(id: string): Promise<boolean> {
    return (
      await this.#call<{ stopped: boolean }>("POST", `/api/jobs/${encodeURIComponent(id)}/stop`)
    ).stopped;
  }
}

const originOf = () => (typeof location === "undefined" ? "(none)" : location.origin);

/** What the page shows of a job at one moment. */
export interface JobSnapshot {
  status: RayJobStatus;
  /** The log's lines for people (the machine-readable ones left out), the last `tail` of them. */
  lines: string[];
  /** How many lines there are in all. */
  lineCount: number;
  /** Learning curves by `${condition}:${seed}`, as the units reported them while training. */
  curves: Record<string, CurvePoint[]>;
  /** The latest phase, e.g. "train 3/7 (single seed 0)". */
  phase: string | null;
  /** The units training now, from their own reports, e.g. "single seed 0: step 2 of 4". */
  training: string[];
  /** Why it failed: the driver's cause, else Ray's message. */
  cause: string | null;
  /** The report, once the job succeeded and its log holds it whole. */
  report: RunReport | null;
  /** Why a succeeded job's report could not be read. */
  reportError: string | null;
}

/** Reads what the page shows from the job's status and its log. */
export function snapshotOf(
  info: Pick<RelayJobInfo, "status" | "message">,
  log: string,
  tail = 40,
): JobSnapshot {
  const r = readJobLog(log);
  const curves: Record<string, CurvePoint[]> = {};
  for (const u of r.units) {
    if (!u.point) continue;
    const list = (curves[`${u.condition}:${u.seed}`] ??= []);
    // a retried task reports its steps again: keep one point per step, in order
    if (list.length === 0 || list[list.length - 1].step < u.point.step) list.push(u.point);
  }
  // each unit's latest step (the driver's phase lines come as tasks finish; the units report as they train)
  const latest = new Map<string, { step: number; steps: number }>();
  for (const u of r.units)
    latest.set(`${u.condition} seed ${u.seed}`, { step: u.step, steps: u.steps });
  const training = [...latest]
    .filter(([, u]) => u.step < u.steps)
    .map(([key, u]) => `${key}: step ${u.step} of ${u.steps}`);
  const last = r.phases.at(-1);
  let report: RunReport | null = null;
  let reportError: string | null = null;
  if (info.status === "SUCCEEDED") {
    try {
      report = reportFromLog(log);
    } catch (e) {
      // JobReportError (parts missing, damaged) or the schema's refusal
      reportError = (e as Error).message;
    }
  }
  const rayMessage =
    info.status === "FAILED" && info.message
      ? info.message.trim().split("\n").slice(-3).join("\n")
      : null;
  return {
    status: info.status,
    lines: r.text.slice(-tail),
    lineCount: r.text.length,
    curves,
    phase: last
      ? `${last.phase} ${last.done}/${last.total}${last.detail ? ` (${last.detail})` : ""}`
      : null,
    training: TERMINAL.includes(info.status) ? [] : training,
    cause: r.error ?? rayMessage,
    report,
    reportError,
  };
}

/** The job the page follows, as remembered. */
export interface RemoteJob {
  id: string;
  relay: string;
  /** The experiment as it was on screen when submitted. */
  url: UrlState;
  backend: BackendName;
  title: string;
  submittedAt: number;
}

/** The Runs page's entry for a finished job (the same shape as a local run's). */
export function storedRunOf(job: RemoteJob, report: RunReport): StoredRun {
  return {
    id: `ray-${job.id}`,
    createdAt: job.submittedAt,
    updatedAt: Date.now(),
    status: "done",
    title: `${job.title} on Ray (${job.id})`,
    url: { ...job.url, autorun: false, page: "experiment" },
    backend: `${report.env.backend} on Ray`,
    report,
    tasksDone: 0,
    tasksTotal: 0,
  };
}

export interface RemoteMemory {
  relay: string;
  job: RemoteJob | null;
}

const KEY = "collapse-lab:remote";

/** What the page remembers (the default relay and no job when nothing is kept or it cannot be read). */
export function loadMemory(storage: Pick<Storage, "getItem"> | undefined): RemoteMemory {
  const none: RemoteMemory = { relay: DEFAULT_RELAY, job: null };
  try {
    const raw = storage?.getItem(KEY);
    if (!raw) return none;
    const m = JSON.parse(raw) as Partial<RemoteMemory>;
    const relay = typeof m.relay === "string" ? m.relay : DEFAULT_RELAY;
    const j = m.job;
    const job =
      j &&
      typeof j.id === "string" &&
      typeof j.relay === "string" &&
      j.url &&
      typeof j.url.preset === "string"
        ? j
        : null;
    return { relay, job };
  } catch {
    return none;
  }
}

export function saveMemory(
  storage: Pick<Storage, "setItem"> | undefined,
  memory: RemoteMemory,
): void {
  try {
    storage?.setItem(KEY, JSON.stringify(memory));
  } catch {
    /* storage full or disabled: the page still works, it just forgets on reload */
  }
}
