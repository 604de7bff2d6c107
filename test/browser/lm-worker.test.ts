// The lm tier in a real module worker in headless Chromium, through Comlink: the tiny LM
// (generated in the page, handed to the worker in memory, no network) on WebGPU (SwiftShader in
// CI) and on wasm (ORT's wasm served by the app, not a CDN); greedy text and continuation scores
// equal the plain float64 reference; cancellation across the worker boundary; the tiny embedder.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import {
  Comlink,
  spawnLmWorker,
  RemoteEmbeddingModel,
  RemoteLanguageModel,
  type LmWorkerHandle,
} from "../../src/app/lib/lm-client";
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
import type { LoadProgress } from "../../src/lm/backend";
// the onnxruntime-web package that transformers.js resolves, wherever npm put it (scripts/transformers-ort.mjs)
import transformersOrtPackage from "transformers-ort:package.json?url";

const DEVICES = ["webgpu", "wasm"] as const;
const tiny = makeTinyGpt2();
const ref = new TinyGpt2Reference(tiny);
const PROMPT = "Would you donate $5 to Save the Children?";

const workers = new Map<
  string,
  { w: LmWorkerHandle; lm: RemoteLanguageModel; progress: LoadProgress[] }
>();
beforeAll(async () => {
  for (const device of DEVICES) {
    const w = spawnLmWorker(`lm ${device}`);
    const progress: LoadProgress[] = [];
    const { handle, info } = await w.api.loadLanguageModel(
      { id: TINY_LM, files: tiny.files },
      { device, progressMs: 0 },
      Comlink.proxy((p: LoadProgress) => void progress.push(p)),
    );
    workers.set(device, { w, lm: new RemoteLanguageModel(w.api, handle, info), progress });
  }
}, 240_000); // two workers, each loading ORT and the model (WebGPU on SwiftShader): slow on a busy machine
afterAll(() => workers.forEach(({ w }) => w.terminate()));

describe.each(DEVICES)("tiny LM in a module worker on %s", (device) => {
  const get = () => workers.get(device)!;

  it("runs on the requested device and reported its load", () => {
    expect(get().lm.info.device).toBe(device);
    const { progress } = get();
    expect(
      progress.some(
        (p) => p.kind === "file" && p.file === "onnx/model.onnx" && p.status === "done",
      ),
    ).toBe(true);
    expect(progress.at(-1)).toEqual({ kind: "ready", model: TINY_LM, device });
  });

  it("greedy generation equals the float64 reference", async () => {
    const ids = ref.bpe.encode(PROMPT);
    const want = ref.greedy(ids, 8);
    const [got] = await get().lm.generate({ text: PROMPT }, { maxNewTokens: 8 });
    expect(got.text).toBe(ref.bpe.decode(want.ids));
    expect(got.logprob).toBeCloseTo(ref.logprob([...ids, ...want.ids], ids.length), 3);
  });

  it("continuation scores equal summed reference log-probs", async () => {
    const conts = [" yes", " No, I would not."];
    const got = await get().lm.score({ text: PROMPT }, conts);
    const p = ref.bpe.encode(PROMPT);
    conts.forEach((c, i) =>
      expect(got[i].logprob).toBeCloseTo(ref.logprob([...p, ...ref.bpe.encode(c)], p.length), 3),
    );
  });
});

describe("offline runtime", () => {
  it("ORT's wasm comes from the app, from the onnxruntime-web copy transformers.js depends on", async () => {
    const { w } = workers.get("wasm")!;
    const versions = await w.api.versions();
    const pkgUrl = new URL(transformersOrtPackage, location.href);
    const pkg = (await (await fetch(pkgUrl)).json()) as { name: string; version: string };
    expect(pkg.name).toBe("onnxruntime-web");
    expect(versions.web).toBe(pkg.version);
    const wasm = new URL(versions.wasm!);
    expect(wasm.origin).toBe(location.origin);
    expect(wasm.pathname).toBe(
      pkgUrl.pathname.replace(/package\.json$/, "dist/ort-wasm-simd-threaded.asyncify.wasm"),
    );
    const res = await fetch(wasm);
    expect(res.ok).toBe(true);
  });

  it("loading and running the in-memory models fetched nothing from another origin", async () => {
    for (const { w } of workers.values()) {
      const urls = await w.api.fetchedUrls();
      expect(
        urls.filter(
          (u) => !u.startsWith(location.origin) && !u.startsWith("blob:") && !u.startsWith("data:"),
        ),
      ).toEqual([]);
    }
  });
});

describe("across the worker boundary", () => {
  it("an AbortSignal cancels generation in the worker, which stays usable", async () => {
    const { lm } = workers.get("wasm")!;
    const controller = new AbortController();
    const maxNewTokens = tiny.dims.context - 1; // as long as the context allows: the cancel has ~all of it to cross over
    let steps = 0;
    const onToken = (n: number) => {
      steps = Math.max(steps, n);
      if (n === 1) controller.abort(); // from the worker's first step: the generation is known to be running
    };
    const run = lm.generate(
      { text: "I" },
      { maxNewTokens, temperature: 1, seed: 1 },
      { signal: controller.signal, onToken },
    );
    const e = await run.then(
      () => null,
      (err: unknown) => err,
    );
    expect(lmErrorKind(e)).toBe("cancelled");
    expect(steps).toBeGreaterThanOrEqual(1);
    expect(steps).toBeLessThan(maxNewTokens); // it stopped before the end
    const [after] = await lm.generate({ text: "I" }, { maxNewTokens: 3 });
    expect(after.tokens).toBeGreaterThan(0);
  });

  it("a missing in-memory file is a ModelNotFoundError by name", async () => {
    const { w } = workers.get("wasm")!;
    const { ["onnx/model.onnx"]: _, ...noWeights } = tiny.files;
    const e = await w.api
      .loadLanguageModel({ id: "tiny-no-weights", files: noWeights }, { device: "wasm" })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(lmErrorKind(e)).toBe("model-not-found");
    expect((e as Error).message).toContain("tiny-no-weights");
  });

  it("the tiny embedder equals the reference mean-pooled normalised BERT", async () => {
    const bert = makeTinyBert();
    const { w } = workers.get("wasm")!;
    const { handle, info } = await w.api.loadEmbeddingModel(
      { id: TINY_EMBEDDER, files: bert.files },
      { device: "wasm" },
    );
    const embedder = new RemoteEmbeddingModel(w.api, handle, info);
    const texts = ["I would like to donate.", "No."];
    const got = await embedder.embed(texts);
    texts.forEach((t, i) => {
      const want = referenceEmbedding(bert, referenceWordPiece(bert.vocab, t));
      expect(Math.max(...Array.from(want, (x, k) => Math.abs(x - got[i][k])))).toBeLessThan(1e-4);
    });
    await embedder.unload();
  });
});
