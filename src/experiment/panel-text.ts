// Held-out panel diagnostics as text (panel-diagnostics.ts): the modes table, the separation table
// and the own-modes rule, for `collapse-lab run`'s printout and scripts/panel-rule.ts.
import { points, table } from "../util/format";
import {
  PLAYS_AT,
  separationGaps,
  type PanelDiversity,
  type PanelSeparation,
  type RuleFamily,
} from "./panel-diagnostics";

/** Members' modes and agreement with the training simulator, then who plays each type. */
export function diversityLines(d: PanelDiversity): string[] {
  const share = (x: number) => points(x, 0);
  const lines = [
    table([
      ["probe state", d.training.name, ...d.members.map((m) => m.name)],
      ...d.probes.map((p, j) => [
        p.id,
        d.training.modes[j],
        ...d.members.map((m) => `${m.modes[j]} (${share(m.agreement[j])})`),
      ]),
      ["mode agreement %", "", ...d.members.map((m) => share(m.modeAgreement))],
    ]),
    `  (modes on the card ${d.cardText}; in brackets the % of the humans' card mass on which the member's mode is the training simulator's)`,
  ];
  if (d.types.length)
    lines.push(
      table([
        ["type: defining reply", "probe states", d.training.name, ...d.members.map((m) => m.name)],
        ...d.types.map((t, k) => [
          `${t.name}: ${[...new Set(t.replies)].join(" / ")}`,
          t.probes.join(", "),
          share(d.training.plays[k]),
          ...d.members.map((m) => share(m.plays[k])),
        ]),
      ]),
      `  (% of the humans' card mass on which each simulator plays the type's defining reply — its own most likely reply where the humans' differs — at the type's best probe state; a member plays the type at ${share(PLAYS_AT)} % or more)`,
      `  types some member plays: ${
        d.types
          .filter((t) => t.players.length)
          .map((t) => `${t.name} (${t.players.join(", ")})`)
          .join("; ") || "none"
      }`,
    );
  return lines;
}

/** The two reference agents' success against humans, the training simulator and each member. */
export function separationLines(s: PanelSeparation): string[] {
  const gaps = separationGaps(s);
  const row = (name: string, x: { script: number; adaptive: number }) => [
    name,
    points(x.script),
    points(x.adaptive),
    points(x.adaptive - x.script),
  ];
  return [
    table([
      ["opponent", `${s.script.label} %`, `${s.adaptive.label} %`, "separation (points)"],
      row("humans", s.humans),
      row(s.training.name, s.training),
      ...s.members.map((m) => row(m.name, m)),
      ["panel (mean)", "", "", points(gaps.panel)],
    ]),
    `  (${s.dialogues} dialogues per agent and opponent)`,
  ];
}

/** The own-modes rule: the card mass each type's family plays it on at each weight, and the weight chosen. */
export function ruleLines(rule: RuleFamily[], panelWeights?: Map<string, number>): string[] {
  if (rule.length === 0) return [];
  return [
    table([
      [
        "type",
        ...rule[0].steps.map((s) => `p = ${s.p}`),
        "rule's p",
        ...(panelWeights ? ["panel's p"] : []),
      ],
      ...rule.map((r) => [
        r.type,
        ...r.steps.map((s) => `${points(s.mass, 0)}${s.probe ? ` (${s.probe})` : ""}`),
        r.p === null ? "none" : String(r.p),
        ...(panelWeights ? [String(panelWeights.get(r.type) ?? "–")] : []),
      ]),
    ]),
    `  (% of the humans' card mass on which the family's collapsed predictive plays the type's defining reply, and the probe state where it does most; the rule's p is the first at ${points(PLAYS_AT, 0)} % or more)`,
  ];
}
