// The transformers.js backend on the project's tiny models (offline, Node, onnxruntime-node on
// the CPU): greedy generation through `generate` and the stock text-generation pipeline equals
// the plain float64 reference; score() equals summed reference token log-probs; sampling is
// seeded, honours temperature and top-p; generation can be cancelled; embeddings equal the
// reference BERT's mean-pooled normalised vectors.
import { describe, it, expect, beforeAll, afterAll, onTestFinished } from "vitest";
import { pipeline, env, type TextGenerationPipeline } from "@huggingface/transformers";
import {
  TransformersEmbeddingModel,
  TransformersLanguageModel,
  type LoadProgress,
} from "../../src/lm/backend";
import { lmErrorKind } from "../../src/lm/errors";
import {
  TINY_EMBEDDER,
  TINY_LM,
  TinyGpt2Reference,
  makeTinyBert,
  makeTinyGpt2,
  referenceEmbedding,
  referenceWordPiece,
} from "../../src/lm/tiny";
import { CHATML_TEMPLATE } from "../../src/lm/tiny/gpt2";
import { MODELS_DIR, tinySource } from "./fixtures";

const tiny = makeTinyGpt2();
const ref = new TinyGpt2Reference(tiny);
const PROMPTS = [
  "I would like to",
  "Hello! Would you donate $5 to Save the Children?",
  "naïve café — 日本 🙂",
];

let lm: TransformersLanguageModel;
const progress: LoadProgress[] = [];
beforeAll(async () => {
  lm = await TransformersLanguageModel.load(await tinySource(TINY_LM), {
    onProgress: (p) => progress.push(p),
  });
}, 120_000); // writes the tiny models, then loads one: slow on a busy machine
afterAll(() => lm?.dispose());

describe("tiny LM through transformers.js", () => {
  it("loads offline from a local folder on the CPU and reports progress per file and overall", () => {
    expect(lm.info).toMatchObject({
      device: "cpu",
      contextLength: tiny.dims.context,
      hasChatTemplate: true,
    });
    const files = new Set(
      progress.filter((p) => p.kind === "file").map((p) => (p as { file: string }).file),
    );
    expect(files).toEqual(
      new Set([
        "tokenizer.json",
        "tokenizer_config.json",
        "config.json",
        "generation_config.json",
        "onnx/model.onnx",
      ]),
    );
    const totals = progress.filter((p) => p.kind === "total") as Extract<
      LoadProgress,
      { kind: "total" }
    >[];
    expect(totals.length).toBeGreaterThan(0);
    const last = totals[totals.length - 1];
    expect(last.loaded).toBe(last.total);
    expect(last.total).toBeGreaterThan((tiny.files["onnx/model.onnx"] as Uint8Array).length);
    expect(progress[progress.length - 1]).toEqual({ kind: "ready", model: TINY_LM, device: "cpu" });
  });

  it("tokenizes as the reference byte-level BPE and round-trips ASCII and non-ASCII text", () => {
    for (const text of [
      ...PROMPTS,
      "  two  spaces\tand\nnew lines\n\n",
      "Ünïcödé ✓ 💸 $100,000.",
    ]) {
      const ids = lm.encodeContinuation(text);
      expect(ids).toEqual(ref.bpe.encode(text));
      expect(lm.decode(ids)).toBe(text);
    }
    expect(lm.encodeContinuation(" the")).toHaveLength(1); // merges make common words one token
  });

  it.each(PROMPTS)("greedy generate equals the reference on %j", async (prompt) => {
    const ids = ref.bpe.encode(prompt);
    const want = ref.greedy(ids, 24);
    expect(want.margin).toBeGreaterThan(1e-3); // top-1 beats top-2 by far more than float32 error
    const [got] = await lm.generate({ text: prompt }, { maxNewTokens: 24 });
    expect(got.tokens).toBe(want.ids.filter((t) => !tiny.eosTokenIds.includes(t)).length);
    expect(got.text).toBe(ref.bpe.decode(want.ids));
    expect(got.logprob).toBeCloseTo(
      ref.logprob([...ids, ...want.ids.slice(0, got.tokens)], ids.length),
      4,
    );
  });

  it("chat prompts go through the ChatML template", async () => {
    const chat = [
      { role: "system" as const, content: "You are a donor." },
      { role: "user" as const, content: "Would you donate?" },
    ];
    const text =
      "<|im_start|>system\nYou are a donor.<|im_end|>\n<|im_start|>user\nWould you donate?<|im_end|>\n<|im_start|>assistant\n";
    expect(lm.encodePrompt({ chat })).toEqual(ref.bpe.encode(text));
    const [got] = await lm.generate({ chat }, { maxNewTokens: 16 });
    expect(got.text).toBe(ref.bpe.decode(ref.greedy(ref.bpe.encode(text), 16).ids));
  });

  it("greedy with n > 1 repeats the one greedy reply", async () => {
    const gens = await lm.generate({ text: PROMPTS[0] }, { maxNewTokens: 8, n: 3 });
    expect(gens).toHaveLength(3);
    expect(new Set(gens.map((g) => g.text)).size).toBe(1);
  });

  it("the stock text-generation pipeline gives the same greedy text", async () => {
    const saved = { allowRemoteModels: env.allowRemoteModels, localModelPath: env.localModelPath }; // transformers.js's env is global
    env.allowRemoteModels = false;
    env.localModelPath = MODELS_DIR + "/";
    onTestFinished(() => void Object.assign(env, saved));
    const generator = (await pipeline("text-generation", TINY_LM)) as TextGenerationPipeline;
    try {
      for (const prompt of PROMPTS) {
        const out = (await generator(prompt, { max_new_tokens: 20, do_sample: false })) as {
          generated_text: string;
        }[];
        expect(out[0].generated_text).toBe(
          prompt + ref.bpe.decode(ref.greedy(ref.bpe.encode(prompt), 20).ids),
        );
      }
    } finally {
      await generator.dispose();
    }
  });

  it("score() equals summed reference token log-probs, prompt and continuation tokenized apart", async () => {
    const prompt = "Would you donate to Save the Children?";
    const conts = [
      " yes",
      " No, I would not.",
      " maybe $1",
      "!",
      " I think that is a sure thing, yes.",
    ];
    const got = await lm.score({ text: prompt }, conts);
    const p = ref.bpe.encode(prompt);
    conts.forEach((c, i) => {
      const ids = [...p, ...ref.bpe.encode(c)];
      expect(got[i].tokens).toBe(ids.length - p.length);
      expect(got[i].logprob).toBeCloseTo(ref.logprob(ids, p.length), 4);
    });
    // a single continuation scored alone equals its score in the padded batch
    const [alone] = await lm.score({ text: prompt }, [conts[1]]);
    expect(alone.logprob).toBeCloseTo(got[1].logprob, 5);
  });

  it("scores chat prompts under the chat template", async () => {
    const chat = [{ role: "user" as const, content: "Donate?" }];
    const [got] = await lm.score({ chat }, ["Yes"]);
    const p = ref.bpe.encode("<|im_start|>user\nDonate?<|im_end|>\n<|im_start|>assistant\n");
    expect(got.logprob).toBeCloseTo(ref.logprob([...p, ...ref.bpe.encode("Yes")], p.length), 4);
  });
});

describe("sampling", () => {
  const prompt = { text: "I think" };

  it("is reproducible with a seed and differs across seeds", async () => {
    const opts = { maxNewTokens: 12, temperature: 1.5, n: 4 };
    const a = await lm.generate(prompt, { ...opts, seed: 7 });
    const b = await lm.generate(prompt, { ...opts, seed: 7 });
    const c = await lm.generate(prompt, { ...opts, seed: 8 });
    expect(a).toHaveLength(4);
    expect(b).toEqual(a);
    expect(c.map((g) => g.text)).not.toEqual(a.map((g) => g.text));
    expect(new Set(a.map((g) => g.text)).size).toBeGreaterThan(1); // the n samples are independent
    // log-probs of the exact sampled ids (random bytes need not be valid UTF-8, so not of the text)
    const ids = ref.bpe.encode(prompt.text);
    for (const g of a) {
      expect(g.ids).toHaveLength(g.tokens);
      expect(g.text).toBe(ref.bpe.decode(g.ids));
      expect(g.logprob).toBeCloseTo(ref.logprob([...ids, ...g.ids], ids.length), 4);
    }
  });

  it("draws the first token from softmax(logits / T)", async () => {
    const T = 2;
    const N = 400;
    const ids = ref.bpe.encode(prompt.text);
    const gens = await lm.generate(prompt, { maxNewTokens: 1, temperature: T, n: N, seed: 1 });
    const V = tiny.dims.vocab;
    const logits = ref.logits(ids).slice((ids.length - 1) * V);
    const max = Math.max(...logits);
    const w = Array.from(logits, (z) => Math.exp((z - max) / T));
    const Z = w.reduce((s, x) => s + x, 0);
    // count sampled token ids (a random byte token need not decode to valid UTF-8 text)
    const counts = new Map<number, number>();
    for (const g of gens) counts.set(g.ids[0], (counts.get(g.ids[0]) ?? 0) + 1);
    // the most likely token's frequency is within 4 standard errors of its probability
    const top = w.indexOf(Math.max(...w));
    const p = w[top] / Z;
    const freq = (counts.get(top) ?? 0) / N;
    expect(Math.abs(freq - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / N) + 1e-9);
  });

  it("top-p that keeps only the top token reduces sampling to greedy", async () => {
    const greedy = await lm.generate(prompt, { maxNewTokens: 10 });
    const nucleus = await lm.generate(prompt, {
      maxNewTokens: 10,
      temperature: 1,
      topP: 1e-6,
      n: 3,
      seed: 3,
    });
    for (const g of nucleus) expect(g.text).toBe(greedy[0].text);
  });

  it("is cancelled through an AbortSignal, and no step runs after the cancel", async () => {
    const controller = new AbortController();
    let steps = 0;
    const onToken = (n: number) => {
      steps = n;
      if (n === 3) controller.abort(); // from progress, so the generation is known to be running
    };
    const run = lm.generate(
      { text: "I" },
      { maxNewTokens: 120, temperature: 1, seed: 1 },
      { signal: controller.signal, onToken },
    );
    await expect(run).rejects.toSatisfy((e) => lmErrorKind(e) === "cancelled");
    expect(steps).toBe(3); // the loop stopped at the step where the cancel arrived
    // the model is usable afterwards
    const [after] = await lm.generate({ text: "I" }, { maxNewTokens: 4 });
    expect(after.tokens).toBeGreaterThan(0);
  });
});

describe("tiny embedder through the feature-extraction pipeline", () => {
  const bert = makeTinyBert();
  let embedder: TransformersEmbeddingModel;
  beforeAll(async () => {
    embedder = await TransformersEmbeddingModel.load(await tinySource(TINY_EMBEDDER));
  }, 120_000);
  afterAll(() => embedder?.dispose());

  it("equals the reference mean-pooled, normalised BERT forward (a padded batch)", async () => {
    const texts = [
      "I would like to donate.",
      "No.",
      "Maybe five dollars for the children, I think!",
      "Ünïcode wörds",
    ];
    const got = await embedder.embed(texts);
    expect(got).toHaveLength(texts.length);
    texts.forEach((t, i) => {
      const want = referenceEmbedding(bert, referenceWordPiece(bert.vocab, t));
      expect(got[i]).toHaveLength(bert.dims.d);
      let maxDiff = 0;
      for (let k = 0; k < want.length; k++)
        maxDiff = Math.max(maxDiff, Math.abs(got[i][k] - want[k]));
      expect(maxDiff).toBeLessThan(1e-4);
    });
    expect(await embedder.embed([])).toEqual([]);
  });
});

it("the tiny LM's chat template is ChatML", () => {
  expect(JSON.parse(tiny.files["tokenizer_config.json"] as string).chat_template).toBe(
    CHATML_TEMPLATE,
  );
});
