// How conditions are named and coloured everywhere in the app (one colour per condition, the
// same in every figure; an Okabe–Ito palette, readable for colour-blind viewers and on projectors).
import type { ConditionId } from "../../experiment/config";

export const CONDITION_INFO: Record<
  ConditionId,
  { label: string; color: string; explain: string }
> = {
  base: { label: "base", color: "#999999", explain: "the pretrained policy, no RL" },
  single: {
    label: "single",
    color: "#D55E00",
    explain: "RL against one aligned (collapsed) simulator",
  },
  ensemble: {
    label: "ensemble",
    color: "#E69F00",
    explain: "RL against K aligned simulators, rotated (in SCOPE, of different model families)",
  },
  vs: { label: "vs", color: "#0072B2", explain: "the aligned simulator with Verbalized Sampling" },
  cotrain: {
    label: "cotrain",
    color: "#CC79A7",
    explain: "a simulator trained against the policy (adversarial, anchored by KL)",
  },
  population: {
    label: "population",
    color: "#009E73",
    explain: "co-training plus a FIFO pool of simulator snapshots",
  },
};

export const conditionDomain = (ids: readonly ConditionId[]) =>
  ids.map((c) => CONDITION_INFO[c].label);
export const conditionRange = (ids: readonly ConditionId[]) =>
  ids.map((c) => CONDITION_INFO[c].color);
