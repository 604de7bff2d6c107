// Behavioural diversity (docs/architecture.md#the-science, #metrics): entropy and KL of discrete
// distributions, distinct-n over act sequences (Li et al. 2016, "A Diversity-Promoting
// Objective Function for Neural Conversation Models": distinct n-grams / total n-grams), and
// SCOPE's mode coverage (CHATS-lab/scope_usim, scripts/diagnostics/measure_coverage.py: a mode —
// there a k-means cluster of reply embeddings — is covered by a model that has ≥ 5 samples in
// it; coverage is covered modes / all modes). In the toy the modes are known exactly (e.g. the
// user's reply-act pattern in an episode), so no clustering is needed. Natural log throughout.

/**
 * Shannon entropy −Σ p log p in nats; 0·log 0 = 0. `p` is normalised by its sum, so counts
 * work as well as probabilities.
 * @throws on a negative or non-finite entry, or when everything is 0.
 */
export function entropy(p: ArrayLike<number>): number {
  const z = total(p, "entropy");
  let h = 0;
  for (let i = 0; i < p.length; i++) {
    if (p[i] > 0) {
      const pi = p[i] / z;
      h -= pi * Math.log(pi);
    }
  }
  return Math.max(0, h); // rounding can leave −1e-17 for a point mass
}

/**
 * KL(p ‖ q) = Σ p log(p/q) in nats; terms with p = 0 are 0, and q = 0 where p > 0 gives
 * Infinity. Both are normalised by their sums (counts work).
 * @throws on a length mismatch, a negative or non-finite entry, or an all-zero input.
 */
export function klDivergence(p: ArrayLike<number>, q: ArrayLike<number>): number {
  if (p.length !== q.length)
    throw new Error(`klDivergence: p has ${p.length} entries and q has ${q.length}`);
  const zp = total(p, "klDivergence p");
  const zq = total(q, "klDivergence q");
  let kl = 0;
  for (let i = 0; i < p.length; i++) {
    if (!(p[i] > 0)) continue;
    if (!(q[i] > 0)) return Infinity;
    const pi = p[i] / zp;
    kl += pi * Math.log(pi / (q[i] / zq));
  }
  return Math.max(0, kl); // KL ≥ 0; p = q can round to −1e-17
}

/**
 * distinct-n: the number of distinct n-grams over all sequences divided by the total number of
 * n-grams (Li et al. 2016). A sequence shorter than n contributes none; when no sequence has n
 * tokens there are no n-grams and the result is 0 (nothing diverse was observed).
 * @throws when n is not a positive integer.
 */
export function distinctN(sequences: readonly (readonly number[])[], n: number): number {
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`distinctN: n must be a positive integer, got ${n}`);
  const seen = new Set<string>();
  let count = 0;
  for (const seq of sequences) {
    for (let i = 0; i + n <= seq.length; i++) {
      seen.add(seq.slice(i, i + n).join(","));
      count++;
    }
  }
  return count === 0 ? 0 : seen.size / count;
}

export interface Coverage {
  covered: number; // fraction of the universe of modes with ≥ minCount samples
  coveredModes: string[]; // those modes, in the order of `modes`
  counts: Map<string, number>; // samples per mode of the universe (pooled for a union)
  outside: number; // samples whose mode is not in the universe (ignored by `covered`)
}

/**
 * Fraction of the universe `modes` that the samples cover, a mode counting as covered once it
 * has at least `minCount` samples (SCOPE's rule, minCount = 5). `samples` holds the mode id of
 * each sampled episode; ids outside the universe are counted in `outside` and otherwise ignored,
 * as a reply pattern no human shows is no evidence of covering human behaviour.
 * @throws on an empty or duplicated universe, or a minCount that is not a positive integer.
 */
export function modeCoverage(
  samples: readonly string[],
  modes: readonly string[],
  minCount = 5,
): Coverage {
  return coverageOf(countModes([samples], modes, minCount), modes, minCount);
}

export interface UnionOptions {
  /**
   * `pooled` (default): the sample sets are pooled, so a mode is covered when the simulators
   * together have ≥ minCount samples in it. `any`: a mode is covered when at least one simulator
   * covers it on its own — the rule of SCOPE's measure_coverage.py (union of per-model masks).
   */
  rule?: "pooled" | "any";
}

/**
 * Coverage of the union of several simulators (SCOPE: single models cover < 12 % of modes, the
 * union of 3 covers 3–5× more). See `UnionOptions.rule` for how the union is formed; `counts`
 * are always the pooled counts.
 */
export function unionCoverage(
  sampleSets: readonly (readonly string[])[],
  modes: readonly string[],
  minCount = 5,
  opts: UnionOptions = {},
): Coverage {
  const rule = opts.rule ?? "pooled";
  const pooled = countModes(sampleSets, modes, minCount);
  if (rule === "pooled") return coverageOf(pooled, modes, minCount);
  if (rule !== "any")
    throw new Error(`unionCoverage: unknown rule ${JSON.stringify(rule satisfies never)}`);
  const coveredSet = new Set<string>();
  for (const set of sampleSets) {
    for (const m of coverageOf(countModes([set], modes, minCount), modes, minCount).coveredModes)
      coveredSet.add(m);
  }
  const coveredModes = modes.filter((m) => coveredSet.has(m));
  return {
    covered: coveredModes.length / modes.length,
    coveredModes,
    counts: pooled.counts,
    outside: pooled.outside,
  };
}

function countModes(
  sampleSets: readonly (readonly string[])[],
  modes: readonly string[],
  minCount: number,
) {
  if (!Number.isInteger(minCount) || minCount < 1)
    throw new Error(`mode coverage: minCount must be a positive integer, got ${minCount}`);
  if (modes.length === 0) throw new Error("mode coverage: the universe of modes is empty");
  const counts = new Map<string, number>();
  for (const m of modes) {
    if (counts.has(m))
      throw new Error(`mode coverage: mode ${JSON.stringify(m)} appears twice in the universe`);
    counts.set(m, 0);
  }
  let outside = 0;
  for (const set of sampleSets) {
    for (const s of set) {
      const c = counts.get(s);
      if (c === undefined) outside++;
      else counts.set(s, c + 1);
    }
  }
  return { counts, outside };
}

function coverageOf(
  { counts, outside }: { counts: Map<string, number>; outside: number },
  modes: readonly string[],
  minCount: number,
): Coverage {
  const coveredModes = modes.filter((m) => (counts.get(m) ?? 0) >= minCount);
  return { covered: coveredModes.length / modes.length, coveredModes, counts, outside };
}

function total(p: ArrayLike<number>, what: string): number {
  let z = 0;
  for (let i = 0; i < p.length; i++) {
    if (!(p[i] >= 0) || !Number.isFinite(p[i]))
      throw new Error(`${what}: entry ${i} is ${p[i]}; need finite non-negative numbers`);
    z += p[i];
  }
  if (!(z > 0)) throw new Error(`${what}: all entries are 0`);
  return z;
}
