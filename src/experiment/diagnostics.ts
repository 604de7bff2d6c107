// Simulator diagnostics (docs/architecture.md#metrics): how collapsed each simulator is and how much of the human
// behaviour it covers. Every simulator talks to the same fixed base policy; its sampled replies
// give γ by maximum likelihood against its own known reference network, SCOPE's three rough
// estimators, reference-aware estimators, and behavioural-mode coverage of the modes humans show.
// The reference's KL to the exact Bayes predictive says how well pretraining learned humans.
// Reply tables show every simulator's reply distribution at a few fixed, readable dialogue states
// next to the Bayes predictive and each latent type's own replies (the app's Simulators page).
// Panel members that are real LMs have no reference network and no built-in γ: their γ fields
// (true, MLE, reference-aware) are null; SCOPE's reference-free estimators, reply entropy, mode
// coverage and reply-table rows are measured as for every other simulator.
import { benchmarkFor, benchmarkModule } from "../benchmarks/registry";
import type { Benchmark, Dialogue, ProbeState, Speaker } from "../benchmarks/types";
import type { EngineBackend, EngineModel } from "../engine/backend";
import { Rng } from "../engine/random";
import {
  attemptEstimate,
  gammaMLE,
  scopeGamma,
  top1Gamma,
  zipfGamma,
  entropyRatioGamma,
  type GammaContext,
} from "../metrics/gamma";
import { klDivergence, modeCoverage, unionCoverage } from "../metrics/diversity";
import { NeuralSimulator } from "../simulators/neural";
import { BayesPredictive, Humans, type UserSimulator } from "../simulators/simulator";
import { VerbalizedSampling, vsExponent } from "../simulators/vs";
import type { ExperimentConfig } from "./config";
import type { Corpora } from "./corpora";
import { CorpusTables, corpusPanel, lmEntries } from "./corpus-simulators";
import { openLmPanel, type LmPanel } from "./lm-simulators";
import { modelOptions, referenceWorld, type PretrainedSet } from "./pretrain";
import {
  exactPanel,
  neutralCard,
  panelDiversity,
  panelKindOf,
  panelSeparation,
  type ExactPanel,
  type PanelDiversity,
  type PanelSeparation,
} from "./panel-diagnostics";
import { evaluate } from "./runner";

export interface SimulatorDiagnostics {
  name: string;
  role: "reference" | "aligned" | "ensemble" | "vs" | "panel" | "humans";
  trueGamma: number | null; // the γ it was built with (VS: its verbalized exponent)
  gammaMLE: { gamma: number; se: number } | null; // against its own reference network
  scope: { zipf: number; concentration: number; entropy: number; mean: number } | null; // SCOPE's estimators (reference-free)
  referenceAware: { zipf: number | null; top1: number | null; entropyRatio: number | null } | null; // null: not computable on these samples (see `unavailable`)
  /** Estimators that could not be computed on this simulator's samples, each with its reason (absent when all could). */
  unavailable?: string[];
  modeCoverage: number; // fraction of the human modes with ≥ 5 sampled dialogues
  replyEntropy: number | null; // mean entropy (nats) of its reply distribution over visited states; null for humans (no distribution without a latent type)
}

/** One simulator's (or the oracle's, or one latent type's) reply distribution at a state. */
export interface ReplyRow {
  name: string;
  role: SimulatorDiagnostics["role"] | "bayes" | "type"; // "type": humans of one latent type
  probs: number[]; // over ReplyTable.acts, 4 significant digits
}

/** Reply distributions at one representative dialogue state. */
export interface ReplyTable {
  id: string; // stable key, e.g. "after-emotion"
  label: string; // the state in words, e.g. "after an emotional appeal"
  card: number[]; // the persona card the simulators see (a neutral one: posterior closest to the prior)
  cardText: string;
  dialogue: { speaker: Speaker; act: string; text: string }[]; // so far, first template of each act
  acts: string[]; // the user acts allowed next: the columns of every row
  posterior: number[]; // p(latent type | card, dialogue), in the population's type order
  rows: ReplyRow[];
}

export interface DiagnosticsReport {
  seed: number;
  dialogues: number; // sampled per simulator
  humanModes: number; // behavioural modes humans show (≥ 5 dialogues each)
  referenceKL: number; // mean KL(Bayes predictive ‖ reference simulator) over human dialogue states
  alignedKL: number; // the same for the aligned simulator
  // with simulator.referenceWorld: the same KL for the exact Bayes predictive of the population the
  // reference learned from, i.e. how far its corpus' users are from the humans (absent: the oracle setting)
  referenceWorldKL?: number;
  simulators: SimulatorDiagnostics[];
  unions: { name: string; members: string[]; coverage: number }[];
  replyTables?: ReplyTable[]; // absent in reports written before reply tables existed
  adaptiveProbe?: AdaptiveProbe; // absent in reports written before it existed
  /** The run's held-out panel on its networks: modes against the aligned simulator's, and separation (absent in older reports). */
  panel?: NetworkPanel;
  /** Each of the benchmark's named panels on its families' exact simulators, side by side (absent in older reports). */
  exactPanels?: ExactPanel[];
}

/**
 * At most this many dialogues per agent and opponent in the networks' separation: every turn of
 * every dialogue is a network pass for each member, the dearest part of the panel's diagnostics,
 * and 256 bound each success's standard error by 3 points.
 */
export const NETWORK_SEPARATION_DIALOGUES = 256;

/** The run's own panel as pretrained: whose user each member collapsed onto, and how far apart it puts the reference agents. */
export interface NetworkPanel {
  diversity: PanelDiversity;
  separation: PanelSeparation | null; // its network members only (null where the benchmark has no separation agents)
}

/**
 * The reference simulator where an adaptive persuader goes: the exact adapt-once persuader (it
 * opens, reads the reply and the card, then follows a plan; src/benchmarks/persuasion/ceilings.ts)
 * plays humans and, separately, the reference. VS samples the reference, so a policy trained
 * with VS can only learn to adapt if the reference rewards adapting as humans do.
 */
export interface AdaptiveProbe {
  persuader: string; // in words
  dialogues: number; // with each opponent
  humanSuccess: number;
  referenceSuccess: number;
  klTalk: number; // mean KL(Bayes predictive ‖ reference) over talk turns of the dialogues with humans
  klDecision: number | null; // the same over the decision turns (a user act that ends the dialogue with its outcome, e.g. a donation); null where the probe met none
}

/** Plays `persuader` with humans and with `sim` (n dialogues each, in lockstep batches). */
export async function adaptiveProbe(
  bench: Benchmark,
  persuader: (d: Dialogue) => number,
  sim: UserSimulator,
  n: number,
  rng: Rng,
): Promise<Omit<AdaptiveProbe, "persuader">> {
  const V = bench.acts.length;
  const humans = new Humans(bench);
  const oracle = new BayesPredictive(bench);
  const kl = { talk: 0, talkN: 0, decision: 0, decisionN: 0 };
  const playAll = async (opponent: "humans" | "sim") => {
    const personas = humans.personas(n, rng);
    const dialogues: Dialogue[] = personas.map((p) =>
      p.hidden ? { card: p.card, acts: [], hidden: p.hidden } : { card: p.card, acts: [] },
    );
    for (;;) {
      const live = dialogues.flatMap((d, b) => (bench.turn(d) === "done" ? [] : [b]));
      if (live.length === 0) break;
      const users = live.filter((b) => bench.turn(dialogues[b]) === "user");
      for (const b of live) {
        const t = bench.turn(dialogues[b]);
        if (t === "agent") dialogues[b].acts.push(persuader(dialogues[b]));
        else if (t === "env") dialogues[b].acts.push(bench.envAct!(dialogues[b], rng));
      }
      if (users.length === 0) continue;
      const states = users.map((b) => dialogues[b]);
      const q = await sim.distribution(
        states,
        users.map((b) => personas[b]),
      );
      if (opponent === "humans") {
        const p = await oracle.distribution(states);
        states.forEach((_, j) => {
          const pj = p.subarray(j * V, (j + 1) * V);
          const k = klDivergence(pj, q.subarray(j * V, (j + 1) * V));
          const decision = bench.acts[pj.indexOf(Math.max(...pj))].kind === "outcome";
          if (decision) [kl.decision, kl.decisionN] = [kl.decision + k, kl.decisionN + 1];
          else [kl.talk, kl.talkN] = [kl.talk + k, kl.talkN + 1];
        });
        const r = await humans.reply(
          states,
          users.map((b) => personas[b]),
          rng,
        );
        users.forEach((b, j) => dialogues[b].acts.push(r[j]));
      } else {
        users.forEach((b, j) =>
          dialogues[b].acts.push(rng.categorical(q.subarray(j * V, (j + 1) * V))),
        );
      }
    }
    return dialogues.filter((d) => bench.success(d)).length / n;
  };
  const humanSuccess = await playAll("humans");
  const referenceSuccess = await playAll("sim");
  return {
    dialogues: n,
    humanSuccess,
    referenceSuccess,
    klTalk: kl.talk / Math.max(1, kl.talkN),
    klDecision: kl.decisionN ? kl.decision / kl.decisionN : null,
  };
}

const round4 = (x: number) => Number(x.toPrecision(4));

/** Reply tables at the benchmark's probe states for the given simulators (states whose acts the benchmark lacks, or that are not at the user's turn, are skipped). */
export async function replyTables(
  bench: Benchmark,
  probes: ProbeState[],
  sims: { sim: UserSimulator; role: SimulatorDiagnostics["role"] }[],
): Promise<ReplyTable[]> {
  const index = new Map(bench.acts.map((a, i) => [a.name, i]));
  const card = neutralCard(bench);
  const cardText = card.map((c) => bench.acts[c].templates[0]).join(", ");
  const states = probes.flatMap((s) => {
    const acts = s.acts.map((n) => index.get(n));
    if (acts.some((a) => a === undefined)) return [];
    const d: Dialogue = { card, acts: acts as number[] };
    return bench.turn(d) === "user" ? [{ ...s, d }] : [];
  });
  const dialogues = states.map((s) => s.d);
  const V = bench.acts.length;
  const oracle = await new BayesPredictive(bench).distribution(dialogues);
  const dists: { name: string; role: SimulatorDiagnostics["role"]; p: Float64Array }[] = [];
  for (const { sim, role } of sims)
    dists.push({ name: sim.name, role, p: await sim.distribution(dialogues, []) });
  return states.map((s, j) => {
    const allowed = allowedOf(bench, s.d);
    const row = (p: ArrayLike<number>, off = 0) => allowed.map((a) => round4(p[off + a]));
    return {
      id: s.id,
      label: s.label,
      card: [...card],
      cardText,
      dialogue: bench.render(s.d),
      acts: allowed.map((a) => bench.acts[a].name),
      posterior: Array.from(bench.humans.posterior(s.d), round4),
      rows: [
        { name: "Bayes predictive (humans)", role: "bayes" as const, probs: row(oracle, j * V) },
        ...dists.map((x) => ({ name: x.name, role: x.role, probs: row(x.p, j * V) })),
        ...bench.humans.types.map((t, z) => ({
          name: `humans: ${t.name}`,
          role: "type" as const,
          probs: row(bench.humans.replyProbs(z, s.d)),
        })),
      ],
    };
  });
}

interface Samples {
  dialogues: Dialogue[];
  contexts: Map<string, { d: Dialogue; counts: Map<number, number> }>; // user-turn states and the replies drawn there
}

async function sample(
  bench: Benchmark,
  policy: EngineModel,
  sim: UserSimulator,
  n: number,
  rng: Rng,
  cap: number,
): Promise<Samples> {
  const { played } = await evaluate(bench, policy, sim, n, rng, 1, cap);
  const contexts: Samples["contexts"] = new Map();
  for (const d of played.dialogues) {
    for (let i = 1; i <= d.acts.length; i++) {
      const prefix = { card: d.card, acts: d.acts.slice(0, i - 1) };
      if (bench.turn(prefix) !== "user") continue;
      const key = `${prefix.card.join(",")}|${prefix.acts.join(",")}`;
      let c = contexts.get(key);
      if (!c) contexts.set(key, (c = { d: prefix, counts: new Map() }));
      c.counts.set(d.acts[i - 1], (c.counts.get(d.acts[i - 1]) ?? 0) + 1);
    }
  }
  return { dialogues: played.dialogues, contexts };
}

function allowedOf(bench: Benchmark, d: Dialogue): number[] {
  return bench.maskClasses[bench.userClass(d)].allowed;
}

/** γ estimates from sampled replies; without a reference network only SCOPE's reference-free ones. */
async function gammaOf(bench: Benchmark, s: Samples, reference: NeuralSimulator | null) {
  const states = [...s.contexts.values()];
  const unavailable: string[] = [];
  if (!reference)
    return {
      gammaMLE: null,
      scope: attemptEstimate("SCOPE's estimators", unavailable, () =>
        scopeEstimates(bench, states),
      ),
      referenceAware: null,
      unavailable,
    };
  const ref = await reference.distribution(
    states.map((c) => c.d),
    undefined,
    1,
  );
  const V = bench.acts.length;
  const mle: GammaContext[] = [];
  const aware: { refLogp: number[]; sim: number[] }[] = [];
  states.forEach((c, j) => {
    const allowed = allowedOf(bench, c.d);
    const refLogp = allowed.map((a) => Math.log(ref[j * V + a]));
    const counts = allowed.map((a) => c.counts.get(a) ?? 0);
    mle.push({ refLogp, counts });
    const total = counts.reduce((x, y) => x + y, 0);
    if (total >= 5) aware.push({ refLogp, sim: counts });
  });
  const fit = attemptEstimate("γ MLE", unavailable, () => gammaMLE(mle));
  // every sampled reply the reference's most likely one: the likelihood rises without bound
  const unbounded = fit !== null && !Number.isFinite(fit.gamma);
  if (unbounded)
    unavailable.push(
      `γ MLE: every sampled reply is the reference's most likely one at its state, so the likelihood grows without bound (γ̂ = ∞); more diagnostic dialogues (eval.diagnosticSamples, ${s.dialogues.length} here) would bound it`,
    );
  return {
    gammaMLE: fit && !unbounded ? { gamma: fit.gamma, se: fit.se } : null,
    scope: attemptEstimate("SCOPE's estimators", unavailable, () => scopeEstimates(bench, states)),
    referenceAware:
      aware.length > 0
        ? {
            zipf: attemptEstimate(
              "reference-aware Zipf",
              unavailable,
              () => zipfGamma(aware).gamma,
            ),
            top1: attemptEstimate(
              "reference-aware top-1",
              unavailable,
              () => top1Gamma(aware).gamma,
            ),
            entropyRatio: attemptEstimate(
              "reference-aware entropy ratio",
              unavailable,
              () => entropyRatioGamma(aware).gamma,
            ),
          }
        : null,
    unavailable,
  };
}

/** SCOPE's rough estimators over the states with ≥ 5 sampled replies (null when there are none). */
function scopeEstimates(
  bench: Benchmark,
  states: { d: Dialogue; counts: Map<number, number> }[],
): SimulatorDiagnostics["scope"] {
  const scope = states
    .map((c) => allowedOf(bench, c.d).map((a) => c.counts.get(a) ?? 0))
    .filter((counts) => counts.reduce((x, y) => x + y, 0) >= 5);
  const rough = scope.length > 0 ? scopeGamma(scope) : null;
  return (
    rough && {
      zipf: rough.zipf,
      concentration: rough.concentration,
      entropy: rough.entropy,
      mean: rough.mean,
    }
  );
}

async function meanReplyEntropy(bench: Benchmark, s: Samples, sim: UserSimulator): Promise<number> {
  const states = [...s.contexts.values()].map((c) => c.d);
  if (states.length === 0) return 0;
  const V = bench.acts.length;
  const p = await sim.distribution(states, []);
  let h = 0;
  for (let j = 0; j < states.length; j++)
    for (let v = 0; v < V; v++) if (p[j * V + v] > 0) h -= p[j * V + v] * Math.log(p[j * V + v]);
  return h / states.length;
}

export async function diagnose(
  backend: EngineBackend,
  config: ExperimentConfig,
  pretrained: PretrainedSet,
  corpora: Corpora = {}, // the corpora of corpus panel members, by hash (corpora.ts)
): Promise<DiagnosticsReport> {
  const bench = benchmarkFor(config);
  const opts = modelOptions(bench, config);
  const rng = Rng.seed(pretrained.seed).fork(300);
  const n = config.eval.diagnosticSamples;
  const owned: EngineModel[] = [];
  let lmPanel: LmPanel | null = null;
  const load = (ck: Parameters<EngineBackend["createModel"]>[0]) => {
    const m = backend.createModel(ck, opts);
    owned.push(m);
    return m;
  };
  try {
    const policy = load(pretrained.basePolicy.checkpoint);
    const gamma = config.simulator.gamma;
    const refModel = load(pretrained.reference.checkpoint);
    const reference = new NeuralSimulator("reference simulator", bench, refModel, 1, true);
    const aligned = new NeuralSimulator("aligned simulator", bench, refModel, gamma, true);
    const vs = new VerbalizedSampling(bench, aligned, config.vs);
    const entries: {
      sim: UserSimulator;
      role: SimulatorDiagnostics["role"];
      trueGamma: number | null;
      ref: NeuralSimulator | null;
    }[] = [
      { sim: new Humans(bench), role: "humans", trueGamma: null, ref: null },
      { sim: reference, role: "reference", trueGamma: 1, ref: reference },
      { sim: aligned, role: "aligned", trueGamma: gamma, ref: reference },
      { sim: vs, role: "vs", trueGamma: vsExponent(gamma, config.vs.fidelity), ref: reference },
    ];
    // member 0 is the aligned simulator above; the others at their own γ (another family's, or simulator.gamma)
    for (const e of pretrained.ensemble.slice(1)) {
      const m = load(e.result.checkpoint);
      const g = e.gamma ?? gamma;
      entries.push({
        sim: new NeuralSimulator(e.name, bench, m, g, true),
        role: "ensemble",
        trueGamma: g,
        ref: new NeuralSimulator("", bench, m, 1, true),
      });
    }
    lmPanel = await openLmPanel(bench, config, lmEntries(pretrained.panel), backend.name);
    const corpusMembers = corpusPanel(new CorpusTables(bench, corpora), pretrained.panel);
    for (const p of pretrained.panel) {
      if (!("result" in p)) {
        entries.push({
          sim: "corpus" in p ? corpusMembers.get(p.name)! : lmPanel.simulators.get(p.name)!,
          role: "panel",
          trueGamma: null,
          ref: null,
        });
        continue;
      }
      const m = load(p.result.checkpoint);
      entries.push({
        sim: new NeuralSimulator(p.name, bench, m, p.gamma, true),
        role: "panel",
        trueGamma: p.gamma,
        ref: new NeuralSimulator("", bench, m, 1, true),
      });
    }

    const cap = opts.capacity;
    const samples = new Map<string, Samples>();
    for (const e of entries)
      samples.set(e.sim.name, await sample(bench, policy, e.sim, n, rng.fork(samples.size), cap));
    const modesOf = (name: string) => samples.get(name)!.dialogues.map((d) => bench.mode(d));
    const humanCounts = new Map<string, number>();
    for (const m of modesOf("humans")) humanCounts.set(m, (humanCounts.get(m) ?? 0) + 1);
    const humanModes = [...humanCounts.entries()].filter(([, c]) => c >= 5).map(([m]) => m); // covered by humans themselves

    // KL of the reference (and the aligned simulator) to the exact Bayes predictive, over human dialogue states
    const oracle = new BayesPredictive(bench);
    const humanStates = [...samples.get("humans")!.contexts.values()].map((c) => c.d);
    const [bayes, refP, alignedP] = [
      await oracle.distribution(humanStates),
      await reference.distribution(humanStates),
      await aligned.distribution(humanStates),
    ];
    const users = config.simulator.referenceWorld
      ? new BayesPredictive(
          benchmarkFor({ benchmark: config.benchmark, world: referenceWorld(config) }),
        )
      : null;
    const usersP = users ? await users.distribution(humanStates) : null;
    const V = bench.acts.length;
    const meanKL = (q: Float64Array) =>
      humanStates.reduce(
        (s, _, j) =>
          s + klDivergence(bayes.subarray(j * V, (j + 1) * V), q.subarray(j * V, (j + 1) * V)),
        0,
      ) / humanStates.length;

    const simulators: SimulatorDiagnostics[] = [];
    for (const e of entries) {
      const s = samples.get(e.sim.name)!;
      const g = e.role === "humans" ? null : await gammaOf(bench, s, e.ref);
      simulators.push({
        name: e.sim.name,
        role: e.role,
        trueGamma: e.trueGamma,
        gammaMLE: g?.gammaMLE ?? null,
        scope: g?.scope ?? null,
        referenceAware: g?.referenceAware ?? null,
        ...(g?.unavailable.length ? { unavailable: g.unavailable } : {}),
        modeCoverage: humanModes.length ? modeCoverage(modesOf(e.sim.name), humanModes).covered : 0,
        replyEntropy: e.role === "humans" ? null : await meanReplyEntropy(bench, s, e.sim),
      });
    }
    const module = benchmarkModule(config.benchmark);
    const adaptive = module.adaptiveProbe?.(bench);
    const panelSims = entries.filter((e) => e.role === "panel");
    const agents = module.separationAgents?.(bench);
    const panel: NetworkPanel = {
      diversity: await panelDiversity(
        bench,
        module.probeStates,
        aligned,
        panelSims.map((e) => e.sim),
      ),
      separation: agents
        ? await panelSeparation(
            bench,
            agents,
            aligned,
            panelSims.filter((e) => e.ref !== null).map((e) => e.sim),
            Math.min(n, NETWORK_SEPARATION_DIALOGUES),
            pretrained.seed,
          )
        : null,
    };
    const union = (name: string, members: string[]) => ({
      name,
      members,
      coverage: humanModes.length ? unionCoverage(members.map(modesOf), humanModes).covered : 0,
    });
    const ensembleNames = [
      aligned.name,
      ...entries.filter((e) => e.role === "ensemble").map((e) => e.sim.name),
    ];
    const panelNames = entries.filter((e) => e.role === "panel").map((e) => e.sim.name);
    return {
      seed: pretrained.seed,
      dialogues: n,
      humanModes: humanModes.length,
      referenceKL: meanKL(refP),
      alignedKL: meanKL(alignedP),
      ...(usersP ? { referenceWorldKL: meanKL(usersP) } : {}),
      simulators,
      unions: [
        union("ensemble (aligned simulators)", ensembleNames),
        union("held-out panel", panelNames),
      ],
      // the co-training pool exists only while its condition trains, so it has no row here
      replyTables: await replyTables(
        bench,
        module.probeStates,
        entries.filter((e) => e.role !== "humans"),
      ),
      panel,
      exactPanels: await exactPanels(config, n),
      ...(adaptive
        ? {
            adaptiveProbe: {
              persuader: adaptive.description,
              ...(await adaptiveProbe(bench, (d) => adaptive.act(d), reference, n, rng.fork(9000))),
            },
          }
        : {}),
    };
  } finally {
    for (const m of owned) m.dispose();
    await lmPanel?.dispose();
  }
}

/**
 * Every named panel of the config's benchmark (BenchmarkModule.panels) on its families' exact
 * simulators, side by side, with n dialogues per separation agent and opponent; the config's own
 * panel last where it is none of them.
 */
export async function exactPanels(config: ExperimentConfig, n: number): Promise<ExactPanel[]> {
  const named = Object.values(benchmarkModule(config.benchmark).panels ?? {}).map((panel) => ({
    ...config,
    panel: structuredClone(panel) as ExperimentConfig["panel"],
  }));
  const own = panelKindOf(config) === null && config.panel.some((m) => !m.lm && !m.remote);
  const out: ExactPanel[] = [];
  for (const c of own ? [...named, config] : named) out.push(await exactPanel(c, n));
  return out;
}
