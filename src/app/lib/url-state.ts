// The URL is the experiment (docs/architecture.md#the-app): a versioned query string holding the preset, every
// override (as the CLI's --set path=value), the seeds and the backend. Opening the link
// resolves the same ExperimentConfig, so the same backend reproduces the same numbers. A bad
// URL never gives a blank page: what cannot be read is dropped with a readable message.
import {
  applySet,
  ConfigError,
  validateConfig,
  type ExperimentConfig,
} from "../../experiment/config";
import { PRESETS, presetConfig } from "../../experiment/presets";

export const URL_VERSION = 1;
/** The app opens on the paper's figure, where the effect shows; its benchmark's quick preset runs it live in minutes. */
export const DEFAULT_PRESET = "persuasion-paper";
export const BACKEND_CHOICES = ["auto", "webgpu", "wasm"] as const;
export type BackendChoice = (typeof BACKEND_CHOICES)[number];
export const PAGES = [
  "experiment",
  "simulators",
  "dialogues",
  "runs",
  "lm",
  "play",
  "remote",
  "sweeps",
] as const;
export type Page = (typeof PAGES)[number];

export interface UrlState {
  preset: string;
  seeds?: number;
  seedBase?: number;
  sets: string[]; // path=value overrides, applied in order
  backend: BackendChoice;
  autorun: boolean;
  embed?: string; // a figure id: show only that figure
  /** Presentation mode: large text, the figure filling the screen. */
  present?: boolean;
  /** The Play page's setup (play-link.ts); a class study link carries it. */
  play?: string;
  /** The sweep on show (the Sweeps page, `embed=sweep`): a recorded sweep's folder or a stored sweep's id. */
  sweep?: string;
  page: Page;
}

export const DEFAULT_STATE: UrlState = {
  preset: DEFAULT_PRESET,
  sets: [],
  backend: "auto",
  autorun: false,
  page: "experiment",
};

const count = (s: string | null, min: number) =>
  s !== null && /^\d+$/.test(s) && Number(s) >= min ? Number(s) : undefined;

/** Reads a URL's query and hash; `problems` explains everything that was ignored. */
export function parseUrlState(search: string, hash = ""): { state: UrlState; problems: string[] } {
  const q = new URLSearchParams(search);
  const problems: string[] = [];
  const state: UrlState = { ...DEFAULT_STATE, sets: [] };
  const v = q.get("v");
  if (v !== null && v !== String(URL_VERSION))
    problems.push(
      `this link is for version ${v} of the URL format; this app reads version ${URL_VERSION}, so it may not reproduce exactly`,
    );
  const preset = q.get("preset");
  if (preset !== null) {
    if (PRESETS.some((p) => p.id === preset)) state.preset = preset;
    else
      problems.push(
        `unknown preset "${preset}" — showing ${DEFAULT_PRESET} (presets: ${PRESETS.map((p) => p.id).join(", ")})`,
      );
  }
  for (const [key, min] of [
    ["seeds", 1],
    ["seedBase", 0],
  ] as const) {
    const raw = q.get(key);
    if (raw === null) continue;
    const n = count(raw, min);
    if (n === undefined)
      problems.push(`${key}=${JSON.stringify(raw)} is not a whole number ≥ ${min}; ignored`);
    else state[key] = n;
  }
  for (const set of q.getAll("set")) {
    try {
      configWith({ ...state, sets: [...state.sets, set] });
      state.sets.push(set);
    } catch (e) {
      problems.push(`set=${set}: ${(e as Error).message}; ignored`);
    }
  }
  const backend = q.get("backend");
  if (backend !== null) {
    if ((BACKEND_CHOICES as readonly string[]).includes(backend))
      state.backend = backend as BackendChoice;
    else
      problems.push(
        `backend=${JSON.stringify(backend)} is not one of ${BACKEND_CHOICES.join(", ")}; using auto`,
      );
  }
  const autorun = q.get("autorun");
  state.autorun = autorun === "1" || autorun === "true";
  const embed = q.get("embed");
  if (embed) state.embed = embed;
  const present = q.get("present");
  if (present === "1" || present === "true") state.present = true;
  const play = q.get("play");
  if (play) state.play = play;
  const sweep = q.get("sweep");
  if (sweep) state.sweep = sweep;
  const page = hash.replace(/^#\/?/, "");
  if (page) {
    if ((PAGES as readonly string[]).includes(page)) state.page = page as Page;
    else problems.push(`no page "${page}"; showing the experiment`);
  }
  return { state, problems };
}

/** The query string and hash of a state (the inverse of parseUrlState). */
export function formatUrlState(s: UrlState): string {
  const q = new URLSearchParams();
  q.set("v", String(URL_VERSION));
  q.set("preset", s.preset);
  if (s.seeds !== undefined) q.set("seeds", String(s.seeds));
  if (s.seedBase !== undefined) q.set("seedBase", String(s.seedBase));
  for (const set of s.sets) q.append("set", set);
  if (s.backend !== "auto") q.set("backend", s.backend);
  if (s.autorun) q.set("autorun", "1");
  if (s.embed) q.set("embed", s.embed);
  if (s.present) q.set("present", "1");
  if (s.play) q.set("play", s.play);
  if (s.sweep) q.set("sweep", s.sweep);
  return `?${q.toString()}${s.page === "experiment" ? "" : `#${s.page}`}`;
}

/** The resolved config of a state; throws ConfigError naming the bad setting. */
export function configWith(
  s: Pick<UrlState, "preset" | "seeds" | "seedBase" | "sets">,
): ExperimentConfig {
  let c: unknown = presetConfig(s.preset);
  for (const set of s.sets) c = applySet(c, set);
  if (s.seeds !== undefined) c = applySet(c, `seeds=${s.seeds}`);
  if (s.seedBase !== undefined) c = applySet(c, `seedBase=${s.seedBase}`);
  return validateConfig(c);
}

/** Replaces (or removes, with value undefined) the override of one path. */
export function withSet(sets: string[], path: string, value: unknown): string[] {
  const rest = sets.filter((s) => s.slice(0, s.indexOf("=")) !== path);
  return value === undefined ? rest : [...rest, `${path}=${JSON.stringify(value)}`];
}

export { ConfigError };
