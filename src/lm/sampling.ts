// Sampling a real LM in small batches, as the LM lab's procedures do (compare.ts: Direct vs VS;
// gamma-run.ts: γ of an instruct model): the control a call takes (a cancel signal, and the text
// of each reply so far while it is written), the model that takes it, and the loop that asks batch
// after batch, so progress shows between batches and a cancel lands before the next one.
import { LmCancelledError } from "./errors";
import type {
  ContinuationScore,
  GenerateOptions,
  Generation,
  LanguageModel,
  LmPrompt,
} from "./types";

/**
 * What a call may be given: `signal` cancels it (the worker stops at the next token); `onText`
 * receives each reply's text so far while it is written (endpoint models stream; others ignore it).
 */
export interface GenerateControl {
  signal?: AbortSignal;
  onText?: (index: number, text: string) => void;
}

/** A causal LM whose calls take a control: the LM lab's models (in the worker, on a server) and test fakes. */
export interface ControlledLanguageModel extends LanguageModel {
  generate(
    prompt: LmPrompt,
    opts?: GenerateOptions,
    control?: GenerateControl,
  ): Promise<Generation[]>;
  score(
    prompt: LmPrompt,
    continuations: string[],
    control?: { signal?: AbortSignal },
  ): Promise<ContinuationScore[]>;
}

/** One batch's options: how many rows it asks for and the seed of its first. */
export type BatchOptions = GenerateOptions & { n: number; seed: number };

/** Generation rows per call: small batches, so progress shows and a cancel lands between them. */
export const BATCH = 4;

/** Runs `batch(done, rows)` over `total` rows, at most BATCH at a time, in order; once `signal` aborts, the next batch throws a cancelled error instead. */
export async function inBatches(
  total: number,
  signal: AbortSignal,
  batch: (done: number, rows: number) => Promise<void>,
): Promise<void> {
  for (let done = 0; done < total; done += BATCH) {
    if (signal.aborted) throw new LmCancelledError("generation");
    await batch(done, Math.min(BATCH, total - done));
  }
}
