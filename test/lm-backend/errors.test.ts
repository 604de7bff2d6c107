// The backend's typed errors: a missing local model, a hub that answers 404, an unreachable hub,
// WebGPU forced where there is none, a full storage quota, a cancelled load; each with a kind
// that survives a worker boundary (by name) and a message that says what to do.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  TransformersEmbeddingModel,
  TransformersLanguageModel,
  classifyLoadError,
  resolveDevice,
} from "../../src/lm/backend";
import { ModelNotFoundError, lmErrorKind } from "../../src/lm/errors";
import { TINY_LM } from "../../src/lm/tiny";
import { MODELS_DIR, tinySource } from "./fixtures";

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

describe("load errors", () => {
  it("a missing local model is a ModelNotFoundError naming the model and where it looked", async () => {
    const e = await failure(
      TransformersLanguageModel.load({
        id: "no-such-model",
        localModelPath: MODELS_DIR,
        allowRemote: false,
      }),
    );
    expect(e).toBeInstanceOf(ModelNotFoundError);
    expect(lmErrorKind(e)).toBe("model-not-found");
    expect(e.name).toBe("ModelNotFoundError");
    expect(e.message).toContain('Model "no-such-model" was not found');
    expect(e.message).toContain(MODELS_DIR);
    const emb = await failure(
      TransformersEmbeddingModel.load({ id: "no-such-embedder", localModelPath: MODELS_DIR }),
    );
    expect(lmErrorKind(emb)).toBe("model-not-found");
  });

  it("a model folder without its ONNX file is a ModelNotFoundError", async () => {
    await tinySource(TINY_LM);
    const e = await failure(
      TransformersLanguageModel.load({ id: TINY_LM, localModelPath: MODELS_DIR, dtype: "q4" }),
    ); // no model_q4.onnx
    expect(lmErrorKind(e)).toBe("model-not-found");
    expect(e.message).toContain("model_q4.onnx");
  });

  describe("against a hub", () => {
    let server: Server;
    let host: string;
    beforeAll(async () => {
      server = createServer((_req, res) => res.writeHead(404).end("Entry not found"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      host = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("a 404 from the hub is a ModelNotFoundError", async () => {
      const e = await failure(
        TransformersLanguageModel.load({ id: "someone/missing-model", remoteHost: host }),
      );
      expect(lmErrorKind(e)).toBe("model-not-found");
      expect(e.message).toContain("someone/missing-model");
    });

    it("an unreachable hub is an OfflineError", async () => {
      const closed = await new Promise<string>((resolve) => {
        const s = createServer();
        s.listen(0, "127.0.0.1", () => {
          const port = (s.address() as AddressInfo).port;
          s.close(() => resolve(`http://127.0.0.1:${port}/`)); // nothing listens there any more
        });
      });
      const e = await failure(
        TransformersLanguageModel.load({ id: "HuggingFaceTB/SmolLM2-135M", remoteHost: closed }),
      );
      expect(lmErrorKind(e)).toBe("offline");
      expect(e.message).toMatch(/unreachable.*local copy/);
    });
  });

  it("WebGPU forced where there is none is a NoWebGpuError", async () => {
    const e = await failure(resolveDevice("webgpu"));
    expect(lmErrorKind(e)).toBe("no-webgpu");
    expect(e.message).toMatch(/WebGPU was requested but is not available.*"auto" or "wasm"/);
    await expect(resolveDevice("auto")).resolves.toEqual({ device: "cpu" });
    expect(
      lmErrorKind(
        await failure(
          TransformersLanguageModel.load(
            { id: TINY_LM, localModelPath: MODELS_DIR },
            { device: "webgpu" },
          ),
        ),
      ),
    ).toBe("no-webgpu");
  });

  it("a storage quota failure is a StorageQuotaError", () => {
    const quota = new DOMException("The quota has been exceeded.", "QuotaExceededError");
    const e = classifyLoadError(quota, { id: "HuggingFaceTB/SmolLM2-135M" }, "the hub") as Error;
    expect(lmErrorKind(e)).toBe("storage-quota");
    expect(e.message).toMatch(/Not enough browser storage.*SmolLM2-135M/);
    expect((e as Error & { cause?: unknown }).cause).toBe(quota);
  });

  it("a load cancelled before it starts is an LmCancelledError", async () => {
    const controller = new AbortController();
    controller.abort();
    const e = await failure(
      TransformersLanguageModel.load(await tinySource(TINY_LM), { signal: controller.signal }),
    );
    expect(lmErrorKind(e)).toBe("cancelled");
  });

  it("errors keep their kind when only the name survives (as across Comlink)", () => {
    const across = { name: "ModelNotFoundError", message: "…" };
    expect(lmErrorKind(across)).toBe("model-not-found");
    expect(lmErrorKind(new Error("other"))).toBeNull();
  });
});
