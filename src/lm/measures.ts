// Diversity measures for replies of real LMs (docs/architecture.md#the-lm-tier): distinct-1/2/3 over words (Li et al.
// 2016; the n-gram counting is `distinctN` of the toy metrics) and embedding diversity = 1 − mean
// pairwise cosine with negative cosines clipped to 0 (as in the VS paper's semantic diversity).
// A benchmark's outcomes in reply text (Persuasion: donations) are its own (BenchmarkModule.lm).
import { distinctN } from "../metrics/diversity";
import type { EmbeddingModel } from "./types";

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Lexical diversity

/** Lower-cased words: letters and digits (with inner apostrophes), and dollar amounts as one token. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/\$?\d+(?:[.,]\d+)*|[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu) ?? [];
}

/** distinct-n over the words of all texts: distinct n-grams / all n-grams (0 when there are none). */
export function distinctNTexts(texts: readonly string[], n: number): number {
  const vocab = new Map<string, number>();
  const ids = texts.map((t) =>
    words(t).map((w) => {
      let id = vocab.get(w);
      if (id === undefined) vocab.set(w, (id = vocab.size));
      return id;
    }),
  );
  return distinctN(ids, n);
}

export interface DistinctScores {
  distinct1: number;
  distinct2: number;
  distinct3: number;
}

export function distinctScores(texts: readonly string[]): DistinctScores {
  return {
    distinct1: distinctNTexts(texts, 1),
    distinct2: distinctNTexts(texts, 2),
    distinct3: distinctNTexts(texts, 3),
  };
}

// ─────────────────────────────────────────────────────────────────────────────────────────────
// Semantic diversity

/**
 * 1 − mean over pairs of max(0, cos(u, v)); vectors need not be normalised. 0 when all replies
 * point the same way, 1 when they are pairwise orthogonal (or opposed).
 * @throws with fewer than 2 vectors, differing lengths, or a zero / non-finite vector.
 */
export function embeddingDiversity(vectors: readonly Float32Array[]): number {
  const n = vectors.length;
  if (n < 2) throw new Error(`embeddingDiversity: need at least 2 vectors, got ${n}`);
  const dim = vectors[0].length;
  const norms = vectors.map((v, i) => {
    if (v.length !== dim)
      throw new Error(
        `embeddingDiversity: vector ${i} has ${v.length} entries, vector 0 has ${dim}`,
      );
    let s = 0;
    for (let j = 0; j < dim; j++) s += v[j] * v[j];
    if (!(s > 0) || !Number.isFinite(s))
      throw new Error(`embeddingDiversity: vector ${i} is zero or not finite`);
    return Math.sqrt(s);
  });
  let sum = 0;
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      let dot = 0;
      for (let j = 0; j < dim; j++) dot += vectors[a][j] * vectors[b][j];
      sum += Math.max(0, Math.min(1, dot / (norms[a] * norms[b])));
    }
  }
  return 1 - sum / ((n * (n - 1)) / 2);
}

/** Embeds the texts with the model and returns their embedding diversity. */
export async function embeddingDiversityOf(
  model: EmbeddingModel,
  texts: readonly string[],
): Promise<number> {
  return embeddingDiversity(await model.embed([...texts]));
}
