// Validation of an experiment config: the schema (config-schema.ts), each problem worded with its
// path, then the checks the schema cannot state — type mixtures with one weight per latent type,
// and ensemble families distinct from each other and from the held-out panel's.
import { BENCHMARK_IDS, benchmarkFor, benchmarkModule } from "../benchmarks/registry";
import { ExperimentConfigSchema, type ExperimentConfig } from "./config-schema";

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Validates and returns the config; the error lists every problem with its path. */
export function validateConfig(input: unknown): ExperimentConfig {
  const r = ExperimentConfigSchema.safeParse(input);
  if (!r.success) {
    const lines = r.error.issues.flatMap((i) => {
      const at = (path: PropertyKey[]) => (path.length ? path.map(String).join(".") : "(root)");
      // name each unknown key by its full path (zod reports the parent)
      if (i.code === "unrecognized_keys")
        return i.keys.map((k) => `${at([...i.path, k])}: unknown key`);
      if (i.path.length === 1 && i.path[0] === "benchmark")
        return [
          `benchmark: unknown benchmark ${JSON.stringify((input as { benchmark?: unknown })?.benchmark)}; benchmarks: ${BENCHMARK_IDS.join(", ")}`,
        ];
      return [`${at(i.path)}: ${i.message}`];
    });
    throw new ConfigError(`invalid experiment config — ${lines.join("; ")}`);
  }
  const c = r.data;
  const types = benchmarkModule(c.benchmark).typeNames;
  const priorProblem = (prior: number[] | undefined) =>
    prior && prior.length !== types.length
      ? `expected one weight per latent type (${types.length}: ${types.join(", ")}), got ${prior.length}`
      : prior && !prior.some((w) => w > 0)
        ? "a type mixture needs some positive weight"
        : null;
  for (const m of c.panel) {
    const p = priorProblem(m.prior);
    if (p) throw new ConfigError(`panel.${m.name}.prior: ${p}`);
  }
  c.ensemble.members.forEach((m, i) => {
    const p = priorProblem(m.prior);
    if (p) throw new ConfigError(`ensemble.members[${i}].prior: ${p}`);
  });
  const ref = referenceWorldProblem(c);
  if (ref) throw new ConfigError(`invalid experiment config — ${ref}`);
  const problems = ensembleProblems(c);
  if (problems.length) throw new ConfigError(`invalid experiment config — ${problems.join("; ")}`);
  return c;
}

/** What makes a simulator family here: its corpus' type mixture (normalised), its corpus size and its γ. */
interface Family {
  prior: number[];
  corpusScale: number;
  gamma: number;
}

function sameFamily(a: Family, b: Family): boolean {
  const close = (x: number, y: number) =>
    Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
  return (
    close(a.gamma, b.gamma) &&
    close(a.corpusScale, b.corpusScale) &&
    a.prior.every((p, i) => close(p, b.prior[i]))
  );
}

/**
 * The ensemble's families (ensemble.members) must be distinct from each other, from the single
 * simulator's (the humans' mixture, the full corpus, simulator.gamma) and from every pretrained
 * panel member's, and pretrain from seed offsets of their own: a policy must never train against
 * a family it is evaluated on as held out. Each problem names its path. simulator.gamma itself is
 * free (the γ knob takes any value ≥ 1): at a panel member's γ the single simulator is that
 * member's family, for `single` and `ensemble` alike, drawn from other seeds.
 */
function ensembleProblems(c: ExperimentConfig): string[] {
  const { k, members } = c.ensemble;
  if (members.length === 0) return [];
  const out: string[] = [];
  if (k > members.length + 1)
    out.push(
      `ensemble.k: ${k}, but ensemble.members lists ${members.length} famil${members.length === 1 ? "y" : "ies"} besides the single simulator's (k at most ${members.length + 1}); list more, or set ensemble.members=[] for ${k} networks of the single simulator's family`,
    );
  // a corpus' mixture is its prior normalised (as the benchmarks read it), the humans' when absent
  const humans = benchmarkFor(c).humans.types.map((t) => t.prior);
  const familyOf = (m: { prior?: number[]; corpusScale: number; gamma: number }): Family => {
    const total = m.prior?.reduce((a, b) => a + b, 0) ?? 1;
    return {
      prior: m.prior ? m.prior.map((w) => w / total) : humans,
      corpusScale: m.corpusScale,
      gamma: m.gamma,
    };
  };
  const network = c.panel.flatMap((p) =>
    p.gamma !== undefined && p.corpusScale !== undefined && p.seedOffset !== undefined
      ? [{ ...p, gamma: p.gamma, corpusScale: p.corpusScale, seedOffset: p.seedOffset }]
      : [],
  );
  const single = familyOf({ corpusScale: 1, gamma: c.simulator.gamma });
  members.forEach((m, i) => {
    const at = `ensemble.members[${i}]`;
    const f = familyOf(m);
    if (sameFamily(f, single))
      out.push(
        `${at}: the same family as the single simulator's (the humans' type mixture, corpus 1 ×, γ = simulator.gamma), which is already the ensemble's first member`,
      );
    for (const p of network)
      if (sameFamily(f, familyOf(p))) out.push(`${at}: the same family as panel member ${p.name}`);
    for (const [j, o] of members.slice(0, i).entries()) {
      if (sameFamily(f, familyOf(o)))
        out.push(`${at}: the same family as ensemble.members[${j}] (${o.name})`);
      if (o.seedOffset === m.seedOffset)
        out.push(
          `${at}.seedOffset: ${m.seedOffset} is also ensemble.members[${j}]'s; each family pretrains from its own`,
        );
      if (o.name === m.name)
        out.push(`${at}.name: ${JSON.stringify(m.name)} is also ensemble.members[${j}]'s`);
    }
    for (const p of c.panel) {
      if (p.seedOffset === m.seedOffset)
        out.push(
          `${at}.seedOffset: ${m.seedOffset} is also panel member ${p.name}'s; each family pretrains from its own`,
        );
      if (p.name === m.name)
        out.push(`${at}.name: ${JSON.stringify(m.name)} is also a panel member's`);
    }
  });
  return out;
}

/**
 * simulator.referenceWorld merged over `world` must be a valid world of the benchmark with the
 * same shape (vocabulary, context, card length): it may change who the users are, not the game.
 */
function referenceWorldProblem(c: ExperimentConfig): string | null {
  const over = c.simulator.referenceWorld;
  if (!over) return null;
  if (c.simulator.corpus)
    return "simulator.referenceWorld: the reference learns from simulator.corpus, an imported corpus; give one or the other";
  const m = benchmarkModule(c.benchmark);
  const r = m.worldSchema.safeParse({ ...(c.world as object), ...over });
  if (!r.success)
    return r.error.issues
      .map((i) => {
        const key = i.code === "unrecognized_keys" ? [...i.path, ...i.keys] : i.path;
        return `simulator.referenceWorld.${key.map(String).join(".")}: ${i.code === "unrecognized_keys" ? "unknown key" : i.message}`;
      })
      .join("; ");
  const [a, b] = [benchmarkFor(c), benchmarkFor({ benchmark: c.benchmark, world: r.data })];
  if (a.acts.length !== b.acts.length || a.context !== b.context || a.cardLen !== b.cardLen)
    return "simulator.referenceWorld: may change the population, not the world's shape (episode length, acts, cards)";
  return null;
}
