// The registry of benchmarks: the only place that imports a benchmark's folder. The layers above
// (remote and up: simulators, experiment, cluster, serve, workers, cli, app) reach a benchmark
// through `benchmarkModule`.
import type { Benchmark, BenchmarkModule } from "./types";
import { persuasion } from "./persuasion";
import { service } from "./service";
import { cooperation } from "./cooperation";

export const BENCHMARKS = { persuasion, service, cooperation } as const;

export { leaningPrior } from "./scaffold";

export type BenchmarkId = keyof typeof BENCHMARKS;
export const BENCHMARK_IDS = Object.keys(BENCHMARKS) as BenchmarkId[];

export function isBenchmarkId(id: string): id is BenchmarkId {
  return Object.hasOwn(BENCHMARKS, id);
}

/** The module of a benchmark id; an unknown id is an error that lists the known ones. */
export function benchmarkModule(id: string): BenchmarkModule {
  if (!isBenchmarkId(id))
    throw new Error(
      `unknown benchmark ${JSON.stringify(id)}; benchmarks: ${BENCHMARK_IDS.join(", ")}`,
    );
  return BENCHMARKS[id] as unknown as BenchmarkModule;
}

/** The world of a config's benchmark (its `world` section), optionally with the human type mixture replaced. */
export function benchmarkFor(
  c: { benchmark: string; world: unknown },
  prior?: number[],
): Benchmark {
  return benchmarkModule(c.benchmark).create(c.world, prior);
}

/** A transcript's speaker name for a role of the benchmark ("Persuader", "Persuadee", "System"). */
export function speakerName(m: BenchmarkModule, speaker: "agent" | "user" | "env"): string {
  return speaker === "env" ? (m.roles.env ?? "System") : m.roles[speaker];
}
