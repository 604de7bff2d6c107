// The LM lab's errors in words: the lm tier's typed errors (src/lm/errors.ts) and the remote
// tier's (src/remote/errors.ts), recognised by kind also after they crossed the worker boundary,
// each with a title for the page; a server that cannot be reached gets the CORS hint, and a local
// model folder answered with the app's own HTML page reads as a missing model.
import { lmErrorKind, type LmErrorKind } from "../../lm/errors";
import { remoteErrorKind, type RemoteErrorKind } from "../../remote/errors";

export interface LabError {
  kind: LmErrorKind | null;
  title: string;
  message: string;
}

const ERROR_TITLES: Record<LmErrorKind, string> = {
  "no-webgpu": "No WebGPU",
  "model-not-found": "Model not found",
  offline: "Offline",
  "storage-quota": "Browser storage is full",
  cancelled: "Cancelled",
  "context-overflow": "Prompt too long for the model",
};

const REMOTE_TITLES: Partial<Record<RemoteErrorKind, string>> = {
  unreachable: "Server unreachable",
  timeout: "The server did not answer in time",
  unauthorised: "Not authorised",
  "model-not-found": "Model not found",
  "not-offered": "Not offered by this server",
  "no-logprobs": "No log-probs",
  "malformed-reply": "Unreadable reply",
  "rate-limited": "Rate limited",
  "server-error": "Server error",
  "bad-request": "Request refused",
};

/**
 * A page cannot tell a server that is down from one that refuses its origin (CORS): the browser
 * hides which. Say both, and how each server kind is told to allow an origin.
 */
function unreachableHint(): string {
  const origin = typeof location !== "undefined" ? location.origin : "this page's origin";
  return (
    ` In a browser this also happens when the server does not allow requests from ${origin} (CORS): ` +
    `\`collapse-lab serve\` allows the origins given with --cors-origin; vLLM and SGLang allow every origin unless told otherwise (vLLM: --allowed-origins); llama.cpp's server has answered any origin so far.`
  );
}

/** A readable error, with the lm tier's and the remote tier's typed errors (also after a worker boundary) by kind. */
export function describeError(e: unknown): LabError {
  const kind = lmErrorKind(e);
  const message =
    e instanceof Error || (typeof e === "object" && e !== null && "message" in e)
      ? String((e as Error).message)
      : String(e);
  const remote = kind ? null : remoteErrorKind(e);
  if (remote && REMOTE_TITLES[remote])
    return {
      kind: remote === "model-not-found" ? "model-not-found" : null,
      title: REMOTE_TITLES[remote]!,
      message: remote === "unreachable" ? message + unreachableHint() : message,
    };
  return { kind, title: kind ? ERROR_TITLES[kind] : "Something went wrong", message };
}

/**
 * A static server that answers every unknown path with the app's index.html (as Vite's and most
 * single-page hosts do) turns a missing model file into "Unexpected token '<' … is not valid
 * JSON": say what that means for a local folder.
 */
export function describeLoadError(
  e: unknown,
  src: { id: string; localModelPath?: string },
): LabError {
  const err = describeError(e);
  if (
    err.kind === null &&
    src.localModelPath !== undefined &&
    /unexpected token '?<|<!doctype|is not valid json/i.test(err.message)
  ) {
    const path = src.localModelPath.endsWith("/") ? src.localModelPath : `${src.localModelPath}/`;
    return {
      kind: "model-not-found",
      title: "Model not found",
      message: `The server sent a web page instead of a model file for "${src.id}" (${err.message}): ${path}${src.id}/config.json and the other files are probably missing. Put the model folder there, in Hugging Face layout.`,
    };
  }
  return err;
}
