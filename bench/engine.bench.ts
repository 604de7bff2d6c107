// Engine speed, measured side by side in one run: the jax-js engine on wasm against the plain
// float64 reference on the same train step and the same sampling step, for a preset model size.
// Prints steps/s, sampled tokens/s and the ratios. Usage: npm run bench [-- --size small|default|large]
import { parseArgs } from "node:util";
import { type ModelConfig, parameterCount } from "../src/engine/config";
import { initCheckpoint } from "../src/engine/checkpoint";
import {
  DEFAULT_OPTIM,
  DEFAULT_POLICY,
  type EngineBackend,
  type EngineModel,
  type TrainBatch,
} from "../src/engine/backend";
import { createBackend } from "../src/engine/backends";
import { Rng } from "../src/engine/random";
import { sampleNext } from "../src/engine/sampling";
import { table } from "../src/util/format";

const SIZES: Record<string, { model: ModelConfig; rows: number }> = {
  small: {
    model: { vocab: 32, context: 16, d: 32, layers: 1, heads: 4, mlpRatio: 4, prefixLen: 0 },
    rows: 64,
  },
  default: {
    model: { vocab: 64, context: 32, d: 64, layers: 1, heads: 4, mlpRatio: 4, prefixLen: 0 },
    rows: 256,
  },
  large: {
    model: { vocab: 128, context: 64, d: 128, layers: 2, heads: 8, mlpRatio: 4, prefixLen: 0 },
    rows: 256,
  },
};

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "default" },
    seconds: { type: "string", default: "4" },
  },
});
const preset = SIZES[values.size!];
if (!preset) {
  console.error(
    `bench: unknown --size "${values.size}"; choose one of ${Object.keys(SIZES).join(", ")}`,
  );
  process.exit(2);
}
const budgetMs = 1000 * Number(values.seconds);
const { model: config, rows } = preset;
const T = config.context;

const rng = Rng.seed(0);
const tokens = Int32Array.from({ length: rows * T }, () => rng.int(config.vocab));
const mask = new Float32Array(rows * T).fill(1);
const batch: TrainBatch = {
  rows,
  tokens,
  mask,
  advantages: Float32Array.from({ length: rows }, () => rng.normal()),
};
const hyper = { ...DEFAULT_OPTIM, ...DEFAULT_POLICY };
const pos = Int32Array.from({ length: rows }, (_, b) => 1 + (b % (T - 1)));

/** Mean ms per call after one warm-up call (which includes jit compilation), within a time budget. */
async function time(
  fn: () => Promise<unknown>,
  maxIters = 50,
): Promise<{ ms: number; firstMs: number; iters: number }> {
  let t0 = performance.now();
  await fn();
  const firstMs = performance.now() - t0;
  let iters = 0;
  t0 = performance.now();
  while (iters < maxIters && (iters < 2 || performance.now() - t0 < budgetMs)) {
    await fn();
    iters++;
  }
  return { ms: (performance.now() - t0) / iters, firstMs, iters };
}

interface Row {
  name: string;
  train: Awaited<ReturnType<typeof time>>;
  sample: Awaited<ReturnType<typeof time>>;
}

async function measure(backend: EngineBackend): Promise<Row> {
  const model: EngineModel = backend.createModel(initCheckpoint(config, 1), { capacity: rows });
  const sampleRng = Rng.seed(2);
  const train = await time(() => model.trainStep(batch, hyper));
  const sample = await time(() => sampleNext(model, tokens, rows, pos, undefined, sampleRng));
  model.dispose();
  return { name: backend.name, train, sample };
}

console.log(
  `engine bench — size "${values.size}": ${parameterCount(config)} parameters (vocab ${config.vocab}, context ${T}, d ${config.d}, ${config.layers} layer(s)), batch ${rows} × ${T}`,
);
console.log(
  `machine: ${process.platform} ${process.arch}, node ${process.version}; each measurement: mean over ≥ 2 calls within ${values.seconds} s after one warm-up call\n`,
);
const results: Row[] = [];
for (const name of ["wasm", "float64"] as const) {
  const { backend } = await createBackend(name);
  results.push(await measure(backend));
}
const [fast, ref] = results;
const perS = (ms: number) => 1000 / ms;
console.log(
  table([
    [
      "backend",
      "train step",
      "train steps/s",
      "sample step",
      "sampled tokens/s",
      "first call (compile)",
    ],
    ...results.map((r) => [
      r.name === "float64" ? "cpu (float64 reference)" : `${r.name} (jax-js, jit)`,
      `${r.train.ms.toFixed(1)} ms`,
      perS(r.train.ms).toFixed(2),
      `${r.sample.ms.toFixed(1)} ms`,
      (rows * perS(r.sample.ms)).toFixed(0),
      `${(r.train.firstMs + r.sample.firstMs).toFixed(0)} ms`,
    ]),
  ]),
);
console.log(
  `\nratio wasm / reference: train ${(ref.train.ms / fast.train.ms).toFixed(1)}× faster, sampling ${(ref.sample.ms / fast.sample.ms).toFixed(1)}× faster`,
);
