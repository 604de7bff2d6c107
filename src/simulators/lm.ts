// A real LM as a user simulator in a toy world that has an lm part (Persuasion, Service;
// docs/architecture.md#the-lm-tier): for each dialogue the act-label prompt (the benchmark's lm
// part, e.g. src/benchmarks/persuasion/lm-prompts.ts) is scored with every allowed user act's
// label as the continuation, and p(act) = softmax(label log-likelihood / temperature) over the allowed class
// (0 elsewhere). That distribution drops into the game like any other UserSimulator — as the
// training simulator or as a held-out panel member.
//
// `direct` samples p. `vs` is Verbalized Sampling in the toy sense (src/simulators/vs.ts): the LM
// verbalizes q ∝ p^exponent, lists k candidates i.i.d. from q and one is picked `random`ly or by
// stated probability. Real VS prompting of an LM is measured on free text instead (the benchmarks'
// lm-prompts.ts, src/lm/vs-prompt.ts and src/lm/vs-parse.ts); here the exponent stands for how close the verbalized distribution is to p.
//
// Scores are cached per prompt (rollouts revisit the same prefixes all the time); within a call,
// identical prompts are scored once and distinct ones at most `concurrency` at a time.
import type { Benchmark, Dialogue, Persona } from "../benchmarks/types";
import type { Rng } from "../engine/random";
import { cardPersonas, drawRows, type UserSimulator } from "./simulator";
import { select, verbalize, type VsSelection } from "./vs";
import { benchmarkModule } from "../benchmarks/registry";
import type { BenchmarkLm, LabelPromptStyle } from "../benchmarks/types";
import { promptKey, type ContinuationScore, type LanguageModel } from "../lm/types";

type ActLabelPrompt = ReturnType<BenchmarkLm["actLabelPrompt"]>;

export interface LmSimulatorOptions {
  mode?: "direct" | "vs"; // default direct
  temperature?: number; // p ∝ exp(score / T); default 1
  /** Score a label by its mean token log-likelihood instead of the sum (default false). */
  lengthNormalise?: boolean;
  promptStyle?: LabelPromptStyle; // default "text" (works for base and instruct models)
  k?: number; // vs: candidates per reply; default 5
  selection?: VsSelection; // vs: default "random" (SCOPE's main setting)
  exponent?: number; // vs: q ∝ p^exponent; default 1
  concurrency?: number; // distinct prompts scored at once; default 8
  name?: string;
}

export class LmSimulator implements UserSimulator {
  readonly name: string;
  readonly opts: Required<Omit<LmSimulatorOptions, "name">>;
  readonly #lm: BenchmarkLm;
  readonly #cache = new Map<string, Float64Array>(); // prompt → distribution over the vocabulary (before the VS exponent)
  /** Number of `score` calls made (for tests and progress). */
  scoreCalls = 0;

  constructor(
    readonly bench: Benchmark,
    readonly lm: LanguageModel,
    opts: LmSimulatorOptions = {},
  ) {
    const prompts = benchmarkModule(bench.id).lm;
    if (!prompts)
      throw new Error(`LmSimulator: the ${bench.title} benchmark has no prompts for real LMs`);
    this.#lm = prompts;
    this.opts = {
      mode: opts.mode ?? "direct",
      temperature: opts.temperature ?? 1,
      lengthNormalise: opts.lengthNormalise ?? false,
      promptStyle: opts.promptStyle ?? "text",
      k: opts.k ?? 5,
      selection: opts.selection ?? "random",
      exponent: opts.exponent ?? 1,
      concurrency: opts.concurrency ?? 8,
    };
    const o = this.opts;
    if (o.mode !== "direct" && o.mode !== "vs")
      throw new Error(`LmSimulator: mode must be "direct" or "vs", got ${JSON.stringify(o.mode)}`);
    if (!(o.temperature > 0 && Number.isFinite(o.temperature)))
      throw new Error(`LmSimulator: temperature must be > 0, got ${o.temperature}`);
    if (!(Number.isInteger(o.k) && o.k >= 1))
      throw new Error(`LmSimulator: k must be a positive integer, got ${o.k}`);
    if (!(o.exponent >= 0 && Number.isFinite(o.exponent)))
      throw new Error(`LmSimulator: exponent must be ≥ 0, got ${o.exponent}`);
    if (!(Number.isInteger(o.concurrency) && o.concurrency >= 1))
      throw new Error(`LmSimulator: concurrency must be a positive integer, got ${o.concurrency}`);
    if (o.selection !== "random" && o.selection !== "prob")
      throw new Error(
        `LmSimulator: selection must be "random" or "prob", got ${JSON.stringify(o.selection)}`,
      );
    const vs = o.mode === "vs" ? `, vs k=${o.k} ${o.selection} e=${o.exponent}` : "";
    this.name =
      opts.name ?? `lm(${lm.id}, T=${o.temperature}${o.lengthNormalise ? ", per-token" : ""}${vs})`;
  }

  personas(n: number, rng: Rng): Persona[] {
    return cardPersonas(this.bench, n, rng);
  }

  /** p (direct) or q ∝ p^exponent (vs) for each dialogue, [rows, V]. */
  async distribution(dialogues: Dialogue[], _personas?: Persona[]): Promise<Float64Array> {
    const V = this.bench.acts.length;
    const rows = await this.#labelDistributions(dialogues);
    const out = new Float64Array(dialogues.length * V);
    rows.forEach((p, b) =>
      out.set(this.opts.mode === "vs" ? power(p, this.opts.exponent) : p, b * V),
    );
    return out;
  }

  async reply(dialogues: Dialogue[], personas: Persona[], rng: Rng): Promise<Int32Array> {
    const V = this.bench.acts.length;
    const q = await this.distribution(dialogues, personas);
    if (this.opts.mode === "direct") return drawRows(q, dialogues.length, V, rng);
    return Int32Array.from(dialogues, (_, b) =>
      select(verbalize(q.subarray(b * V, (b + 1) * V), this.opts.k, rng), this.opts.selection, rng),
    );
  }

  /** The LM's distribution over user acts for each dialogue, from label scores (cached). */
  async #labelDistributions(dialogues: Dialogue[]): Promise<Float64Array[]> {
    const prompts = dialogues.map((d) => this.#lm.actLabelPrompt(d, this.opts.promptStyle));
    const keys = prompts.map(
      (p) => `${promptKey(p.prompt)}\u0000${p.continuations.join("\u0001")}`,
    );
    const missing = new Map<string, ActLabelPrompt>();
    keys.forEach((k, b) => {
      if (!this.#cache.has(k)) missing.set(k, prompts[b]);
    });
    const todo = [...missing.entries()];
    let next = 0;
    const worker = async () => {
      while (next < todo.length) {
        const [k, p] = todo[next++];
        this.scoreCalls++;
        const scores = await this.lm.score(p.prompt, p.continuations);
        this.#cache.set(k, this.#toDistribution(p, scores));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, todo.length) }, worker));
    return keys.map((k) => this.#cache.get(k)!);
  }

  #toDistribution(p: ActLabelPrompt, scores: ContinuationScore[]): Float64Array {
    if (scores.length !== p.acts.length)
      throw new Error(
        `LmSimulator: ${this.lm.id} returned ${scores.length} scores for ${p.acts.length} labels`,
      );
    const s = scores.map((sc, i) => {
      const v = this.opts.lengthNormalise ? sc.logprob / Math.max(1, sc.tokens) : sc.logprob;
      if (Number.isNaN(v) || v === Infinity)
        throw new Error(
          `LmSimulator: ${this.lm.id} scored label ${JSON.stringify(p.continuations[i])} as ${v}`,
        );
      return v / this.opts.temperature;
    });
    const m = Math.max(...s);
    if (m === -Infinity)
      throw new Error(`LmSimulator: ${this.lm.id} gives every allowed label probability 0`);
    const e = s.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    const out = new Float64Array(this.bench.acts.length);
    p.acts.forEach((act, i) => (out[act] = e[i] / z));
    return out;
  }
}

/** p^e renormalised over its support (e = 0: uniform over the acts p allows). */
function power(p: Float64Array, e: number): Float64Array {
  if (e === 1) return p;
  const m = Math.max(...p); // (x / max)^e: the largest stays 1, so nothing underflows to an all-zero row
  const q = p.map((x) => (x > 0 ? (x / m) ** e : 0));
  const z = q.reduce((a, b) => a + b, 0);
  return q.map((x) => x / z);
}
