// Dialogue corpora in the config (docs/humans.md): the schema's keys and their errors, reading the
// files a config names (kept by name and SHA-256; a changed file refused), a run refused when a
// corpus is not loaded, and the reference's store key following its corpus' content.
import { describe, expect, it } from "vitest";
import { corpusHash } from "../../src/benchmarks/dialogue-file";
import { merge, validateConfig, type ExperimentConfig } from "../../src/experiment/config";
import { corpusRefs, requireCorpora, resolveCorpora } from "../../src/experiment/corpora";
import { presetConfig } from "../../src/experiment/presets";
import { jobKey } from "../../src/experiment/store";

const base = presetConfig("persuasion-smoke") as ExperimentConfig;
const bytes = (s: string) => new TextEncoder().encode(s);
const A = bytes('{"acts":["greeting","agree","ask","$1"]}\n');
const B = bytes('{"acts":["greeting","refuse","ask","$0"]}\n');
const withPanel = (member: unknown) => ({ ...base, panel: [...base.panel, member] });

describe("corpora in the config", () => {
  it("validates the three places a corpus goes, naming every bad key", () => {
    const ok = validateConfig(
      merge(withPanel({ name: "class", corpus: { file: "class.jsonl" }, minCount: 3 }), {
        humans: { corpus: { file: "dir/p4g.jsonl" } },
        simulator: { corpus: { file: "ref.csv" } },
      }),
    );
    expect(ok.humans).toEqual({ corpus: { file: "dir/p4g.jsonl" }, minCount: 5 });
    expect(corpusRefs(ok).map((r) => [r.path, r.use.use])).toEqual([
      ["humans.corpus", "humans"],
      [`panel.${base.panel.length}.corpus`, "panel"],
      ["simulator.corpus", "reference"],
    ]);
    const bad: [unknown, RegExp][] = [
      [
        { ...base, humans: { corpus: { file: "x", path: "y" } } },
        /humans\.corpus\.path: unknown key/,
      ],
      [{ ...base, humans: { file: "x" } }, /humans\.file: unknown key/],
      [{ ...base, humans: { corpus: { file: "x", sha256: "abc" } } }, /humans\.corpus\.sha256: 64/],
      [{ ...base, humans: { corpus: { file: "x" }, minCount: 0 } }, /humans\.minCount/],
      [
        withPanel({ name: "c", corpus: { file: "x" }, gamma: 3 }),
        /gamma: a corpus member .* not pretrained/,
      ],
      [
        withPanel({ name: "c", gamma: 3, corpusScale: 1, seedOffset: 9, minCount: 2 }),
        /minCount: only for a corpus member/,
      ],
      [
        withPanel({ name: "c", corpus: { file: "x" }, lm: { model: "./m", mode: "direct" } }),
        /not both/,
      ],
    ];
    for (const [config, message] of bad) expect(() => validateConfig(config)).toThrow(message);
  });

  it("reads each file once, keeps its name and hash, and refuses a missing, malformed or changed one", async () => {
    const config = validateConfig(
      merge(withPanel({ name: "class", corpus: { file: "b.jsonl" } }), {
        humans: { corpus: { file: "some/dir/a.jsonl" } },
        simulator: { corpus: { file: "some/dir/a.jsonl" } },
      }),
    );
    const files: Record<string, Uint8Array> = { "some/dir/a.jsonl": A, "b.jsonl": B };
    const reads: string[] = [];
    const load = async (ref: { file: string }) => {
      reads.push(ref.file);
      return files[ref.file] ?? null;
    };
    const { config: resolved, corpora } = await resolveCorpora(config, load);
    expect(resolved.humans!.corpus).toEqual({ file: "a.jsonl", sha256: corpusHash(A) });
    expect(resolved.simulator.corpus).toEqual({ file: "a.jsonl", sha256: corpusHash(A) });
    expect(resolved.panel.at(-1)!.corpus).toEqual({ file: "b.jsonl", sha256: corpusHash(B) });
    expect(Object.keys(corpora).sort()).toEqual([corpusHash(A), corpusHash(B)].sort());
    expect(() => requireCorpora(resolved, corpora)).not.toThrow();
    expect(() => requireCorpora(resolved, {})).toThrow(
      /humans\.corpus: the corpus a\.jsonl .* not loaded/,
    );
    expect(() => requireCorpora(config, corpora)).toThrow(/no sha256 yet/);

    // the same config again, now naming the hashes: the files must be those
    await expect(
      resolveCorpora(resolved, async (r) => (r.file === "a.jsonl" ? A : B)),
    ).resolves.toBeTruthy();
    await expect(resolveCorpora(resolved, async () => B)).rejects.toThrow(
      /humans\.corpus: a\.jsonl is not the file the config names/,
    );
    await expect(resolveCorpora(config, async () => null)).rejects.toThrow(
      /humans\.corpus: some\/dir\/a\.jsonl is not here/,
    );
    await expect(resolveCorpora(config, async () => bytes('{"acts":["ask"]}'))).rejects.toThrow(
      /humans\.corpus: a\.jsonl line 1: acts: the dialogue is unfinished/,
    );
  });

  it("keys the reference's stored model by its corpus' content, and no other model", async () => {
    const key = (c: ExperimentConfig, kind: "reference" | "policy") =>
      jobKey(c, { kind, seed: 0 }, "wasm");
    const named = async (b: Uint8Array) =>
      (
        await resolveCorpora(
          validateConfig(merge(base, { simulator: { corpus: { file: "r.jsonl" } } })),
          async () => b,
        )
      ).config;
    const [a, b] = [await named(A), await named(B)];
    const plain = validateConfig(base);
    expect(new Set([key(plain, "reference"), key(a, "reference"), key(b, "reference")]).size).toBe(
      3,
    );
    expect(key(a, "policy")).toBe(key(plain, "policy"));
  });
});
