// How dialogues are decoded, side by side in one process: one RL unit of a preset (`single`,
// shortened to a few steps) with the preset's pretrained models from the store, run with
// incremental decoding over the requested rows only (what collapse-lab does), incremental decoding
// over every slot of the model (before row buckets) and a full forward per call (before
// incremental decoding), in turn, several times; prints RL ms per step and evaluation seconds
// (medians), the ratios, and whether the three gave the same numbers.
// Usage: npm run bench:decode [-- --preset persuasion-quick --preset service-quick --steps 20 --repeats 3]
import { parseArgs } from "node:util";
import { table } from "../src/util/format";
import { setDecoding, type DecodingMode } from "../src/benchmarks/encode";
import { createBackend } from "../src/engine/backends";
import { validateConfig, type ExperimentConfig } from "../src/experiment/config";
import { nodeStore } from "../src/experiment/node-store";
import { presetConfig } from "../src/experiment/presets";
import {
  assemblePretrained,
  describeJob,
  pretrainJobs,
  type PretrainJob,
  type PretrainedSet,
  type PretrainResult,
} from "../src/experiment/pretrain";
import { runUnit } from "../src/experiment/runner";
import { lookUp } from "../src/experiment/store";

const { values } = parseArgs({
  options: {
    preset: { type: "string", multiple: true, default: ["persuasion-quick", "service-quick"] },
    steps: { type: "string", default: "20" },
    repeats: { type: "string", default: "3" },
  },
});
const steps = Number(values.steps);
const repeats = Number(values.repeats);
for (const [name, n] of [
  ["--steps", steps],
  ["--repeats", repeats],
] as const) {
  if (!Number.isInteger(n) || n < 1) {
    console.error(`bench: ${name} must be a positive integer`);
    process.exit(2);
  }
}

const MODES: { mode: DecodingMode; label: string }[] = [
  { mode: "incremental", label: "incremental, requested rows" },
  { mode: "all-rows", label: "incremental, every slot" },
  { mode: "full", label: "full forward per call" },
];

const { backend } = await createBackend("wasm");

/** The preset's models for its first seed, from the store; a missing one is an error (run `collapse-lab store`). */
async function fromStore(c: ExperimentConfig): Promise<PretrainedSet> {
  const store = nodeStore();
  const results = new Map<PretrainJob, PretrainResult>();
  for (const job of pretrainJobs(c, c.seedBase)) {
    const found = await lookUp(store, c, job, backend.name);
    if (found.source !== "store")
      throw new Error(
        `bench: ${describeJob(c, job)} is not in the store (${found.problem ?? found.unavailable ?? "missing"}); run npx collapse-lab store`,
      );
    results.set(job, found.result);
  }
  return assemblePretrained(c, c.seedBase, results);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows: string[][] = [];
for (const preset of values.preset!) {
  const base = presetConfig(preset);
  const config = validateConfig({ ...base, rl: { ...base.rl, steps, evalEvery: steps } });
  const pretrained = await fromStore(config);
  const times = new Map<DecodingMode, { rl: number[]; evalS: number[]; numbers: string }>();
  // warm-up, not counted: jax-js compiles each shape on first use, and every mode meets new ones
  for (const { mode } of MODES) {
    setDecoding(mode);
    await runUnit(
      backend,
      validateConfig({ ...config, rl: { ...config.rl, steps: 2, evalEvery: 2 } }),
      pretrained,
      "single",
    );
  }
  for (let r = 0; r < repeats; r++) {
    for (const { mode } of MODES) {
      setDecoding(mode);
      const m = await runUnit(backend, config, pretrained, "single");
      const t = times.get(mode) ?? { rl: [], evalS: [], numbers: "" };
      t.rl.push(m.timing!.rlMs / steps);
      t.evalS.push(m.timing!.evalMs / 1000);
      t.numbers = JSON.stringify([
        m.trainSuccess,
        m.heldoutSuccess,
        m.humanSuccess,
        m.policyEntropy,
        m.curve,
      ]);
      times.set(mode, t);
      console.info(
        `${preset} · ${mode} · repeat ${r + 1}: ${(m.timing!.rlMs / steps).toFixed(1)} ms per RL step, evaluation ${(m.timing!.evalMs / 1000).toFixed(1)} s`,
      );
    }
  }
  setDecoding("incremental");
  const fast = times.get("incremental")!;
  for (const { mode, label } of MODES) {
    const t = times.get(mode)!;
    rows.push([
      preset,
      label,
      median(t.rl).toFixed(1),
      (median(t.rl) / median(fast.rl)).toFixed(2),
      median(t.evalS).toFixed(1),
      (median(t.evalS) / median(fast.evalS)).toFixed(2),
      t.numbers === fast.numbers ? "yes" : "no",
    ]);
  }
}
console.log(
  `\nsingle, ${steps} RL steps, medians of ${repeats} runs per mode (wasm, one process)\n`,
);
console.log(
  table([
    ["preset", "decoding", "RL ms/step", "× requested rows", "evaluation s", "×", "same numbers"],
    ...rows,
  ]),
);
