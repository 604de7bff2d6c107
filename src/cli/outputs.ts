// A command's outputs: refused at once, before any work, when they cannot be written (exit 2, one
// line naming the path), and a report saved whole, or kept in a named fallback file when the final
// write fails anyway.
import { OutputError, prepareOutput, writeReportOrFallback } from "../experiment/node-write";

/** Refuses at once an output that cannot be written; says which missing folders it created. */
export function checkOutput(
  path: string,
  kind: "file" | "folder",
  flag: string,
  usageError: (m: string) => never,
): void {
  try {
    const { created } = prepareOutput(path, kind, `${flag} ${path}`);
    if (created.length) process.stderr.write(`collapse-lab: created ${created.join(", ")}\n`);
  } catch (e) {
    if (e instanceof OutputError) usageError(e.message);
    throw e;
  }
}

/**
 * Writes a report atomically; when the final write fails anyway, the report is kept in a fallback
 * file (in `fallbackDir`, the run's cache folder, else the system's temporary folder) that the
 * error names, and the command will exit 1. Returns where it was written.
 */
export function saveReport(
  file: string,
  text: string,
  log: (s: string) => void,
  fallbackDir?: string,
): string {
  const { written, error } = writeReportOrFallback(file, text, fallbackDir);
  if (error) {
    process.stderr.write(
      `collapse-lab: the report could not be written to ${file} (${error.message}); it is kept in ${written}\n`,
    );
    process.exitCode = 1;
  } else log(`report written to ${file}`);
  return written;
}
