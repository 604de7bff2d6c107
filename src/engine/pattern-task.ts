// A small sequence task that exercises the whole engine end to end: from a random start the
// policy must learn, from a reward only, to emit a cue-dependent 4-token pattern. It is the
// command-line demo, the GRPO acceptance test and the worker's smoke job.
import type { ModelConfig } from "./config";
import type { EngineBackend } from "./backend";
import { DEFAULT_OPTIM } from "./backend";
import { initCheckpoint, type Checkpoint } from "./checkpoint";
import { grpoUpdate, type GrpoHyper } from "./grpo";
import { generate } from "./sampling";
import { Rng } from "./random";

export const BOS = 0;
export const CUES = [1, 2];
export const FIRST_SYMBOL = 3;
export const SYMBOLS = 8; // tokens 3 … 10
export const PATTERN_LEN = 4;

export interface PatternTaskConfig {
  seed: number;
  steps: number; // GRPO updates
  groups: number; // start states (cues) per batch
  groupSize: number; // G rollouts per start state
  evalRows: number; // rollouts per evaluation
  evalEvery: number; // evaluate every n steps (and at the end)
  patterns: number[][]; // target pattern of each cue, symbols 0 … SYMBOLS−1
  model: ModelConfig;
  hyper: GrpoHyper;
}

export const DEFAULT_PATTERN_TASK: PatternTaskConfig = {
  seed: 0,
  steps: 150,
  groups: 8,
  groupSize: 8,
  evalRows: 64,
  evalEvery: 20,
  patterns: [
    [3, 1, 4, 1],
    [5, 2, 6, 5],
  ],
  model: { vocab: 16, context: 8, d: 32, layers: 1, heads: 4, mlpRatio: 4, prefixLen: 0 },
  hyper: {
    ...DEFAULT_OPTIM,
    lr: 3e-3,
    epsLow: 0.2,
    epsHigh: 0.28,
    klCoef: 0.001,
    temperature: 1,
    groupSize: 8,
    updatesPerBatch: 1,
    scaleByStd: true,
  },
};

export interface PatternProgress {
  step: number;
  steps: number;
  reward: number; // mean training reward of this batch
  entropy: number;
  kl: number;
  exact?: number; // exact-match rate of the last evaluation
}

export interface PatternResult {
  steps: number;
  reward: number; // final evaluation: mean fraction of pattern positions right
  exact: number; // final evaluation: fraction of rollouts that emit the whole pattern
  initialExact: number;
  history: PatternProgress[];
  checkpoint: Checkpoint;
  ms: number;
}

const SYMBOL_CLASS = 1;

function masks(vocab: number): number[][] {
  const all = new Array<number>(vocab).fill(1);
  const symbols = all.map((_, v) => (v >= FIRST_SYMBOL && v < FIRST_SYMBOL + SYMBOLS ? 1 : 0));
  return [all, symbols];
}

/** Rows of [BOS, cue, …] with the cue repeated `groupSize` times per group. */
function prompts(
  rows: number,
  groupSize: number,
  cueOf: (group: number) => number,
  T: number,
): Int32Array {
  const tokens = new Int32Array(rows * T);
  for (let b = 0; b < rows; b++) {
    tokens[b * T] = BOS;
    tokens[b * T + 1] = CUES[cueOf(Math.floor(b / groupSize))];
  }
  return tokens;
}

function score(
  tokens: Int32Array,
  rows: number,
  T: number,
  patterns: number[][],
): { rewards: Float32Array; exact: number } {
  const rewards = new Float32Array(rows);
  let exact = 0;
  for (let b = 0; b < rows; b++) {
    const target = patterns[CUES.indexOf(tokens[b * T + 1])];
    let hits = 0;
    for (let i = 0; i < PATTERN_LEN; i++)
      if (tokens[b * T + 2 + i] - FIRST_SYMBOL === target[i]) hits++;
    rewards[b] = hits / PATTERN_LEN;
    if (hits === PATTERN_LEN) exact++;
  }
  return { rewards, exact: exact / rows };
}

export interface RunOptions {
  onProgress?: (p: PatternProgress) => void;
  signal?: AbortSignal;
  tick?: () => Promise<void>; // awaited between steps (a worker yields to its message queue here)
}

export async function runPatternTask(
  backend: EngineBackend,
  cfg: PatternTaskConfig,
  opts: RunOptions = {},
): Promise<PatternResult> {
  const t0 = performance.now();
  const T = cfg.model.context;
  if (T < 2 + PATTERN_LEN) throw new Error(`pattern task needs context ≥ ${2 + PATTERN_LEN}`);
  const rows = cfg.groups * cfg.groupSize;
  const capacity = Math.max(rows, cfg.evalRows);
  const root = Rng.seed(cfg.seed);
  const init = initCheckpoint(cfg.model, root.fork(0).int(2 ** 31));
  const modelOpts = { capacity, masks: masks(cfg.model.vocab) };
  const policy = backend.createModel(init, modelOpts);
  const reference = backend.createModel(init, modelOpts);
  const rng = root.fork(1);
  const gen = {
    from: 2,
    to: 2 + PATTERN_LEN,
    cls: () => SYMBOL_CLASS,
    dist: { temperature: cfg.hyper.temperature },
  };
  const mask = new Float32Array(rows * T);
  for (let b = 0; b < rows; b++) for (let t = gen.from; t < gen.to; t++) mask[b * T + t] = 1;
  const cls = new Int32Array(rows * T);
  for (let b = 0; b < rows; b++)
    for (let t = gen.from; t < gen.to; t++) cls[b * T + t] = SYMBOL_CLASS;

  const evaluate = async () => {
    const n = cfg.evalRows;
    const tokens = prompts(n, 1, (b) => b % CUES.length, T);
    await generate(policy, tokens, n, rng, gen);
    return score(tokens, n, T, cfg.patterns).exact;
  };

  try {
    const initialExact = await evaluate();
    let exact = initialExact;
    const history: PatternProgress[] = [];
    for (let step = 1; step <= cfg.steps; step++) {
      await opts.tick?.();
      opts.signal?.throwIfAborted();
      const tokens = prompts(rows, cfg.groupSize, () => rng.int(CUES.length), T);
      await generate(policy, tokens, rows, rng, gen);
      const { rewards } = score(tokens, rows, T, cfg.patterns);
      const s = await grpoUpdate(policy, reference, { rows, tokens, cls, mask }, rewards, {
        ...cfg.hyper,
        groupSize: cfg.groupSize,
      });
      if (step % cfg.evalEvery === 0 || step === cfg.steps) exact = await evaluate();
      const p: PatternProgress = {
        step,
        steps: cfg.steps,
        reward: s.rewardMean,
        entropy: s.entropy,
        kl: s.kl,
        exact,
      };
      history.push(p);
      opts.onProgress?.(p);
    }
    const finalTokens = prompts(cfg.evalRows, 1, (b) => b % CUES.length, T);
    await generate(policy, finalTokens, cfg.evalRows, rng, gen);
    const final = score(finalTokens, cfg.evalRows, T, cfg.patterns);
    const reward = final.rewards.reduce((a, b) => a + b, 0) / cfg.evalRows;
    return {
      steps: cfg.steps,
      reward,
      exact: final.exact,
      initialExact,
      history,
      checkpoint: await policy.checkpoint(),
      ms: performance.now() - t0,
    };
  } finally {
    policy.dispose();
    reference.dispose();
  }
}
