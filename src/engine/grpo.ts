// GRPO (Shao et al. 2024, DeepSeekMath) as SCOPE runs it: G rollouts share a start state,
// advantages are rewards standardised within their group, the ratio is clipped with separate
// ε_low / ε_high (clip-higher, DAPO), and a low-variance KL (k3) ties the policy to a frozen
// reference (optionally also the exact forward KL from the reference's whole distribution).
// The loss itself lives in every backend's trainStep; this file prepares its inputs.
import type { EngineModel, StepHyper, StepStats, TrainBatch } from "./backend";

export interface AdvantageOptions {
  scaleByStd: boolean; // divide by the group's std (GRPO); false gives Dr. GRPO's mean-centring only
  eps: number;
}

/**
 * Group-relative advantages: rows [g·G, (g+1)·G) form group g.
 * A_i = (r_i − mean_g) / (std_g + eps); a group whose rewards are all equal gets 0.
 */
export function groupAdvantages(
  rewards: ArrayLike<number>,
  groupSize: number,
  opts: AdvantageOptions = { scaleByStd: true, eps: 1e-6 },
): Float32Array {
  const n = rewards.length;
  if (!Number.isInteger(groupSize) || groupSize < 1 || n % groupSize !== 0)
    throw new Error(`groupAdvantages: ${n} rewards do not split into groups of ${groupSize}`);
  const adv = new Float32Array(n);
  for (let g = 0; g < n; g += groupSize) {
    let mean = 0;
    for (let i = g; i < g + groupSize; i++) mean += rewards[i];
    mean /= groupSize;
    let sq = 0;
    for (let i = g; i < g + groupSize; i++) sq += (rewards[i] - mean) ** 2;
    const std = Math.sqrt(sq / groupSize);
    for (let i = g; i < g + groupSize; i++)
      adv[i] = opts.scaleByStd ? (rewards[i] - mean) / (std + opts.eps) : rewards[i] - mean;
  }
  return adv;
}

export interface GrpoHyper extends StepHyper {
  groupSize: number; // G rollouts per start state
  updatesPerBatch: number; // μ: optimizer steps on each batch of rollouts (ratio ≠ 1 from the 2nd on)
  scaleByStd: boolean;
}

export interface GrpoStats extends StepStats {
  rewardMean: number;
}

export type Rollouts = Omit<TrainBatch, "advantages" | "oldLogp" | "refLogp">;

/** One GRPO update of `policy` on sampled rollouts and their rewards. */
export async function grpoUpdate(
  policy: EngineModel,
  reference: EngineModel | null,
  rollouts: Rollouts,
  rewards: ArrayLike<number>,
  h: GrpoHyper,
  precomputed?: Float32Array, // advantages computed by the caller (e.g. over a subset of each group)
): Promise<GrpoStats> {
  if (rewards.length !== rollouts.rows)
    throw new Error(`grpoUpdate: ${rewards.length} rewards for ${rollouts.rows} rollouts`);
  const advantages =
    precomputed ?? groupAdvantages(rewards, h.groupSize, { scaleByStd: h.scaleByStd, eps: 1e-6 });
  const dist = { temperature: h.temperature };
  const refLogp =
    reference && h.klCoef > 0 ? await reference.tokenLogprobs(rollouts, dist) : undefined;
  const refDist =
    reference && (h.forwardKlCoef ?? 0) > 0
      ? await reference.tokenDistributions(rollouts, dist)
      : undefined;
  // With one update per batch the sampling policy is the current one (r ≡ 1, no extra forward).
  const oldLogp = h.updatesPerBatch > 1 ? await policy.tokenLogprobs(rollouts, dist) : undefined;
  let first: StepStats | undefined;
  for (let u = 0; u < h.updatesPerBatch; u++) {
    const s = await policy.trainStep({ ...rollouts, advantages, oldLogp, refLogp, refDist }, h);
    first ??= s;
  }
  let rewardMean = 0;
  for (let i = 0; i < rewards.length; i++) rewardMean += rewards[i] / rewards.length;
  return { ...first!, rewardMean };
}
