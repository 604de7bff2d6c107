// The simulators an imported corpus plays (docs/humans.md): the evaluation humans of a config
// with `humans.corpus`, and its corpus panel members, each the empirical population of its
// dialogues (src/simulators/empirical.ts). Tables are built once per corpus and shared.
import type { Benchmark } from "../benchmarks/types";
import { EmpiricalSimulator, EmpiricalTable } from "../simulators/empirical";
import { Humans, type UserSimulator } from "../simulators/simulator";
import type { ExperimentConfig } from "./config";
import { corpusAt, type Corpora } from "./corpora";
import type { PanelEntry } from "./pretrain";

export class CorpusTables {
  readonly #tables = new Map<string, EmpiricalTable>();
  constructor(
    readonly bench: Benchmark,
    readonly corpora: Corpora,
  ) {}

  table(ref: { file: string; sha256?: string }, path: string): EmpiricalTable {
    const c = corpusAt(this.corpora, ref, path);
    let t = this.#tables.get(c.sha256);
    if (!t) this.#tables.set(c.sha256, (t = new EmpiricalTable(this.bench, c.dialogues)));
    return t;
  }
}

/**
 * The evaluation humans: the benchmark's population, or the empirical population of
 * `humans.corpus`. A fresh one per evaluation keeps its own count of back-offs.
 */
export function evaluationHumans(
  tables: CorpusTables,
  config: ExperimentConfig,
): () => UserSimulator & { usage?: EmpiricalSimulator["usage"] } {
  const h = config.humans;
  if (!h) return () => new Humans(tables.bench);
  const table = tables.table(h.corpus, "humans.corpus");
  return () => new EmpiricalSimulator("humans", table, h.minCount);
}

/** The corpus members of a seed's panel, by name. */
export function corpusPanel(
  tables: CorpusTables,
  panel: readonly PanelEntry[],
): Map<string, EmpiricalSimulator> {
  const out = new Map<string, EmpiricalSimulator>();
  panel.forEach((m, i) => {
    if ("corpus" in m)
      out.set(
        m.name,
        new EmpiricalSimulator(m.name, tables.table(m.corpus, `panel.${i}.corpus`), m.minCount),
      );
  });
  return out;
}

/** The panel entries an LM or remote server plays (lm-simulators.ts opens them). */
export function lmEntries(panel: readonly PanelEntry[]) {
  return panel.flatMap((m) => ("lm" in m || "remote" in m ? [m] : []));
}
