// The jax-js engine on wasm against the float64 reference: forward pass, gradients (against
// finite differences of the reference), AdamW, determinism, memory over many steps, and GRPO
// learning a task from reward alone.
import { describe, it, expect, beforeAll } from "vitest";
import { paramSpecs } from "../../src/engine/config";
import { initCheckpoint } from "../../src/engine/checkpoint";
import {
  DEFAULT_OPTIM,
  maskTable,
  type StepHyper,
  type TrainBatch,
} from "../../src/engine/backend";
import { Rng } from "../../src/engine/random";
import { JaxBackend } from "../../src/engine/backends/jax";
import { Float64Backend, referenceObjective } from "../../src/engine/backends/float64";
import { DEFAULT_PATTERN_TASK, runPatternTask } from "../../src/engine/pattern-task";
import {
  CONFIGS,
  FORBIDDEN,
  MASKS,
  MLE,
  POLICY,
  ROWS,
  finiteDifferences,
  policyBatch,
  randomCheckpoint,
  randomMask,
  randomTokens,
  relativeErrors,
  toParams,
} from "./fixtures";

let jax: JaxBackend;
beforeAll(async () => {
  jax = await JaxBackend.create("wasm");
}, 120_000); // compiles jax-js's wasm: seconds alone, far more when the cores are busy
const reference = new Float64Backend();
const opts = { capacity: ROWS + 2, masks: MASKS }; // capacity > rows: padding must not matter

function maxAbsDiffAllowed(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) if (b[i] > -1e6) m = Math.max(m, Math.abs(a[i] - b[i])); // skip masked (−1e9) entries
  return m;
}

describe.each(CONFIGS)("jax-js wasm vs float64 reference (%s)", (_, config) => {
  const { table } = maskTable(config, MASKS);

  it("forward: log-probs agree within 1e-4", async () => {
    const ck = randomCheckpoint(config, 21);
    const rng = Rng.seed(4);
    const { tokens, cls } = randomTokens(config, rng);
    const [a, b] = [jax.createModel(ck, opts), reference.createModel(ck, opts)];
    const dist = { temperature: 0.7, logitScale: 1.3 };
    const diffTokens = maxAbsDiffAllowed(
      await a.tokenLogprobs({ rows: ROWS, tokens, cls }, dist),
      await b.tokenLogprobs({ rows: ROWS, tokens, cls }, dist),
    );
    const pos = Int32Array.from({ length: ROWS }, (_, i) => 1 + ((i * 3) % (config.context - 1)));
    const rowCls = Int32Array.from({ length: ROWS }, (_, i) => i % 2);
    const diffNext = maxAbsDiffAllowed(
      await a.nextLogprobs(tokens, ROWS, pos, rowCls, dist),
      await b.nextLogprobs(tokens, ROWS, pos, rowCls, dist),
    );
    console.info(
      `forward (${config.layers} layer): max |Δ log p| tokens ${diffTokens.toExponential(2)}, next ${diffNext.toExponential(2)}`,
    );
    expect(diffTokens).toBeLessThan(1e-4);
    expect(diffNext).toBeLessThan(1e-4);
    a.dispose();
  });

  it("whole distributions agree with the reference and with the token log-probs; the forward KL to oneself is 0", async () => {
    const ck = randomCheckpoint(config, 23);
    const { tokens, cls } = randomTokens(config, Rng.seed(9));
    const dist = { temperature: 0.7, logitScale: 1.3 };
    const [a, b] = [jax.createModel(ck, opts), reference.createModel(ck, opts)];
    const batch = { rows: ROWS, tokens, cls };
    const [qa, qb, lp] = [
      await a.tokenDistributions(batch, dist),
      await b.tokenDistributions(batch, dist),
      await b.tokenLogprobs(batch, dist),
    ];
    const V = config.vocab;
    let diff = 0,
      offToken = 0,
      notNormalised = 0;
    for (let i = 0; i < ROWS * config.context; i++) {
      const t = i % config.context;
      let sum = 0;
      for (let v = 0; v < V; v++) {
        diff = Math.max(diff, Math.abs(qa[i * V + v] - qb[i * V + v]));
        if (cls[i] === 1 && FORBIDDEN.includes(v)) expect(qb[i * V + v]).toBe(0);
        sum += qb[i * V + v];
      }
      if (t === 0) expect(sum).toBe(0);
      else {
        notNormalised = Math.max(notNormalised, Math.abs(sum - 1));
        offToken = Math.max(offToken, Math.abs(Math.log(qb[i * V + tokens[i]]) - lp[i]));
      }
    }
    expect(diff).toBeLessThan(1e-5);
    expect(notNormalised).toBeLessThan(1e-5);
    expect(offToken).toBeLessThan(1e-5);
    // the model's own distributions as refDist: the forward KL and its gradient vanish
    const mask = randomMask(ROWS * config.context, Rng.seed(3));
    const h = { ...MLE, temperature: dist.temperature, forwardKlCoef: 1 };
    const self = await a.gradients(
      {
        ...batch,
        mask,
        advantages: new Float32Array(ROWS),
        refDist: await a.tokenDistributions(batch, { temperature: dist.temperature }),
      },
      h,
    );
    expect(Math.abs(self.stats.forwardKl)).toBeLessThan(1e-5);
    expect(Math.max(...self.grads.map((g) => Math.max(...g.map(Math.abs))))).toBeLessThan(1e-5);
    const other = await a.gradients(
      { ...batch, mask, advantages: new Float32Array(ROWS), refDist: qb },
      h,
    );
    expect(other.stats.forwardKl).toBeGreaterThan(1e-3); // another temperature is another distribution
    a.dispose();
  });

  it("gradients of the clipped KL-regularised loss match finite differences of the reference (rel. error < 1e-3 per tensor)", async () => {
    const ck = randomCheckpoint(config, 7);
    const batch = await policyBatch(config, ck, 11);
    const model = jax.createModel(ck, opts);
    const { stats, grads } = await model.gradients(batch, POLICY);
    model.dispose();
    const params = toParams(ck);
    const ref = referenceObjective(config, params, table, batch, POLICY);
    expect(stats.loss).toBeCloseTo(ref.loss, 4);
    expect(stats.clipFrac).toBeCloseTo(ref.clipFrac, 5);
    expect(ref.clipFrac).toBeGreaterThan(0.05); // both branches of the min are exercised
    const fd = finiteDifferences(
      params,
      () => referenceObjective(config, params, table, batch, POLICY).loss,
    );
    const errors = relativeErrors(
      config,
      grads.map((g) => Float64Array.from(g)),
      fd,
    );
    console.info(
      `jax policy-loss gradients (${config.layers} layer): max relative error ${Math.max(...Object.values(errors)).toExponential(2)}`,
    );
    for (const [name, e] of Object.entries(errors)) expect(e, name).toBeLessThan(1e-3);
  });

  it("maximum-likelihood gradients match finite differences of the reference NLL", async () => {
    const ck = randomCheckpoint(config, 3);
    const rng = Rng.seed(5);
    const { tokens, cls } = randomTokens(config, rng);
    const batch: TrainBatch = { rows: ROWS, tokens, cls, mask: randomMask(tokens.length, rng) };
    const model = jax.createModel(ck, opts);
    const { stats, grads } = await model.gradients(batch, MLE);
    model.dispose();
    const params = toParams(ck);
    expect(stats.nll).toBeCloseTo(referenceObjective(config, params, table, batch, MLE).nll, 4);
    const fd = finiteDifferences(
      params,
      () => referenceObjective(config, params, table, batch, MLE).nll,
    );
    const errors = relativeErrors(
      config,
      grads.map((g) => Float64Array.from(g)),
      fd,
    );
    console.info(
      `jax NLL gradients (${config.layers} layer): max relative error ${Math.max(...Object.values(errors)).toExponential(2)}`,
    );
    for (const [name, e] of Object.entries(errors)) expect(e, name).toBeLessThan(1e-3);
  });

  it("AdamW steps (clip, decay, bias correction) track the reference", async () => {
    const ck = randomCheckpoint(config, 9);
    const batch = await policyBatch(config, ck, 2);
    // a large eps keeps m/√v smooth where g ≈ 0, so float32 noise cannot flip a sign
    const h: StepHyper = {
      ...DEFAULT_OPTIM,
      ...POLICY,
      lr: 1e-2,
      eps: 1e-2,
      weightDecay: 0.1,
      clipNorm: 0.5,
    };
    const [a, b] = [jax.createModel(ck, opts), reference.createModel(ck, opts)];
    for (let s = 0; s < 3; s++) {
      const [sa, sb] = [await a.trainStep(batch, h), await b.trainStep(batch, h)];
      expect(sa.gradNorm).toBeCloseTo(sb.gradNorm, 3);
      expect(sa.loss).toBeCloseTo(sb.loss, 4);
    }
    const [ca, cb] = [await a.checkpoint(), await b.checkpoint()];
    a.dispose();
    expect(ca.optimizer?.step).toBe(3);
    paramSpecs(config).forEach((s, k) => {
      const diff = ca.tensors[k].data.reduce(
        (m, x, i) => Math.max(m, Math.abs(x - cb.tensors[k].data[i])),
        0,
      );
      expect(diff, s.name).toBeLessThan(1e-4);
    });
  });
});

describe("jax-js engine", () => {
  it("checkpoint → load round-trips parameters and Adam state", async () => {
    const config = CONFIGS[0][1];
    const model = jax.createModel(randomCheckpoint(config, 1), opts);
    const batch = await policyBatch(config, randomCheckpoint(config, 1), 3);
    await model.trainStep(batch, { ...DEFAULT_OPTIM, ...POLICY });
    const ck = await model.checkpoint();
    const copy = jax.createModel(ck, opts);
    const [s1, s2] = [
      await model.trainStep(batch, { ...DEFAULT_OPTIM, ...POLICY }),
      await copy.trainStep(batch, { ...DEFAULT_OPTIM, ...POLICY }),
    ];
    expect(s2).toEqual(s1);
    const [c1, c2] = [await model.checkpoint(), await copy.checkpoint()];
    expect(c2).toEqual(c1);
    model.dispose();
    copy.dispose();
    await expect(model.checkpoint()).rejects.toThrow(/disposed/);
  });

  it("gradients stay finite where pre-activations are exactly 0 (regression: power(x, 3) at x = 0)", async () => {
    const config = CONFIGS[1][1];
    const ck = initCheckpoint(config, 0);
    for (const t of ck.tensors) if (t.name.includes("mlp")) t.data.fill(0); // GELU input = b1 = 0 exactly
    const model = jax.createModel(ck, opts);
    const { tokens, cls } = randomTokens(config, Rng.seed(1));
    const { grads } = await model.gradients(
      { rows: ROWS, tokens, cls, mask: new Float32Array(tokens.length).fill(1) },
      MLE,
    );
    model.dispose();
    for (const g of grads) expect(g.every(Number.isFinite)).toBe(true);
  });

  it("rejects bad inputs with clear errors", async () => {
    const config = CONFIGS[0][1];
    const model = jax.createModel(initCheckpoint(config, 0), opts);
    const T = config.context;
    await expect(
      model.tokenLogprobs({ rows: 1, tokens: new Int32Array(T).fill(99) }),
    ).rejects.toThrow(/outside vocab/);
    await expect(model.tokenLogprobs({ rows: 9, tokens: new Int32Array(9 * T) })).rejects.toThrow(
      /rows 9/,
    );
    await expect(
      model.nextLogprobs(new Int32Array(T), 1, Int32Array.of(0), undefined),
    ).rejects.toThrow(/position 0/);
    expect(() => jax.createModel({ ...initCheckpoint(config, 0), tensors: [] }, opts)).toThrow(
      /tensors/,
    );
    model.dispose();
  });

  it("same seed ⇒ bit-identical weights after 50 GRPO steps; another seed differs", async () => {
    const run = (seed: number) =>
      runPatternTask(jax, { ...DEFAULT_PATTERN_TASK, seed, steps: 50, evalEvery: 1000 });
    const [a, b, c] = [await run(5), await run(5), await run(6)];
    const bytes = (r: typeof a) =>
      r.checkpoint.tensors.map((t) => Array.from(new Uint32Array(t.data.buffer)));
    expect(bytes(b)).toEqual(bytes(a));
    expect(bytes(c)).not.toEqual(bytes(a));
  });

  it("GRPO learns the cue-dependent 4-token pattern from reward alone", async () => {
    const result = await runPatternTask(jax, DEFAULT_PATTERN_TASK);
    console.info(
      `pattern task: exact match ${result.initialExact} → ${result.exact}, reward ${result.reward.toFixed(3)}, ${(result.ms / 1000).toFixed(1)} s`,
    );
    expect(result.initialExact).toBeLessThan(0.05);
    expect(result.exact).toBeGreaterThan(0.9);
    const entropies = result.history.map((p) => p.entropy);
    expect(entropies[entropies.length - 1]).toBeLessThan(entropies[0]);
  });
});
