// The `population` condition (docs/architecture.md#the-science, #conditions): a co-trained simulator plus a FIFO pool of its
// snapshots. Through the public API (createOpponents, afterStep, simulatorFor,
// evaluationSimulators, the pool's models): the pool holds min(⌊s/e⌋, poolSize) snapshots after
// s steps, each equal to the trainable simulator at its snapshot step, oldest evicted first (and
// disposed); `latest` always trains against the trainable simulator; `random` per batch draws
// members uniformly; per episode every start state gets its own member and is played by it.
// Models are tiny, freshly initialised and run on the float64 reference backend.
import { describe, expect, it } from "vitest";
import { AMOUNT_ACTS, GREETING, USER_ACTS } from "../../src/benchmarks/persuasion/world";
import { behaviourDialogue, createPersuasion } from "../../src/benchmarks/persuasion/bench";
import type { Persona } from "../../src/benchmarks/types";
import { Float64Backend } from "../../src/engine/backends/float64";
import { initCheckpoint, type Checkpoint } from "../../src/engine/checkpoint";
import { paramSpecs } from "../../src/engine/config";
import { Rng } from "../../src/engine/random";
import {
  createOpponents,
  type ConditionContext,
  type TrainingOpponents,
} from "../../src/experiment/conditions";
import { merge, validateConfig, type ExperimentConfig } from "../../src/experiment/config";
import { presetConfig } from "../../src/experiment/presets";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { modelConfig, modelOptions, type PretrainedSet } from "../../src/experiment/pretrain";
import { groupedPersonas, play, type Played } from "../../src/experiment/rollout";
import { encode } from "../../src/benchmarks/encode";
import { klDivergence } from "../../src/metrics/diversity";
import type { NeuralSimulator } from "../../src/simulators/neural";

const TINY = { d: 16, layers: 1, heads: 2, mlpRatio: 2 };
const PROMPTS = 2;
const G = 4;

function configWith(population: Partial<ExperimentConfig["population"]>): ExperimentConfig {
  return validateConfig(
    merge(presetConfig("persuasion-smoke"), {
      simulator: { model: TINY, pretrain: { batch: 8 } },
      policy: { model: TINY, pretrain: { batch: 8 } },
      rl: { prompts: PROMPTS, groupSize: G },
      population: {
        poolSize: 3,
        snapshotEvery: 2,
        selection: "random",
        draw: "batch",
        ...population,
      },
    }),
  );
}

function context(
  config: ExperimentConfig,
): ConditionContext & { bench: ReturnType<typeof createPersuasion> } {
  const bench = benchmarkFor(config) as ReturnType<typeof createPersuasion>;
  const reference = {
    checkpoint: initCheckpoint(modelConfig(bench, config.simulator.model, "simulator"), 1),
    nll: [],
  };
  const pretrained: PretrainedSet = {
    seed: 0,
    reference,
    ensemble: [{ name: "aligned simulator", gamma: null, result: reference }],
    panel: [],
    basePolicy: {
      checkpoint: initCheckpoint(modelConfig(bench, config.policy.model, "policy"), 2),
      nll: [],
    },
  };
  return {
    backend: new Float64Backend(),
    bench,
    config,
    pretrained,
    opts: modelOptions(bench, config),
  };
}

const poolSize = (opp: TrainingOpponents) => {
  const f = (opp as unknown as { poolSize?: () => number }).poolSize;
  if (typeof f !== "function")
    throw new Error("the population condition no longer exposes poolSize()");
  return f.call(opp);
};
const members = (opp: TrainingOpponents) => opp.evaluationSimulators() as NeuralSimulator[];
const flat = (ck: Checkpoint) => ck.tensors.map((t) => Array.from(t.data));

/** A batch played by hand: behaviour-persuader dialogues with humans, rows grouped by G. */
function handPlayed(
  ctx: ReturnType<typeof context>,
  rng: Rng,
  memberOf?: (g: number) => number,
): { played: Played; rewards: Float64Array } {
  const personas: Persona[] = [];
  const dialogues = [];
  for (let g = 0; g < PROMPTS; g++) {
    const p = ctx.bench.humans.sample(rng);
    for (let i = 0; i < G; i++) {
      personas.push({
        card: [...p.card],
        type: p.type,
        ...(memberOf ? { member: memberOf(g) } : {}),
      });
      dialogues.push(behaviourDialogue(ctx.bench.humans, p, rng));
    }
  }
  const n = dialogues.length;
  return {
    played: { dialogues, personas, entropySum: new Float64Array(n), agentTurns: new Int32Array(n) },
    rewards: Float64Array.from(dialogues, (d) => ctx.bench.reward(d)),
  };
}

describe("population: the FIFO snapshot pool", () => {
  it("holds min(⌊s/e⌋, poolSize) snapshots after s steps, each the trainable simulator at its step, oldest evicted first", async () => {
    const config = configWith({ poolSize: 3, snapshotEvery: 2, selection: "latest" });
    const ctx = context(config);
    const opp = createOpponents("population", ctx)!;
    const policy = ctx.backend.createModel(ctx.pretrained.basePolicy.checkpoint, ctx.opts);
    const rng = Rng.seed(3);
    const trainableAt: number[][][] = []; // [step] → parameters after that step's update
    let firstSnapshot: NeuralSimulator | undefined;
    try {
      trainableAt.push(flat(await members(opp)[0].model.checkpoint()));
      expect(poolSize(opp)).toBe(0);
      const steps = 9;
      for (let s = 1; s <= steps; s++) {
        const sim = opp.simulatorFor(s, rng);
        expect(sim).toBe(members(opp)[0]); // `latest`: the trainable simulator, pool or not
        const played = await play(
          ctx.bench,
          policy,
          sim,
          groupedPersonas(sim, PROMPTS, G, rng),
          rng,
          1,
        );
        const rewards = Float64Array.from(played.dialogues, (d) => ctx.bench.reward(d));
        const stats = await opp.afterStep!(s, played, rewards);
        expect(Number.isFinite(stats.simReward)).toBe(true);
        expect(Number.isFinite(stats.simKl)).toBe(true);
        trainableAt.push(flat(await members(opp)[0].model.checkpoint()));
        expect(trainableAt[s]).not.toEqual(trainableAt[s - 1]); // the simulator trains every step

        const expected = Math.min(
          Math.floor(s / config.population.snapshotEvery),
          config.population.poolSize,
        );
        expect(poolSize(opp), `after step ${s}`).toBe(expected);
        expect(members(opp)).toHaveLength(1 + expected);
        firstSnapshot ??= members(opp)[1];

        // pool, oldest first: the snapshots of the last `expected` snapshot steps
        const snapSteps = Array.from({ length: Math.floor(s / 2) }, (_, i) => 2 * (i + 1)).slice(
          -expected,
        );
        const pool = members(opp).slice(1);
        for (let i = 0; i < pool.length; i++)
          expect(flat(await pool[i].model.checkpoint()), `step ${s}, pool[${i}]`).toEqual(
            trainableAt[snapSteps[i]],
          );
      }
      // the first snapshot (step 2) was evicted when the 4th (step 8) came in, and its model freed
      expect(members(opp)).not.toContain(firstSnapshot);
      await expect(firstSnapshot!.model.checkpoint()).rejects.toThrow(/dispose/);
    } finally {
      opp.dispose();
      policy.dispose();
    }
  });

  it("cotrain keeps no pool; population snapshots only every e steps", async () => {
    const config = configWith({ snapshotEvery: 3, poolSize: 5 });
    const ctx = context(config);
    const co = createOpponents("cotrain", ctx)!;
    const pop = createOpponents("population", ctx)!;
    const rng = Rng.seed(4);
    try {
      for (let s = 1; s <= 7; s++) {
        const { played, rewards } = handPlayed(ctx, rng);
        await co.afterStep!(s, played, rewards);
        await pop.afterStep!(s, played, rewards);
        expect(co.evaluationSimulators()).toHaveLength(1);
        expect(poolSize(co)).toBe(0);
        expect(poolSize(pop)).toBe(Math.floor(s / 3));
      }
      expect(co.simulatorFor(8, rng)).toBe(co.evaluationSimulators()[0]);
    } finally {
      co.dispose();
      pop.dispose();
    }
  });
});

describe("population: selection", () => {
  it("`random` per batch returns each member with equal frequency (and the trainable one while the pool is empty)", async () => {
    const ctx = context(
      configWith({ poolSize: 3, snapshotEvery: 1, selection: "random", draw: "batch" }),
    );
    const opp = createOpponents("population", ctx)!;
    const rng = Rng.seed(5);
    try {
      for (let i = 0; i < 20; i++) expect(opp.simulatorFor(0, rng)).toBe(members(opp)[0]);
      for (let s = 1; s <= 4; s++) {
        const { played, rewards } = handPlayed(ctx, rng);
        await opp.afterStep!(s, played, rewards);
      }
      const all = members(opp);
      expect(all).toHaveLength(4);
      const n = 4000;
      const counts = new Array<number>(all.length).fill(0);
      for (let i = 0; i < n; i++) {
        const sim = opp.simulatorFor(5, rng);
        const m = all.indexOf(sim as NeuralSimulator);
        expect(m).toBeGreaterThanOrEqual(0);
        counts[m]++;
      }
      const p = 1 / all.length;
      for (const c of counts)
        expect(Math.abs(c / n - p)).toBeLessThan(4.5 * Math.sqrt((p * (1 - p)) / n));
    } finally {
      opp.dispose();
    }
  });

  it("`latest` returns the trainable simulator even with a full pool", async () => {
    const ctx = context(
      configWith({ poolSize: 2, snapshotEvery: 1, selection: "latest", draw: "episode" }),
    );
    const opp = createOpponents("population", ctx)!;
    const rng = Rng.seed(6);
    try {
      for (let s = 1; s <= 3; s++) {
        const { played, rewards } = handPlayed(ctx, rng);
        await opp.afterStep!(s, played, rewards);
      }
      expect(poolSize(opp)).toBe(2);
      for (let i = 0; i < 50; i++) expect(opp.simulatorFor(4, rng)).toBe(members(opp)[0]);
    } finally {
      opp.dispose();
    }
  });

  it("per episode: every start state draws its member (shared by its G rollouts) and is played by that member", async () => {
    const ctx = context(
      configWith({ poolSize: 3, snapshotEvery: 1, selection: "random", draw: "episode" }),
    );
    const opp = createOpponents("population", ctx)!;
    const policy = ctx.backend.createModel(ctx.pretrained.basePolicy.checkpoint, ctx.opts);
    const rng = Rng.seed(7);
    try {
      // fill the pool without querying any snapshot (their caches stay empty)
      for (let s = 1; s <= 3; s++) {
        const { played, rewards } = handPlayed(ctx, rng);
        await opp.afterStep!(s, played, rewards);
      }
      const all = members(opp);
      expect(all).toHaveLength(4);
      // make member m a simulator that always says USER_ACTS[m] and decides AMOUNT_ACTS[m]
      all.forEach((sim, m) => {
        const ck = initCheckpoint(sim.model.config, 10 + m);
        const head = ck.tensors[paramSpecs(ck.config).findIndex((s) => s.name === "head.b")].data;
        head[USER_ACTS[m]] = 40;
        head[AMOUNT_ACTS[m]] = 40;
        sim.model.load(ck);
      });

      const routed = opp.simulatorFor(4, rng);
      expect(all).not.toContain(routed);
      const personas = groupedPersonas(routed, 64, G, rng);
      const seen = new Array<number>(all.length).fill(0);
      for (let g = 0; g < 64; g++) {
        const m = personas[g * G].member!;
        expect(Number.isInteger(m) && m >= 0 && m < all.length).toBe(true);
        for (let i = 0; i < G; i++) expect(personas[g * G + i].member).toBe(m);
        seen[m]++;
      }
      expect(seen.every((c) => c > 0)).toBe(true);
      const group = personas.filter((_, b) => b % G === 0);
      const many = routed.personas(4000, rng).map((p) => p.member!);
      for (let m = 0; m < all.length; m++)
        expect(Math.abs(many.filter((x) => x === m).length / 4000 - 0.25)).toBeLessThan(
          4.5 * Math.sqrt(0.1875 / 4000),
        );

      // each row is answered by its own member
      const replies = await routed.reply(
        group.map((p) => ({ card: p.card, acts: [GREETING] })),
        group,
        rng,
      );
      group.forEach((p, b) => expect(replies[b]).toBe(USER_ACTS[p.member!]));
      const played = await play(ctx.bench, policy, routed, personas, rng, 1);
      played.dialogues.forEach((d, b) => {
        const m = personas[b].member!;
        d.acts.forEach((a, i) => {
          const last = i === d.acts.length - 1;
          if (i % 2 === 1 || last) expect(a).toBe(last ? AMOUNT_ACTS[m] : USER_ACTS[m]);
        });
      });
      await expect(routed.distribution([], [])).rejects.toThrow(/no single distribution/);

      // the trainable simulator learns only from the rows it played
      const before = flat(await all[0].model.checkpoint());
      const others = handPlayed(ctx, rng, () => 1);
      await opp.afterStep!(5, others.played, others.rewards);
      expect(flat(await all[0].model.checkpoint())).toEqual(before);
      const mine = handPlayed(ctx, rng, (g) => (g === 0 ? 0 : 2));
      const stats = await opp.afterStep!(6, mine.played, mine.rewards);
      expect(flat(await all[0].model.checkpoint())).not.toEqual(before);
      expect(Number.isFinite(stats.simKl)).toBe(true);
    } finally {
      opp.dispose();
      policy.dispose();
    }
  });
});

describe("co-training: the simulator trains every step", () => {
  it("population: when a snapshot played the batch, the trainable simulator plays its own against the current policy and learns from it", async () => {
    const ctx = context(
      configWith({ poolSize: 2, snapshotEvery: 1, selection: "random", draw: "batch" }),
    );
    const opp = createOpponents("population", ctx)!;
    const rng = Rng.seed(8);
    const asked: unknown[] = [];
    const playOwn = async (sim: unknown) => {
      asked.push(sim);
      return handPlayed(ctx, rng);
    };
    try {
      for (let s = 1; s <= 2; s++) {
        opp.simulatorFor(s, rng); // the pool is empty at step 1: the trainable simulator plays
        const { played, rewards } = handPlayed(ctx, rng);
        await opp.afterStep!(s, played, rewards, playOwn);
      }
      expect(poolSize(opp)).toBe(2);
      let snapshotPlays = 0,
        ownPlays = 0;
      for (let s = 3; s <= 12; s++) {
        const sim = opp.simulatorFor(s, rng);
        const trainable = members(opp)[0];
        const before = flat(await trainable.model.checkpoint());
        const calls = asked.length;
        const { played, rewards } = handPlayed(ctx, rng);
        const stats = await opp.afterStep!(s, played, rewards, playOwn);
        expect(flat(await trainable.model.checkpoint())).not.toEqual(before); // every step
        expect(Number.isFinite(stats.simKl)).toBe(true);
        if (sim === trainable) {
          expect(asked.length).toBe(calls); // it played the batch itself: no extra rollouts
          ownPlays++;
        } else {
          expect(asked.slice(calls)).toEqual([trainable]);
          snapshotPlays++;
        }
      }
      expect(snapshotPlays).toBeGreaterThan(0);
      expect(ownPlays).toBeGreaterThan(0);
    } finally {
      opp.dispose();
    }
  });

  it("cotrain never asks for extra rollouts", async () => {
    const ctx = context(configWith({}));
    const opp = createOpponents("cotrain", ctx)!;
    const rng = Rng.seed(9);
    let asked = 0;
    try {
      for (let s = 1; s <= 3; s++) {
        opp.simulatorFor(s, rng);
        const { played, rewards } = handPlayed(ctx, rng);
        await opp.afterStep!(s, played, rewards, async () => (asked++, handPlayed(ctx, rng)));
      }
      expect(asked).toBe(0);
    } finally {
      opp.dispose();
    }
  });
});

describe("co-training: the realism anchor", () => {
  /** KL(reference ‖ simulator) over the user turns of fixed dialogues. */
  async function forwardKl(
    ctx: ReturnType<typeof context>,
    sim: NeuralSimulator,
    dialogues: Played["dialogues"],
  ): Promise<number> {
    const batch = encode(ctx.bench, dialogues, "simulator");
    const ref = ctx.backend.createModel(ctx.pretrained.reference.checkpoint, ctx.opts);
    const [q, p] = [await ref.tokenDistributions(batch), await sim.model.tokenDistributions(batch)];
    ref.dispose();
    const V = ctx.bench.acts.length;
    let kl = 0,
      n = 0;
    for (let i = 0; i < batch.mask.length; i++) {
      if (!batch.mask[i]) continue;
      kl += klDivergence(q.subarray(i * V, (i + 1) * V), p.subarray(i * V, (i + 1) * V));
      n++;
    }
    return kl / n;
  }

  it("with rewards that carry no signal, the forward anchor pulls the collapsed simulator back to the reference's modes, faster than the reverse one", async () => {
    const after: Record<string, number> = {};
    let start = 0;
    for (const anchor of ["forward", "reverse"] as const) {
      const config = validateConfig(
        merge(configWith({}), { cotrain: { anchor, klCoef: 1, lr: 3e-2 } }),
      );
      const ctx = context(config);
      // a reference with clear minority replies, so that π_ref^γ has lost them
      const ck = ctx.pretrained.reference.checkpoint;
      const head = ck.tensors[paramSpecs(ck.config).findIndex((s) => s.name === "head.b")].data;
      for (let v = 0; v < head.length; v++) head[v] = 0.3 * ((v * 7) % 5);
      const opp = createOpponents("cotrain", ctx)!;
      const policy = ctx.backend.createModel(ctx.pretrained.basePolicy.checkpoint, ctx.opts);
      const rng = Rng.seed(10);
      const probe = handPlayed(ctx, Rng.seed(11)).played.dialogues;
      try {
        const sim = members(opp)[0];
        start = await forwardKl(ctx, sim, probe);
        for (let s = 1; s <= 15; s++) {
          // the simulator's own replies, as in training (the reverse anchor's k3 is taken on them)
          const played = await play(
            ctx.bench,
            policy,
            opp.simulatorFor(s, rng),
            groupedPersonas(sim, PROMPTS, G, rng),
            rng,
            1,
          );
          await opp.afterStep!(s, played, new Float64Array(played.dialogues.length).fill(0.5));
        }
        after[anchor] = await forwardKl(ctx, sim, probe);
      } finally {
        opp.dispose();
        policy.dispose();
      }
    }
    console.info(
      `KL(reference ‖ co-trained simulator): start ${start.toFixed(3)}, after 15 steps forward ${after.forward.toFixed(3)}, reverse ${after.reverse.toFixed(3)}`,
    );
    expect(start).toBeGreaterThan(0.1);
    expect(after.forward).toBeLessThan(0.5 * start);
    expect(after.forward).toBeLessThan(after.reverse);
  });

  it("a config without cotrain.anchor predates it and means the reverse (k3) anchor", () => {
    const c = structuredClone(configWith({})) as unknown as { cotrain: Record<string, unknown> };
    delete c.cotrain.anchor;
    expect(validateConfig(c).cotrain.anchor).toBe("reverse");
    expect(() => validateConfig(merge(c, { cotrain: { anchor: "sideways" } }))).toThrow(
      /cotrain\.anchor/,
    );
  });
});
