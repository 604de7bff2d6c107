// The paper-style table of a RunReport as text: what `collapse-lab run` prints, and what a Ray
// job's driver writes into the job's log.
import { benchmarkModule } from "../benchmarks/registry";
import type { RunReport } from "./experiment";
import { MIN_CLAIM_SEEDS, type Summary } from "./stats";
import { SCOPE_MODE_MIN } from "../metrics/strategy";
import { pct, points, pValue, seconds, table } from "../util/format";
import { REMOTE_COUNTERS, zeroCounters, type RemoteSimulatorStats } from "../simulators/remote";
import { addUsage, BACKOFF_LEVELS, emptyUsage, type BackoffUsage } from "../simulators/empirical";
import type { DiagnosticsReport } from "./diagnostics";
import { panelKindOf, separationGaps } from "./panel-diagnostics";
import { diversityLines, separationLines } from "./panel-text";

const ci = (s: Summary, asPct: boolean) => {
  const f = (x: number) => (asPct ? points(x) : x.toFixed(2));
  return s.n > 1 ? `${f(s.mean)} [${f(s.lo)}, ${f(s.hi)}]` : f(s.mean);
};

export function formatReport(r: RunReport): string {
  const rows = [
    ["condition", "train-sim success %", "held-out success %", "human success %", "policy entropy"],
  ];
  for (const c of r.conditions) {
    rows.push([
      c.id,
      ci(c.summary.trainSuccess, true),
      ci(c.summary.heldoutSuccess, true),
      ci(c.summary.humanSuccess, true),
      ci(c.summary.policyEntropy, false),
    ]);
  }
  const lines = [
    ...rescoringLines(r),
    `${r.world.benchmark} — ${r.config.seeds} seed(s), γ = ${r.config.simulator.gamma}, ${r.config.seeds > 1 ? "mean [95% Student-t interval over seeds, not cut at the metric's range]" : "one seed: means, no interval"}`,
    table(rows),
  ];
  const diffs = r.comparisons;
  if (diffs.length && r.config.seeds > 1) {
    lines.push(
      "",
      "paired differences vs single: mean [95% Student-t interval over seeds] and p, the two-sided sign-flip permutation p-value over seeds (success in points, entropy in nats)",
    );
    lines.push(
      table([
        ["comparison", "held-out", "humans", "policy entropy"],
        ...[...new Set(diffs.map((d) => d.a))].map((a) => {
          const f = (m: string, scale: number, digits: number) => {
            const d = diffs.find((x) => x.a === a && x.metric === m)?.difference;
            return d
              ? `${(scale * d.mean).toFixed(digits)} [${(scale * d.lo).toFixed(digits)}, ${(scale * d.hi).toFixed(digits)}] p ${pValue(d.p)}${d.excludesZero ? " *" : ""}`
              : "–";
          };
          return [
            `${a} − single`,
            f("heldoutSuccess", 100, 1),
            f("humanSuccess", 100, 1),
            f("policyEntropy", 1, 2),
          ];
        }),
      ]),
      `* the interval excludes 0, said only with ${MIN_CLAIM_SEEDS} seeds or more (with 3, no sign pattern gives p below 0.25). The paper's diversity claim: vs, cotrain and population keep a higher policy entropy than single; ensemble's is reported, not claimed.`,
    );
  }
  lines.push(...strategyLines(r));
  const held = diffs.filter((d) => d.metric === "heldoutSuccess" && d.byMember && d.bootstrap);
  if (held.length && r.config.seeds > 1) {
    const members = Object.keys(held[0].byMember!);
    const cell = (d: { mean: number; lo: number; hi: number }) =>
      `${points(d.mean)} [${points(d.lo)}, ${points(d.hi)}]`;
    lines.push(
      "",
      `held-out by panel member, vs single (points; 95% Student-t interval over seeds), and the pooled difference's 95% hierarchical bootstrap interval (seeds, then members; ${held[0].bootstrap!.draws} draws)`,
      table([
        ["comparison", ...members, "pooled (bootstrap)"],
        ...held.map((d) => [
          `${d.a} − single`,
          ...members.map((m) => (d.byMember![m] ? cell(d.byMember![m]) : "–")),
          cell({ mean: d.difference.mean, lo: d.bootstrap!.lo, hi: d.bootstrap!.hi }),
        ]),
      ]),
    );
  }
  const onPolicy = r.conditions.flatMap((c) => {
    const kls = c.seeds
      .map((s) => s.referenceKLOnPolicy)
      .filter((x): x is number => typeof x === "number");
    return kls.length
      ? [`${c.id} ${(kls.reduce((a, b) => a + b, 0) / kls.length).toFixed(3)}`]
      : [];
  });
  if (onPolicy.length)
    lines.push(
      "",
      `KL(Bayes ‖ reference) on the states each policy reaches with humans (nats, mean over seeds): ${onPolicy.join(", ")}`,
    );
  const d = r.simulators[0];
  if (d) {
    lines.push(
      "",
      `simulators (seed ${d.seed}): KL(Bayes ‖ reference) = ${d.referenceKL.toFixed(3)} nats over the states of the base policy's dialogues with humans; human modes ${d.humanModes}`,
      ...(d.referenceWorldKL !== undefined
        ? [
            `the reference learned from another population than the humans (simulator.referenceWorld ${JSON.stringify(r.config.simulator.referenceWorld)}): KL(Bayes of the humans ‖ Bayes of that population) = ${d.referenceWorldKL.toFixed(3)} nats over the same states`,
          ]
        : []),
    );
    const a = d.adaptiveProbe;
    if (a) {
      const agent = benchmarkModule(r.config.benchmark).roles.agent.toLowerCase();
      lines.push(
        `reference where an adaptive ${agent} goes (${a.persuader}): KL(Bayes ‖ reference) ${a.klTalk.toFixed(3)} nats on talk turns${a.klDecision !== null ? `, ${a.klDecision.toFixed(3)} on the decision` : ""}; ` +
          `it wins ${pct(a.humanSuccess, 1)} with humans, ${pct(a.referenceSuccess, 1)} against the reference (VS can only teach adapting as far as these agree)`,
      );
    }
    lines.push(
      table([
        ["simulator", "true γ", "γ (MLE)", "SCOPE γ (mean)", "mode coverage %"],
        ...d.simulators.map((s) => [
          s.name,
          s.trueGamma === null ? "–" : s.trueGamma.toFixed(1),
          s.gammaMLE ? `${s.gammaMLE.gamma.toFixed(2)} ± ${s.gammaMLE.se.toFixed(2)}` : "–",
          s.scope ? s.scope.mean.toFixed(2) : "–",
          points(s.modeCoverage, 0),
        ]),
        ...d.unions.map((u) => [`∪ ${u.name}`, "", "", "", points(u.coverage, 0)]),
      ]),
    );
    for (const s of d.simulators)
      for (const why of s.unavailable ?? []) lines.push(`  – ${s.name}: ${why}`);
    lines.push(...panelLines(d, panelKindOf(r.config)));
  }
  for (const e of r.diagnosticsErrors ?? [])
    lines.push(
      "",
      `the simulator diagnostics of seed ${e.seed} failed: ${e.message} (every condition's results above are kept)`,
    );
  const refs = r.world.referenceLines ?? [];
  if (refs.length) {
    lines.push("", "reference agents with humans (exact where the world allows):");
    for (const l of refs) lines.push(`  ${l.label}: ${pct(l.humanSuccess, 1)} — ${l.description}`);
  }
  lines.push(...remoteLines(r));
  lines.push(...corpusLines(r));
  lines.push("", `calibration against ${r.calibration.source}`);
  lines.push(
    table([
      ["statistic", "real", "fitted", "tolerance"],
      ...r.calibration.rows.map((c) => [
        c.name,
        c.real.toFixed(3),
        c.fitted.toFixed(3),
        `±${c.tolerance}`,
      ]),
    ]),
  );
  const st = r.store;
  const from = st
    ? st.location
      ? `: ${st.loaded} of ${st.loaded + st.trained} models from the store`
      : ": every model live"
    : "";
  lines.push(
    "",
    `wall time ${seconds(r.timing.totalMs)} (pretraining ${seconds(r.timing.pretrainMs)}${from}, training + evaluation ${seconds(r.timing.trainMs)})`,
  );
  return lines.join("\n");
}

/** What a re-scoring report re-scored (`collapse-lab evaluate`), above its table. */
function rescoringLines(r: RunReport): string[] {
  const x = r.rescoring;
  if (!x) return [];
  const changed = x.changed.length
    ? x.changed.map((c) => `${c.path} ${c.trained} → ${c.evaluated}`).join("; ")
    : "the run's own evaluation settings";
  return [
    `re-scoring of the policies of ${x.report} (${x.preset ?? "no preset"}) from ${x.policies}: ${changed}`,
    `kept from the run, not measured again: ${x.kept.join("; ")}${x.notes.length ? `; ${x.notes.join("; ")}` : ""}`,
    "",
  ];
}

/** Strategy diversity with humans (the final evaluation), where the report has it. */
function strategyLines(r: RunReport): string[] {
  const has = r.conditions.filter((c) => c.summary.strategyEntropy && c.summary.strategyTypeInfo);
  if (!has.length) return [];
  const f = (s: Summary | undefined, digits: number) =>
    !s
      ? "–"
      : s.n > 1
        ? `${s.mean.toFixed(digits)} [${s.lo.toFixed(digits)}, ${s.hi.toFixed(digits)}]`
        : s.mean.toFixed(digits);
  const n = r.config.eval.episodes;
  const distinct = (c: (typeof has)[number]) => {
    const xs = c.seeds.map((s) => s.strategyDetail?.distinct ?? NaN);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  const lines = [
    "",
    `strategies with humans (final evaluation; a strategy: ${benchmarkModule(r.config.benchmark).strategy.description}), in nats; modes: strategies seen ≥ ${SCOPE_MODE_MIN} times`,
    table([
      [
        "condition",
        "policy entropy / turn",
        "strategy entropy | task",
        "I(strategy; type | task), bias-corrected",
        "strategy modes",
        "distinct strategies",
      ],
      ...has.map((c) => [
        c.id,
        f(c.summary.policyEntropy, 2),
        f(c.summary.strategyEntropy, 2),
        f(c.summary.strategyTypeInfo, 3),
        f(c.summary.strategyModes, 1),
        Number.isFinite(distinct(c)) ? `${Math.round(distinct(c))} of ${n}` : "–",
      ]),
    ]),
  ];
  // plug-in entropy cannot exceed log n: with nearly every dialogue its own strategy it reads n
  const saturated = has.filter((c) => distinct(c) > n / 2).map((c) => c.id);
  if (saturated.length)
    lines.push(
      `${saturated.join(", ")}: more distinct strategies than half the ${n} dialogues, so the strategy entropy is near its ceiling (the log of the dialogues) and reads their number more than the policy; more dialogues (evaluate --set eval.episodes=…) raise the ceiling`,
    );
  const diffs = r.comparisons.filter(
    (d) => d.metric === "strategyEntropy" || d.metric === "strategyTypeInfo",
  );
  if (diffs.length && r.config.seeds > 1) {
    const cell = (a: string, m: string, digits: number) => {
      const d = diffs.find((x) => x.a === a && x.metric === m)?.difference;
      return d
        ? `${d.mean.toFixed(digits)} [${d.lo.toFixed(digits)}, ${d.hi.toFixed(digits)}] p ${pValue(d.p)}${d.excludesZero ? " *" : ""}`
        : "–";
    };
    lines.push(
      table([
        ["comparison", "strategy entropy | task", "I(strategy; type | task)"],
        ...[...new Set(diffs.map((d) => d.a))].map((a) => [
          `${a} − single`,
          cell(a, "strategyEntropy", 2),
          cell(a, "strategyTypeInfo", 3),
        ]),
      ]),
    );
  }
  return lines;
}

/** The report's lines on remote panel members: how they scored and what it cost, summed over units. */
export function remoteLines(r: RunReport): string[] {
  const by = new Map<string, RemoteSimulatorStats & { units: number; ways: Set<string> }>();
  for (const c of r.conditions)
    for (const s of c.seeds)
      for (const x of (s as { remoteSimulators?: RemoteSimulatorStats[] }).remoteSimulators ?? []) {
        const t = by.get(x.name) ?? { ...x, ...zeroCounters(), units: 0, ways: new Set<string>() };
        for (const k of REMOTE_COUNTERS) t[k] += x[k];
        t.units++;
        t.ways.add(x.scoring);
        by.set(x.name, t);
      }
  if (by.size === 0) return [];
  const lines = ["", "remote simulators (summed over the training units):"];
  for (const t of by.values()) {
    const how = [
      t.logprobStates ? `${t.logprobStates} states scored from log-probs` : "",
      t.sampledStates
        ? `${t.sampledStates} from ${t.mode === "vs" ? "VS candidates" : "sampled replies"}`
        : "",
      t.fallbacks ? `${t.fallbacks} of them after log-probs were missing (fallback)` : "",
    ].filter(Boolean);
    const unmapped = t.replies
      ? `; ${t.unmapped} of ${t.replies} replies said no allowed act${t.unmappedStates ? `, ${t.unmappedStates} states had none and were uniform` : ""}`
      : "";
    lines.push(
      `  ${t.name} (${t.model} at ${t.baseUrl}, ${t.mode}, ${t.protocol}): ${how.join(", ") || "no states"}; ${t.requests} requests (${t.retries} retries)${unmapped}`,
    );
  }
  return lines;
}

/** The back-off of an empirical population's replies, summed over the given seeds: null when it played none. */
export function backoffOf(
  seeds: readonly { backoff?: Record<string, BackoffUsage> }[],
  who: string,
): BackoffUsage | null {
  const used = seeds.flatMap((s) => (s.backoff?.[who] ? [s.backoff[who]] : []));
  return used.length ? used.reduce(addUsage, emptyUsage()) : null;
}

/** The share of replies that did not come from the corpus' people at the very state (all but "state"). */
export const fellBack = (u: BackoffUsage) => (u.turns ? 1 - u.levels.state / u.turns : 0);

/** The report's lines on imported corpora: which files, and how much of each one's replies backed off. */
export function corpusLines(r: RunReport): string[] {
  if (!r.corpora?.length) return [];
  const lines = ["", "imported dialogue corpora (docs/humans.md):"];
  for (const c of r.corpora) {
    const as =
      c.use === "humans"
        ? `the humans (minimum ${r.config.humans?.minCount} people at a state)`
        : c.use === "panel"
          ? `held-out panel member ${c.member}`
          : "the reference simulator's pretraining corpus";
    lines.push(
      `  ${c.file} (sha256 ${c.sha256.slice(0, 16)}…, ${c.dialogues} dialogues, its own success ${pct(c.success, 1)}) as ${as}`,
    );
    const who = c.use === "humans" ? "humans" : c.use === "panel" ? c.member! : null;
    if (!who) continue;
    const rows = r.conditions.flatMap((k) => {
      const u = backoffOf(k.seeds, who);
      return u
        ? [
            [
              k.id,
              String(u.turns),
              pct(fellBack(u), 1),
              ...BACKOFF_LEVELS.map((l) => pct(u.levels[l] / (u.turns || 1), 1)),
            ],
          ]
        : [];
    });
    if (rows.length)
      lines.push(
        `  its replies in the final evaluation, by what they came from (user turns over all seeds):`,
        table([["condition", "turns", "backed off", ...BACKOFF_LEVELS], ...rows])
          .split("\n")
          .map((l) => `  ${l}`)
          .join("\n"),
      );
  }
  return lines;
}

/** The held-out panel's diagnostics of one seed: its networks' modes and separation, then every named panel exactly. */
export function panelLines(d: DiagnosticsReport, runKind: string | null): string[] {
  const lines: string[] = [];
  if (d.panel) {
    lines.push(
      "",
      `held-out panel (seed ${d.seed}, its networks): each member's most likely reply at the probe states against the aligned simulator's`,
      ...diversityLines(d.panel.diversity),
    );
    if (d.panel.separation)
      lines.push(
        `panel separation on the networks: ${d.panel.separation.adaptive.label} against ${d.panel.separation.script.label}`,
        ...separationLines(d.panel.separation),
      );
  }
  if (d.exactPanels?.length) {
    lines.push(
      "",
      "the benchmark's panels on their families' exact simulators (each family's Bayes predictive at its γ), side by side:",
    );
    const share = (x: number) => points(x, 0);
    lines.push(
      table([
        ["panel", "members", "mode agreement % (mean)", "types played", "separation (points)"],
        ...d.exactPanels.map((p) => {
          const agree = p.diversity.members.map((m) => m.modeAgreement);
          const g = p.separation ? separationGaps(p.separation) : null;
          return [
            p.kind === null ? "this run's" : p.kind === runKind ? `${p.kind} (this run's)` : p.kind,
            p.members.join(", "),
            share(agree.reduce((a, b) => a + b, 0) / Math.max(1, agree.length)),
            p.diversity.types
              .filter((t) => t.players.length)
              .map((t) => t.name)
              .join(", ") || "none",
            g ? `${points(g.panel)} (humans ${points(g.humans)})` : "–",
          ];
        }),
      ]),
    );
  }
  return lines;
}
