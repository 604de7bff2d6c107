// Writes the RunReport's JSON Schema (draft 2020-12), made by zod from the schema the app and the
// CLI read reports with (src/experiment/report-schema.ts), to schema/run-report.schema.json, for
// readers in other languages (the Python package in python/ validates reports against it).
// test/experiment/report-json-schema.test.ts fails when the committed file is stale.
//
//   npx tsx scripts/report-json-schema.ts
import { writeFileSync } from "node:fs";
import { runReportJsonSchema } from "../src/experiment/report-schema";

export const RUN_REPORT_SCHEMA_FILE = "schema/run-report.schema.json";

/** The file's text: the schema as indented JSON. */
export const runReportSchemaText = () => JSON.stringify(runReportJsonSchema(), null, 2) + "\n";

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(RUN_REPORT_SCHEMA_FILE, runReportSchemaText());
  process.stderr.write(`wrote ${RUN_REPORT_SCHEMA_FILE}\n`);
}
