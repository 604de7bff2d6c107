// The source tree's layers (eslint.config.js, docs/architecture.md#the-source-tree). ESLint's
// no-restricted-imports refuses an import that runs up a layer, and one of a benchmark's folder
// from above it: checked here on code linted as if it were in each folder, so every layer's rule is
// known to fire. Then the tree itself, read by dependency-cruiser (static, dynamic and type-only
// imports, .svelte files included): every import between folders runs down or sideways in the
// layer order, and no file and no folder is part of an import cycle.
import { readdirSync } from "node:fs";
import { relative } from "node:path";
import { ESLint } from "eslint";
import { cruise, type IModule } from "dependency-cruiser";
import { beforeAll, describe, expect, it } from "vitest";
import { LAYERS } from "../../scripts/layers.mjs";

const eslint = new ESLint({ cwd: process.cwd() });

async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result.messages.filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
}

const pathOf = (folder: string) => (folder === "workers" ? "workers" : `src/${folder}`);
/** A relative specifier from a file in `from` to a module in folder `to`. */
const specifier = (from: string, to: string) => `${relative(pathOf(from), pathOf(to))}/x`;
const layerOf = new Map(LAYERS.flatMap((layer, i) => layer.map((f) => [f, i] as const)));

describe("the layers of the source tree", () => {
  const cases = LAYERS.flatMap((layer, i) =>
    layer.flatMap((from) =>
      LAYERS.slice(i + 1).flatMap((above) => above.map((to) => [from, to] as const)),
    ),
  );

  it("has every folder of src/ in exactly one layer", () => {
    const folders = readdirSync("src", { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect([...layerOf.keys()].sort()).toEqual([...folders, "workers"].sort());
    expect(layerOf.size).toBe(LAYERS.flat().length);
  });

  it.each(cases)("refuses %s importing %s, a layer above it", async (from, to) => {
    const errors = await boundaryErrors(
      `${pathOf(from)}/probe.ts`,
      `import { x } from "${specifier(from, to)}";\nexport const y = x;\n`,
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      new RegExp(`\\. ${from} is in layer ${layerOf.get(from)! + 1} of the source tree`),
    );
  });

  it.each(
    LAYERS.flatMap((layer, i) =>
      layer.flatMap((from) =>
        LAYERS.slice(0, i + 1).flatMap((below) =>
          below.filter((to) => to !== "benchmarks").map((to) => [from, to] as const),
        ),
      ),
    ),
  )("allows %s importing %s, in its own layer or below", async (from, to) => {
    expect(
      await boundaryErrors(
        `${pathOf(from)}/probe.ts`,
        `import { x } from "${specifier(from, to)}";\nexport const y = x;\n`,
      ),
    ).toEqual([]);
  });
}, 120_000);

describe("the import boundary of benchmarks", () => {
  it.each([
    [
      "src/experiment/x.ts",
      'import { ACTS } from "../benchmarks/persuasion/world";\nexport const n = ACTS.length;\n',
    ],
    [
      "src/app/lib/x.ts",
      'import { ceilings } from "../../benchmarks/persuasion/ceilings";\nexport const c = ceilings;\n',
    ],
    [
      "src/simulators/x.ts",
      'import { persuasion } from "../benchmarks/persuasion";\nexport const p = persuasion;\n',
    ],
    [
      "src/remote/x.ts",
      'import { persuasion } from "../benchmarks/persuasion";\nexport const p = persuasion;\n',
    ],
    [
      "workers/x.ts",
      'import { service } from "../src/benchmarks/service/index";\nexport const s = service;\n',
    ],
    [
      "bench/x.ts",
      'import { service } from "../src/benchmarks/service/index";\nexport const s = service;\n',
    ],
  ])("refuses %s importing a benchmark's folder", async (file, code) => {
    const errors = await boundaryErrors(file, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/registry/);
  });

  it("allows the registry, the shared types and encode, and a benchmark importing its own files", async () => {
    const ok =
      'import { benchmarkModule } from "../benchmarks/registry";\nimport type { Benchmark } from "../benchmarks/types";\nimport { encode } from "../benchmarks/encode";\nexport const x = [benchmarkModule, encode] as unknown as Benchmark;\n';
    expect(await boundaryErrors("src/experiment/x.ts", ok)).toEqual([]);
    expect(
      await boundaryErrors(
        "src/benchmarks/persuasion/x.ts",
        'import { ACTS } from "./world";\nexport const n = ACTS.length;\n',
      ),
    ).toEqual([]);
  });
}, 60_000);

describe("the import graph of src/ and workers/", () => {
  let modules: IModule[] = [];
  beforeAll(async () => {
    const result = await cruise(
      ["src", "workers"],
      {
        tsPreCompilationDeps: true,
        doNotFollow: { path: "node_modules" },
        exclude: { path: "node_modules" },
      },
      undefined,
      {
        tsConfig: { fileName: "tsconfig.json" },
      },
    );
    modules = (result.output as { modules: IModule[] }).modules;
  }, 120_000);

  const folderOf = (path: string) =>
    path.startsWith("workers/") ? "workers" : /^src\/([^/]+)\//.exec(path)?.[1];
  const edges = () =>
    modules.flatMap((m) =>
      m.dependencies
        .filter(
          (d) => !d.coreModule && !d.couldNotResolve && folderOf(d.resolved) && folderOf(m.source),
        )
        .map((d) => ({ from: m.source, to: d.resolved, dynamic: d.dynamic })),
    );

  it("reads the whole tree, .svelte files and dynamic imports included", () => {
    expect(modules.some((m) => m.source.endsWith(".svelte"))).toBe(true);
    expect(edges().some((e) => e.dynamic)).toBe(true);
    expect(edges().length).toBeGreaterThan(500);
  });

  it("runs every import between folders down or sideways in the layer order", () => {
    const up = edges()
      .filter((e) => layerOf.get(folderOf(e.to)!)! > layerOf.get(folderOf(e.from)!)!)
      .map((e) => `${e.from} → ${e.to}`);
    expect(up).toEqual([]);
  });

  /** Strongly connected components of more than one node (Tarjan). */
  function cycles(pairs: [string, string][]): string[][] {
    const next = new Map<string, string[]>();
    for (const [a, b] of pairs) next.set(a, [...(next.get(a) ?? []), b]);
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const found: string[][] = [];
    const visit = (v: string) => {
      index.set(v, index.size);
      low.set(v, index.get(v)!);
      stack.push(v);
      onStack.add(v);
      for (const w of next.get(v) ?? []) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1) found.push(scc.sort());
      }
    };
    for (const v of next.keys()) if (!index.has(v)) visit(v);
    return found;
  }

  it("finds a cycle when there is one", () => {
    expect(
      cycles([
        ["a", "b"],
        ["b", "c"],
        ["c", "a"],
        ["c", "d"],
      ]),
    ).toEqual([["a", "b", "c"]]);
    expect(
      cycles([
        ["a", "b"],
        ["b", "c"],
      ]),
    ).toEqual([]);
  });

  it("has no import cycle between files, type-only imports included", () => {
    expect(cycles(edges().map((e) => [e.from, e.to]))).toEqual([]);
  });

  it("has no import cycle between folders", () => {
    const between = edges()
      .map((e) => [folderOf(e.from)!, folderOf(e.to)!] as [string, string])
      .filter(([a, b]) => a !== b);
    expect(cycles(between)).toEqual([]);
  });
});
