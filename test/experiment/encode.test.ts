// nextActLogprobs decodes incrementally, assigning decoder slots to dialogues by identity. Whatever
// the order, the overlap between calls or the number of dialogues (more than the capacity), it
// must give the full forward's log-probs.
import { describe, it, expect, beforeAll } from "vitest";
import type { Dialogue } from "../../src/benchmarks/types";
import type { EngineModel } from "../../src/engine/backend";
import { JaxBackend } from "../../src/engine/backends/jax";
import { initCheckpoint } from "../../src/engine/checkpoint";
import { Rng } from "../../src/engine/random";
import { encode, nextActLogprobs, offset, type Role } from "../../src/experiment/encode";
import { benchmarkFor, modelConfig, modelOptions } from "../../src/experiment/pretrain";
import { presetConfig } from "../../src/experiment/presets";

const config = presetConfig("persuasion-smoke");
const bench = benchmarkFor(config);
let jax: JaxBackend;
beforeAll(async () => {
  jax = await JaxBackend.create("wasm");
});

/** The full forward's log-probs of each dialogue's next act, row by row. */
async function fullForward(model: EngineModel, ds: Dialogue[], role: Role, dist: { temperature: number }): Promise<Float32Array> {
  const V = model.config.vocab;
  const out = new Float32Array(ds.length * V);
  for (let i = 0; i < ds.length; i++) {
    const { tokens } = encode(bench, [ds[i]], role);
    const d = ds[i];
    const cls = bench.turn(d) === "agent" ? bench.agentClass(d) : bench.userClass(d);
    out.set(await model.nextLogprobs(tokens, 1, Int32Array.of(offset(bench, role) + d.acts.length), Int32Array.of(cls), dist), i * V);
  }
  return out;
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) if (b[i] > -1e6) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe("nextActLogprobs with incremental decoding", () => {
  it.each(["policy", "simulator"] as const)("equals the full forward for growing dialogues in shuffled, overlapping calls (%s)", async (role) => {
    const opts = { ...modelOptions(bench, config), capacity: 8 };
    const model = jax.createModel(initCheckpoint(modelConfig(bench, config.simulator.model, role), 3), opts);
    const rng = Rng.seed(4);
    const all: Dialogue[] = Array.from({ length: 13 }, () => ({ card: bench.population.sample(rng).card, acts: [] })); // more than the capacity
    let worst = 0;
    for (let round = 0; round < 24; round++) {
      // a random subset, in random order; each dialogue grows by one act of the turn's kind
      const pick = all.filter(() => rng.int(3) > 0).sort(() => rng.int(3) - 1);
      const live = pick.filter((d) => bench.turn(d) !== "done" && bench.turn(d) === (role === "policy" ? "agent" : "user"));
      if (live.length > 0) {
        const dist = { temperature: 0.5 + rng.int(3) / 2 }; // the cached keys and values do not depend on it
        const lp = await nextActLogprobs(bench, model, live, role, dist);
        worst = Math.max(worst, maxDiff(lp, await fullForward(model, live, role, dist)));
      }
      for (const d of all) {
        const turn = bench.turn(d);
        if (turn === "done") continue;
        const allowed = bench.maskClasses[turn === "agent" ? bench.agentClass(d) : bench.userClass(d)].allowed;
        d.acts.push(allowed[rng.int(allowed.length)]);
      }
    }
    expect(worst).toBeLessThan(1e-5);
    model.dispose();
  });
});
