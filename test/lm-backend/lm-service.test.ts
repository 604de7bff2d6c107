// The service the LM worker exposes, run directly in Node: handles, jobs cancelled by id,
// throttled load progress that still delivers every file's start and end, unload.
import { describe, it, expect, afterAll } from "vitest";
import { LmService } from "../../src/lm/lm-service";
import { lmErrorKind } from "../../src/lm/errors";
import type { LoadProgress } from "../../src/lm/backend";
import { TINY_EMBEDDER, TINY_LM, TinyGpt2Reference, makeTinyGpt2 } from "../../src/lm/tiny";
import { tinySource } from "./fixtures";

const service = new LmService();
afterAll(() => service.dispose());

describe("LmService", () => {
  it("loads models by handle and runs them", async () => {
    const progress: LoadProgress[] = [];
    const { handle, info } = await service.loadLanguageModel(
      await tinySource(TINY_LM),
      { progressMs: 10_000 },
      (p) => progress.push(p),
    );
    expect(info).toMatchObject({ id: TINY_LM, device: "cpu" });
    // throttled, yet every file's start and end and the final total arrive
    for (const file of ["config.json", "onnx/model.onnx"]) {
      expect(
        progress.some((p) => p.kind === "file" && p.file === file && p.status === "initiate"),
      ).toBe(true);
      expect(
        progress.some((p) => p.kind === "file" && p.file === file && p.status === "done"),
      ).toBe(true);
    }
    const totals = progress.filter((p) => p.kind === "total") as Extract<
      LoadProgress,
      { kind: "total" }
    >[];
    expect(totals.at(-1)!.loaded).toBe(totals.at(-1)!.total);

    const ref = new TinyGpt2Reference(makeTinyGpt2());
    const [g] = await service.generate(handle, { text: "Hello" }, { maxNewTokens: 6 });
    expect(g.text).toBe(ref.bpe.decode(ref.greedy(ref.bpe.encode("Hello"), 6).ids));
    expect(service.encodePrompt(handle, { text: "Hello" })).toEqual(ref.bpe.encode("Hello"));
    const [s] = await service.score(handle, { text: "Hello" }, [" yes"]);
    expect(s.tokens).toBe(1);

    await service.unload(handle);
    expect(() => service.generate(handle, { text: "Hello" })).toThrow(
      /no language model with handle/,
    );
  });

  it("cancels a job by id; unknown ids report false; ids are unique while running", async () => {
    const { handle } = await service.loadLanguageModel(await tinySource(TINY_LM));
    let cancelled: boolean | null = null;
    let steps = 0;
    const onToken = (n: number) => {
      steps = n;
      if (n === 2) cancelled = service.cancel("g1"); // from progress: the job is known to be running
    };
    const run = service.generate(
      handle,
      { text: "I" },
      { maxNewTokens: 120, temperature: 1, seed: 2 },
      { jobId: "g1" },
      onToken,
    );
    await expect(service.generate(handle, { text: "I" }, {}, { jobId: "g1" })).rejects.toThrow(
      /already running/,
    );
    await expect(run).rejects.toSatisfy((e) => lmErrorKind(e) === "cancelled");
    expect(cancelled).toBe(true);
    expect(steps).toBe(2); // no step after the cancel
    expect(service.cancel("g1")).toBe(false);
    await service.unload(handle);
  });

  it("embeds with an embedding handle and refuses an LM handle for it", async () => {
    const { handle } = await service.loadEmbeddingModel(await tinySource(TINY_EMBEDDER));
    const [v] = await service.embed(handle, ["hello"]);
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(() => service.generate(handle, { text: "x" })).toThrow(/no language model/);
    await service.unload(handle);
  });

  it("reports the runtime versions", async () => {
    expect(await service.versions()).toMatchObject({ transformers: "4.3.1" });
  });
});
