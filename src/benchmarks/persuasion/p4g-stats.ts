// Aggregate statistics of the real Persuasion for Good corpus (Wang et al., ACL 2019), the
// targets that the toy persuasion world is calibrated against (docs/architecture.md#persuasion). Browser-safe: it
// holds only numbers computed once by scripts/p4g-stats.ts (src/benchmarks/persuasion/p4g-load.ts
// reads the raw CSVs in Node); no corpus row is bundled into the app.
import stats from "./p4g-stats.json";

/** The 10 persuasion strategies annotated in P4G, most frequent first. */
export const P4G_STRATEGIES = [
  "credibility-appeal",
  "donation-information",
  "logical-appeal",
  "emotion-appeal",
  "task-related-inquiry",
  "source-related-inquiry",
  "personal-related-inquiry",
  "self-modeling",
  "foot-in-the-door",
  "personal-story",
] as const;
export type P4GStrategy = (typeof P4G_STRATEGIES)[number];

/** Persuadee traits whose correlation with donating is reported (columns `<trait>.x`). */
export const P4G_TRAITS = [
  "agreeable",
  "care",
  "fairness",
  "rational",
  "hedonism",
  "power",
  "extrovert",
  "open",
  "conscientious",
  "neurotic",
  "benevolence",
  "universalism",
] as const;
export type P4GTrait = (typeof P4G_TRAITS)[number];

/** The donation acts of the toy world, in dollars. */
export const TOY_DONATION_AMOUNTS = [0, 0.5, 1, 1.5, 2] as const;

/** How a recorded donation outside [0, 2] dollars is treated. */
export type OutOfRangePolicy = "drop" | "clamp";

/** A Pearson correlation; null when one side has no variance (the correlation is undefined). */
export type Correlation = number | null;

export interface P4GStats {
  source: {
    corpus: string;
    citation: string;
    licence: string;
  };
  /** Persuadees' actual donations (full_info.csv, B4 = 1, B6). */
  donations: {
    outOfRange: OutOfRangePolicy;
    n: number; // persuadees kept
    droppedNonNumeric: number; // B6 missing or not a number
    outOfRangeCount: number; // B6 outside [0, 2]: dropped or clamped per `outOfRange`
    mean: number;
    zeroFraction: number; // gave exactly $0
    donorMedian: number; // median among those giving > $0
    successFraction: number; // gave ≥ $1, the toy's "success" (as SCOPE's human study)
    histogram: {
      amounts: number[]; // TOY_DONATION_AMOUNTS
      fractions: number[]; // each donation rounded to the nearest $0.5 (ties up); sums to 1
    };
  };
  /** Persuader sentences of the 300 annotated dialogues, by primary label. */
  strategies: {
    counts: Record<P4GStrategy, number>;
    frequencies: Record<P4GStrategy, number>; // normalised over the 10 strategies
    otherPersuaderCounts: Record<string, number>; // greeting, proposition-of-donation, other, …
  };
  /** Persuadee sentences of the 300 annotated dialogues, by primary label. */
  persuadeeActs: {
    counts: Record<string, number>;
    frequencies: Record<string, number>; // normalised over all persuadee sentences
  };
  /** Per strategy, across annotated dialogues joined with the persuadee's donation. */
  strategyDonation: {
    dialogues: number; // annotated dialogues with a kept donation
    bySentences: Record<P4GStrategy, Correlation>; // r(sentences of the strategy, donation)
    byUse: Record<P4GStrategy, Correlation>; // point-biserial r(used at least once, donation)
    dialoguesUsing: Record<P4GStrategy, number>;
    highestBySentences: P4GStrategy;
    highestByUse: P4GStrategy;
  };
  /** Pearson r between each trait and donating (> $0), persuadees with a kept donation. */
  traitDonating: {
    n: Record<P4GTrait, number>; // persuadees with the trait recorded
    correlations: Record<P4GTrait, Correlation>;
  };
  annotated: {
    dialogues: number;
    sentences: number;
    meanPersuaderTurns: number; // distinct persuader turns per dialogue; the toy has ≤ 5
  };
}

// JSON imports widen string literals to `string`, so the narrowing is asserted here; the test
// checks that the JSON equals what loadP4GStats computes from the raw files.
export const p4gStats = stats as P4GStats;
