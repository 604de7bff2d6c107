// The store of pretrained models in real Chromium: the page computes the same keys as Node and
// fetches the shipped files over http; a base with no store is "no store". A stored model is what
// the CLI pretrained on Node's wasm. Chromium's wasm is not bit-identical to it: jax-js uses
// relaxed-SIMD fused multiply-adds (f32x4.relaxed_madd) where the engine has them, which Chromium
// does and Node 20 does not, so a browser's own pretraining differs in the last bits; the test
// bounds that difference.
import { describe, expect, it } from "vitest";
import { webPretrainedStore } from "../../src/app/lib/pretrained-store";
import { WebWorkerExecutor } from "../../src/app/lib/web-executor";
import { presetConfig } from "../../src/experiment/presets";
import type { PretrainJob, PretrainResult } from "../../src/experiment/pretrain";
import { expectedShape, jobKey, lookUp } from "../../src/experiment/store";

const config = presetConfig("persuasion-smoke");

describe("the store of pretrained models in the browser", () => {
  it("loads a shipped model, within rounding of a web worker's own wasm pretraining", async () => {
    const job: PretrainJob = { kind: "policy", seed: 0 };
    const store = webPretrainedStore(`${location.origin}/`);
    const stored = await store.get(jobKey(config, job, "wasm"), expectedShape(config, job));
    expect(stored, "persuasion-smoke's base policy is not in public/pretrained/").toBeDefined();

    const pool = new WebWorkerExecutor(1, "wasm");
    const live = (await pool.run({ kind: "pretrain", config, job })) as PretrainResult;
    await pool.close();
    stored!.nll.forEach((x, i) => expect(Math.abs(x - live.nll[i]), `nll ${i}`).toBeLessThan(1e-5));
    let worst = 0;
    stored!.checkpoint.tensors.forEach((t, i) =>
      t.data.forEach(
        (x, j) => (worst = Math.max(worst, Math.abs(x - live.checkpoint.tensors[i].data[j]))),
      ),
    );
    expect(worst).toBeLessThan(1e-4);
    expect(stored!.checkpoint.optimizer!.step).toBe(live.checkpoint.optimizer!.step);
  });

  it("finds no store where there is none", async () => {
    const job: PretrainJob = { kind: "reference", seed: 0 };
    const found = await lookUp(
      webPretrainedStore(`${location.origin}/no-such-folder/`),
      config,
      job,
      "wasm",
    );
    expect(found).toMatchObject({
      source: "trained",
      unavailable: expect.stringMatching(/no-such-folder\/pretrained\/index\.json is missing/),
    });
  });
});
