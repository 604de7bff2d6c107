// `collapse-lab run --humans` through the real command (docs/humans.md): with the dialogues of
// Persuasion for Good (the committed sample where the raw corpus is missing) the report names the
// file by its SHA-256, its human metrics come from the corpus' people and say how much backed off;
// corpora where everybody gives $2, or nothing, give exactly those outcomes as the humans and as a
// panel member, and the reference pretrains on a corpus; a bad file stops the command at once,
// naming its line. The two runs go side by side.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { loadP4GDialogues } from "../../src/benchmarks/persuasion/p4g-load";
import type { RunReport } from "../../src/experiment/experiment";
import { presetConfig } from "../../src/experiment/presets";
import { HAVE_P4G, P4G_DATA } from "../benchmarks/p4g-data";
import { ROOT, runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-humans-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const bench = benchmarkFor(
  presetConfig("persuasion-smoke") as { benchmark: string; world: unknown },
);
const LEAN = ["run", "--preset", "persuasion-smoke", "--set", "eval.diagnosticSeeds=0"];

const P4G = join(tmp, "p4g-dialogues.jsonl");
writeFileSync(
  P4G,
  HAVE_P4G
    ? loadP4GDialogues(P4G_DATA).text
    : readFileSync(resolve(ROOT, "examples/dialogues/p4g-sample.jsonl")),
);
const GENEROUS = join(tmp, "generous.jsonl");
writeFileSync(
  GENEROUS,
  [
    '{"acts":["greeting","agree","ask"],"outcome":2}',
    '{"traits":["agreeable-low","caring-low","rational-high"],"acts":["credibility","object-trust","logical","neutral","ask","$2"]}',
    '{"acts":["emotion","share-personal","personal-story","agree","self-modeling","agree","foot-in-the-door","agree","donation-information","agree","$2"]}',
  ].join("\n"),
);
const STINGY = join(tmp, "stingy.csv");
writeFileSync(
  STINGY,
  "acts,outcome\ngreeting refuse ask,0\nlogical object-cost emotion refuse credibility neutral task-inquiry neutral ask,0\n",
);

const readReport = (file: string) => JSON.parse(readFileSync(file, "utf8")) as RunReport;
const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const userActs = (d: { card: number[]; acts: number[] }) =>
  d.acts.filter((_, i) => bench.turn({ card: d.card, acts: d.acts.slice(0, i) }) === "user");

describe("collapse-lab run with imported humans", () => {
  it("takes its human metrics from the corpus: P4G's people, and corpora of all-$2 and all-$0 people", async () => {
    const [p4g, fixed] = await Promise.all([
      runCli([
        ...LEAN,
        "--set",
        'conditions=["base","single"]',
        "--humans",
        P4G,
        "--out",
        join(tmp, "p4g.json"),
      ]),
      runCli([
        ...LEAN,
        "--set",
        'conditions=["base"]',
        "--humans",
        GENEROUS,
        "--panel-corpus",
        STINGY,
        "--reference-corpus",
        GENEROUS,
        "--out",
        join(tmp, "fixed.json"),
      ]),
    ]);
    expect(p4g.stderr + p4g.stdout).not.toMatch(/error/i);
    expect(p4g.code).toBe(0);
    expect(fixed.code).toBe(0);

    // P4G: the report names the file exactly, and its people answered every human turn
    const r = readReport(join(tmp, "p4g.json"));
    const corpus = loadCorpusFacts(P4G);
    expect(r.config.humans).toEqual({
      corpus: { file: "p4g-dialogues.jsonl", sha256: sha(P4G) },
      minCount: 5,
    });
    expect(r.corpora).toEqual([
      expect.objectContaining({
        use: "humans",
        file: "p4g-dialogues.jsonl",
        sha256: sha(P4G),
        dialogues: HAVE_P4G ? 289 : 20,
        licence: "Apache-2.0",
      }),
    ]);
    expect(r.world.referenceLines?.[0]).toMatchObject({ id: "corpus-agents", onFigure: true });
    expect(r.world.referenceLines?.slice(1).every((l) => !l.onFigure)).toBe(true);
    for (const c of r.conditions)
      for (const s of c.seeds) {
        const b = s.backoff!.humans;
        expect(b.turns).toBeGreaterThanOrEqual(r.config.eval.episodes);
        expect(Object.values(b.levels).reduce((x, y) => x + y, 0)).toBe(b.turns);
        expect(b.levels.uniform).toBe(0);
        for (const d of s.samples.filter((x) => x.opponent === "humans")) {
          expect(d.type).toBe(-1);
          for (const a of userActs(d)) expect(corpus.userActs.has(a)).toBe(true); // only what its people said
        }
      }
    expect(p4g.stdout).toContain("p4g-dialogues.jsonl");
    expect(p4g.stdout).toMatch(/backed off/);

    // everybody gives $2 as the humans, nothing as the panel member: the metrics say exactly that
    const f = readReport(join(tmp, "fixed.json"));
    expect(f.conditions[0].seeds[0].humanSuccess).toBe(1);
    expect(f.conditions[0].seeds[0].humanReward).toBe(1);
    expect(f.conditions[0].seeds[0].heldoutByMember.stingy).toBe(0);
    expect(f.corpora?.map((c) => [c.use, c.file])).toEqual([
      ["humans", "generous.jsonl"],
      ["panel", "stingy.csv"],
      ["reference", "generous.jsonl"],
    ]);
    expect(f.config.simulator.corpus).toEqual({ file: "generous.jsonl", sha256: sha(GENEROUS) });
    // the reference learnt from the corpus, so no stored model could stand in for it
    const models = f.pretraining[0].models!;
    expect(models.find((m) => m.model === "reference simulator")?.source).toBe("trained");
    expect(models.find((m) => m.model === "base policy")?.source).toBe("store");
  }, 300_000);

  it("stops at once on a bad or missing file, naming its line and field", async () => {
    const bad = join(tmp, "bad.jsonl");
    writeFileSync(
      bad,
      '{"acts":["greeting","agree","ask","$0"]}\n\n{"acts":["greeting","agre"]}\n',
    );
    const [malformed, missing, badSet] = await Promise.all([
      runCli([...LEAN, "--humans", bad]),
      runCli([...LEAN, "--panel-corpus", join(tmp, "nope.csv")]),
      runCli([...LEAN, "--humans", GENEROUS, "--set", "humans.minCount=0"]),
    ]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(
      /humans\.corpus: bad\.jsonl line 3: acts\[1\]: unknown act "agre"/,
    );
    expect(malformed.stderr.trim().split("\n")).toHaveLength(1);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/panel\.5\.corpus: .*nope\.csv is not here/);
    expect(badSet.code).toBe(2);
    expect(badSet.stderr).toMatch(/humans\.minCount/);
  }, 120_000);
});

/** The user acts the corpus' people said anywhere. */
function loadCorpusFacts(file: string) {
  const said = new Set<number>();
  for (const line of readFileSync(file, "utf8").trim().split("\n").slice(1)) {
    const names = (JSON.parse(line) as { acts: string[] }).acts;
    const acts = names.map((n) => bench.acts.findIndex((a) => a.name === n));
    for (const a of userActs({ card: [], acts })) said.add(a);
  }
  return { userActs: said };
}
