// Tests of the float64 reference backend: analytic gradients against central finite
// differences of the objective, causality, the masked distributions, AdamW, checkpoints, and
// the errors bad inputs raise. Tiny configs keep it fast.
import { describe, it, expect } from "vitest";
import { paramSpecs } from "../../src/engine/config";
import { initCheckpoint } from "../../src/engine/checkpoint";
import {
  type StepHyper,
  type TrainBatch,
  DEFAULT_OPTIM,
  maskTable,
} from "../../src/engine/backend";
import { Rng } from "../../src/engine/random";
import {
  TINY,
  CONFIGS,
  ROWS,
  MASKS,
  DIST,
  POLICY,
  MLE,
  randomCheckpoint,
  toParams,
  randomTokens,
  randomMask,
  policyBatch,
  finiteDifferences,
  norm,
  relativeErrors,
} from "./fixtures";
import {
  Float64Backend,
  referenceForward,
  referenceGradients,
  referenceObjective,
} from "../../src/engine/backends/float64";

describe.each(CONFIGS)("reference gradients (%s)", (_, config) => {
  const { table } = maskTable(config, MASKS);

  it("match finite differences of the clipped, KL-regularised policy loss", async () => {
    const ck = randomCheckpoint(config, 7);
    const params = toParams(ck);
    const batch = await policyBatch(config, ck, 11);
    const dist = { logitScale: DIST.logitScale };
    const { stats, grads } = referenceGradients(config, params, table, batch, POLICY, dist);

    // the batch exercises both branches of the min and the KL term
    expect(stats.clipFrac).toBeGreaterThan(0.05);
    expect(stats.clipFrac).toBeLessThan(0.95);
    expect(stats.kl).toBeGreaterThan(0);
    expect(stats).toEqual(referenceObjective(config, params, table, batch, POLICY, dist));

    const fd = finiteDifferences(
      params,
      () => referenceObjective(config, params, table, batch, POLICY, dist).loss,
    );
    const errors = relativeErrors(config, grads, fd);
    console.info(
      `policy loss, ${config.layers} layer(s): max relative gradient error ${Math.max(...Object.values(errors)).toExponential(2)}`,
    );
    for (const [name, e] of Object.entries(errors)) expect(e, name).toBeLessThan(1e-6);
  });

  it("without oldLogp, advantages and refLogp are the gradient of the mean NLL", () => {
    const ck = randomCheckpoint(config, 3);
    const params = toParams(ck);
    const rng = Rng.seed(5);
    const { tokens, cls } = randomTokens(config, rng);
    const batch: TrainBatch = { rows: ROWS, tokens, cls, mask: randomMask(tokens.length, rng) };
    const { stats, grads } = referenceGradients(config, params, table, batch, MLE);

    expect(stats.loss).toBeCloseTo(-1, 12); // −mean(A) with A = 1: the ratio trick's value
    expect(stats.kl).toBe(0);
    expect(stats.clipFrac).toBe(0);

    const fd = finiteDifferences(
      params,
      () => referenceObjective(config, params, table, batch, MLE).nll,
    );
    const errors = relativeErrors(config, grads, fd);
    console.info(
      `MLE, ${config.layers} layer(s): max relative gradient error ${Math.max(...Object.values(errors)).toExponential(2)}`,
    );
    for (const [name, e] of Object.entries(errors)) expect(e, name).toBeLessThan(1e-6);
  });
});

describe("reference objective", () => {
  const config = TINY;
  const { table } = maskTable(config, MASKS);

  it("counts masked tokens from t = 1 and weights them by the mask", () => {
    const params = toParams(randomCheckpoint(config, 1));
    const { tokens } = randomTokens(config, Rng.seed(2));
    const mask = new Float32Array(tokens.length);
    mask[0] = 1; // token 0 is never a target
    mask[3] = 0.5;
    mask[config.context + 2] = 1;
    const advantages = Float32Array.from([2, -1, 5]);
    const s = referenceObjective(
      config,
      params,
      table,
      { rows: ROWS, tokens, mask, advantages },
      MLE,
    );
    expect(s.tokens).toBe(1.5);
    expect(s.loss).toBeCloseTo(-(0.5 * 2 + 1 * -1) / 1.5, 12);
  });
});

describe("reference model", () => {
  const config = TINY;
  const backend = new Float64Backend();
  const hyper: StepHyper = { ...DEFAULT_OPTIM, ...MLE, lr: 1e-2 };

  it("is causal: a later token does not change earlier logits", () => {
    const params = toParams(randomCheckpoint(config, 4));
    const { tokens } = randomTokens(config, Rng.seed(8));
    const before = referenceForward(config, params, tokens, ROWS);
    const changed = tokens.slice();
    const k = 4; // position changed in row 1
    changed[config.context + k] = (changed[config.context + k] + 1) % config.vocab;
    const after = referenceForward(config, params, changed, ROWS);
    const V = config.vocab;
    for (let b = 0; b < ROWS; b++) {
      for (let t = 0; t < config.context; t++) {
        const a = before.subarray((b * config.context + t) * V, (b * config.context + t + 1) * V);
        const c = after.subarray((b * config.context + t) * V, (b * config.context + t + 1) * V);
        if (b === 1 && t >= k) expect(Array.from(c)).not.toEqual(Array.from(a));
        else expect(Array.from(c)).toEqual(Array.from(a));
      }
    }
  });

  it("gives next-token distributions that sum to 1 over allowed tokens", async () => {
    const model = backend.createModel(randomCheckpoint(config, 2), {
      capacity: ROWS,
      masks: MASKS,
    });
    const { tokens } = randomTokens(config, Rng.seed(9));
    const cls = Int32Array.from([0, 1, 1]);
    const logp = await model.nextLogprobs(tokens, ROWS, Int32Array.from([1, 3, 6]), cls, DIST);
    const V = config.vocab;
    for (let b = 0; b < ROWS; b++) {
      let allowed = 0;
      for (let v = 0; v < V; v++) {
        const p = Math.exp(logp[b * V + v]);
        if (MASKS[cls[b]][v]) allowed += p;
        else {
          expect(p).toBe(0);
          expect(logp[b * V + v]).toBeLessThan(-1e8);
        }
      }
      expect(allowed).toBeCloseTo(1, 5);
    }
  });

  it("tokenLogprobs agrees with nextLogprobs at every position", async () => {
    const model = backend.createModel(randomCheckpoint(config, 2), {
      capacity: ROWS,
      masks: MASKS,
    });
    const { tokens, cls } = randomTokens(config, Rng.seed(10));
    const T = config.context,
      V = config.vocab;
    const all = await model.tokenLogprobs({ rows: ROWS, tokens, cls }, DIST);
    for (let b = 0; b < ROWS; b++) expect(all[b * T]).toBe(0);
    for (let t = 1; t < T; t++) {
      const pos = new Int32Array(ROWS).fill(t);
      const clsAt = Int32Array.from({ length: ROWS }, (_, b) => cls[b * T + t]);
      const next = await model.nextLogprobs(tokens, ROWS, pos, clsAt, DIST);
      for (let b = 0; b < ROWS; b++) expect(all[b * T + t]).toBe(next[b * V + tokens[b * T + t]]);
    }
  });

  it("takes a clipped AdamW step exactly as specified", async () => {
    const ck = randomCheckpoint(config, 6);
    const model = backend.createModel(ck, { capacity: ROWS, masks: MASKS });
    const rng = Rng.seed(12);
    const { tokens, cls } = randomTokens(config, rng);
    const batch: TrainBatch = { rows: ROWS, tokens, cls, mask: randomMask(tokens.length, rng) };
    const h: StepHyper = { ...hyper, clipNorm: 0.05, weightDecay: 0.1 };
    const params = toParams(ck);
    const { stats, grads } = referenceGradients(
      config,
      params,
      maskTable(config, MASKS).table,
      batch,
      h,
    );
    const gradNorm = norm(grads.flatMap((g) => Array.from(g)));
    expect(gradNorm).toBeGreaterThan(h.clipNorm); // the clip is active

    const got = await model.trainStep(batch, h);
    expect(got).toEqual({ ...stats, gradNorm });
    // step 1: m̂ = g, v̂ = g², so the update is lr · (g / (|g| + eps) + decay · p)
    const clip = h.clipNorm / (gradNorm + 1e-6);
    const after = await model.checkpoint();
    expect(after.optimizer?.step).toBe(1);
    paramSpecs(config).forEach((s, k) => {
      params[k].forEach((p, i) => {
        const g = grads[k][i] * clip;
        const expected = p - h.lr * (g / (Math.abs(g) + h.eps) + (s.decay ? h.weightDecay * p : 0));
        expect(after.tensors[k].data[i]).toBeCloseTo(expected, 6);
      });
    });
  });

  it("lowers the NLL of a fixed batch over 30 maximum-likelihood steps", async () => {
    const model = backend.createModel(initCheckpoint(config, 1), { capacity: ROWS, masks: MASKS });
    const rng = Rng.seed(13);
    const { tokens, cls } = randomTokens(config, rng);
    const batch: TrainBatch = {
      rows: ROWS,
      tokens,
      cls,
      mask: new Float32Array(tokens.length).fill(1),
    };
    const first = await model.trainStep(batch, hyper);
    let last = first;
    for (let i = 0; i < 30; i++) last = await model.trainStep(batch, hyper);
    expect(first.loss).toBeCloseTo(-1, 12);
    expect(first.tokens).toBe(ROWS * (config.context - 1));
    expect(last.nll).toBeLessThan(0.7 * first.nll);
  });

  it("round-trips checkpoints: same logits, same optimizer state", async () => {
    const rng = Rng.seed(14);
    const { tokens, cls } = randomTokens(config, rng);
    const batch: TrainBatch = { rows: ROWS, tokens, cls, mask: randomMask(tokens.length, rng) };
    const a = backend.createModel(randomCheckpoint(config, 5), { capacity: ROWS, masks: MASKS });
    await a.trainStep(batch, hyper);
    await a.trainStep(batch, hyper);

    const ck = await a.checkpoint();
    const b = backend.createModel(ck, { capacity: ROWS, masks: MASKS });
    a.load(ck); // a's float64 parameters become the stored float32 ones
    const logits = referenceForward(config, toParams(ck), tokens, ROWS);
    const V = config.vocab,
      T = config.context;
    const pos = Int32Array.from([2, 5, 6]);
    const expected = Float32Array.from({ length: ROWS * V }, (_, i) => {
      const row = Math.floor(i / V);
      const at = (row * T + pos[row] - 1) * V;
      const z = Array.from(logits.subarray(at, at + V));
      const max = Math.max(...z);
      return z[i % V] - max - Math.log(z.reduce((s, x) => s + Math.exp(x - max), 0));
    });
    expect(await b.nextLogprobs(tokens, ROWS, pos, undefined)).toEqual(expected);
    expect(await a.nextLogprobs(tokens, ROWS, pos, undefined)).toEqual(expected);
    expect(await b.tokenLogprobs({ rows: ROWS, tokens, cls })).toEqual(
      await a.tokenLogprobs({ rows: ROWS, tokens, cls }),
    );

    // the Adam state came along: the next step is identical on both
    expect(await b.trainStep(batch, hyper)).toEqual(await a.trainStep(batch, hyper));
    expect(await b.checkpoint()).toEqual(await a.checkpoint());
  });

  it("rejects bad inputs with clear errors", async () => {
    const model = backend.createModel(initCheckpoint(config, 1), { capacity: ROWS, masks: MASKS });
    const T = config.context;
    const { tokens, cls } = randomTokens(config, Rng.seed(15));
    const mask = new Float32Array(tokens.length).fill(1);

    const outOfVocab = tokens.slice();
    outOfVocab[3] = config.vocab;
    await expect(model.tokenLogprobs({ rows: ROWS, tokens: outOfVocab })).rejects.toThrow(
      /token 11 at 3 outside vocab/,
    );
    const tooMany = new Int32Array((ROWS + 1) * T);
    await expect(model.tokenLogprobs({ rows: ROWS + 1, tokens: tooMany })).rejects.toThrow(
      /rows 4 not in \[1, 3\]/,
    );
    await expect(model.tokenLogprobs({ rows: ROWS, tokens: tokens.subarray(1) })).rejects.toThrow(
      /tokens has 20 entries, expected rows·T = 21/,
    );
    await expect(
      model.trainStep({ rows: ROWS, tokens, cls, mask: mask.subarray(1) }, hyper),
    ).rejects.toThrow(/mask has 20 entries/);
    await expect(
      model.trainStep({ rows: ROWS, tokens, mask, advantages: new Float32Array(2) }, hyper),
    ).rejects.toThrow(/advantages has 2 entries/);
    const badClass = cls.slice();
    badClass[0] = 2;
    await expect(model.tokenLogprobs({ rows: ROWS, tokens, cls: badClass })).rejects.toThrow(
      /class 2 at 0 outside \[0, 2\)/,
    );
    await expect(
      model.nextLogprobs(tokens, ROWS, Int32Array.from([1, 0, 2]), undefined),
    ).rejects.toThrow(/position 0 outside \[1, 7\)/);
    await expect(
      model.nextLogprobs(tokens, ROWS, Int32Array.from([1, 2]), undefined),
    ).rejects.toThrow(/pos has 2 entries, expected 3/);

    expect(() => model.load(initCheckpoint({ ...config, d: 16 }, 1))).toThrow(
      /config\.d is 16, this model has 8/,
    );
    expect(() => backend.createModel(initCheckpoint(config, 1), { capacity: 0 })).toThrow(
      /capacity 0/,
    );
    expect(() =>
      backend.createModel(initCheckpoint(config, 1), {
        capacity: 1,
        masks: [new Array(11).fill(0)],
      }),
    ).toThrow(/allows no token/);
    expect(() =>
      referenceForward(config, toParams(initCheckpoint(config, 1)).slice(1), tokens, ROWS),
    ).toThrow(/expected \d+ parameter tensors/);

    model.dispose();
    await expect(model.tokenLogprobs({ rows: ROWS, tokens })).rejects.toThrow(/after dispose/);
  });
});
