// Dialogue corpora (docs/humans.md): the example files read as documented, JSONL and CSV give the
// same dialogues, the writer reads back, every kind of bad file is refused with its line and field,
// and Persuasion for Good's annotated dialogues map to the benchmark's acts (with the raw corpus).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  corpusHash,
  dialogueFile,
  dialogueLine,
  DialogueFileError,
  parseDialogueFile,
} from "../../src/benchmarks/dialogue-file";
import { benchmarkFor, benchmarkModule } from "../../src/benchmarks/registry";
import { loadP4GDialogues } from "../../src/benchmarks/persuasion/p4g-load";
import { persuadeeAct, persuaderAct } from "../../src/benchmarks/persuasion/p4g-dialogues";
import { presetConfig } from "../../src/experiment/presets";
import { HAVE_P4G, P4G_DATA } from "./p4g-data";

const ROOT = resolve(import.meta.dirname, "../..");
const config = presetConfig("persuasion-smoke") as { benchmark: string; world: unknown };
const m = benchmarkModule("persuasion");
const bench = benchmarkFor(config);
const bytes = (s: string) => new TextEncoder().encode(s);
const read = (text: string, file = "c.jsonl") => parseDialogueFile(bytes(text), file, config);
const names = (acts: number[]) => acts.map((a) => bench.acts[a].name);
const HEADER = '{"format":"collapse-lab/dialogues@1","benchmark":"persuasion"}';

/** The problem a file is refused for: its line and field, and the message. */
function refusal(text: string, file = "c.jsonl") {
  try {
    read(text, file);
  } catch (e) {
    expect(e).toBeInstanceOf(DialogueFileError);
    const err = e as DialogueFileError;
    expect(err.message).toMatch(new RegExp(`^${file}( line \\d+)?: `));
    expect(err.message).not.toContain("\n");
    return { line: err.line, field: err.field, message: err.message };
  }
  throw new Error("the file was read");
}

describe("the format", () => {
  it("reads the example files, named by file and SHA-256", () => {
    const jsonl = readFileSync(resolve(ROOT, "examples/dialogues/p4g-sample.jsonl"));
    const c = parseDialogueFile(jsonl, "examples/dialogues/p4g-sample.jsonl", config);
    expect(c.file).toBe("p4g-sample.jsonl");
    expect(c.sha256).toBe(createHash("sha256").update(jsonl).digest("hex"));
    expect(c.licence).toBe("Apache-2.0");
    expect(c.dialogues).toHaveLength(20);
    for (const d of c.dialogues) expect(bench.turn({ card: [], acts: d.acts })).toBe("done");
    const csv = parseDialogueFile(
      readFileSync(resolve(ROOT, "examples/dialogues/hand-written.csv")),
      "hand-written.csv",
      config,
    );
    expect(csv.dialogues.map((d) => d.id)).toEqual(["ann", "ben", "cleo"]);
    expect(names(csv.dialogues[0].acts)).toEqual([
      "greeting",
      "share-personal",
      "emotion",
      "agree",
      "ask",
      "$1.5",
    ]);
    expect(names(csv.dialogues[0].card!)).toEqual([
      "card:agreeable-high",
      "card:caring-high",
      "card:rational-low",
    ]);
    expect(csv.dialogues[2].card).toBeNull(); // no traits: a card is drawn where one is needed
    expect(names(csv.dialogues[2].acts).at(-1)).toBe("$0.5"); // after five exchanges
  });

  it("gives the same dialogues from JSONL and CSV, with traits in any order and the outcome as a number or an act", () => {
    const jsonl = read(
      [
        HEADER,
        '{"id":"a","traits":["rational-low","card:agreeable-high","caring-low"],"acts":["greeting","agree","ask"],"outcome":1.2}',
        '{"id":"b","acts":["credibility","object-trust","ask","$0"]}',
      ].join("\r\n"),
    );
    const csv = read(
      "acts,outcome,id,traits\ngreeting > agree > ask,1.2,a,agreeable-high caring-low rational-low\ncredibility object-trust ask $0,,b,\n",
      "c.csv",
    );
    expect(csv.dialogues).toEqual(jsonl.dialogues);
    expect(names(jsonl.dialogues[0].acts)).toEqual(["greeting", "agree", "ask", "$1"]); // $1.20 → the nearest $0.50
  });

  it("writes lines that read back to the same dialogues", () => {
    const c = read(readFileSync(resolve(ROOT, "examples/dialogues/p4g-sample.jsonl"), "utf8"));
    const again = read(
      dialogueFile(
        { benchmark: "persuasion" },
        c.dialogues.map((d) => dialogueLine(m, bench, d)),
      ),
    );
    expect(again.dialogues).toEqual(c.dialogues);
    expect(corpusHash(bytes("x"))).toBe(createHash("sha256").update("x").digest("hex"));
  });

  it.each([
    ["not JSON", '{"acts":["greeting","agree","ask","$0"]}\n{"acts": [', 2, null, /not JSON/],
    ["not an object", "[1, 2]", 1, null, /JSON object/],
    ["an unknown key", '{"acts":["ask","$0"],"turns":2}', 1, null, /unknown key "turns"/],
    ["no acts", '{"id":"x"}', 1, "acts", /./],
    ["acts not strings", '{"acts":["ask",5]}', 1, "acts[1]", /string/],
    [
      "an unknown act",
      '\n\n{"acts":["greeting","agre","ask","$0"]}',
      3,
      "acts[1]",
      /unknown act "agre"/,
    ],
    ["a user act on the agent's turn", '{"acts":["agree"]}', 1, "acts[0]", /Persuader's turn/],
    [
      "an agent act on the user's turn",
      '{"acts":["greeting","ask"]}',
      1,
      "acts[1]",
      /Persuadee's turn/,
    ],
    ["an amount where talk is due", '{"acts":["greeting","$1"]}', 1, "acts[1]", /cannot come here/],
    ["acts after the end", '{"acts":["ask","$1","greeting"]}', 1, "acts[2]", /already ended/],
    [
      "an unfinished dialogue",
      '{"acts":["greeting","agree","ask"]}',
      1,
      "acts",
      /unfinished.*"outcome"/,
    ],
    [
      "a dialogue stopped early",
      '{"acts":["greeting","agree"]}',
      1,
      "acts",
      /unfinished.*Persuader's turn/,
    ],
    [
      "a donation out of range",
      '{"acts":["ask"],"outcome":3}',
      1,
      "outcome",
      /between \$0 and \$2/,
    ],
    ["an outcome that disagrees", '{"acts":["ask","$2"],"outcome":0}', 1, "outcome", /disagrees/],
    [
      "an unknown trait",
      '{"traits":["kind-high"],"acts":["ask","$0"]}',
      1,
      "traits[0]",
      /not a persona trait/,
    ],
    [
      "an incomplete card",
      '{"traits":["agreeable-high"],"acts":["ask","$0"]}',
      1,
      "traits",
      /not a persona card/,
    ],
    ["a header after dialogues", `{"acts":["ask","$0"]}\n${HEADER}`, 2, "format", /first line/],
    [
      "another benchmark",
      '{"format":"collapse-lab/dialogues@1","benchmark":"service"}\n{"acts":["ask","$0"]}',
      1,
      "benchmark",
      /"service".*persuasion/,
    ],
    [
      "a duplicate id",
      '{"id":"a","acts":["ask","$0"]}\n{"id":"a","acts":["ask","$1"]}',
      2,
      "id",
      /also line 1/,
    ],
  ])("refuses %s, naming the line and field", (_what, text, line, field, message) => {
    const r = refusal(text);
    expect(r.line).toBe(line);
    expect(r.field).toBe(field);
    expect(r.message).toMatch(message);
  });

  it.each([
    ["an unknown column", "id,act\nx,ask $0\n", 1, /unknown column "act"/],
    ["no acts column", "id,traits\nx,\n", 1, /no "acts" column/],
    ["a short row", "id,acts\nx,ask $0\ny\n", 3, /./],
    ["an open quote", 'id,acts\nx,"ask $0\n', 2, /not readable CSV/],
    ["a bad outcome", "acts,outcome\nask,1\nask,abc\n", 3, /outcome: "abc" is not a number/],
    ["a bad act", "acts\nask $0\ngreeting $1\n", 3, /acts\[1\]/],
  ])("refuses a CSV file with %s, naming the line", (_what, text, line, message) => {
    const r = refusal(text, "c.csv");
    expect(r.line).toBe(line);
    expect(r.message).toMatch(message);
  });

  it("refuses whole files that are not a corpus, saying what they are", () => {
    expect(refusal("").message).toMatch(/no dialogues/);
    expect(refusal(HEADER).message).toMatch(/no dialogues/);
    expect(
      refusal(JSON.stringify({ schema: "collapse-lab/run-report@1", config: {} }, null, 1)).message,
    ).toMatch(/RunReport.*Runs page/);
    expect(
      refusal(JSON.stringify({ format: "collapse-lab/play-results@1", records: [] }, null, 1))
        .message,
    ).toMatch(/Play results file/);
    expect(() => parseDialogueFile(new Uint8Array([0xff, 0xfe, 0x41]), "x.jsonl", config)).toThrow(
      /not UTF-8/,
    );
    expect(() =>
      parseDialogueFile(
        bytes('{"acts":["ask","$0"]}'),
        "c.jsonl",
        presetConfig("service-smoke") as typeof config,
      ),
    ).toThrow(/hidden state/);
  });
});

describe("Persuasion for Good as a corpus", () => {
  it("maps a turn's labels to the toy's acts as documented", () => {
    expect(persuaderAct(["greeting", "other", "task-related-inquiry"], [])).toBe("task-inquiry");
    expect(persuaderAct(["credibility-appeal", "logical-appeal", "logical-appeal"], [])).toBe(
      "logical",
    );
    expect(persuaderAct(["emotion-appeal", "credibility-appeal"], [])).toBe("emotion"); // a tie: the first
    expect(
      persuaderAct(["proposition-of-donation", "credibility-appeal"], ["agree-donation"]),
    ).toBe("ask");
    expect(persuaderAct(["proposition-of-donation", "credibility-appeal"], ["ask-org-info"])).toBe(
      "credibility", // asked, but not answered with a decision: the dialogue goes on
    );
    expect(persuaderAct(["greeting"], [])).toBe("greeting");
    expect(persuaderAct(["thank", "acknowledgement"], [])).toBeNull();
    expect(persuadeeAct(["positive-reaction-to-donation", "disagree-donation"])).toBe("refuse");
    expect(persuadeeAct(["ask-org-info", "positive-reaction-to-donation"])).toBe("agree");
    expect(persuadeeAct(["positive-to-inquiry", "ask-donation-procedure"])).toBe("ask-question");
    expect(persuadeeAct(["thank", "negative-to-inquiry"])).toBe("neutral");
    expect(persuadeeAct([])).toBe("neutral");
  });

  it.skipIf(!HAVE_P4G)("writes the 289 usable annotated dialogues, every one valid", () => {
    const p = loadP4GDialogues(P4G_DATA);
    expect(p.kept).toBe(289);
    expect(p.left).toEqual({ noDonation: 0, outOfRange: 10, tooShort: 1 });
    expect(p.endedByAsk).toBe(79);
    const c = read(p.text, "p4g-dialogues.jsonl");
    expect(c.dialogues).toHaveLength(289);
    expect(c.dialogues.filter((d) => d.card === null)).toHaveLength(2); // traits missing in P4G
    // the committed example is the head of this file
    const sample = readFileSync(resolve(ROOT, "examples/dialogues/p4g-sample.jsonl"), "utf8");
    expect(p.text.startsWith(sample)).toBe(true);
  });
});
