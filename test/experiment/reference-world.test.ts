// A reference that is not an oracle: simulator.referenceWorld draws the reference simulator's
// corpus from another population than the humans (a base model's users). Its corpus must be that
// population's and no other; the base policy, the panel and every store key of the oracle setting
// stay as they were; bad settings name their path. And the label-swap knob, rl.streamSwap.
import { describe, expect, it } from "vitest";
import { benchmarkFor } from "../../src/benchmarks/registry";
import type { Benchmark, Dialogue } from "../../src/benchmarks/types";
import {
  applySet,
  merge,
  validateConfig,
  type ExperimentConfig,
} from "../../src/experiment/config";
import { presetConfig } from "../../src/experiment/presets";
import { jobCorpus, pretrainJobs, referenceWorld } from "../../src/experiment/pretrain";
import { rlStream } from "../../src/experiment/runner";
import { jobKey } from "../../src/experiment/store";

const SHIFT = { typePrior: [0.25, 0.25, 0.25, 0.25], cardInformativeness: 0.5 };
const base = validateConfig(
  merge(presetConfig("persuasion-quick"), { corpus: { dialogues: 400 } }),
);
/** The config after `--set` assignments, validated as the CLI does. */
const set = (c: ExperimentConfig, ...assignments: string[]) =>
  validateConfig(assignments.reduce<unknown>((x, a) => applySet(x, a), c));
const shifted = validateConfig(merge(base, { simulator: { referenceWorld: SHIFT } }));

/** Mean log-likelihood per user reply of a corpus under a population's exact Bayes predictive. */
function logLik(corpus: Dialogue[], users: Benchmark): number {
  let sum = 0;
  let n = 0;
  for (const d of corpus)
    for (let i = 0; i < d.acts.length; i++) {
      const prefix = { ...d, acts: d.acts.slice(0, i) };
      if (users.turn(prefix) !== "user") continue;
      sum += Math.log(users.bayesPredictive(prefix)[d.acts[i]]);
      n++;
    }
  return sum / n;
}

describe("simulator.referenceWorld", () => {
  const humans = benchmarkFor(base);
  const users = benchmarkFor({ benchmark: "persuasion", world: referenceWorld(shifted) });

  it("is the humans' world merged with the override, and the humans' own without one", () => {
    expect(referenceWorld(base)).toEqual(base.world);
    expect(referenceWorld(shifted)).toEqual({ ...base.world, ...SHIFT });
    expect(users.humans.types.map((t) => t.prior)).toEqual([0.25, 0.25, 0.25, 0.25]);
  });

  it("draws the reference's corpus from that population, and the base policy's from the humans", () => {
    const ref = jobCorpus(shifted, { kind: "reference", seed: 7 });
    const oracle = jobCorpus(base, { kind: "reference", seed: 7 });
    // each corpus is more likely under the population it was drawn from than under the other
    expect(logLik(ref, users)).toBeGreaterThan(logLik(ref, humans) + 0.01);
    expect(logLik(oracle, humans)).toBeGreaterThan(logLik(oracle, users) + 0.01);
    // the base policy learns from the humans whatever the reference learns from
    expect(jobCorpus(shifted, { kind: "policy", seed: 7 })).toEqual(
      jobCorpus(base, { kind: "policy", seed: 7 }),
    );
    // without the override, the reference and the base policy share one sample, as before
    expect(oracle).toEqual(jobCorpus(base, { kind: "policy", seed: 7 }));
  });

  it("changes the store key of the reference alone; the oracle setting keeps every key", () => {
    const jobs = pretrainJobs(shifted, 1000);
    for (const job of jobs) {
      const same = jobKey(base, job, "wasm") === jobKey(shifted, job, "wasm");
      expect(same, job.kind).toBe(job.kind !== "reference");
    }
    const plain = validateConfig(merge(base, {}));
    for (const job of jobs) expect(jobKey(plain, job, "wasm")).toBe(jobKey(base, job, "wasm"));
  });

  it("refuses an unknown key, a bad value and a change of the world's shape, naming the path", () => {
    const rw = (json: string) => `simulator.referenceWorld=${json}`;
    expect(() => set(base, rw('{"colour":1}'))).toThrow(
      /simulator\.referenceWorld\.colour: unknown key/,
    );
    expect(() => set(base, rw('{"cardInformativeness":-1}'))).toThrow(
      /simulator\.referenceWorld\.cardInformativeness/,
    );
    expect(() => set(base, rw('{"typePrior":[1,2]}'))).toThrow(
      /simulator\.referenceWorld\.typePrior/,
    );
    expect(() => set(presetConfig("service-quick"), rw('{"maxExchanges":5}'))).toThrow(
      /simulator\.referenceWorld: may change the population, not the world's shape/,
    );
    expect(set(base, rw('{"cardInformativeness":0.5}')).simulator.referenceWorld).toEqual({
      cardInformativeness: 0.5,
    });
  });
});

describe("rl.streamSwap", () => {
  it("exchanges the two conditions' RL streams and leaves the others", () => {
    const c = set(base, 'rl.streamSwap=["single","vs"]');
    expect(rlStream(c, "single")).toBe("vs");
    expect(rlStream(c, "vs")).toBe("single");
    expect(rlStream(c, "population")).toBe("population");
    expect(rlStream(base, "single")).toBe("single");
    expect(() => set(base, 'rl.streamSwap=["vs","vs"]')).toThrow(/rl\.streamSwap/);
  });
});
