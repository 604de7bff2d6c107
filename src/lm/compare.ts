// Direct vs Verbalized Sampling of one instruct model at one dialogue state (docs/architecture.md#the-lm-tier):
// N Direct replies (N samples of the one-reply prompt) against ⌈N/k⌉ VS calls of k candidates
// each, one candidate selected per call (vs-parse.ts), then the measures of each set: unique
// share, distinct-n, embedding diversity and the benchmark's outcomes. No benchmark is imported:
// the caller hands in the prompts at the state and the benchmark's reading of outcomes, so the
// same procedure runs on the LM lab's models and on fakes in Node. The replies so far and each
// step done are reported as they come; a cancel lands between two batches.
import { Rng } from "../engine/random";
import { LmCancelledError } from "./errors";
import { distinctScores, embeddingDiversity, type DistinctScores } from "./measures";
import {
  inBatches,
  type BatchOptions,
  type ControlledLanguageModel,
  type GenerateControl,
} from "./sampling";
import type { EmbeddingModel, Generation, LmPrompt } from "./types";
import { parseVs, selectCandidate, type VsFormat, type VsTextSelection } from "./vs-parse";
import { vsConstrainedMaxTokens, vsJsonSchema } from "./vs-schema";

/** The benchmark's side at one dialogue state: its Direct and VS prompts, and how it reads outcomes from replies and compares them. */
export interface ComparePrompts<Outcomes> {
  direct: LmPrompt;
  vs(k: number): LmPrompt;
  parseOutcome(text: string): number | null;
  compareOutcomes(values: readonly (number | null)[]): Outcomes;
}

/** A model's replies to the dialogue state itself, for a model that reads act texts: Direct (`vsK` null) or VS with `vsK` candidates. */
export type ActReplies = (
  vsK: number | null,
  opts: BatchOptions,
  control: GenerateControl,
) => Promise<Generation[]>;

export interface CompareSampling {
  n: number; // replies each way
  k: number; // VS candidates per call
  selection: VsTextSelection;
  tailThreshold: number; // τ: drop candidates below it before selecting; 0 = off
  temperature: number;
  maxNewTokens: number; // per reply; a VS call gets k times this plus room for the JSON
  seed: number;
}

export interface ReplyView {
  text: string;
  tokens: number;
  outcome: number | null; // the benchmark's outcome read from the text (parseOutcome)
}

export interface VsCallView {
  raw: string;
  format: VsFormat;
  warnings: string[];
  candidates: { text: string; probability: number; outcome: number | null }[];
  /** Index of the candidate selection picked; null when the output held none. */
  selected: number | null;
}

export interface MeasureSet<Outcomes> {
  label: string;
  count: number;
  /** Replies that occur once among these (exact text, whitespace collapsed) / count. */
  uniqueShare: number;
  distinct: DistinctScores;
  embedding: number | null;
  outcomes: Outcomes;
}

export interface CompareMeasures<Outcomes> {
  direct: MeasureSet<Outcomes>;
  vsAll: MeasureSet<Outcomes>;
  vsSelected: MeasureSet<Outcomes>;
}

export interface Comparison<Outcomes> {
  direct: ReplyView[];
  vs: VsCallView[];
  measures: CompareMeasures<Outcomes>;
  /** Why embedding diversity is missing, when it is. */
  embeddingNote: string | null;
  /** The VS calls asked for JSON under the VS schema (a model that constrains its output). */
  constrained: boolean;
}

export type ComparePhase = "direct" | "vs" | "measures";

export type CompareProgress =
  | { kind: "phase"; phase: ComparePhase }
  /** A batch of `rows` replies is asked for, `first` being its first row's index on its side (when streaming). */
  | { kind: "batch"; side: "direct" | "vs"; first: number; rows: number }
  /** The text so far of the batch's reply `row` (when streaming). */
  | { kind: "text"; row: number; text: string }
  /** A batch came back: every reply so far (new arrays each time). */
  | { kind: "replies"; direct: ReplyView[]; vs: VsCallView[] }
  /** One of compareSteps() done: a Direct reply, a VS call or the measures. */
  | { kind: "step" };

export interface CompareInput<Outcomes> {
  /** The instruct model, asked with `prompts`. */
  lm: ControlledLanguageModel;
  prompts: ComparePrompts<Outcomes>;
  /** For a model that reads act texts only: asked instead of `lm` with the prompts. */
  actReplies?: ActReplies;
  /** Absent: no embedding diversity (the note says why). */
  embedder?: EmbeddingModel;
  sampling: CompareSampling;
  /** Ask with `onText`, reporting each batch and its text as it is written (endpoint models stream). */
  stream?: boolean;
  signal: AbortSignal;
  onProgress?: (p: CompareProgress) => void;
  /** An error in words, for the note when the embedding model fails (default: its message). */
  errorMessage?: (e: unknown) => string;
}

/** The steps of a run, as reported: one per Direct reply, one per VS call, one for the measures. */
export const compareSteps = (n: number, k: number) => n + Math.ceil(n / k) + 1;

/** N replies Direct (N samples) and VS (⌈N/k⌉ calls of k candidates, one selected per call), then the measures. */
export async function compareDirectVs<Outcomes>(
  input: CompareInput<Outcomes>,
): Promise<Comparison<Outcomes>> {
  const { lm, prompts, actReplies, signal } = input;
  const { n, k, temperature, maxNewTokens, seed } = input.sampling;
  const emit = input.onProgress ?? (() => {});
  const ask = (vsK: number | null, opts: BatchOptions, first: number) => {
    let control: GenerateControl = { signal };
    if (input.stream) {
      emit({ kind: "batch", side: vsK === null ? "direct" : "vs", first, rows: opts.n });
      control = { signal, onText: (row, text) => emit({ kind: "text", row, text }) };
    }
    return actReplies
      ? actReplies(vsK, opts, control)
      : lm.generate(vsK === null ? prompts.direct : prompts.vs(vsK), opts, control);
  };
  let direct: ReplyView[] = [];
  let vs: VsCallView[] = [];
  const arrived = (rows: number) => {
    emit({ kind: "replies", direct, vs });
    for (let i = 0; i < rows; i++) emit({ kind: "step" });
  };

  // Direct: n samples of the one-reply prompt
  emit({ kind: "phase", phase: "direct" });
  await inBatches(n, signal, async (first, rows) => {
    const gens = await ask(null, { temperature, maxNewTokens, n: rows, seed: seed + first }, first);
    direct = [
      ...direct,
      ...gens.map((g) => ({
        text: g.text.trim(),
        tokens: g.tokens,
        outcome: prompts.parseOutcome(g.text),
      })),
    ];
    arrived(rows);
  });

  // VS: ⌈n/k⌉ calls of k candidates; one candidate selected per call. A model that constrains its
  // output is asked for the VS schema's JSON, with room for its longest reply; the parser reads both.
  emit({ kind: "phase", phase: "vs" });
  const rng = Rng.seed(seed);
  const constrained = !actReplies && lm.constrainsJson === true;
  const vsOpts = constrained
    ? {
        temperature,
        maxNewTokens: vsConstrainedMaxTokens(k, maxNewTokens),
        seed: seed + 100_003,
        jsonSchema: vsJsonSchema(k, maxNewTokens),
      }
    : { temperature, maxNewTokens: k * maxNewTokens + 16 * k + 16, seed: seed + 100_003 };
  await inBatches(Math.ceil(n / k), signal, async (first, rows) => {
    const gens = await ask(k, { ...vsOpts, n: rows, seed: vsOpts.seed + first }, first);
    const views = gens.map((g): VsCallView => {
      const parsed = parseVs(g.text, { k });
      const selected = parsed.candidates.length
        ? selectCandidate(parsed.candidates, input.sampling.selection, rng, {
            tailThreshold: input.sampling.tailThreshold,
          })
        : null;
      return {
        raw: g.text,
        format: parsed.format,
        warnings: parsed.warnings,
        candidates: parsed.candidates.map((c) => ({ ...c, outcome: prompts.parseOutcome(c.text) })),
        selected,
      };
    });
    vs = [...vs, ...views];
    arrived(rows);
  });

  // measures
  emit({ kind: "phase", phase: "measures" });
  const directTexts = direct.map((r) => r.text);
  const vsAll = vs.flatMap((c) => c.candidates);
  const vsSel = vs.flatMap((c) => (c.selected === null ? [] : [c.candidates[c.selected]]));
  const groups = [directTexts, vsAll.map((c) => c.text), vsSel.map((c) => c.text)];
  const { values: emb, note } = await groupDiversity(
    input.embedder,
    groups,
    signal,
    input.errorMessage ?? messageOf,
  );
  const measure = (
    label: string,
    texts: string[],
    outcomes: (number | null)[],
    embedding: number | null,
  ): MeasureSet<Outcomes> => ({
    label,
    count: texts.length,
    uniqueShare: uniqueShare(texts),
    distinct: distinctScores(texts),
    embedding,
    outcomes: prompts.compareOutcomes(outcomes),
  });
  const measures = {
    direct: measure(
      "Direct",
      directTexts,
      direct.map((r) => r.outcome),
      emb[0],
    ),
    vsAll: measure(
      "VS, all candidates",
      groups[1],
      vsAll.map((c) => c.outcome),
      emb[1],
    ),
    vsSelected: measure(
      "VS, selected",
      groups[2],
      vsSel.map((c) => c.outcome),
      emb[2],
    ),
  };
  emit({ kind: "step" });
  return { direct, vs, measures, embeddingNote: note, constrained };
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Embedding diversity of each group (one embed call for all texts); null where it cannot be computed, with why. */
async function groupDiversity(
  embedder: EmbeddingModel | undefined,
  groups: string[][],
  signal: AbortSignal,
  errorMessage: (e: unknown) => string,
): Promise<{ values: (number | null)[]; note: string | null }> {
  const none = groups.map(() => null);
  if (!embedder) return { values: none, note: "no embedding model is loaded" };
  const texts = [...new Set(groups.flat())];
  if (texts.length === 0) return { values: none, note: "there are no replies to embed" };
  let vectors: Float32Array[];
  try {
    vectors = await embedder.embed(texts);
  } catch (e) {
    return { values: none, note: `the embedding model failed: ${errorMessage(e)}` };
  }
  if (signal.aborted) throw new LmCancelledError("the measures");
  const byText = new Map(texts.map((t, i) => [t, vectors[i]]));
  const notes = new Set<string>();
  const values = groups.map((g) => {
    if (g.length < 2) {
      notes.add("it needs at least 2 replies");
      return null;
    }
    try {
      return embeddingDiversity(g.map((t) => byText.get(t)!));
    } catch (e) {
      notes.add((e as Error).message);
      return null;
    }
  });
  return { values, note: notes.size ? [...notes].join("; ") : null };
}

/** The share of replies that occur once among `texts` (exact text, whitespace collapsed); 0 for none. */
export function uniqueShare(texts: readonly string[]): number {
  if (texts.length === 0) return 0;
  const keys = texts.map((t) => t.trim().replace(/\s+/g, " "));
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return keys.filter((key) => counts.get(key) === 1).length / keys.length;
}
