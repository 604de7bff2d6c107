// The LM lab's recorded real-LM example: the shipped file parses with its schema and its numbers
// are the lab's measures of its own replies; the component shows it marked as recorded, with the
// model's name and the command that re-runs it, renders the model's text as text (never HTML),
// reads the file itself when none is handed in, and says so when the file cannot be read.
import { cleanup, render, screen } from "@testing-library/svelte";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { tick } from "svelte";
import RecordedExample from "../../src/app/components/lm/RecordedExample.svelte";
import {
  parseRecordedLmExample,
  RECORDED_LM_EXAMPLES,
  type RecordedLmExample,
} from "../../src/lm/recorded-example";
import { distinctScores } from "../../src/lm/measures";
import { benchmarkModule } from "../../src/benchmarks/registry";

afterEach(() => cleanup());

const text = readFileSync(`public/${RECORDED_LM_EXAMPLES[0]}`, "utf8");
const rec = parseRecordedLmExample(text);

async function until(cond: () => boolean) {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

describe("the recorded LM example", () => {
  it("parses, names its model and re-run command, and holds the lab's measures of its own replies", () => {
    expect(rec.model.name).toBe("SmolLM2-135M-Instruct");
    expect(rec.model.file).toMatch(/\.gguf$/);
    expect(rec.command).toContain("scripts/record-lm-example.ts");
    expect(rec.direct).toHaveLength(rec.settings.n);
    expect(rec.vs).toHaveLength(Math.ceil(rec.settings.n / rec.settings.k));
    const lm = benchmarkModule(rec.benchmark).lm!;
    const texts = rec.direct.map((r) => r.text);
    expect(rec.measures.direct.distinct).toEqual(distinctScores(texts));
    expect(rec.direct.map((r) => r.outcome)).toEqual(texts.map((t) => lm.parseOutcome(t)));
    expect(rec.measures.direct.outcomes).toEqual(
      lm.compareOutcomes(rec.direct.map((r) => r.outcome)),
    );
    const vsAll = rec.vs.flatMap((c) => c.candidates);
    expect(rec.measures.vsAll.count).toBe(vsAll.length);
    expect(rec.measures.vsAll.distinct).toEqual(distinctScores(vsAll.map((c) => c.text)));
    for (const c of rec.vs)
      if (c.selected !== null) expect(c.selected).toBeLessThan(c.candidates.length);
  });

  it("a file with a missing field or another format is refused with the field's path", () => {
    const broken = JSON.parse(text) as Record<string, unknown>;
    delete (broken.model as Record<string, unknown>).name;
    expect(() => parseRecordedLmExample(JSON.stringify(broken))).toThrow(/model\.name/);
    expect(() =>
      parseRecordedLmExample(JSON.stringify({ ...JSON.parse(text), format: "other/1" })),
    ).toThrow(/format/);
  });

  it("shows it marked as recorded, with the model, the numbers, the replies as text and the command", async () => {
    const hostile: RecordedLmExample = {
      ...rec,
      direct: [
        { text: "<img src=x onerror=alert(1)> I give $1.", tokens: 9, outcome: 1 },
        ...rec.direct.slice(1),
      ],
    };
    const { container } = render(RecordedExample, { recording: hostile });
    expect(screen.getByTestId("recorded-badge").textContent).toBe("recorded");
    expect(screen.getByTestId("recorded-model").textContent).toBe("SmolLM2-135M-Instruct");
    expect(screen.getByTestId("recorded-command").textContent).toContain(rec.command);
    expect(screen.getByTestId("recorded-command").textContent).toContain(
      `--gguf .real-lm/${rec.model.file}`,
    );
    const numbers = screen.getByTestId("recorded-numbers");
    expect(numbers.textContent).toContain("VS, all candidates");
    expect(numbers.textContent).toContain("KS vs P4G humans");
    expect(screen.getByTestId("recorded-direct").textContent).toContain(
      "<img src=x onerror=alert(1)> I give $1.",
    );
    expect(container.querySelector("img")).toBeNull();
    const json = rec.vs.filter((c) => c.format === "json").length;
    expect(screen.getByTestId("recorded-format").textContent).toMatch(
      new RegExp(`asked-for JSON: ${json} of ${rec.vs.length}`),
    );
  });

  it("reads the shipped file itself, and says so when it cannot", async () => {
    const asked: string[] = [];
    render(RecordedExample, {
      fetchFn: async (url: RequestInfo | URL) => {
        asked.push(String(url));
        return new Response(text, { status: 200 });
      },
    });
    await until(() => screen.queryByTestId("recorded-badge") !== null);
    expect(asked).toEqual([RECORDED_LM_EXAMPLES[0]]);
    cleanup();
    render(RecordedExample, { fetchFn: async () => new Response("not found", { status: 404 }) });
    await until(() => screen.queryByTestId("recorded-error") !== null);
    await tick();
    expect(screen.getByTestId("recorded-error").textContent).toContain("HTTP 404");
  });
});
