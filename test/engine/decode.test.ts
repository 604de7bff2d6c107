// Incremental decoding against the full forward pass, on both backends: the same log-probs for
// any order of requests, slots and prefix changes; only new positions are computed; training
// and loading invalidate the caches; bad requests are refused.
import { describe, it, expect, beforeAll } from "vitest";
import type { EngineBackend, EngineModel } from "../../src/engine/backend";
import { DEFAULT_OPTIM } from "../../src/engine/backend";
import { JaxBackend } from "../../src/engine/backends/jax";
import { Float64Backend } from "../../src/engine/backends/float64";
import { rowBucket, windowBucket } from "../../src/engine/decode";
import { Rng } from "../../src/engine/random";
import { CONFIGS, MASKS, MLE, randomCheckpoint } from "./fixtures";

let jax: JaxBackend;
beforeAll(async () => {
  jax = await JaxBackend.create("wasm");
});
const backends: [string, () => EngineBackend, number][] = [
  ["float64", () => new Float64Backend(), 1e-12],
  ["wasm", () => jax, 1e-5],
];
const CAP = 5;
const DIST = { temperature: 0.7, logitScale: 1.3 };

function maxDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) if (b[i] > -1e6) m = Math.max(m, Math.abs(a[i] - b[i])); // skip forbidden tokens (−1e9)
  return m;
}

/** Random requests over a few slots; tokens from a small alphabet so prefixes are often shared. */
async function compareRandomRequests(
  model: EngineModel,
  seed: number,
  calls: number,
  cap = CAP,
): Promise<number> {
  const { context: T, vocab: V } = model.config;
  const rng = Rng.seed(seed);
  const dec = model.decoder();
  let worst = 0;
  for (let c = 0; c < calls; c++) {
    const rows = 1 + rng.int(cap);
    const free = Array.from({ length: cap }, (_, s) => s);
    const slots = Int32Array.from({ length: rows }, () => free.splice(rng.int(free.length), 1)[0]);
    const tokens = Int32Array.from({ length: rows * T }, () => rng.int(Math.min(3, V)));
    const pos = Int32Array.from({ length: rows }, () => 1 + rng.int(T - 1));
    const cls = Int32Array.from({ length: rows }, () => rng.int(MASKS.length));
    const a = await dec.next({ slots, tokens, pos, cls }, DIST);
    const b = await model.nextLogprobs(tokens, rows, pos, cls, DIST);
    worst = Math.max(worst, maxDiff(a, b));
  }
  dec.dispose();
  return worst;
}

describe.each(CONFIGS)("incremental decoding (%s)", (_, config) => {
  describe.each(backends)("%s backend", (name, backend, tol) => {
    it("gives the full forward's log-probs for random slots, positions and prefix changes", async () => {
      const model = backend().createModel(randomCheckpoint(config, 31), {
        capacity: CAP,
        masks: MASKS,
      });
      const worst = await compareRandomRequests(model, 5, 40);
      console.info(
        `decode ${name} (${config.layers} layer): max |Δ log p| vs full forward ${worst.toExponential(2)}`,
      );
      expect(worst).toBeLessThan(tol);
      model.dispose();
    });

    it("computes only the requested rows (row buckets below the capacity) and leaves the other slots' caches intact", async () => {
      const cap = 40; // up to 8 rows: a gathered bucket of 8; more: every slot
      const model = backend().createModel(randomCheckpoint(config, 37), {
        capacity: cap,
        masks: MASKS,
      });
      const worst = await compareRandomRequests(model, 6, 40, cap);
      expect(worst).toBeLessThan(tol);
      model.dispose();
    });

    it("feeds only positions a slot has not seen: growing one sequence costs T − 1 positions in all", async () => {
      const T = config.context;
      const model = backend().createModel(randomCheckpoint(config, 32), {
        capacity: CAP,
        masks: MASKS,
      });
      const dec = model.decoder();
      const rng = Rng.seed(8);
      const tokens = Int32Array.from({ length: T }, () => rng.int(config.vocab));
      for (let p = 1; p < T; p++) {
        const a = await dec.next({ slots: Int32Array.of(3), tokens, pos: Int32Array.of(p) });
        expect(
          maxDiff(a, await model.nextLogprobs(tokens, 1, Int32Array.of(p), undefined)),
        ).toBeLessThan(tol);
      }
      expect(dec.positionsFed).toBe(T - 1);
      // asking again for a state it has seen re-feeds one position (the logits are not kept)
      await dec.next({ slots: Int32Array.of(3), tokens, pos: Int32Array.of(T - 1) });
      expect(dec.positionsFed).toBe(T);
      // a change at position 2 re-feeds from there
      tokens[2] = (tokens[2] + 1) % config.vocab;
      const a = await dec.next({ slots: Int32Array.of(3), tokens, pos: Int32Array.of(T - 1) });
      expect(dec.positionsFed).toBe(T + (T - 1 - 2));
      expect(
        maxDiff(a, await model.nextLogprobs(tokens, 1, Int32Array.of(T - 1), undefined)),
      ).toBeLessThan(tol);
      model.dispose();
    });

    it("a training step or a load invalidates what the decoder cached", async () => {
      const T = config.context;
      const model = backend().createModel(randomCheckpoint(config, 33), {
        capacity: CAP,
        masks: MASKS,
      });
      const dec = model.decoder();
      const rng = Rng.seed(9);
      const tokens = Int32Array.from({ length: 2 * T }, () => rng.int(config.vocab));
      const slots = Int32Array.of(0, 1);
      const pos = Int32Array.of(T - 2, T - 1);
      await dec.next({ slots, tokens, pos });
      await model.trainStep(
        { rows: 2, tokens, mask: new Float32Array(2 * T).fill(1) },
        { ...DEFAULT_OPTIM, ...MLE, lr: 0.05 },
      );
      expect(
        maxDiff(
          await dec.next({ slots, tokens, pos }),
          await model.nextLogprobs(tokens, 2, pos, undefined),
        ),
      ).toBeLessThan(tol);
      model.load(randomCheckpoint(config, 34));
      expect(
        maxDiff(
          await dec.next({ slots, tokens, pos }),
          await model.nextLogprobs(tokens, 2, pos, undefined),
        ),
      ).toBeLessThan(tol);
      model.dispose();
    });

    it("refuses bad requests with a clear message, and a disposed decoder", async () => {
      const T = config.context;
      const model = backend().createModel(randomCheckpoint(config, 35), {
        capacity: CAP,
        masks: MASKS,
      });
      const dec = model.decoder();
      const tokens = new Int32Array(2 * T);
      await expect(
        dec.next({ slots: Int32Array.of(1, 1), tokens, pos: Int32Array.of(1, 1) }),
      ).rejects.toThrow(/slot 1 appears twice/);
      await expect(
        dec.next({ slots: Int32Array.of(0, CAP), tokens, pos: Int32Array.of(1, 1) }),
      ).rejects.toThrow(/slot 5 outside/);
      await expect(
        dec.next({ slots: Int32Array.of(0, 1), tokens, pos: Int32Array.of(1, T) }),
      ).rejects.toThrow(/position 7 outside/);
      await expect(
        dec.next({ slots: Int32Array.of(0), tokens, pos: Int32Array.of(1) }),
      ).rejects.toThrow(/tokens has 14 entries/);
      model.dispose(); // disposes its decoders too
      await expect(
        dec.next({ slots: Int32Array.of(0), tokens: new Int32Array(T), pos: Int32Array.of(1) }),
      ).rejects.toThrow(/dispose/);
    });
  });

  it("jax-js and the float64 reference decode alike", async () => {
    const ck = randomCheckpoint(config, 36);
    const [a, b] = [
      jax.createModel(ck, { capacity: CAP, masks: MASKS }),
      new Float64Backend().createModel(ck, { capacity: CAP, masks: MASKS }),
    ];
    const [da, db] = [a.decoder(), b.decoder()];
    const rng = Rng.seed(10);
    const T = config.context;
    let worst = 0;
    for (let p = 1; p < T; p++) {
      const tokens = Int32Array.from({ length: 3 * T }, (_, i) =>
        i % T < p - 1 ? (i * 7) % config.vocab : rng.int(config.vocab),
      );
      const req = {
        slots: Int32Array.of(4, 0, 2),
        tokens,
        pos: Int32Array.of(p, p, p),
        cls: Int32Array.of(0, 1, 0),
      };
      worst = Math.max(worst, maxDiff(await da.next(req, DIST), await db.next(req, DIST)));
    }
    expect(worst).toBeLessThan(1e-4);
    a.dispose();
  });
});

describe("row buckets", () => {
  it("are powers of two from 8, at least the rows, at most the capacity", () => {
    expect([1, 7, 8, 9, 17, 33, 64].map((r) => rowBucket(r, 64))).toEqual([
      8, 8, 8, 16, 32, 64, 64,
    ]);
    expect(rowBucket(3, 5)).toBe(5);
    expect(rowBucket(17, 20)).toBe(20);
  });
});

describe("window buckets", () => {
  it("are powers of two, at least the width, at most the context", () => {
    expect([1, 2, 3, 5, 9, 15, 16].map((w) => windowBucket(w, 16))).toEqual([
      1, 2, 4, 8, 16, 16, 16,
    ]);
    expect(windowBucket(6, 7)).toBe(7);
  });
});
