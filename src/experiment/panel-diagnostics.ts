// Diagnostics of a held-out panel from its simulators alone, before and without any RL
// (docs/science.md#the-held-out-panels): whose user each member collapses onto, and how far apart it
// puts two reference agents.
// * Modes. Every simulator's most likely reply at each probe state (BenchmarkModule.probeStates) on
//   every card of the humans' card distribution. A member's mode agreement with the training
//   simulator is the humans' card mass on which their modes agree, averaged over probe states. A
//   latent type's defining reply at a probe state and card is its own most likely reply where that
//   differs from the humans' Bayes predictive's; a member plays the type on the card mass where its
//   mode is that reply (the largest such mass over the type's probe states).
// * Separation. The success of the benchmark's script for the modal user and of its adaptive agent
//   (BenchmarkModule.separationAgents) against each member, the training simulator and humans.
// Both run on pretrained networks (diagnostics.ts) and on each family's exact simulator
// (SharpenedPredictive), where they also give the own-modes rule's weight for each family.
import { benchmarkFor, benchmarkModule, leaningPrior } from "../benchmarks/registry";
import type {
  Benchmark,
  Dialogue,
  PanelKind,
  ProbeState,
  ReferenceAgent,
} from "../benchmarks/types";
import { Rng } from "../engine/random";
import { klDivergence } from "../metrics/diversity";
import { SharpenedPredictive } from "../simulators/exact";
import { BayesPredictive, Humans, type UserSimulator } from "../simulators/simulator";
import type { ExperimentConfig } from "./config";

/** A member plays a type when it does on at least this share of the humans' card mass (the rule's threshold). */
export const PLAYS_AT = 0.5;

/** The own-modes rule's weights on a family's type, tried in order; the first at which it plays its type is the family's. */
export const RULE_WEIGHTS = [0.5, 0.6, 0.7, 0.8, 0.9] as const;

export interface PanelDiversity {
  probes: { id: string; label: string }[];
  cardText: string; // the neutral card the `modes` columns are read on
  training: SimulatorModes; // the simulator the policy trains against
  members: MemberModes[];
  types: TypeModes[]; // the latent types with a defining reply at some probe state, in the population's order
}

export interface SimulatorModes {
  name: string;
  modes: string[]; // its most likely reply at each probe state, on the neutral card
  plays: number[]; // per entry of PanelDiversity.types: the largest card mass, over the type's probe states, on which it plays the type's defining reply
  playsAt: (string | null)[]; // … and the probe state of that mass (null: it plays the type nowhere)
}

export interface MemberModes extends SimulatorModes {
  agreement: number[]; // per probe state: the humans' card mass on which its mode is the training simulator's
  modeAgreement: number; // their mean over probe states
}

export interface TypeModes {
  name: string;
  probes: string[]; // probe states where its most likely reply differs from the humans' on some card
  replies: string[]; // its most likely reply at each of them, on the neutral card
  players: string[]; // members that play it on at least PLAYS_AT of the card mass
}

/** One simulator's most likely reply on every (probe state, card) of a grid: probe-major. */
export interface ModeTable {
  name: string;
  modes: Int32Array; // modes[j * cards + c]
}

/** What `summarizeModes` reads: modes on a grid of probe states × the humans' cards. */
export interface ModeInputs {
  probes: { id: string; label: string }[];
  weights: number[]; // the humans' card probabilities
  neutral: number; // the card the `modes` columns show
  cardText: string;
  actName(act: number): string;
  humans: Int32Array; // the humans' Bayes predictive's modes
  types: ModeTable[]; // each latent type's own modes
  training: ModeTable;
  members: ModeTable[];
}

/** Mode agreement and the types each simulator plays, from modes on the grid (a pure function). */
export function summarizeModes(x: ModeInputs): PanelDiversity {
  const C = x.weights.length;
  const J = x.probes.length;
  const total = x.weights.reduce((a, b) => a + b, 0); // summed as the masses are: all agreeing is exactly 1
  const at = (j: number, c: number) => j * C + c;
  const types = x.types.flatMap((t) => {
    const probes = x.probes.filter((_, j) =>
      x.weights.some((_, c) => t.modes[at(j, c)] !== x.humans[at(j, c)]),
    );
    return probes.length ? [{ table: t, probes }] : [];
  });
  // the largest card mass, over probe states, where `s` plays type t's reply and it is not the humans'
  const plays = (s: ModeTable, t: ModeTable) => {
    let best = { mass: 0, at: null as string | null };
    for (let j = 0; j < J; j++) {
      let mass = 0;
      for (let c = 0; c < C; c++) {
        const i = at(j, c);
        if (t.modes[i] !== x.humans[i] && s.modes[i] === t.modes[i]) mass += x.weights[c];
      }
      if (mass / total > best.mass) best = { mass: mass / total, at: x.probes[j].id };
    }
    return best;
  };
  const row = (s: ModeTable): SimulatorModes => {
    const p = types.map(({ table }) => plays(s, table));
    return {
      name: s.name,
      modes: x.probes.map((_, j) => x.actName(s.modes[at(j, x.neutral)])),
      plays: p.map((b) => b.mass),
      playsAt: p.map((b) => b.at),
    };
  };
  const members = x.members.map((m): MemberModes => {
    const agreement = x.probes.map((_, j) => {
      let mass = 0;
      for (let c = 0; c < C; c++)
        if (m.modes[at(j, c)] === x.training.modes[at(j, c)]) mass += x.weights[c];
      return mass / total;
    });
    return {
      ...row(m),
      agreement,
      modeAgreement: J ? agreement.reduce((a, b) => a + b, 0) / J : NaN,
    };
  });
  return {
    probes: x.probes,
    cardText: x.cardText,
    training: row(x.training),
    members,
    types: types.map(({ table, probes }, k) => ({
      name: table.name,
      probes: probes.map((p) => p.id),
      replies: probes.map((p) => x.actName(table.modes[at(x.probes.indexOf(p), x.neutral)])),
      players: members.filter((m) => m.plays[k] >= PLAYS_AT).map((m) => m.name),
    })),
  };
}

/** The card whose type posterior is closest (in KL) to the prior: it tells a simulator least. */
export function neutralCard(bench: Benchmark): number[] {
  const prior = bench.humans.types.map((t) => t.prior);
  let best = { card: [] as number[], kl: Infinity };
  for (const { card } of bench.humans.cardDistribution()) {
    const kl = klDivergence(bench.humans.posterior({ card, acts: [] }), prior);
    if (kl < best.kl) best = { card, kl };
  }
  return best.card;
}

/** The probe states at the user's turn, each on every card of the humans' distribution. */
interface Grid {
  probes: ProbeState[];
  weights: number[];
  neutral: number;
  dialogues: Dialogue[]; // probe-major
  allowed: number[][]; // per dialogue
}

function probeGrid(bench: Benchmark, probes: ProbeState[]): Grid {
  const index = new Map(bench.acts.map((a, i) => [a.name, i]));
  const cards = bench.humans.cardDistribution();
  const total = cards.reduce((a, c) => a + c.p, 0);
  const neutralKey = neutralCard(bench).join(",");
  const kept: ProbeState[] = [];
  const dialogues: Dialogue[] = [];
  for (const probe of probes) {
    const acts = probe.acts.map((n) => index.get(n));
    if (acts.some((a) => a === undefined)) continue;
    const row = cards.map(({ card }) => ({ card: [...card], acts: acts as number[] }));
    if (row.some((d) => bench.turn(d) !== "user")) continue;
    kept.push(probe);
    dialogues.push(...row);
  }
  return {
    probes: kept,
    weights: cards.map((c) => c.p / total),
    neutral: cards.findIndex((c) => c.card.join(",") === neutralKey),
    dialogues,
    allowed: dialogues.map((d) => bench.maskClasses[bench.userClass(d)].allowed),
  };
}

/** The most likely allowed reply of each row of a [rows, V] table (the first of equals). */
function modesOf(grid: Grid, p: ArrayLike<number>, V: number): Int32Array {
  return Int32Array.from(grid.allowed, (allowed, b) => {
    let best = allowed[0];
    for (const a of allowed) if (p[b * V + a] > p[b * V + best]) best = a;
    return best;
  });
}

/** The panel's modes against the training simulator's, at the benchmark's probe states. */
export async function panelDiversity(
  bench: Benchmark,
  probes: ProbeState[],
  training: UserSimulator,
  members: UserSimulator[],
): Promise<PanelDiversity> {
  const grid = probeGrid(bench, probes);
  const V = bench.acts.length;
  const table = async (s: UserSimulator): Promise<ModeTable> => ({
    name: s.name,
    modes: modesOf(grid, await s.distribution(grid.dialogues, []), V),
  });
  const types = bench.humans.types.map((t, z) => {
    const p = new Float64Array(grid.dialogues.length * V);
    grid.dialogues.forEach((d, b) => p.set(bench.humans.replyProbs(z, d), b * V));
    return { name: t.name, modes: modesOf(grid, p, V) };
  });
  const neutral = grid.dialogues[grid.neutral]?.card ?? [];
  const memberTables: ModeTable[] = [];
  for (const m of members) memberTables.push(await table(m));
  return summarizeModes({
    probes: grid.probes.map(({ id, label }) => ({ id, label })),
    weights: grid.weights,
    neutral: grid.neutral,
    cardText: neutral.map((c) => bench.acts[c].templates[0]).join(", "),
    actName: (a) => bench.acts[a].name,
    humans: (await table(new BayesPredictive(bench))).modes,
    types,
    training: await table(training),
    members: memberTables,
  });
}

/** How far a panel puts the modal user's script from the adaptive agent, next to humans. */
export interface PanelSeparation {
  dialogues: number; // per agent and opponent
  script: { id: string; label: string };
  adaptive: { id: string; label: string };
  humans: AgentPair;
  training: AgentPair & { name: string };
  members: (AgentPair & { name: string })[];
}

/** Success of the script and of the adaptive agent against one opponent. */
export interface AgentPair {
  script: number;
  adaptive: number;
}

/** Adaptive − script: with humans, with the training simulator, and averaged over the panel's members. */
export function separationGaps(s: PanelSeparation): {
  humans: number;
  training: number;
  panel: number;
} {
  const gap = (x: AgentPair) => x.adaptive - x.script;
  const panel = s.members.reduce((a, m) => a + gap(m), 0) / s.members.length;
  return { humans: gap(s.humans), training: gap(s.training), panel };
}

/** Success of an agent against a simulator over n dialogues, played in lockstep. */
export async function agentSuccess(
  bench: Benchmark,
  act: ReferenceAgent["act"],
  sim: UserSimulator,
  n: number,
  rng: Rng,
): Promise<number> {
  const personas = sim.personas(n, rng);
  const dialogues: Dialogue[] = personas.map((p) =>
    p.hidden ? { card: p.card, acts: [], hidden: p.hidden } : { card: p.card, acts: [] },
  );
  for (;;) {
    const users: number[] = [];
    let live = false;
    dialogues.forEach((d, b) => {
      const t = bench.turn(d);
      if (t === "done") return;
      live = true;
      if (t === "agent") d.acts.push(act(d, rng));
      else if (t === "env") d.acts.push(bench.envAct!(d, rng));
      else users.push(b);
    });
    if (!live) break;
    if (users.length === 0) continue;
    const r = await sim.reply(
      users.map((b) => dialogues[b]),
      users.map((b) => personas[b]),
      rng,
    );
    users.forEach((b, j) => dialogues[b].acts.push(r[j]));
  }
  return dialogues.filter((d) => bench.success(d)).length / n;
}

/**
 * The benchmark's two reference agents against humans, the training simulator and each member, n
 * dialogues each; every opponent meets the same random draws (the seed's), so differences between
 * members are theirs. Null where the benchmark has no separation agents.
 */
export async function panelSeparation(
  bench: Benchmark,
  agents: { script: ReferenceAgent; adaptive: ReferenceAgent },
  training: UserSimulator,
  members: UserSimulator[],
  n: number,
  seed: number,
): Promise<PanelSeparation> {
  const pair = async (sim: UserSimulator): Promise<AgentPair> => ({
    script: await agentSuccess(bench, agents.script.act, sim, n, Rng.seed(seed).fork(1)),
    adaptive: await agentSuccess(bench, agents.adaptive.act, sim, n, Rng.seed(seed).fork(2)),
  });
  const named = async (s: UserSimulator) => ({ name: s.name, ...(await pair(s)) });
  const out: PanelSeparation["members"] = [];
  for (const m of members) out.push(await named(m));
  return {
    dialogues: n,
    script: { id: agents.script.id, label: agents.script.label },
    adaptive: { id: agents.adaptive.id, label: agents.adaptive.label },
    humans: await pair(new Humans(bench)),
    training: await named(training),
    members: out,
  };
}

/** Exact (or large-sample) diagnostics of a panel: its families' exact simulators, no network. */
export interface ExactPanel {
  kind: PanelKind | null; // which of the benchmark's named panels it is; null: another
  members: string[];
  diversity: PanelDiversity;
  separation: PanelSeparation | null; // null where the benchmark has no separation agents
}

/** Dialogues per agent and opponent in the exact separation: standard error ≤ 0.005 on each success. */
export const EXACT_SEPARATION_DIALOGUES = 10000;
const EXACT_SEED = 1; // the same draws whatever the run's seeds

/** The training simulator's exact counterpart: the humans' Bayes predictive at simulator.gamma. */
export function exactTraining(config: ExperimentConfig): SharpenedPredictive {
  const bench = benchmarkFor(config);
  return new SharpenedPredictive("aligned simulator", bench, bench, config.simulator.gamma);
}

/** The config's network panel members as their families' exact simulators (LM and remote members have none). */
export function exactMembers(config: ExperimentConfig): SharpenedPredictive[] {
  const bench = benchmarkFor(config);
  return config.panel.flatMap((m) =>
    m.gamma === undefined || m.lm || m.remote
      ? []
      : [new SharpenedPredictive(m.name, bench, benchmarkFor(config, m.prior), m.gamma)],
  );
}

/** Which of its benchmark's named panels a config's panel is, if any. */
export function panelKindOf(config: ExperimentConfig): PanelKind | null {
  const panels = benchmarkModule(config.benchmark).panels ?? {};
  const mine = JSON.stringify(config.panel);
  for (const [kind, members] of Object.entries(panels))
    if (JSON.stringify(members) === mine) return kind as PanelKind;
  return null;
}

/** A config's panel on its families' exact simulators; `dialogues` per separation agent and opponent. */
export async function exactPanel(
  config: ExperimentConfig,
  dialogues = EXACT_SEPARATION_DIALOGUES,
): Promise<ExactPanel> {
  const bench = benchmarkFor(config);
  const module = benchmarkModule(config.benchmark);
  const training = exactTraining(config);
  const members = exactMembers(config);
  const agents = module.separationAgents?.(bench);
  return {
    kind: panelKindOf(config),
    members: members.map((m) => m.name),
    diversity: await panelDiversity(bench, module.probeStates, training, members),
    separation: agents
      ? await panelSeparation(bench, agents, training, members, dialogues, EXACT_SEED)
      : null,
  };
}

/** The own-modes rule for one minority type: the card mass it is played on at each weight, and the weight chosen. */
export interface RuleFamily {
  type: string;
  steps: { p: number; mass: number; probe: string | null }[]; // at each of RULE_WEIGHTS: the mass, and the probe state it is reached at
  p: number | null; // the smallest weight whose mass reaches PLAYS_AT; null: none does
}

/**
 * The own-modes rule on a config's world, computed exactly: for each type but the humans' most
 * common one, a family whose corpus puts weight p on it and the rest in the humans' proportions
 * (`leaningPrior`), collapsed, and the humans' card mass on which it plays the type's defining reply.
 */
export async function ownModesRule(config: ExperimentConfig): Promise<RuleFamily[]> {
  const bench = benchmarkFor(config);
  const module = benchmarkModule(config.benchmark);
  const prior = bench.humans.types.map((t) => t.prior);
  const modal = prior.indexOf(Math.max(...prior));
  const training = exactTraining(config);
  const out: RuleFamily[] = [];
  for (const [z, t] of bench.humans.types.entries()) {
    if (z === modal) continue;
    const steps: RuleFamily["steps"] = [];
    for (const p of RULE_WEIGHTS) {
      const family = new SharpenedPredictive(
        `${t.name} at ${p}`,
        bench,
        benchmarkFor(config, leaningPrior(prior, z, p)),
        config.simulator.gamma,
      );
      const d = await panelDiversity(bench, module.probeStates, training, [family]);
      const k = d.types.findIndex((x) => x.name === t.name);
      steps.push(
        k < 0
          ? { p, mass: 0, probe: null }
          : { p, mass: d.members[0].plays[k], probe: d.members[0].playsAt[k] },
      );
    }
    out.push({ type: t.name, steps, p: steps.find((s) => s.mass >= PLAYS_AT)?.p ?? null });
  }
  return out;
}
