// The engine in headless Chromium's page on WebGPU (SwiftShader in CI) and wasm: agreement with
// the float64 reference, determinism, GRPO, cancellation, and WebGPU against wasm.
import { describe, it, expect, beforeAll } from "vitest";
import { initCheckpoint, type Checkpoint } from "../../src/engine/checkpoint";
import {
  DEFAULT_OPTIM,
  maskTable,
  type EngineBackend,
  type StepHyper,
  type TrainBatch,
} from "../../src/engine/backend";
import { createBackend, type BackendInfo } from "../../src/engine/backends";
import { paramSpecs } from "../../src/engine/config";
import { Float64Backend, referenceGradients } from "../../src/engine/backends/float64";
import { Rng } from "../../src/engine/random";
import {
  DEFAULT_PATTERN_TASK,
  runPatternTask,
  type PatternProgress,
  type PatternTaskConfig,
} from "../../src/engine/pattern-task";
import {
  CONFIGS,
  MASKS,
  MLE,
  POLICY,
  ROWS,
  norm,
  policyBatch,
  randomCheckpoint,
  randomMask,
  randomTokens,
  toParams,
} from "../engine/fixtures";

const BACKENDS = ["webgpu", "wasm"] as const;
const opts = { capacity: ROWS + 2, masks: MASKS };
const reference = new Float64Backend();
const config = CONFIGS[0][1];

function maxAbsDiffAllowed(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) if (b[i] > -1e6) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

const started = new Map<string, { backend: EngineBackend; info: BackendInfo }>();
beforeAll(async () => {
  for (const b of BACKENDS) {
    const s = await createBackend(b);
    started.set(b, s);
    console.info(`${b}: ${JSON.stringify(s.info)}`);
  }
}, 240_000); // jax-js on WebGPU (SwiftShader) and wasm: slow to start on a busy machine

const pattern = (
  b: EngineBackend,
  config: Partial<PatternTaskConfig>,
  opts: Parameters<typeof runPatternTask>[2] = {},
) => runPatternTask(b, { ...DEFAULT_PATTERN_TASK, ...config }, opts);

describe.each(BACKENDS)("engine on %s", (backend) => {
  const be = () => started.get(backend)!.backend;

  it("runs on the requested backend", () => {
    const { info } = started.get(backend)!;
    expect(info.name, info.fallbackReason).toBe(backend);
  });

  it("forward log-probs equal the float64 reference within 1e-4", async () => {
    const ck = randomCheckpoint(config, 21);
    const { tokens, cls } = randomTokens(config, Rng.seed(4));
    const dist = { temperature: 0.7, logitScale: 1.3 };
    const model = be().createModel(ck, opts);
    const got = await model.tokenLogprobs({ rows: ROWS, tokens, cls }, dist);
    const want = await reference
      .createModel(ck, opts)
      .tokenLogprobs({ rows: ROWS, tokens, cls }, dist);
    model.dispose();
    expect(maxAbsDiffAllowed(got, want)).toBeLessThan(1e-4);
  });

  it.each([
    ["policy loss", POLICY],
    ["NLL", MLE],
  ] as const)(
    "gradients of the %s match the reference (rel. error < 1e-3 per tensor)",
    async (_, hyper) => {
      const ck = randomCheckpoint(config, 7);
      const batch =
        hyper === POLICY
          ? await policyBatch(config, ck, 11)
          : {
              ...randomTokens(config, Rng.seed(5)),
              rows: ROWS,
              mask: randomMask(ROWS * config.context, Rng.seed(6)),
            };
      const model = be().createModel(ck, opts);
      const { grads } = await model.gradients(batch, hyper);
      model.dispose();
      const want = referenceGradients(
        config,
        toParams(ck),
        maskTable(config, MASKS).table,
        batch,
        hyper,
      ).grads;
      paramSpecs(config).forEach((s, k) => {
        const err = norm(grads[k].map((g, i) => g - want[k][i])) / Math.max(norm(want[k]), 1e-12);
        expect(err, s.name).toBeLessThan(1e-3);
      });
    },
  );

  it("same seed ⇒ bit-identical weights; GRPO raises the reward; progress is reported every step", async () => {
    const steps = backend === "webgpu" ? 25 : 60; // SwiftShader is a CPU emulation of a GPU: slow
    const progress: PatternProgress[] = [];
    const onProgress = (p: PatternProgress) => void progress.push(p);
    const run = () => pattern(be(), { seed: 3, steps, evalEvery: 1000 }, { onProgress });
    const a = await run();
    const b = await run();
    const bits = (ck: typeof a.checkpoint) =>
      ck.tensors.map((t) => Array.from(new Uint32Array(t.data.buffer)));
    expect(bits(b.checkpoint)).toEqual(bits(a.checkpoint));
    expect(progress.filter((p) => p.step === steps)).toHaveLength(2);
    const first = progress.slice(0, 5).reduce((s, p) => s + p.reward, 0) / 5;
    console.info(
      `${backend}: pattern task ${steps} steps, reward ${first.toFixed(3)} → ${a.reward.toFixed(3)}, ${(a.ms / 1000).toFixed(1)} s`,
    );
    expect(a.reward).toBeGreaterThan(first + 0.1);
  });

  it("stops a running task when its signal aborts", async () => {
    const controller = new AbortController();
    const cancelled = pattern(
      be(),
      { steps: 100_000 },
      {
        signal: controller.signal,
        onProgress: (p) => {
          if (p.step >= 2) controller.abort(new Error("cancelled"));
        },
      },
    );
    await expect(cancelled).rejects.toThrow(/cancelled/);
  });
});

describe("webgpu and wasm", () => {
  it("agree on log-probs and after AdamW steps", async () => {
    const ck = randomCheckpoint(config, 9);
    const batch: TrainBatch = await policyBatch(config, ck, 2);
    const h: StepHyper = { ...DEFAULT_OPTIM, ...POLICY, lr: 1e-2, eps: 1e-2 };
    const results = [];
    for (const b of BACKENDS) {
      const model = started.get(b)!.backend.createModel(ck, opts);
      const lp = await model.tokenLogprobs(batch);
      for (let s = 0; s < 5; s++) await model.trainStep(batch, h);
      results.push({ lp, ck: await model.checkpoint() });
      model.dispose();
    }
    const [gpu, cpu] = results;
    expect(maxAbsDiffAllowed(gpu.lp, cpu.lp)).toBeLessThan(1e-4);
    gpu.ck.tensors.forEach((t, k) => {
      const diff = t.data.reduce(
        (m, x, i) => Math.max(m, Math.abs(x - cpu.ck.tensors[k].data[i])),
        0,
      );
      expect(diff, t.name).toBeLessThan(1e-4);
    });
  });

  it("a checkpoint the pattern task initialises on each backend equals a direct initialisation bit for bit", async () => {
    // the pattern task initialises its policy from its seed; with 0 steps it returns that checkpoint
    const seed = 5;
    const want = initCheckpoint(
      DEFAULT_PATTERN_TASK.model,
      Rng.seed(seed)
        .fork(0)
        .int(2 ** 31),
    ); // pattern-task.ts's derivation
    const bits = (ck: Checkpoint) =>
      ck.tensors.map((t) => [
        t.name,
        Array.from(new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length)),
      ]);
    for (const b of BACKENDS) {
      const { checkpoint: got } = await pattern(started.get(b)!.backend, { seed, steps: 0 });
      expect(got.config, b).toEqual(want.config);
      expect(bits(got), b).toEqual(bits(want));
    }
  });
});
