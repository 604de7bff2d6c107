// Sweeps as files: the recorded ones shipped with the app (public/recorded/sweeps/<id>/, the folder
// `collapse-lab sweep --out` writes, listed in public/recorded/sweeps/index.json) and the files a
// user imports (a sweep's folder, or its sweep.json with any of its points' reports). The figure
// needs only the summary; a point's report is fetched when the point is opened.
import { z } from "zod";
import type { RunReport } from "../../experiment/experiment";
import { parseReport, ReportError } from "../../experiment/report-schema";
import {
  parseSweep,
  reportMismatch,
  SWEEP_SCHEMA,
  SweepError,
  type SweepSummary,
} from "../../experiment/sweep";

export const RECORDED_SWEEPS = "recorded/sweeps";
export const INDEX_FORMAT = "collapse-lab/recorded-sweeps@1";

const IndexSchema = z.looseObject({
  format: z.literal(INDEX_FORMAT),
  sweeps: z.array(
    z.looseObject({
      id: z.string().regex(/^[A-Za-z0-9._-]+$/, "a folder name"),
      title: z.string().min(1),
    }),
  ),
});

export type RecordedSweep =
  | { id: string; title: string; summary: SweepSummary; error?: undefined }
  | { id: string; title: string; summary?: undefined; error: string };

/** A static host (and Vite) may answer a missing file with the app's page. */
const missing = (res: Response) =>
  res.status === 404 || !!res.headers.get("content-type")?.includes("text/html");

/**
 * The recorded sweeps, in the index's order: each with its summary, or the reason it could not be
 * loaded (one bad sweep loses nothing else). No index: none.
 */
export async function loadRecordedSweeps(fetchFn: typeof fetch = fetch): Promise<RecordedSweep[]> {
  const res = await fetchFn(`${RECORDED_SWEEPS}/index.json`);
  if (missing(res)) return [];
  if (!res.ok) throw new Error(`${RECORDED_SWEEPS}/index.json: HTTP ${res.status}`);
  const index = IndexSchema.safeParse(await res.json().catch(() => null));
  if (!index.success)
    throw new Error(
      `${RECORDED_SWEEPS}/index.json is malformed — ${index.error.issues[0]?.message ?? "?"}`,
    );
  return Promise.all(
    index.data.sweeps.map(async ({ id, title }): Promise<RecordedSweep> => {
      try {
        const r = await fetchFn(`${RECORDED_SWEEPS}/${id}/sweep.json`);
        if (missing(r)) return { id, title, error: "its sweep.json is missing" };
        if (!r.ok) return { id, title, error: `HTTP ${r.status}` };
        return { id, title, summary: parseSweep(await r.text()) };
      } catch (e) {
        return { id, title, error: (e as Error).message };
      }
    }),
  );
}

/** A recorded sweep's point report, checked against the point. */
export async function fetchRecordedPoint(
  id: string,
  summary: SweepSummary,
  pointName: string,
  fetchFn: typeof fetch = fetch,
): Promise<RunReport> {
  const point = summary.points.find((p) => p.name === pointName);
  if (!point) throw new Error(`the sweep has no point ${pointName}`);
  const res = await fetchFn(`${RECORDED_SWEEPS}/${id}/${point.report}`);
  if (missing(res)) throw new Error(`${point.report} is not shipped with the sweep`);
  if (!res.ok) throw new Error(`${point.report}: HTTP ${res.status}`);
  const report = parseReport(await res.text());
  const why = reportMismatch(summary, point, report);
  if (why) throw new Error(`${point.report} is not this point's report: ${why}`);
  return report;
}

/** A file the user picked: its name (a folder's files carry their path) and its text. */
export interface PickedFile {
  name: string;
  text: string;
}

export interface ImportedFiles {
  /** The sweep summaries, each with the reports of its points found among the files (by file name). */
  sweeps: { file: string; summary: SweepSummary; reports: Record<string, RunReport> }[];
  /** Run reports that belong to no sweep: imported as runs. */
  reports: { file: string; report: RunReport }[];
  /** Files that could not be read, each with the reason; nothing else is lost. */
  problems: string[];
}

const baseName = (name: string) => name.slice(name.lastIndexOf("/") + 1);

/**
 * Sorts picked files into sweeps (sweep.json, with the reports of their points: a report belongs
 * to a point when its file name is the point's and its config is the point's) and runs; a file
 * that is neither, or a point's report with another config, is named with the reason.
 */
export function sortImport(files: readonly PickedFile[]): ImportedFiles {
  const out: ImportedFiles = { sweeps: [], reports: [], problems: [] };
  const reports: { file: string; report: RunReport }[] = [];
  for (const f of files) {
    let schema: unknown;
    try {
      schema = (JSON.parse(f.text) as { schema?: unknown } | null)?.schema;
    } catch (e) {
      out.problems.push(`${f.name}: not JSON (${(e as Error).message})`);
      continue;
    }
    try {
      if (schema === SWEEP_SCHEMA)
        out.sweeps.push({ file: f.name, summary: parseSweep(f.text), reports: {} });
      else reports.push({ file: f.name, report: parseReport(f.text) });
    } catch (e) {
      if (!(e instanceof SweepError || e instanceof ReportError)) throw e;
      out.problems.push(`${f.name}: ${e.message}`);
    }
  }
  for (const r of reports) {
    const name = baseName(r.file);
    const owner = out.sweeps.find((s) => s.summary.points.some((p) => p.report === name));
    if (!owner) {
      out.reports.push(r);
      continue;
    }
    const point = owner.summary.points.find((p) => p.report === name)!;
    const why = reportMismatch(owner.summary, point, r.report);
    if (why)
      out.problems.push(`${r.file}: not the report of the sweep's point ${point.name}: ${why}`);
    else owner.reports[name] = r.report;
  }
  return out;
}
