// A language model on a remote server as a user simulator: the same UserSimulator contract as
// LmSimulator and the neural simulators, so it plays held-out panel members (and anything else
// that takes a simulator). Each distinct dialogue state costs requests, answered once and cached.
//
// Two ways to put a state to the server (`protocol`):
//   acts — the act-text chat format of `collapse-lab serve` (act-text.ts): the reply is an act's text;
//   text — the benchmark's own LM prompts (Persuasion's: a persuadee persona and the transcript),
//          for real LMs (vLLM, SGLang, llama.cpp, OpenAI).
// and two ways to turn replies into a distribution over the allowed acts (`scoring`):
//   logprobs — exact: acts, the chat reply's top_logprobs over act texts; text, each act label's
//              log-likelihood after the prompt, from /completions with echo (one request per state,
//              every label in it), softmaxed as LmSimulator does;
//   sample   — `samples` replies per state (n in one request where the server honours it), each
//              classified to an allowed act; replies that say no allowed act are counted, not used.
// `auto` scores by log-probs and falls back to sampling, for the rest of the run, when the server
// has none (that fallback, and every unmapped reply, is counted in `stats`).
// `mode: "vs"` asks for Verbalized Sampling instead — the served model's ":vs" format (acts) or the
// benchmark's VS prompt (text) — reads the reply with the existing VS parser and maps each
// candidate to an act; the state's distribution is the candidates' (by count for `random`
// selection, by stated probability for `prob`; the parser merges candidates with the same text,
// as it does in the LM lab, so `random` picks among distinct texts); with the text protocol, a server
// that honours response_format json_schema (asked once, by the probe's test request) is sent the VS
// schema, so its replies parse. Replies are then drawn from the distribution with
// the Rng the rollout passes, so the numbers are a function of config, seeds and the server's replies.
import type { Benchmark, BenchmarkLm, Dialogue, Persona } from "../benchmarks/types";
import { benchmarkModule } from "../benchmarks/registry";
import type { Rng } from "../engine/random";
import { parseVs } from "../lm/vs-parse";
import { vsConstrainedMaxTokens, vsJsonSchema } from "../lm/vs-schema";
import { cardPersonas, drawRows, type UserSimulator } from "./simulator";
import { allowedActs, dialogueMessages, matchAct } from "./act-text";
import { RemoteClient, type ChatMessageIn, type ChatRequest } from "../remote/client";
import { RemoteError } from "../remote/errors";
import { RemoteLanguageModel } from "../remote/remote-lm";

export interface RemoteSimulatorOptions {
  name?: string;
  model: string;
  mode?: "direct" | "vs"; // default direct
  protocol?: "acts" | "text"; // default acts
  scoring?: "auto" | "logprobs" | "sample"; // default auto
  samples?: number; // replies per state when sampling; default 16
  temperature?: number; // sent with sampling requests; default 1
  k?: number; // vs: candidates asked for; default 5
  selection?: "random" | "prob"; // vs: default random
  concurrency?: number; // requests in flight at once; default 8
  seed?: number; // mixed into each request's seed; default 0
}

/** What a remote simulator did, for the report: how it scored and how often replies could not be used. */
export interface RemoteSimulatorStats {
  name: string;
  baseUrl: string;
  model: string;
  mode: "direct" | "vs";
  protocol: "acts" | "text";
  scoring: "logprobs" | "sample" | "vs"; // what it ended up using (logprobs → sample after a fallback)
  states: number; // distinct dialogue states asked
  requests: number; // HTTP requests sent, retries included
  retries: number;
  logprobStates: number; // states scored from log-probs
  sampledStates: number; // states from sampled replies (or VS candidates)
  fallbacks: number; // states asked for log-probs that came back without them and were sampled instead
  replies: number; // sampled replies or VS candidates read
  unmapped: number; // of those, how many said no allowed act
  unmappedStates: number; // states where no reply could be mapped: uniform over the allowed acts
}

/** The counters of RemoteSimulatorStats: they add up over units. */
export const REMOTE_COUNTERS = [
  "states",
  "requests",
  "retries",
  "logprobStates",
  "sampledStates",
  "fallbacks",
  "replies",
  "unmapped",
  "unmappedStates",
] as const;
type RemoteCounters = Pick<RemoteSimulatorStats, (typeof REMOTE_COUNTERS)[number]>;

/** Every counter at 0. */
export const zeroCounters = (): RemoteCounters =>
  Object.fromEntries(REMOTE_COUNTERS.map((k) => [k, 0])) as RemoteCounters;

/** A stable 31-bit seed for a state (FNV-1a), so reruns send the same seeds. */
function stateSeed(key: string, base: number): number {
  let h = 2166136261 ^ base;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) & 0x7fffffff;
}

/** Tokens a VS candidate's text may take. */
const VS_REPLY_TOKENS = 64;

const words = (s: string) => s.toLowerCase().match(/[a-z0-9$.]+/g) ?? [];

export class RemoteSimulator implements UserSimulator {
  readonly name: string;
  readonly opts: Required<Omit<RemoteSimulatorOptions, "name">>;
  readonly #lm: BenchmarkLm | undefined;
  readonly #cache = new Map<string, Promise<Float64Array>>();
  #useLogprobs: boolean;
  #maxN = 64; // replies asked for in one request (servers cap n; llama.cpp allows only 1)
  #constrains: Promise<boolean> | null = null; // vs, text: the server honours response_format json_schema
  readonly #scorer: RemoteLanguageModel;
  #active = 0;
  #waiting: (() => void)[] = [];
  readonly stats: RemoteSimulatorStats;

  constructor(
    readonly bench: Benchmark,
    readonly client: RemoteClient,
    opts: RemoteSimulatorOptions,
  ) {
    this.opts = {
      model: opts.model,
      mode: opts.mode ?? "direct",
      protocol: opts.protocol ?? "acts",
      scoring: opts.scoring ?? "auto",
      samples: opts.samples ?? 16,
      temperature: opts.temperature ?? 1,
      k: opts.k ?? 5,
      selection: opts.selection ?? "random",
      concurrency: opts.concurrency ?? 8,
      seed: opts.seed ?? 0,
    };
    const o = this.opts;
    if (!o.model) throw new Error("RemoteSimulator: a model id is required");
    if (!(Number.isInteger(o.samples) && o.samples >= 1))
      throw new Error(`RemoteSimulator: samples must be a positive integer, got ${o.samples}`);
    if (!(Number.isInteger(o.k) && o.k >= 1))
      throw new Error(`RemoteSimulator: k must be a positive integer, got ${o.k}`);
    if (!(Number.isInteger(o.concurrency) && o.concurrency >= 1))
      throw new Error(
        `RemoteSimulator: concurrency must be a positive integer, got ${o.concurrency}`,
      );
    if (!(o.temperature >= 0 && o.temperature <= 2))
      throw new Error(`RemoteSimulator: temperature must lie in [0, 2], got ${o.temperature}`);
    this.#lm = benchmarkModule(bench.id).lm;
    this.#scorer = new RemoteLanguageModel(client, o.model);
    if (o.protocol === "text" && !this.#lm)
      throw new Error(
        `RemoteSimulator: the ${bench.title} benchmark has no prompts for real LMs; use protocol "acts" (a model served by collapse-lab serve)`,
      );
    this.#useLogprobs = o.mode === "direct" && o.scoring !== "sample";
    this.name = opts.name ?? `remote(${o.model} @ ${client.baseUrl}, ${o.mode})`;
    this.stats = {
      name: this.name,
      baseUrl: client.baseUrl,
      model: o.model,
      mode: o.mode,
      protocol: o.protocol,
      scoring: o.mode === "vs" ? "vs" : this.#useLogprobs ? "logprobs" : "sample",
      ...zeroCounters(),
    };
  }

  personas(n: number, rng: Rng): Persona[] {
    return cardPersonas(this.bench, n, rng);
  }

  async distribution(dialogues: Dialogue[], _personas?: Persona[]): Promise<Float64Array> {
    const V = this.bench.acts.length;
    const rows = await Promise.all(dialogues.map((d) => this.#row(d)));
    const out = new Float64Array(dialogues.length * V);
    rows.forEach((r, b) => out.set(r, b * V));
    this.stats.requests = this.client.requests;
    this.stats.retries = this.client.retried;
    return out;
  }

  async reply(dialogues: Dialogue[], personas: Persona[], rng: Rng): Promise<Int32Array> {
    return drawRows(
      await this.distribution(dialogues, personas),
      dialogues.length,
      this.bench.acts.length,
      rng,
    );
  }

  #row(d: Dialogue): Promise<Float64Array> {
    const key = `${d.card.join(",")}|${d.acts.join(",")}`;
    let hit = this.#cache.get(key);
    if (!hit) {
      this.stats.states++;
      hit = this.#limited(() => this.#ask(d, stateSeed(key, this.opts.seed)));
      this.#cache.set(key, hit);
      hit.catch(() => this.#cache.delete(key)); // a failed state is asked again, not cached as an error
    }
    return hit;
  }

  async #limited<T>(f: () => Promise<T>): Promise<T> {
    if (this.#active >= this.opts.concurrency)
      await new Promise<void>((r) => this.#waiting.push(r));
    this.#active++;
    try {
      return await f();
    } finally {
      this.#active--;
      this.#waiting.shift()?.();
    }
  }

  async #ask(d: Dialogue, seed: number): Promise<Float64Array> {
    const allowed = allowedActs(this.bench, d);
    if (this.bench.turn(d) !== "user")
      throw new Error(`${this.name}: asked for a reply at a state that is not the user's turn`);
    if (this.opts.mode === "vs") return this.#fromVs(d, allowed, seed);
    if (this.#useLogprobs) {
      try {
        const row =
          this.opts.protocol === "acts"
            ? await this.#actLogprobs(d, allowed, seed)
            : await this.#labelLogprobs(d);
        this.stats.logprobStates++;
        return row;
      } catch (e) {
        const missing =
          e instanceof RemoteError &&
          (e.kind === "no-logprobs" ||
            e.kind === "not-offered" ||
            (e.kind === "bad-request" && /logprob|echo/i.test(e.message)));
        if (!missing || this.opts.scoring === "logprobs") throw e;
        // the server offers no log-probs: sample from here on, and say so in the stats
        this.#useLogprobs = false;
        this.stats.fallbacks++;
        this.stats.scoring = "sample";
      }
    }
    return this.#fromSamples(d, allowed, seed);
  }

  /** acts protocol: the served reply's top_logprobs, one "token" per act text. */
  async #actLogprobs(d: Dialogue, allowed: number[], seed: number): Promise<Float64Array> {
    const r = await this.client.chat({
      model: this.opts.model,
      messages: dialogueMessages(this.bench, d, "user"),
      logprobs: true,
      top_logprobs: Math.min(20, allowed.length),
      max_tokens: 16,
      temperature: 1,
      seed,
    });
    const top = r.choices[0].logprobs?.content?.[0]?.top_logprobs ?? [];
    const row = new Float64Array(this.bench.acts.length);
    let mapped = 0;
    for (const t of top) {
      const a = matchAct(this.bench, t.token, allowed);
      if (a === null || row[a] > 0) continue;
      row[a] = Math.exp(t.logprob);
      mapped++;
    }
    if (mapped === 0)
      throw new RemoteError(
        "no-logprobs",
        `${this.client.baseUrl} (model ${this.opts.model}): the reply's top_logprobs name no allowed act (${top.map((t) => JSON.stringify(t.token)).join(", ") || "none"}); is this a collapse-lab serve model? Use protocol "text" for other LMs`,
      );
    return normalise(row);
  }

  /** text protocol: each allowed act's label scored as a continuation of the benchmark's prompt (/completions, echo; one request). */
  async #labelLogprobs(d: Dialogue): Promise<Float64Array> {
    const { prompt, acts, continuations } = this.#lm!.actLabelPrompt(d, "text");
    const scores = await this.#scorer.score(prompt, continuations);
    const m = Math.max(...scores.map((x) => x.logprob));
    const row = new Float64Array(this.bench.acts.length);
    acts.forEach((a, i) => (row[a] = Math.exp(scores[i].logprob - m)));
    return normalise(row);
  }

  /** `samples` replies (n per request where honoured, more requests where not), each classified. */
  async #fromSamples(d: Dialogue, allowed: number[], seed: number): Promise<Float64Array> {
    const messages = this.#messages(d, "direct");
    const texts: string[] = [];
    for (let i = 0; texts.length < this.opts.samples && i < this.opts.samples; i++) {
      const n = Math.min(this.#maxN, this.opts.samples - texts.length);
      const req: ChatRequest = {
        model: this.opts.model,
        messages,
        n,
        temperature: this.opts.temperature,
        seed: (seed + i) & 0x7fffffff,
        max_tokens: 64,
      };
      let r;
      try {
        r = await this.client.chat(req);
      } catch (e) {
        // llama.cpp refuses n > 1: one reply per request from here on
        if (!(
          e instanceof RemoteError &&
          e.kind === "bad-request" &&
          n > 1 &&
          /\bn\b/.test(e.message)
        ))
          throw e;
        this.#maxN = 1;
        i--;
        continue;
      }
      for (const c of r.choices) texts.push(c.message.content ?? "");
    }
    const row = new Float64Array(this.bench.acts.length);
    for (const t of texts.slice(0, this.opts.samples)) {
      const a = this.#classify(d, t, allowed);
      this.stats.replies++;
      if (a === null) this.stats.unmapped++;
      else row[a] += 1;
    }
    this.stats.sampledStates++;
    return this.#orUniform(row, allowed);
  }

  /** One VS reply: candidates parsed, mapped to acts, weighted by count (random) or stated probability (prob). */
  async #fromVs(d: Dialogue, allowed: number[], seed: number): Promise<Float64Array> {
    const acts = this.opts.protocol === "acts";
    const model =
      acts && !this.opts.model.endsWith(":vs") ? `${this.opts.model}:vs` : this.opts.model;
    const messages = this.#messages(d, "vs");
    const constrained = !acts && (await this.#constrainsJson(messages));
    const k = this.opts.k;
    const req = {
      model,
      messages,
      n: 1,
      temperature: this.opts.temperature,
      seed,
      max_tokens: constrained ? vsConstrainedMaxTokens(k, VS_REPLY_TOKENS) : VS_REPLY_TOKENS * k,
      ...(acts ? { vs_k: k } : {}),
      ...(constrained
        ? {
            response_format: {
              type: "json_schema" as const,
              json_schema: vsJsonSchema(k, VS_REPLY_TOKENS),
            },
          }
        : {}),
    };
    const r = await this.client.chat(req);
    const parsed = parseVs(r.choices[0].message.content ?? "", { k: this.opts.k });
    const row = new Float64Array(this.bench.acts.length);
    for (const c of parsed.candidates) {
      const a = this.#classify(d, c.text, allowed);
      this.stats.replies++;
      if (a === null) this.stats.unmapped++;
      else row[a] += this.opts.selection === "prob" ? c.probability : 1;
    }
    this.stats.sampledStates++;
    return this.#orUniform(row, allowed);
  }

  /** Whether the server honours response_format json_schema: the probe's test, once per simulator. */
  #constrainsJson(messages: ChatMessageIn[]): Promise<boolean> {
    this.#constrains ??= this.client
      .probeJsonSchema(this.opts.model, messages)
      .then((r) => r.supported);
    this.#constrains.catch(() => (this.#constrains = null)); // asked again after a failure
    return this.#constrains;
  }

  #messages(d: Dialogue, kind: "direct" | "vs"): ChatMessageIn[] {
    if (this.opts.protocol === "acts") return dialogueMessages(this.bench, d, "user");
    return kind === "vs"
      ? this.#lm!.vsPrompt(d, { k: this.opts.k }).chat
      : this.#lm!.directPrompt(d).chat;
  }

  /**
   * The allowed act a reply says: an act's text (acts and text protocols); for free text (text
   * protocol) also a stated outcome (the nearest outcome act's label) or a label most of whose
   * words it contains. Null when none fits.
   */
  #classify(d: Dialogue, text: string, allowed: number[]): number | null {
    const exact = matchAct(this.bench, text.trim().replace(/^"|"$/g, ""), allowed);
    if (exact !== null || this.opts.protocol === "acts") return exact;
    const lm = this.#lm!;
    const { acts, continuations } = lm.actLabelPrompt(d, "chat");
    if (lm.decisionDue(d)) {
      const said = lm.parseOutcome(text);
      if (said === null) return null;
      let best: number | null = null;
      let gap = Infinity;
      acts.forEach((a, i) => {
        const v = lm.parseOutcome(continuations[i]);
        if (v !== null && Math.abs(v - said) < gap) [best, gap] = [a, Math.abs(v - said)];
      });
      return best;
    }
    const have = new Set(words(text));
    let best: number | null = null;
    let score = 0.6; // at least 60 % of a label's words
    acts.forEach((a, i) => {
      const w = words(continuations[i]);
      const s = w.length ? w.filter((x) => have.has(x)).length / w.length : 0;
      if (s > score) [best, score] = [a, s];
    });
    return best;
  }

  #orUniform(row: Float64Array, allowed: number[]): Float64Array {
    if (row.some((x) => x > 0)) return normalise(row);
    this.stats.unmappedStates++;
    for (const a of allowed) row[a] = 1;
    return normalise(row);
  }
}

function normalise(row: Float64Array): Float64Array {
  const z = row.reduce((a, b) => a + b, 0);
  return row.map((x) => x / z);
}
