// How long a live run of a recorded experiment should take on this device: the recording's wall
// time scaled by the micro-benchmark measured here against the one its machine measured
// (src/engine/micro-benchmark.ts), and by the workers each side can use.
import type { RunReport } from "../../experiment/experiment";

export interface RunEstimate {
  ms: number;
  deviceMsPerStep: number;
  recordedMsPerStep: number;
  recordedMs: number;
  recordedWorkers: number;
  workers: number;
}

/** null when the report has no micro-benchmark (recorded before it was kept) or the inputs are unusable. */
export function estimateRun(
  report: RunReport,
  deviceMsPerStep: number,
  parallelism: number,
): RunEstimate | null {
  const recorded = report.env.microBenchmark?.msPerStep;
  if (!recorded || !(recorded > 0) || !(deviceMsPerStep > 0)) return null;
  const units = report.conditions.length * report.config.seeds;
  const recordedWorkers = Math.max(1, Math.min(report.env.parallel, units));
  const workers = Math.max(1, Math.min(parallelism, units));
  const ms = report.timing.totalMs * (deviceMsPerStep / recorded) * (recordedWorkers / workers);
  return {
    ms,
    deviceMsPerStep,
    recordedMsPerStep: recorded,
    recordedMs: report.timing.totalMs,
    recordedWorkers,
    workers,
  };
}

/** "about 40 s", "about 3 min". */
export function roughDuration(ms: number): string {
  const s = ms / 1000;
  if (s < 90) return `about ${Math.max(5, Math.round(s / 5) * 5)} s`;
  return `about ${Math.round(s / 60)} min`;
}
