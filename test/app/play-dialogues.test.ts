// The Play page's merged dialogues as a dialogue corpus (docs/humans.md#a-class-as-a-panel-member):
// the file reads back with every dialogue's acts, card and outcome, and keeps who played what; a
// class's file is a panel member of a config.
import { describe, expect, it } from "vitest";
import { parseDialogueFile } from "../../src/benchmarks/dialogue-file";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { validateConfig } from "../../src/experiment/config";
import { resolveCorpora } from "../../src/experiment/corpora";
import { presetConfig } from "../../src/experiment/presets";
import { playDialogues } from "../../src/app/lib/play-dialogues";
import type { PlayRecord } from "../../src/app/lib/play-results";

const record = (i: number, acts: string[], outcome: number, own = false): PlayRecord => ({
  id: `dialogue-${i}`,
  player: `p${i % 2}`,
  study: "room",
  run: "recorded/persuasion-smoke",
  runKey: "0123456789abcdef0123456789abcdef",
  index: i,
  condition: i % 2 ? "single" : "vs",
  seed: 0,
  sessionSeed: i,
  persona: {
    source: own ? "own" : "drawn",
    card: ["card:agreeable-high", "card:caring-low", "card:rational-high"],
    type: own ? null : "skeptic",
  },
  acts,
  outcome,
  success: outcome >= 1,
  reward: outcome / 2,
  startedAt: 1_700_000_000_000 + i,
  finishedAt: 1_700_000_060_000 + i,
});

const RECORDS = [
  record(0, ["greeting", "neutral", "ask", "$1"], 1),
  record(1, ["credibility", "object-trust", "logical", "agree", "ask", "$0.5"], 0.5, true),
  record(2, ["emotion", "share-personal", "ask", "$2"], 2),
];

describe("the Play page's dialogues as a corpus", () => {
  it("writes a file that reads back as the same dialogues, with who played them", () => {
    const { text, benchmark } = playDialogues(RECORDS, "recorded/persuasion-smoke");
    expect(benchmark).toBe("persuasion");
    const config = validateConfig(presetConfig("persuasion-smoke"));
    const bench = benchmarkFor(config);
    const c = parseDialogueFile(new TextEncoder().encode(text), "class.jsonl", config);
    expect(c.source).toMatch(
      /3 dialogues of 2 players against the policies of recorded\/persuasion-smoke/,
    );
    expect(c.dialogues.map((d) => d.acts.map((a) => bench.acts[a].name))).toEqual(
      RECORDS.map((r) => r.acts),
    );
    expect(c.dialogues.map((d) => d.id)).toEqual(RECORDS.map((r) => r.id));
    expect(bench.acts[c.dialogues[0].card![0]].name).toBe("card:agreeable-high");
    const lines = text
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l));
    expect(lines[1].meta).toEqual({
      player: "p1",
      study: "room",
      condition: "single",
      seed: 0,
      persona: "own",
      type: null,
    });
    expect(lines.map((l) => l.outcome)).toEqual([1, 0.5, 2]);
  });

  it("makes the class a held-out panel member of a config", async () => {
    const { text } = playDialogues(RECORDS, null);
    const config = validateConfig({
      ...presetConfig("persuasion-smoke"),
      panel: [
        ...(presetConfig("persuasion-smoke") as { panel: unknown[] }).panel,
        { name: "class", corpus: { file: "class.jsonl" } },
      ],
    });
    const { config: resolved, corpora } = await resolveCorpora(config, async () =>
      new TextEncoder().encode(text),
    );
    const sha = resolved.panel.at(-1)!.corpus!.sha256!;
    expect(corpora[sha].dialogues).toHaveLength(3);
  });

  it("refuses to export nothing, or dialogues of no benchmark", () => {
    expect(() => playDialogues([], null)).toThrow(/no dialogues/);
    expect(() => playDialogues([record(0, ["greeting", "hello"], 0)], null)).toThrow(/benchmark/);
  });
});
