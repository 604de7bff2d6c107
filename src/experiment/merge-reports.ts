// Runs of one experiment on different seeds, made one report: an experiment spread over sessions or
// machines with `--seed-base` gives, merged, the report that one run over all its seeds would have
// given (every task is deterministic given the config, its seed and the backend), with the parts'
// wall times summed. Parts that could not have come from one run are refused, saying why.
import { seedsOf, type ExperimentConfig } from "./config";
import { configDifferences } from "./config-diff";
import { comparisons, conditionReport, type ReportPart, type RunReport } from "./experiment";

export class MergeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MergeError";
  }
}

/** Settings a part may have of its own: which seeds it ran. */
const PER_PART = new Set(["seeds", "seedBase"]);

const range = (seeds: number[]) =>
  seeds.length === 1 ? `seed ${seeds[0]}` : `seeds ${seeds[0]}–${seeds[seeds.length - 1]}`;

/**
 * Merges reports of one config and backend on disjoint seeds that together are consecutive. `names`
 * (file names, say) label the parts in errors; by default "report 1", "report 2", ….
 */
export function mergeReports(
  reports: RunReport[],
  names: string[] = reports.map((_, i) => `report ${i + 1}`),
): RunReport {
  if (reports.length < 2)
    throw new MergeError(`merging needs two reports or more, got ${reports.length}`);
  const order = reports
    .map((r, i) => ({ r, name: names[i] }))
    .sort((a, b) => a.r.config.seedBase - b.r.config.seedBase);
  const [first] = order;
  for (const { r, name } of order.slice(1)) {
    if (r.env.backend !== first.r.env.backend)
      throw new MergeError(
        `${name} ran on ${r.env.backend} and ${first.name} on ${first.r.env.backend}: their numbers are not one run's`,
      );
    const diff = configDifferences(first.r.config, r.config).find((d) => !PER_PART.has(d.path));
    if (diff)
      throw new MergeError(
        `${name} has another config than ${first.name}: ${diff.path} is ${diff.wanted} there, ${diff.shown} in ${first.name}`,
      );
  }
  // disjoint and consecutive, so that seedBase and seeds describe the merged run
  for (let i = 1; i < order.length; i++) {
    const prev = order[i - 1];
    const end = prev.r.config.seedBase + prev.r.config.seeds;
    const next = order[i].r.config.seedBase;
    if (next < end)
      throw new MergeError(
        `${order[i].name} and ${prev.name} both ran seed ${next}: each seed must come from one report`,
      );
    if (next > end)
      throw new MergeError(
        `no report ran ${range(Array.from({ length: next - end }, (_, k) => end + k))} (between ${prev.name} and ${order[i].name}): the merged seeds must be consecutive`,
      );
  }
  const last = order[order.length - 1].r.config;
  const config: ExperimentConfig = {
    ...first.r.config,
    seeds: last.seedBase + last.seeds - first.r.config.seedBase,
  };
  const all = order.map((o) => o.r);
  const seeds = seedsOf(config);
  const diagnosed = new Set(seeds.slice(0, config.eval.diagnosticSeeds));

  const conditions = config.conditions.map((id) =>
    conditionReport(
      id,
      all.flatMap((r) => r.conditions.find((c) => c.id === id)?.seeds ?? []),
    ),
  );
  for (const c of conditions) {
    const missing = seeds.filter((s) => !c.seeds.some((m) => m.seed === s));
    if (missing.length)
      throw new MergeError(`condition ${c.id} has no results for ${range(missing)}`);
  }
  const sum = (f: (r: RunReport) => number) => all.reduce((a, r) => a + f(r), 0);
  const stores = all.flatMap((r) => (r.store ? [r.store] : []));
  const parts: ReportPart[] = all.flatMap(
    (r) =>
      r.parts ?? [
        {
          seedBase: r.config.seedBase,
          seeds: r.config.seeds,
          totalMs: r.timing.totalMs,
          parallel: r.env.parallel,
        },
      ],
  );
  const diagnosticsErrors = all
    .flatMap((r) => r.diagnosticsErrors ?? [])
    .filter((e) => diagnosed.has(e.seed));
  // a part's own diagnostics errors and parts are replaced by the merged ones
  const { diagnosticsErrors: _errors, parts: _parts, ...rest } = first.r;
  return {
    ...rest,
    preset: all.every((r) => r.preset === first.r.preset) ? first.r.preset : null,
    config,
    pretraining: all.flatMap((r) => r.pretraining),
    ...(stores.length
      ? {
          store: {
            location: stores.find((s) => s.location !== null)?.location ?? null,
            loaded: stores.reduce((a, s) => a + s.loaded, 0),
            trained: stores.reduce((a, s) => a + s.trained, 0),
            messages: [...new Set(stores.flatMap((s) => s.messages))],
          },
        }
      : {}),
    conditions,
    comparisons: comparisons(conditions),
    // the diagnostics of the seeds one run would have diagnosed (its first eval.diagnosticSeeds)
    simulators: all.flatMap((r) => r.simulators).filter((d) => diagnosed.has(d.seed)),
    ...(diagnosticsErrors.length ? { diagnosticsErrors } : {}),
    timing: {
      totalMs: sum((r) => r.timing.totalMs),
      pretrainMs: sum((r) => r.timing.pretrainMs),
      trainMs: sum((r) => r.timing.trainMs),
      diagnosticsMs: sum((r) => r.timing.diagnosticsMs),
      units: all.flatMap((r) => r.timing.units ?? []),
    },
    parts,
  };
}
