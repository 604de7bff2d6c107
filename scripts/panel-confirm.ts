// Confirms the own-modes rule (scripts/panel-rule.ts) on pretrained networks, never on trained
// policies: for a benchmark's paper preset with `panel=own-modes`, at one far seed, it loads the
// reference and the panel's networks from the store of pretrained models, and prints the
// diagnostics' modes (which type each member plays, on how much of the humans' card mass, next to
// its exact simulator's), the reply tables at the states where the types show, and the separation
// of the two reference agents on the networks. With --pretrain it first pretrains into the store
// the networks the confirmation needs, one at a time on wasm: the families that lean to a type;
// with --reference also the reference (without it, the training simulator's modes are the
// humans' predictive's, which its network approaches); with --all-members also families a and e.
// --weight type=p gives that type's family another weight than the rule's (a what-if: another
// corpus, so another network); --dir reads and writes another store folder.
// Usage: npx tsx scripts/panel-confirm.ts [--pretrain [--reference] [--all-members]] [--weight type=p …] [--dir D] [--dialogues N] [service|cooperation …]
import { parseArgs } from "node:util";
import { benchmarkFor, benchmarkModule, leaningPrior } from "../src/benchmarks/registry";
import { createBackend } from "../src/engine/backends";
import { applySet, validateConfig, type ExperimentConfig } from "../src/experiment/config";
import { presetConfig } from "../src/experiment/presets";
import { replyTables } from "../src/experiment/diagnostics";
import { NodeWorkerExecutor } from "../src/experiment/node-executor";
import { fillStore, nodeStore, STORE_DIR } from "../src/experiment/node-store";
import {
  exactPanel,
  PLAYS_AT,
  panelDiversity,
  panelSeparation,
  separationGaps,
} from "../src/experiment/panel-diagnostics";
import { diversityLines, separationLines } from "../src/experiment/panel-text";
import {
  describeJob,
  modelOptions,
  pretrainJobs,
  type PretrainJob,
} from "../src/experiment/pretrain";
import { expectedShape, jobKey } from "../src/experiment/store";
import { SharpenedPredictive } from "../src/simulators/exact";
import { NeuralSimulator } from "../src/simulators/neural";
import { points, table } from "../src/util/format";

/** Each benchmark's paper preset and the far seed its confirmation runs on (the first of its far seeds). */
const TARGETS: Record<string, { preset: string; seed: number }> = {
  service: { preset: "service-paper", seed: 1000 },
  cooperation: { preset: "cooperation-paper", seed: 2000 },
};
const SET = "panel=own-modes";

const { values, positionals } = parseArgs({
  options: {
    pretrain: { type: "boolean" },
    reference: { type: "boolean" },
    "all-members": { type: "boolean" },
    weight: { type: "string", multiple: true },
    dir: { type: "string" },
    dialogues: { type: "string" },
  },
  allowPositionals: true,
});
const dialogues = values.dialogues ? Number(values.dialogues) : 2000;
const ids = positionals.length ? positionals : Object.keys(TARGETS);
if (!(dialogues >= 1) || ids.some((id) => !TARGETS[id])) {
  process.stderr.write(
    "usage: npx tsx scripts/panel-confirm.ts [--pretrain [--reference] [--all-members]] [--weight type=p …] [--dir D] [--dialogues N] [service|cooperation …]\n",
  );
  process.exit(2);
}
const log = (...lines: string[]) => {
  for (const line of lines.length ? lines : [""]) process.stdout.write(line + "\n");
};

const dir = values.dir ?? STORE_DIR;
const weights = (values.weight ?? []).map((w) => {
  const [type, p] = w.split("=");
  if (!type || !(Number(p) > 0 && Number(p) < 1)) {
    process.stderr.write(`--weight ${w}: expected type=p with p in (0, 1)\n`);
    process.exit(2);
  }
  return { type, p: Number(p) };
});

/** The preset's config at its far seed with the own-modes panel, the families of --weight re-weighted. */
function targetConfig(id: string): ExperimentConfig {
  const { preset, seed } = TARGETS[id];
  const c = validateConfig(applySet({ ...presetConfig(preset), seeds: 1, seedBase: seed }, SET));
  const humans = benchmarkFor(c).humans.types.map((t) => t.prior);
  const names = benchmarkModule(c.benchmark).typeNames;
  const panel = c.panel.map((m) => {
    const w = weights.find((x) => m.name === `family-${x.type}`);
    return w ? { ...m, prior: leaningPrior(humans, names.indexOf(w.type), w.p) } : m;
  });
  return validateConfig({ ...c, panel });
}

/** The jobs a confirmation reads: the reference, and the panel members (all, or those leaning to a type). */
function neededJobs(c: ExperimentConfig, reference: boolean, all: boolean): PretrainJob[] {
  return pretrainJobs(c, c.seedBase).filter(
    (j) =>
      (reference && j.kind === "reference") ||
      (j.kind === "panel" && (all || c.panel[j.member].prior)),
  );
}

if (values.pretrain) {
  const requests = ids.flatMap((id) => {
    const config = targetConfig(id);
    return neededJobs(config, values.reference ?? false, values["all-members"] ?? false).map(
      (job) => ({
        preset: `${TARGETS[id].preset} --set ${SET}`,
        config,
        job,
      }),
    );
  });
  const executor = new NodeWorkerExecutor(1, "wasm");
  try {
    await fillStore(dir, requests, executor, "wasm", (s) => process.stderr.write(s + "\n"));
  } finally {
    await executor.close();
  }
}

const { backend } = await createBackend("wasm");
const store = nodeStore(dir);
for (const id of ids) {
  const config = targetConfig(id);
  const bench = benchmarkFor(config);
  const module = benchmarkModule(config.benchmark);
  const opts = modelOptions(bench, config);
  const loaded = new Map<PretrainJob, NeuralSimulator>();
  const missing: string[] = [];
  for (const job of neededJobs(config, true, true)) {
    const ck = await store.get(jobKey(config, job, "wasm"), expectedShape(config, job));
    if (!ck) {
      missing.push(describeJob(config, job));
      continue;
    }
    const model = backend.createModel(ck.checkpoint, opts);
    const name = job.kind === "panel" ? config.panel[job.member].name : "aligned simulator";
    const gamma = job.kind === "panel" ? config.panel[job.member].gamma! : config.simulator.gamma;
    loaded.set(job, new NeuralSimulator(name, bench, model, gamma, true));
  }
  const reference = [...loaded].find(([j]) => j.kind === "reference")?.[1];
  const members = [...loaded].filter(([j]) => j.kind === "panel").map(([, s]) => s);
  log(
    `== ${module.title}: ${TARGETS[id].preset} --set ${SET}, seed ${config.seedBase}, the networks of the store (${values.dir ? dir : "public/pretrained"})${weights.length ? `; weights other than the rule's: ${weights.map((w) => `${w.type} ${w.p}`).join(", ")}` : ""}`,
  );
  if (missing.length) log(`not in the store, left out: ${missing.join(", ")}`);
  if (members.length === 0) {
    log("the store has none of the panel's networks: run this script with --pretrain");
    process.exitCode = 1;
    continue;
  }
  // without the reference network, the training simulator's modes are the exact ones its network approaches
  const training =
    reference ??
    new SharpenedPredictive("exact aligned simulator", bench, bench, config.simulator.gamma);
  if (!reference)
    log(
      `the training simulator's modes are those of the humans' predictive at γ = ${config.simulator.gamma} (no reference network of this seed in the store)`,
    );
  const t0 = performance.now();
  const networks = await panelDiversity(bench, module.probeStates, training, members);
  const exact = await exactPanel(
    { ...config, panel: config.panel.filter((m) => members.some((s) => s.name === m.name)) },
    dialogues,
  );
  log("", "Modes of the pretrained networks (the diagnostics' panel table):");
  for (const line of diversityLines(networks)) log(line);
  log(
    "",
    "Each family against its type, on its network and on its exact simulator (% of the humans' card mass on which it plays the type's defining reply):",
  );
  for (const [k, t] of networks.types.entries()) {
    const family = networks.members.find((m) => m.name === `family-${t.name}`);
    if (!family) continue;
    const e = exact.diversity.types.findIndex((x) => x.name === t.name);
    const exactMass = exact.diversity.members.find((m) => m.name === family.name)!.plays[e];
    log(
      `  ${family.name}: network ${points(family.plays[k])} % (at ${family.playsAt[k] ?? "no state"}), exact ${points(exactMass)} % → ${family.plays[k] >= PLAYS_AT ? "plays its type" : "does NOT play its type"} on the network`,
    );
  }
  const typeProbes = new Set(networks.types.flatMap((t) => t.probes));
  const tables = await replyTables(
    bench,
    module.probeStates.filter((p) => typeProbes.has(p.id)),
    [
      ...(reference
        ? [
            {
              sim: new NeuralSimulator("reference simulator", bench, reference.model, 1, true),
              role: "reference" as const,
            },
            { sim: reference, role: "aligned" as const },
          ]
        : []),
      ...members.map((sim) => ({ sim, role: "panel" as const })),
    ],
  );
  log("", `Reply tables (the diagnostics' tables) on the card ${tables[0]?.cardText ?? "–"}:`);
  for (const t of tables) {
    log("", `${t.id}: ${t.label}`);
    log(
      table([["", ...t.acts], ...t.rows.map((r) => [r.name, ...r.probs.map((p) => p.toFixed(3))])]),
    );
  }
  const agents = module.separationAgents?.(bench);
  if (agents) {
    const s = await panelSeparation(bench, agents, training, members, dialogues, config.seedBase);
    const g = separationGaps(s);
    log(
      "",
      `Separation on the networks, ${s.adaptive.label} − ${s.script.label} (points): humans ${points(g.humans)}, ${training.name} ${points(g.training)}, panel ${points(g.panel)}`,
    );
    for (const line of separationLines(s)) log(line);
    if (exact.separation) {
      const ge = separationGaps(exact.separation);
      log(
        `  the same members' exact simulators: panel ${points(ge.panel)}, the training simulator's ${points(ge.training)}`,
      );
    }
  }
  log("", `(${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  for (const s of loaded.values()) s.model.dispose();
}
