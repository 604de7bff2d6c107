// γ of a real instruct model against its base model, from sampling to the fit (docs/architecture.md#the-lm-tier):
// at each dialogue state, replies from the instruct model (the benchmark's Direct prompt) and from
// the base model (the third-person transcript) at temperature 1 — γ is about the models, not the
// sampler — each cut to its first line, as in a transcript; then all of them scored exactly under
// the base model and γ fitted (lm-gamma.ts: mle, nce, SCOPE's). No benchmark is imported: the
// caller hands in each state's prompts. Each step done is reported; a cancel lands between batches.
import { lmGamma, type LmGammaPrompt, type LmGammaReport } from "./lm-gamma";
import {
  inBatches,
  type BatchOptions,
  type ControlledLanguageModel,
  type GenerateControl,
} from "./sampling";
import type { Generation, LanguageModel, LmPrompt } from "./types";

/** One reply of a transcript: the first line, trimmed (the next line would be another speaker's). */
export const firstLine = (text: string) => text.trim().split(/\r?\n/)[0].trim();

/** One dialogue state's prompts. */
export interface GammaState {
  /** The instruct model's prompt (the benchmark's Direct prompt). */
  direct: LmPrompt;
  /** The base model's prompt (the benchmark's transcript): it samples under it and every reply is scored under it. */
  baseText: LmPrompt;
  /** For an instruct model that reads act texts only: its Direct replies to the state itself, asked instead of `direct`. */
  actReplies?: (opts: BatchOptions, control: GenerateControl) => Promise<Generation[]>;
}

export interface GammaRunInput {
  instruct: ControlledLanguageModel;
  base: ControlledLanguageModel;
  states: GammaState[];
  /** The continuation scored for a reply under `baseText` (the benchmark's baseContinuation). */
  continuation: (reply: string) => string;
  samples: number; // replies per state from each model
  maxNewTokens: number; // per reply
  seed: number;
  signal: AbortSignal;
  onProgress?: (p: GammaProgress) => void;
}

export type GammaProgress =
  /** Sampling the instruct or the base model at `states[state]` begins. */
  | { kind: "phase"; phase: "instruct" | "base"; state: number }
  /** Scoring under the base model and the fit begin. */
  | { kind: "phase"; phase: "fit" }
  /** One of gammaSteps() done: one model's replies at one state, or the fit. */
  | { kind: "step" };

/** The steps of a run, as reported: each state's two samplings, then the fit. */
export const gammaSteps = (states: number) => states * 2 + 1;

export interface GammaRun {
  report: LmGammaReport;
  /** Empty replies left out (they say nothing a base model could score). */
  dropped: number;
}

/** Samples both models at every state, scores all replies under the base model and fits γ. @throws when every instruct reply is empty. */
export async function sampleAndFitGamma(input: GammaRunInput): Promise<GammaRun> {
  const { instruct, base, signal } = input;
  const emit = input.onProgress ?? (() => {});
  const sample = async (
    lm: ControlledLanguageModel,
    prompt: LmPrompt,
    seed: number,
    actReplies?: GammaState["actReplies"],
  ) => {
    const out: string[] = [];
    await inBatches(input.samples, signal, async (done, rows) => {
      const opts = { temperature: 1, maxNewTokens: input.maxNewTokens, n: rows, seed: seed + done };
      const gens = actReplies
        ? await actReplies(opts, { signal })
        : await lm.generate(prompt, opts, { signal });
      out.push(...gens.map((g) => firstLine(g.text)));
    });
    return out;
  };
  const keep = (xs: string[]) => xs.filter((x) => x !== "");
  const prompts: LmGammaPrompt[] = [];
  let dropped = 0;
  for (const [j, s] of input.states.entries()) {
    emit({ kind: "phase", phase: "instruct", state: j });
    const replies = await sample(instruct, s.direct, input.seed + 1000 * j, s.actReplies);
    emit({ kind: "step" });
    emit({ kind: "phase", phase: "base", state: j });
    const baseSamples = await sample(base, s.baseText, input.seed + 1000 * j + 500);
    emit({ kind: "step" });
    dropped +=
      replies.length - keep(replies).length + baseSamples.length - keep(baseSamples).length;
    if (keep(replies).length)
      prompts.push({ prompt: s.baseText, replies: keep(replies), baseSamples: keep(baseSamples) });
  }
  if (prompts.length === 0) throw new Error("every instruct reply was empty; nothing to fit γ on");
  emit({ kind: "phase", phase: "fit" });
  const scorer: LanguageModel = {
    id: base.id,
    generate: (p, o) => base.generate(p, o, { signal }),
    score: (p, c) => base.score(p, c, { signal }),
  };
  const report = await lmGamma(prompts, scorer, { continuation: input.continuation });
  emit({ kind: "step" });
  return { report, dropped };
}
