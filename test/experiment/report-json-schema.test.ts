// The RunReport's JSON Schema (schema/run-report.schema.json): the committed file is what
// scripts/report-json-schema.ts makes from the zod schema today (stale: regenerate it), and a
// JSON Schema validator (ajv, draft 2020-12, strict) accepts every committed recording and run
// while refusing broken ones, naming where.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { RUN_REPORT_SCHEMA_FILE, runReportSchemaText } from "../../scripts/report-json-schema";

/** Every RunReport committed: the recordings, and the runs docs/runs/index.json lists (test/experiment/docs-runs.test.ts: all of them). */
function reports(): string[] {
  const index = JSON.parse(readFileSync("docs/runs/index.json", "utf8")) as {
    runs: { report: string }[];
  };
  return [
    ...readdirSync("public/recorded")
      .filter((f) => f.endsWith(".json"))
      .map((f) => join("public/recorded", f)),
    ...index.runs.map((r) => join("docs/runs", r.report)),
  ];
}

const committed = readFileSync(RUN_REPORT_SCHEMA_FILE, "utf8");
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(JSON.parse(committed));

describe("the RunReport's JSON Schema", () => {
  it("is the one the zod schema makes today", () => {
    expect(
      committed === runReportSchemaText(),
      `${RUN_REPORT_SCHEMA_FILE} is stale: run npx tsx scripts/report-json-schema.ts`,
    ).toBe(true);
  });

  it("accepts every committed recording and run", () => {
    const files = reports();
    expect(files.length).toBeGreaterThanOrEqual(20);
    for (const f of files) {
      const ok = validate(JSON.parse(readFileSync(f, "utf8")));
      expect(ok, `${f}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
    }
  });

  it("refuses a report with a missing part or a wrong type, naming where", () => {
    const good = JSON.parse(readFileSync("public/recorded/persuasion-smoke.json", "utf8"));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- reaching into parsed JSON to spoil it
    const cases: [(r: Record<string, any>) => void, string][] = [
      [(r) => delete r.conditions, ""],
      [(r) => (r.schema = "collapse-lab/run-report@2"), "/schema"],
      [(r) => (r.conditions[0].id = "nobody"), "/conditions/0/id"],
      [(r) => (r.conditions[1].seeds[0].curve[0].step = "0"), "/conditions/1/seeds/0/curve/0/step"],
      [(r) => (r.comparisons[2].difference.mean = "0.1"), "/comparisons/2/difference/mean"],
      [
        (r) => (r.conditions[0].summary.humanReward = { mean: 1, lo: 0 }),
        "/conditions/0/summary/humanReward",
      ],
    ];
    for (const [spoil, where] of cases) {
      const r = structuredClone(good);
      spoil(r);
      expect(validate(r)).toBe(false);
      expect(validate.errors!.map((e) => e.instancePath)).toContain(where);
    }
  });
});
