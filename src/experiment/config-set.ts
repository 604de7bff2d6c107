// The override language of configs: `merge` lays a preset's (or a benchmark's) partial config over
// a base, and `--set path=value` sets one leaf. Neither validates; validateConfig does, after.
import { ConfigError } from "./config-validate";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Deep merge of plain objects; arrays and leaves are replaced. */
export function merge<T>(base: T, patch: unknown): T {
  if (patch === undefined) return structuredClone(base);
  if (
    typeof patch !== "object" ||
    patch === null ||
    Array.isArray(patch) ||
    typeof base !== "object" ||
    base === null ||
    Array.isArray(base)
  ) {
    return structuredClone(patch) as T;
  }
  const out: Record<string, unknown> = { ...(structuredClone(base) as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch as Record<string, unknown>))
    out[k] = k in out ? merge(out[k], v) : structuredClone(v);
  return out as T;
}

/** Parses `path=value` (value as JSON, else as a string) and sets it; its sections must exist. */
export function applySet(config: unknown, assignment: string): unknown {
  const eq = assignment.indexOf("=");
  if (eq <= 0) throw new ConfigError(`--set ${JSON.stringify(assignment)}: expected path=value`);
  const path = assignment.slice(0, eq).trim().split(".");
  const raw = assignment.slice(eq + 1).trim();
  let value: Json;
  try {
    value = JSON.parse(raw) as Json;
  } catch {
    value = raw;
  }
  // a name like __proto__ would reach Object.prototype and change every object of the page
  const bad = path.find(
    (k) => k === "" || k === "__proto__" || k === "constructor" || k === "prototype",
  );
  if (bad !== undefined)
    throw new ConfigError(
      `--set ${path.join(".")}: no such setting (${JSON.stringify(bad)} is not a setting's name)`,
    );
  const out = structuredClone(config) as Record<string, unknown>;
  let node: Record<string, unknown> = out;
  for (let i = 0; i < path.length - 1; i++) {
    const next = Object.hasOwn(node, path[i]) ? node[path[i]] : undefined;
    if (typeof next !== "object" || next === null)
      throw new ConfigError(
        `--set ${path.join(".")}: no such setting (${path.slice(0, i + 1).join(".")} is not a section)`,
      );
    node = next as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value; // an unknown leaf is caught by validation, which names it

  return out;
}
