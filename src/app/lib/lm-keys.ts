// The LM lab's API keys for endpoint models (held by state/lm.svelte.ts, in memory only: never in
// the URL, IndexedDB, a result or a message). Each key is kept with the base URL it was typed for
// and goes to that very URL only: a change of the URL drops it, and a model's spec carries a key
// only where the URLs match.
import { normaliseBaseUrl } from "../../remote/client";
import type { EndpointRole, EndpointSpec } from "./lm-contracts";

/** A key and the base URL it was typed for. */
export interface TypedKey {
  key: string;
  url: string;
}

/** Two base URLs name the same server and path (as the client would send to them). */
export function sameUrl(a: string, b: string): boolean {
  try {
    return normaliseBaseUrl(a.trim()) === normaliseBaseUrl(b.trim());
  } catch {
    return a.trim() === b.trim();
  }
}

/** A key typed for another URL than `url`: it must be dropped before anything is sent there. */
export const keyIsStale = (k: TypedKey, url: string): boolean =>
  k.key !== "" && !sameUrl(k.url, url);

/** Why a role's key was just dropped, for the page. */
export const droppedKeyNote = (role: EndpointRole): string =>
  `The ${role === "instruct" ? "simulator's" : "base model's"} API key was cleared: it was typed for another URL. Type it again for this server.`;

/** Where a role's model is, with the key typed for that very URL (the base model on the simulator's server shares its key). */
export function endpointSpecOf(
  role: EndpointRole,
  endpoints: Record<EndpointRole, { baseUrl: string; model: string }>,
  keys: Record<EndpointRole, TypedKey>,
): EndpointSpec {
  const own = endpoints[role];
  const baseUrl =
    role === "base" && own.baseUrl.trim() === ""
      ? endpoints.instruct.baseUrl.trim()
      : own.baseUrl.trim();
  const keyFor = (r: EndpointRole) =>
    keys[r].key && sameUrl(keys[r].url, baseUrl) ? keys[r].key : undefined;
  const apiKey = keyFor(role) ?? (role === "base" ? keyFor("instruct") : undefined);
  return { baseUrl, model: own.model.trim(), ...(apiKey ? { apiKey } : {}) };
}
