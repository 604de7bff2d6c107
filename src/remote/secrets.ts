// API keys for model servers: read from an environment variable or asked for on the terminal,
// kept in this process's memory only, and bound to the base URL they were given for. Configs and
// RunReports name the environment variable (`apiKeyEnv`), never the key; a key asked for on the
// terminal reaches worker threads through one variable that maps base URLs to keys, so each key
// still goes only to its own server. Nothing here logs or prints a key.
import { normaliseBaseUrl } from "./client";

/** The variable that carries terminal-entered keys, as JSON {baseUrl: key}, to worker threads. */
export const KEYRING_ENV = "COLLAPSE_LAB_KEYRING";

const keyring = new Map<string, string>();

const env = (): Record<string, string | undefined> =>
  typeof process !== "undefined" ? process.env : {};

/** Remembers `key` for `baseUrl` (and for worker threads started after this call). */
export function rememberApiKey(baseUrl: string, key: string): void {
  const url = normaliseBaseUrl(baseUrl);
  keyring.set(url, key);
  if (typeof process !== "undefined")
    process.env[KEYRING_ENV] = JSON.stringify(Object.fromEntries(keyring));
}

/**
 * The key for a server: one entered for exactly this base URL, else the environment variable
 * `envName` when given; undefined when there is none (servers without auth need none).
 */
export function apiKeyFor(baseUrl: string, envName?: string): string | undefined {
  const url = normaliseBaseUrl(baseUrl);
  const own = keyring.get(url);
  if (own) return own;
  const shared = env()[KEYRING_ENV];
  if (shared) {
    try {
      const k = (JSON.parse(shared) as Record<string, unknown>)[url];
      if (typeof k === "string" && k) return k;
    } catch {
      // an unreadable keyring is no key
    }
  }
  if (envName) {
    const k = env()[envName];
    if (k) return k;
  }
  return undefined;
}

/** Asks for a key on the terminal without echoing it; rejects when there is no terminal. */
export async function promptApiKey(
  baseUrl: string,
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WriteStream = process.stderr,
): Promise<string> {
  if (!input.isTTY)
    throw new Error(
      `an API key for ${normaliseBaseUrl(baseUrl)} was to be asked for, but there is no terminal; set it in an environment variable instead`,
    );
  const { createInterface } = await import(/* @vite-ignore */ "node:readline");
  output.write(`API key for ${normaliseBaseUrl(baseUrl)} (not shown): `);
  const rl = createInterface({
    input,
    terminal: true,
    output: { write: () => true } as unknown as NodeJS.WritableStream,
  });
  try {
    return await new Promise<string>((resolve) => rl.question("", (a) => resolve(a.trim())));
  } finally {
    rl.close();
    output.write("\n");
  }
}
