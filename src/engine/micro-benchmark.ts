// A few training and sampling steps of a model of the experiment's size on one backend. The app
// runs it on WebGPU and on wasm and keeps the faster (backend `auto`; tiny models can be faster on
// wasm because of dispatch latency; software WebGPU is far slower than either), and scales a
// recorded run's wall time by it to say how long a live run will take on this device; the CLI
// records it in every report for that comparison.
import { DEFAULT_OPTIM, DEFAULT_POLICY, type EngineBackend, type TrainBatch } from "./backend";
import { initCheckpoint } from "./checkpoint";
import type { ModelConfig } from "./config";
import { Rng } from "./random";

export interface MicroBenchmark {
  backend: string;
  /** ms per (train step + sampling step), after a warm-up call that compiles. */
  msPerStep: number;
  warmupMs: number;
  iterations: number;
}

export async function microBenchmark(
  backend: EngineBackend,
  config: ModelConfig,
  rows: number,
  iterations = 3,
): Promise<MicroBenchmark> {
  const T = config.context;
  const rng = Rng.seed(0);
  const tokens = Int32Array.from({ length: rows * T }, () => rng.int(config.vocab));
  const batch: TrainBatch = {
    rows,
    tokens,
    mask: new Float32Array(rows * T).fill(1),
    advantages: Float32Array.from({ length: rows }, () => rng.normal()),
  };
  const pos = Int32Array.from({ length: rows }, (_, b) => 1 + (b % (T - 1)));
  const model = backend.createModel(initCheckpoint(config, 1), { capacity: rows });
  try {
    const once = async () => {
      await model.trainStep(batch, { ...DEFAULT_OPTIM, ...DEFAULT_POLICY });
      await model.nextLogprobs(tokens, rows, pos, undefined);
    };
    let t0 = performance.now();
    await once();
    const warmupMs = performance.now() - t0;
    t0 = performance.now();
    for (let i = 0; i < iterations; i++) await once();
    return {
      backend: backend.name,
      msPerStep: (performance.now() - t0) / iterations,
      warmupMs,
      iterations,
    };
  } finally {
    model.dispose();
  }
}
