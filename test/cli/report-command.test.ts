// `collapse-lab report FILE` as a person runs it: a recording printed as the run's table; with
// --json, the report the app reads (every paired difference restated with its sign-flip p),
// valid under the committed JSON Schema; an unreadable or foreign file is a usage error (exit 2)
// naming it.
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { RUN_REPORT_SCHEMA_FILE } from "../../scripts/report-json-schema";
import { runCli } from "./harness";

const FILE = "public/recorded/persuasion-quick.json";

describe("collapse-lab report", () => {
  it("prints the run's table, or with --json the restated report, valid under the JSON Schema", async () => {
    const table = await runCli(["report", FILE]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/paired differences vs single/);
    const json = await runCli(["report", FILE, "--json"]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    const onDisk = JSON.parse(readFileSync(FILE, "utf8"));
    expect(onDisk.comparisons.some((c: { difference: object }) => "p" in c.difference)).toBe(false);
    for (const c of report.comparisons) expect(c.difference.p).toBeGreaterThan(0);
    expect(report.conditions.map((c: { seeds: unknown[] }) => c.seeds)).toEqual(
      onDisk.conditions.map((c: { seeds: unknown[] }) => c.seeds),
    ); // measured numbers untouched
    const validate = new Ajv2020({ strict: true }).compile(
      JSON.parse(readFileSync(RUN_REPORT_SCHEMA_FILE, "utf8")),
    );
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
  });

  it("an unreadable or foreign file is a usage error naming it", async () => {
    const missing = await runCli(["report", "no/such.json"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/report: no\/such\.json cannot be read \(ENOENT\)/);
    const foreign = await runCli(["report", "package.json"]);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(/report: package\.json: not a RunReport/);
  });
});
