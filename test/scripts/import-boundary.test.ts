// Benchmarks are plug-ins: ESLint's no-restricted-imports (eslint.config.js) refuses an import of a
// benchmark's folder from the layers above it. Checked on code linted as if it were in those files,
// so the rule is known to fire (the tree itself passing is `npm run lint`, part of typecheck).
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: process.cwd() });

async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result.messages.filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
}

describe("the import boundary of benchmarks", () => {
  it.each([
    ["src/experiment/x.ts", 'import { ACTS } from "../benchmarks/persuasion/world";\nexport const n = ACTS.length;\n'],
    ["src/app/lib/x.ts", 'import { ceilings } from "../../benchmarks/persuasion/ceilings";\nexport const c = ceilings;\n'],
    ["src/lm/x.ts", 'import { persuasion } from "../benchmarks/persuasion";\nexport const p = persuasion;\n'],
    ["workers/x.ts", 'import { service } from "../src/benchmarks/service/index";\nexport const s = service;\n'],
  ])("refuses %s importing a benchmark's folder", async (file, code) => {
    const errors = await boundaryErrors(file, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/registry/);
  });

  it("allows the registry, the shared types and encode, and a benchmark importing its own files", async () => {
    const ok =
      'import { benchmarkModule } from "../benchmarks/registry";\nimport type { Benchmark } from "../benchmarks/types";\nimport { encode } from "../benchmarks/encode";\nexport const x = [benchmarkModule, encode] as unknown as Benchmark;\n';
    expect(await boundaryErrors("src/experiment/x.ts", ok)).toEqual([]);
    expect(await boundaryErrors("src/benchmarks/persuasion/x.ts", 'import { ACTS } from "./world";\nexport const n = ACTS.length;\n')).toEqual([]);
  });
}, 60_000);
