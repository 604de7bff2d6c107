// A preset end to end, timed by phase, twice in one run: as collapse-lab runs it (pretrained
// models from the store, incremental decoding) and with both switched off (every model
// pretrained live, every dialogue forward a full pass over the padded sequence), with the ratios.
// Both runs must give the same numbers: the store holds what live pretraining computes, and
// incremental decoding computes what the full forward does.
// Usage: npm run bench:presets [-- --preset persuasion-quick --parallel 2 --only fast|before --rl-steps N]
// (--rl-steps shortens both runs' RL alike, e.g. to measure the per-step ratio in minutes)
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { table } from "../src/util/format";
import type { DecodingMode } from "../src/benchmarks/encode";
import { runExperiment, type RunReport } from "../src/experiment/experiment";
import { NodeWorkerExecutor } from "../src/experiment/node-executor";
import { nodeStore } from "../src/experiment/node-store";
import { presetConfig } from "../src/experiment/presets";
import { validateConfig } from "../src/experiment/config";

const { values } = parseArgs({
  options: {
    preset: { type: "string", default: "persuasion-quick" },
    parallel: { type: "string", default: String(Math.min(availableParallelism(), 8)) },
    only: { type: "string" },
    "rl-steps": { type: "string" },
  },
});
const preset = values.preset!;
const parallel = Number(values.parallel);
if (!Number.isInteger(parallel) || parallel < 1) {
  console.error(`bench: --parallel must be a positive integer, got "${values.parallel}"`);
  process.exit(2);
}
if (values.only && values.only !== "fast" && values.only !== "before") {
  console.error(`bench: --only must be "fast" or "before", got "${values.only}"`);
  process.exit(2);
}
const base = presetConfig(preset);
const rlSteps = values["rl-steps"] === undefined ? base.rl.steps : Number(values["rl-steps"]);
if (!Number.isInteger(rlSteps) || rlSteps < 0) {
  console.error(`bench: --rl-steps must be a whole number, got "${values["rl-steps"]}"`);
  process.exit(2);
}
const config = validateConfig({
  ...base,
  rl: { ...base.rl, steps: rlSteps, evalEvery: Math.min(base.rl.evalEvery, Math.max(1, rlSteps)) },
});

interface Variant {
  name: "fast" | "before";
  label: string;
  decoding: DecodingMode;
  store: boolean;
}
const VARIANTS: Variant[] = [
  { name: "fast", label: "store + incremental decoding", decoding: "incremental", store: true },
  { name: "before", label: "live pretraining + full forward", decoding: "full", store: false },
];

interface Timed {
  variant: Variant;
  report: RunReport;
  wallMs: number;
}

async function run(v: Variant): Promise<Timed> {
  console.error(`bench: ${preset}, ${v.label}, ${parallel} worker(s) …`);
  const t0 = performance.now();
  const executor = new NodeWorkerExecutor(parallel, "wasm", { decoding: v.decoding });
  try {
    const report = await runExperiment(config, executor, {
      backend: "wasm",
      preset,
      store: v.store ? nodeStore() : undefined,
    });
    return { variant: v, report, wallMs: performance.now() - t0 };
  } finally {
    await executor.close();
  }
}

/** Phase times (s): pretraining wall, RL and evaluation summed over units (worker time), diagnostics, total wall. */
function phases(t: Timed) {
  const units = t.report.timing.units ?? [];
  const sum = (k: "rlMs" | "evalMs") => units.reduce((a, u) => a + u[k], 0);
  const rlSteps = units.reduce(
    (a, u) => a + (u.condition === "base" ? 0 : t.report.config.rl.steps),
    0,
  );
  return {
    pretrain: t.report.timing.pretrainMs / 1000,
    rl: sum("rlMs") / 1000,
    rlStepMs: rlSteps ? sum("rlMs") / rlSteps : NaN,
    evaluation: sum("evalMs") / 1000,
    evalPerUnit: units.length ? sum("evalMs") / units.length / 1000 : NaN,
    diagnostics: t.report.timing.diagnosticsMs / 1000,
    train: t.report.timing.trainMs / 1000,
    total: t.wallMs / 1000,
  };
}

const runs: Timed[] = [];
for (const v of VARIANTS) if (!values.only || values.only === v.name) runs.push(await run(v));

const rows: [string, keyof ReturnType<typeof phases>, string][] = [
  ["pretraining (wall; store load when fast)", "pretrain", "s"],
  ["RL steps (worker time, all units)", "rl", "s"],
  ["  per RL step (mean over conditions)", "rlStepMs", "ms"],
  ["evaluation (worker time, all units)", "evaluation", "s"],
  ["  per unit", "evalPerUnit", "s"],
  ["diagnostics (wall, shares the workers)", "diagnostics", "s"],
  ["training + evaluation (wall)", "train", "s"],
  ["whole preset (wall)", "total", "s"],
];
const measured = runs.map(phases);
const fmt = (x: number, unit: string) =>
  Number.isFinite(x) ? (unit === "ms" ? `${x.toFixed(1)} ms` : `${x.toFixed(1)} s`) : "–";
const header = ["phase", ...runs.map((r) => r.variant.label)];
if (runs.length === 2) header.push("speed-up");
console.log(
  `\n${preset}${rlSteps !== base.rl.steps ? ` (RL shortened to ${rlSteps} steps)` : ""}: ${config.seeds} seed(s), conditions ${config.conditions.join(" ")}, ${config.rl.steps} RL steps × ${config.rl.prompts * config.rl.groupSize} rollouts, ${parallel} worker(s), wasm`,
);
console.log(
  table([
    header,
    ...rows.map(([label, key, unit]) => {
      const cells = measured.map((m) => fmt(m[key], unit));
      if (runs.length === 2) {
        const ratio = measured[1][key] / measured[0][key];
        cells.push(
          Number.isFinite(ratio) && measured[0][key] > 0.05 ? `${ratio.toFixed(1)}×` : "–",
        );
      }
      return [label, ...cells];
    }),
  ]),
);
for (const r of runs) {
  const s = r.report.store;
  if (s)
    console.log(
      `${r.variant.label}: ${s.loaded} model(s) from the store, ${s.trained} pretrained live${s.messages.length ? ` (${s.messages.join("; ")})` : ""}`,
    );
}
if (runs.length === 2) {
  const strip = (r: RunReport) => JSON.stringify(r.conditions);
  console.log(
    `same numbers in both runs: ${strip(runs[0].report) === strip(runs[1].report) ? "yes" : "no (see the two reports)"}`,
  );
}
