// The six training conditions (docs/architecture.md#conditions). They differ only in the simulators the policy trains
// against; the policy, its RL (GRPO with a KL to the base policy), its budget and its evaluation
// are the same code for all. Nothing here sees humans or the held-out panel.
import type { Benchmark } from "../benchmarks/types";
import type { EngineBackend, EngineModel, ModelOptions } from "../engine/backend";
import type { Checkpoint } from "../engine/checkpoint";
import type { Rng } from "../engine/random";
import { CoTraining } from "../simulators/cotrained";
import { NeuralSimulator } from "../simulators/neural";
import type { UserSimulator } from "../simulators/simulator";
import { VerbalizedSampling } from "../simulators/vs";
import type { ConditionId, ExperimentConfig } from "./config";
import type { PretrainedSet } from "./pretrain";
import { remoteSimulator } from "./lm-simulators";
import type { RemoteSimulator, RemoteSimulatorStats } from "../simulators/remote";
import type { Played } from "./rollout";

/** What a condition trains against, step by step. */
export interface TrainingOpponents {
  /** The simulator for this step's batch (per-episode routing is inside it). */
  simulatorFor(step: number, rng: Rng): UserSimulator;
  /**
   * Called after the policy's update with the dialogues of this step (co-training updates here).
   * `playOwn` plays a fresh batch of the current policy against a given simulator (not used to
   * update the policy), for a trainable simulator that did not play this step's batch.
   */
  afterStep?(
    step: number,
    played: Played,
    rewards: Float64Array,
    playOwn?: PlayOwn,
  ): Promise<{ simReward?: number; simKl?: number }>;
  /** The simulators whose success is reported as "train-simulator success". */
  evaluationSimulators(): UserSimulator[];
  /** What remote training simulators did (config simulator.remote), for the report. */
  remoteStats?(): RemoteSimulatorStats[];
  dispose(): void;
}

/**
 * The conditions whose training simulators are trained with the policy (co-training): they are not
 * kept after the run, so a re-scoring of their stored policies cannot measure train-sim success.
 */
export const TRAINS_ITS_SIMULATOR: ReadonlySet<ConditionId> = new Set(["cotrain", "population"]);

export type PlayOwn = (sim: UserSimulator) => Promise<{ played: Played; rewards: Float64Array }>;

export interface ConditionContext {
  backend: EngineBackend;
  bench: Benchmark;
  config: ExperimentConfig;
  pretrained: PretrainedSet;
  opts: ModelOptions;
}

function frozen(
  ctx: ConditionContext,
  name: string,
  ck: Checkpoint,
  gamma: number,
  owned: EngineModel[],
): NeuralSimulator {
  const model = ctx.backend.createModel(ck, ctx.opts);
  owned.push(model);
  return new NeuralSimulator(name, ctx.bench, model, gamma, true);
}

export function createOpponents(id: ConditionId, ctx: ConditionContext): TrainingOpponents | null {
  const { config, pretrained } = ctx;
  const gamma = config.simulator.gamma;
  const owned: EngineModel[] = [];
  const dispose = () => owned.forEach((m) => m.dispose());
  // remote training simulators (simulator.remote) replace the pretrained networks they name
  const remote = config.simulator.remote;
  const fromRemote = (sims: RemoteSimulator[]): TrainingOpponents => ({
    simulatorFor: (step) => sims[step % sims.length],
    evaluationSimulators: () => sims,
    remoteStats: () => sims.map((s) => ({ ...s.stats })),
    dispose,
  });
  if (id === "single" && remote?.single)
    return fromRemote([remoteSimulator(ctx.bench, config, "remote simulator", remote.single)]);
  if (id === "ensemble" && remote?.ensemble)
    return fromRemote(
      remote.ensemble.map((r, k) =>
        remoteSimulator(ctx.bench, config, `remote simulator ${k + 1}`, r),
      ),
    );
  if (id === "vs" && remote?.vs)
    return fromRemote([remoteSimulator(ctx.bench, config, "remote vs simulator", remote.vs)]);
  switch (id) {
    case "base":
      return null;
    case "single": {
      const sim = frozen(ctx, "aligned simulator", pretrained.reference.checkpoint, gamma, owned);
      return { simulatorFor: () => sim, evaluationSimulators: () => [sim], dispose };
    }
    case "ensemble": {
      // each member collapsed with its own family's γ (the single simulator's: simulator.gamma)
      const sims = pretrained.ensemble.map((e) =>
        frozen(ctx, e.name, e.result.checkpoint, e.gamma ?? gamma, owned),
      );
      return {
        simulatorFor: (step) => sims[step % sims.length],
        evaluationSimulators: () => sims,
        dispose,
      };
    }
    case "vs": {
      const base = frozen(ctx, "aligned simulator", pretrained.reference.checkpoint, gamma, owned);
      const sim = new VerbalizedSampling(ctx.bench, base, config.vs);
      return { simulatorFor: () => sim, evaluationSimulators: () => [sim], dispose };
    }
    case "cotrain":
    case "population":
      return new CoTraining({
        backend: ctx.backend,
        bench: ctx.bench,
        opts: ctx.opts,
        reference: pretrained.reference.checkpoint,
        gamma,
        rl: config.rl,
        cotrain: config.cotrain,
        pool:
          id === "population"
            ? { size: config.population.poolSize, ...config.population }
            : undefined,
      });
    default:
      id satisfies never;
      throw new Error(`unknown condition ${id as string}`);
  }
}
