// Typed errors of the lm tier's model backend, each with a message a person can act on. They
// cross the worker boundary by name (Comlink keeps an error's name and message, not its class),
// so `lmErrorKind` reads the kind from either a live error or one that came through Comlink.
// No ML runtime imports here: the page side uses this module too.

export type LmErrorKind =
  "no-webgpu" | "model-not-found" | "offline" | "storage-quota" | "cancelled" | "context-overflow";

const NAMES: Record<LmErrorKind, string> = {
  "no-webgpu": "NoWebGpuError",
  "model-not-found": "ModelNotFoundError",
  offline: "OfflineError",
  "storage-quota": "StorageQuotaError",
  cancelled: "LmCancelledError",
  "context-overflow": "ContextOverflowError",
};

export class LmError extends Error {
  constructor(
    readonly kind: LmErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = NAMES[kind];
  }
}

export class NoWebGpuError extends LmError {
  constructor(detail: string) {
    super(
      "no-webgpu",
      `WebGPU was requested but is not available: ${detail}. Choose device "auto" or "wasm" to run on the CPU.`,
    );
  }
}

export class ModelNotFoundError extends LmError {
  constructor(
    readonly modelId: string,
    where: string,
    options?: { cause?: unknown },
  ) {
    super(
      "model-not-found",
      `Model "${modelId}" was not found: ${where}. Check the model id (e.g. "HuggingFaceTB/SmolLM2-135M") or the local model folder.`,
      options,
    );
  }
}

export class OfflineError extends LmError {
  constructor(
    readonly modelId: string,
    options?: { cause?: unknown },
  ) {
    super(
      "offline",
      `Could not download model "${modelId}": the model hub is unreachable (offline?). Connect, or load a local copy (localModelPath) with remote downloads off.`,
      options,
    );
  }
}

export class StorageQuotaError extends LmError {
  constructor(
    readonly modelId: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      "storage-quota",
      `Not enough browser storage to cache model "${modelId}" (${detail}). Free space by deleting cached models, or pick a smaller model or dtype.`,
      options,
    );
  }
}

export class LmCancelledError extends LmError {
  constructor(what: string) {
    super("cancelled", `${what} was cancelled`);
  }
}

export class ContextOverflowError extends LmError {
  constructor(modelId: string, tokens: number, limit: number) {
    super(
      "context-overflow",
      `${tokens} tokens do not fit model "${modelId}" (context ${limit}); shorten the prompt or ask for fewer new tokens.`,
    );
  }
}

/** The kind of an lm error, also for errors that crossed a worker boundary; null for others. */
export function lmErrorKind(e: unknown): LmErrorKind | null {
  if (e instanceof LmError) return e.kind;
  const name = (e as { name?: unknown } | null)?.name;
  for (const [kind, n] of Object.entries(NAMES) as [LmErrorKind, string][])
    if (n === name) return kind;
  return null;
}
