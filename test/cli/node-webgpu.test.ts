// `collapse-lab run --backend webgpu` in Node: jax-js on Dawn (src/experiment/node-webgpu.ts), here
// on Chromium's SwiftShader, a CPU implementation of Vulkan. Two webgpu runs of one config give
// the same numbers (one on the main thread, one on two worker threads, each with its own Dawn);
// a wasm run of that config gives numbers close to them; and when WebGPU cannot start the command
// fails with one clear line instead of running on wasm under a webgpu label.
// SwiftShader is slow, so the smoke preset is shrunk to two conditions, one panel member and no
// simulator diagnostics; the compared runs share that config exactly.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/experiment/experiment";
import { noAdapterMessage, SWIFTSHADER_ICD } from "../../src/experiment/node-webgpu";
import { runCli, type CliResult } from "./harness";

const SWIFTSHADER = { VK_ICD_FILENAMES: SWIFTSHADER_ICD };
const CONFIG = [
  "--preset",
  "persuasion-smoke",
  "--no-store",
  "--set",
  'conditions=["base","single"]',
  "--set",
  'panel=[{"name":"family-a","gamma":4,"corpusScale":1,"seedOffset":101}]',
  "--set",
  "eval.diagnosticSeeds=0",
];
const RUN_MS = 900_000; // one SwiftShader run takes minutes on a busy two-core machine

// Tolerances between backends. They round differently (the GPU fuses ops and reduces in another
// order), so continuous numbers differ in the last float32 digits; the sampled dialogues are the
// same unless a rounding difference moves a uniform draw across a token's boundary.
const NATS = 1e-3; // entropies and pretraining losses, in nats
const EPISODES = 2 / 32; // success rates: at most two of the 32 evaluation dialogues end differently

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-webgpu-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function run(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunReport> {
  const out = join(tmp, `${name}.json`);
  const r = await runCli(["run", ...CONFIG, ...args, "--quiet", "--out", out], {
    timeoutMs: RUN_MS,
    env,
  });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(readFileSync(out, "utf8")) as RunReport;
}

/** The report without what may differ between equal runs: wall times and the machine. */
function numbers(r: RunReport) {
  const { timing: _t, env: _e, ...rest } = r;
  return rest;
}

describe("collapse-lab run --backend webgpu (Dawn on SwiftShader)", () => {
  let gpu1: RunReport, gpu2: RunReport, wasm: RunReport;
  beforeAll(async () => {
    expect(
      existsSync(SWIFTSHADER_ICD),
      `SwiftShader's Vulkan ICD (Debian package chromium) is missing: ${SWIFTSHADER_ICD}`,
    ).toBe(true);
    // one after the other: each run keeps both cores busy
    gpu1 = await run("webgpu-1", ["--backend", "webgpu", "--parallel", "1"], SWIFTSHADER);
    gpu2 = await run("webgpu-2", ["--backend", "webgpu", "--parallel", "2"], SWIFTSHADER);
    wasm = await run("wasm", ["--backend", "wasm", "--parallel", "1"], {});
  }, 3 * RUN_MS);

  it("records webgpu as the backend that ran, on SwiftShader", () => {
    for (const r of [gpu1, gpu2]) {
      expect(r.env.backend).toBe("webgpu");
      expect(r.env.fallback).toBeUndefined();
      expect(r.env.microBenchmark?.backend).toBe("webgpu");
    }
    expect([gpu1.env.parallel, gpu2.env.parallel]).toEqual([1, 2]);
    expect(gpu1.conditions.map((c) => c.id)).toEqual(["base", "single"]);
  });

  it("demo trains on webgpu too", async () => {
    const r = await runCli(["demo", "--backend", "webgpu", "--steps", "1", "--json"], {
      timeoutMs: RUN_MS,
      env: SWIFTSHADER,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ backend: "webgpu" });
  });

  it("gives the same numbers twice: same config, seed and backend", () => {
    expect(numbers(gpu2)).toEqual(numbers(gpu1));
  });

  it("gives numbers close to wasm's on the same config", () => {
    expect(wasm.env.backend).toBe("wasm");
    expect(gpu1.conditions.map((c) => c.id)).toEqual(wasm.conditions.map((c) => c.id));
    gpu1.conditions.forEach((c, i) => {
      const w = wasm.conditions[i];
      expect(c.seeds.length).toBe(w.seeds.length);
      c.seeds.forEach((s, j) => {
        const ws = w.seeds[j];
        for (const k of ["trainSuccess", "heldoutSuccess", "humanSuccess"] as const)
          expect(Math.abs(s[k] - ws[k]), `${c.id} seed ${s.seed} ${k}`).toBeLessThanOrEqual(
            EPISODES,
          );
        expect(
          Math.abs(s.policyEntropy - ws.policyEntropy),
          `${c.id} policy entropy`,
        ).toBeLessThanOrEqual(NATS);
        expect(s.curve.map((p) => p.step)).toEqual(ws.curve.map((p) => p.step));
        s.curve.forEach((p, t) => {
          const q = ws.curve[t];
          for (const k of ["train", "heldout", "human"] as const)
            expect(Math.abs(p[k] - q[k]), `${c.id} curve step ${p.step} ${k}`).toBeLessThanOrEqual(
              EPISODES,
            );
          expect(
            Math.abs(p.entropy - q.entropy),
            `${c.id} curve step ${p.step} entropy`,
          ).toBeLessThanOrEqual(NATS);
        });
      });
    });
    gpu1.pretraining.forEach((p, i) => {
      for (const k of ["referenceNll", "policyNll"] as const) {
        const w = wasm.pretraining[i][k];
        expect(p[k].length).toBe(w.length);
        p[k].forEach((x, t) =>
          expect(Math.abs(x - w[t]), `pretraining ${k}[${t}]`).toBeLessThanOrEqual(NATS),
        );
      }
    });
  });
});

describe("collapse-lab with a WebGPU that cannot start", () => {
  const missing = { VK_ICD_FILENAMES: join(tmp, "no-such-icd.json") };
  const oneClearLine = (r: CliResult) => {
    expect(r.code, r.stderr).toBe(1);
    const line = r.stderr.split("\n").find((l) => l.startsWith("collapse-lab: "));
    expect(line).toMatch(
      /^collapse-lab: WebGPU in Node \(Dawn\) could not start: .*VK_ICD_FILENAMES=\S+no-such-icd\.json is a file that does not exist/,
    );
    expect(line).toContain(`VK_ICD_FILENAMES=${SWIFTSHADER_ICD}`);
  };

  for (const parallel of ["1", "2"]) {
    it(`run --parallel ${parallel} fails instead of falling back to wasm, and writes no report`, async () => {
      const out = join(tmp, `failed-${parallel}.json`);
      const r = await runCli(
        ["run", ...CONFIG, "--backend", "webgpu", "--parallel", parallel, "--out", out],
        { env: missing },
      );
      oneClearLine(r);
      expect(r.stdout).toBe(""); // no results table
      expect(existsSync(out)).toBe(false);
    });
  }

  it("demo fails the same way", async () => {
    oneClearLine(await runCli(["demo", "--backend", "webgpu", "--steps", "1"], { env: missing }));
  });

  it("names the optional webgpu package and how to install it when npm left it out", async () => {
    const hide = pathToFileURL(join(import.meta.dirname, "fixtures/without-webgpu.mjs")).href;
    const r = await runCli(["demo", "--backend", "webgpu", "--steps", "1"], {
      env: { ...SWIFTSHADER, NODE_OPTIONS: `--import=${hide}` },
    });
    expect(r.code, r.stderr).toBe(1);
    const line = r.stderr.split("\n").find((l) => l.startsWith("collapse-lab: "));
    expect(line).toMatch(/optional dependency that is not installed/);
    expect(line).toContain("npm install --include=optional");
    expect(line).toContain("--backend wasm");
  });

  it("says so when VK_ICD_FILENAMES is unset, and names SwiftShader's ICD as the way to test without a GPU", () => {
    const m = noAdapterMessage("requestAdapter() returned no adapter", {}, SWIFTSHADER_ICD);
    if (process.platform !== "linux")
      return expect(m).toBe(
        "WebGPU in Node (Dawn) could not start: requestAdapter() returned no adapter",
      );
    expect(m).toContain("VK_ICD_FILENAMES is unset");
    expect(m).toContain(`VK_ICD_FILENAMES=${SWIFTSHADER_ICD}`);
    const elsewhere = noAdapterMessage(
      "requestAdapter() returned no adapter",
      {},
      join(tmp, "no-chromium.json"),
    );
    expect(elsewhere).toContain("install Debian's chromium package");
  });
});
