// `collapse-lab report FILE`: a RunReport read as the app and the CLI read it, printed as the run's
// table, or with --json as JSON. Reading restates the intervals and paired differences of a report
// written under older rules by today's (report-schema.ts: uncut t intervals, the sign-flip p), so
// `--json` hands readers in other languages (the Python package in python/) the numbers the app
// shows, without a second implementation of the statistics.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { parseReport } from "../experiment/report-schema";
import { formatReport } from "../experiment/report-text";

export function registerReportCommand(program: Command, usageError: (m: string) => never): void {
  program
    .command("report")
    .description(
      "print a RunReport as the run's table, or with --json as the JSON the app reads (intervals and p-values restated by today's rules)",
    )
    .argument("<file>", "a RunReport JSON file")
    .option("--json", "print the report as JSON instead of the table")
    .action((file: string, opts: { json?: boolean }) => {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (e) {
        usageError(`report: ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? e})`);
      }
      let report;
      try {
        report = parseReport(text);
      } catch (e) {
        usageError(`report: ${file}: ${(e as Error).message}`);
      }
      process.stdout.write(
        opts.json ? JSON.stringify(report, null, 1) + "\n" : formatReport(report) + "\n",
      );
    });
}
