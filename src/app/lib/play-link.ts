// What a Play session is set to, as one URL parameter (`?play=…#play`): the run whose policies are
// played, the conditions a player may face, the assignment scheme, how many dialogues a player is
// asked for, and, for a class study, the study's id. A class study link fixes all of it, so a room
// of people opening one link play the same run under the same scheme (no server: each browser
// assigns its own dialogues from the study id and a player id of its own, play-assign.ts).
import { CONDITIONS, type ConditionId } from "../../experiment/config";
import { PRESETS } from "../../experiment/presets";

/** A recorded run (public/recorded/<preset>.json) or one of this browser's stored runs. */
export type RunRef = { kind: "recorded"; preset: string } | { kind: "stored"; id: string };

export const SCHEMES = ["blocks", "random"] as const;
/** blocks: each block of k dialogues shows every condition once, in a random order; random: each dialogue draws one uniformly. */
export type Scheme = (typeof SCHEMES)[number];

export interface PlaySetup {
  run: RunRef;
  conditions: ConditionId[]; // at least one, no repeats, in CONDITIONS order
  scheme: Scheme;
  dialogues: number; // asked of each player (1–20)
  study: string | null; // a class study's id; null when playing alone
}

export const MAX_DIALOGUES = 20;
const ID = /^[A-Za-z0-9_-]{1,40}$/;

export const runRefText = (r: RunRef) =>
  r.kind === "recorded" ? `recorded/${r.preset}` : `stored/${r.id}`;

export function parseRunRef(s: string): RunRef | string {
  const [kind, rest] = [s.slice(0, s.indexOf("/")), s.slice(s.indexOf("/") + 1)];
  if (kind === "recorded")
    return PRESETS.some((p) => p.id === rest) ? { kind, preset: rest } : `no preset "${rest}"`;
  if (kind === "stored") return ID.test(rest) ? { kind, id: rest } : `"${rest}" is not a run id`;
  return `"${s}" names no run (expected recorded/<preset> or stored/<id>)`;
}

/** `run:recorded/persuasion-smoke;conditions:base,single;scheme:blocks;dialogues:4;study:room-1` */
export function formatPlaySetup(s: PlaySetup): string {
  const parts = [
    `run:${runRefText(s.run)}`,
    `conditions:${s.conditions.join(",")}`,
    `scheme:${s.scheme}`,
    `dialogues:${s.dialogues}`,
  ];
  if (s.study) parts.push(`study:${s.study}`);
  return parts.join(";");
}

/** Reads a `play` parameter; what cannot be read is left at `fallback`'s value and named in `problems`. */
export function parsePlaySetup(
  text: string,
  fallback: PlaySetup,
): { setup: PlaySetup; problems: string[] } {
  const setup: PlaySetup = { ...fallback, conditions: [...fallback.conditions] };
  const problems: string[] = [];
  for (const part of text.split(";").filter(Boolean)) {
    const at = part.indexOf(":");
    const [key, value] = at < 0 ? [part, ""] : [part.slice(0, at), part.slice(at + 1)];
    switch (key) {
      case "run": {
        const r = parseRunRef(value);
        if (typeof r === "string") problems.push(`play link: ${r}`);
        else setup.run = r;
        break;
      }
      case "conditions": {
        const names = value.split(",").filter(Boolean);
        const bad = names.filter((n) => !(CONDITIONS as readonly string[]).includes(n));
        if (bad.length || names.length === 0)
          problems.push(
            `play link: conditions "${value}" — expected some of ${CONDITIONS.join(", ")}`,
          );
        else setup.conditions = CONDITIONS.filter((c) => names.includes(c));
        break;
      }
      case "scheme":
        if ((SCHEMES as readonly string[]).includes(value)) setup.scheme = value as Scheme;
        else problems.push(`play link: scheme "${value}" — expected ${SCHEMES.join(" or ")}`);
        break;
      case "dialogues": {
        const n = Number(value);
        if (/^\d+$/.test(value) && n >= 1 && n <= MAX_DIALOGUES) setup.dialogues = n;
        else
          problems.push(
            `play link: dialogues "${value}" — expected a whole number from 1 to ${MAX_DIALOGUES}`,
          );
        break;
      }
      case "study":
        if (ID.test(value)) setup.study = value;
        else
          problems.push(`play link: study "${value}" — letters, digits, - and _ only (at most 40)`);
        break;
      default:
        problems.push(`play link: unknown setting "${key}"; ignored`);
    }
  }
  return { setup, problems };
}
