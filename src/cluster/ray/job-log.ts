// What a collapse-lab Ray job says in its log, for machines: lines `@@collapse-lab {json}` among
// the human-readable ones. The driver writes its phases, the finished report (gzipped, in base64
// chunks, so no line is long) and, on failure, the cause; each Ray task writes its unit's learning
// curve as it trains, and Ray forwards that into the job's log with a `(run_task pid=…)` prefix.
// Reading a log back (CLI `ray fetch`, the app's Remote page) needs nothing but its text.
import { gunzipSync, gzipSync, strFromU8, strToU8 } from "fflate";
import type { ExperimentProgress, RunReport } from "../../experiment/experiment";
import { parseReport } from "../../experiment/report-schema";
import type { UnitProgress } from "../../experiment/runner";

export const MARK = "@@collapse-lab ";
const CHUNK = 48_000; // base64 characters per report line
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

export type JobEvent =
  | {
      t: "start";
      preset?: string;
      backend: string;
      seeds: number;
      conditions: string[];
      tasks?: number;
    }
  | { t: "phase"; phase: ExperimentProgress["phase"]; done: number; total: number; detail: string }
  | { t: "unit"; progress: UnitProgress }
  | { t: "report"; i: number; n: number; data: string }
  | { t: "error"; message: string };

export const marker = (e: JobEvent) => `${MARK}${JSON.stringify(e)}`;

/** The report as marker lines: gzipped JSON in base64, cut into chunks. */
export function reportMarkers(report: RunReport, chunk = CHUNK): string[] {
  const b64 = toBase64(gzipSync(strToU8(JSON.stringify(report))));
  const n = Math.max(1, Math.ceil(b64.length / chunk));
  return Array.from({ length: n }, (_, i) =>
    marker({ t: "report", i, n, data: b64.slice(i * chunk, (i + 1) * chunk) }),
  );
}

export interface JobLog {
  start?: Extract<JobEvent, { t: "start" }>;
  phases: Extract<JobEvent, { t: "phase" }>[];
  units: UnitProgress[];
  /** The cause the driver gave when the run failed. */
  error?: string;
  /** Chunks of the report seen so far, and how many there are. */
  reportChunks: { have: number; of: number };
  /** Marker lines that could not be read (a log cut mid-line, a foreign `@@collapse-lab`). */
  unreadable: number;
  /** The log's other lines, for people. */
  text: string[];
}

/** Reads a job's log (or the part of it seen so far). */
export function readJobLog(log: string): JobLog & { chunks: Map<number, string> } {
  const out: JobLog & { chunks: Map<number, string> } = {
    phases: [],
    units: [],
    reportChunks: { have: 0, of: 0 },
    unreadable: 0,
    text: [],
    chunks: new Map(),
  };
  for (const line of log.split(/\r?\n/)) {
    const at = line.indexOf(MARK);
    if (at < 0) {
      const plain = line.replace(ANSI, ""); // Ray colours the prefixes of its tasks' lines
      if (plain.trim()) out.text.push(plain);
      continue;
    }
    let e: JobEvent;
    try {
      e = JSON.parse(line.slice(at + MARK.length)) as JobEvent;
    } catch {
      out.unreadable++;
      continue;
    }
    switch (e?.t) {
      case "start":
        out.start = e;
        break;
      case "phase":
        out.phases.push(e);
        break;
      case "unit":
        if (e.progress && typeof e.progress.step === "number") out.units.push(e.progress);
        else out.unreadable++;
        break;
      case "report":
        if (Number.isInteger(e.i) && Number.isInteger(e.n) && typeof e.data === "string") {
          out.chunks.set(e.i, e.data);
          out.reportChunks.of = e.n;
        } else out.unreadable++;
        break;
      case "error":
        out.error = String(e.message);
        break;
      default:
        out.unreadable++;
    }
  }
  out.reportChunks.have = out.chunks.size;
  return out;
}

export class JobReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobReportError";
  }
}

/** The run report a finished job wrote into its log, checked against the report schema. */
export function reportFromLog(log: string): RunReport {
  const r = readJobLog(log);
  if (r.reportChunks.of === 0)
    throw new JobReportError(
      r.error
        ? `the job wrote no report: it failed: ${r.error}`
        : "the job's log holds no report (has it finished? was it a collapse-lab run?)",
    );
  if (r.reportChunks.have !== r.reportChunks.of)
    throw new JobReportError(
      `the job's log holds ${r.reportChunks.have} of the report's ${r.reportChunks.of} parts; fetch it again once the job has finished`,
    );
  const b64 = Array.from({ length: r.reportChunks.of }, (_, i) => r.chunks.get(i)).join("");
  let json: string;
  try {
    json = strFromU8(gunzipSync(fromBase64(b64)));
  } catch (e) {
    throw new JobReportError(`the report in the job's log is damaged (${(e as Error).message})`);
  }
  return parseReport(json);
}

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function fromBase64(b64: string): Uint8Array {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
