// Prints the own-modes rule for the held-out panels (docs/science.md#the-held-out-panels), computed
// exactly from the worlds' Bayes predictives: for each minority type, the humans' card mass on which
// a family with weight p on it plays its defining reply, at each p of the rule, and the p chosen,
// next to the weight each benchmark's own-modes panel uses; then every named panel (Persuasion's one
// panel as the reference) on its families' exact simulators: modes against the training
// simulator's, the types its members play, and the separation of the two reference agents.
// Usage: npx tsx scripts/panel-rule.ts [--dialogues N] [--json FILE] [benchmark …]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { BENCHMARK_IDS, benchmarkModule, isBenchmarkId } from "../src/benchmarks/registry";
import { defaultConfig, type ExperimentConfig } from "../src/experiment/config";
import {
  EXACT_SEPARATION_DIALOGUES,
  exactPanel,
  ownModesRule,
  separationGaps,
  type ExactPanel,
  type RuleFamily,
} from "../src/experiment/panel-diagnostics";
import { diversityLines, ruleLines, separationLines } from "../src/experiment/panel-text";
import { points } from "../src/util/format";

const { values, positionals } = parseArgs({
  options: { dialogues: { type: "string" }, json: { type: "string" } },
  allowPositionals: true,
});
const dialogues = values.dialogues ? Number(values.dialogues) : EXACT_SEPARATION_DIALOGUES;
const unknown = positionals.filter((b) => !isBenchmarkId(b));
if (!(dialogues >= 1) || unknown.length) {
  process.stderr.write(
    `usage: npx tsx scripts/panel-rule.ts [--dialogues N] [--json FILE] [${BENCHMARK_IDS.join(" | ")} …]\n`,
  );
  process.exit(2);
}
const benchmarks = positionals.length
  ? positionals
  : (["service", "cooperation", "persuasion"] as const);
const log = (...lines: string[]) => {
  for (const line of lines.length ? lines : [""]) process.stdout.write(line + "\n");
};

/** The weight an own-modes family puts on its type: the type its mixture raises most over the humans'. */
function panelWeights(config: ExperimentConfig, humans: number[]): Map<string, number> {
  const names = benchmarkModule(config.benchmark).typeNames;
  const out = new Map<string, number>();
  for (const m of config.panel) {
    if (!m.prior) continue;
    const total = m.prior.reduce((a, b) => a + b, 0);
    const ratio = m.prior.map((w, k) => w / total / humans[k]);
    const z = ratio.indexOf(Math.max(...ratio));
    out.set(names[z], Number((m.prior[z] / total).toFixed(3)));
  }
  return out;
}

const json: Record<string, { rule: RuleFamily[]; panels: ExactPanel[] }> = {};
log(
  "The own-modes rule and the held-out panels on their families' exact simulators (scripts/panel-rule.ts)",
);
for (const id of benchmarks) {
  const module = benchmarkModule(id);
  const config = defaultConfig(id as (typeof BENCHMARK_IDS)[number]);
  const humans = module.create(config.world).humans.types.map((t) => t.prior);
  log("", `== ${module.title}`);
  log(
    `humans' type mixture: ${module.typeNames.map((n, z) => `${n} ${humans[z].toFixed(2)}`).join(", ")}; training simulator: the humans' predictive at γ = ${config.simulator.gamma}`,
  );
  const t0 = performance.now();
  const rule = await ownModesRule(config);
  const own = module.panels?.["own-modes"];
  log(
    "",
    "The rule: a family per type but the most common, its corpus weight p on that type and the rest in the humans' proportions",
  );
  const weights = own
    ? panelWeights({ ...config, panel: own as ExperimentConfig["panel"] }, humans)
    : undefined;
  for (const line of ruleLines(rule, weights)) log(line);
  const named = Object.entries(module.panels ?? {});
  const panels = named.length
    ? named.map(([, p]) => ({ ...config, panel: structuredClone(p) as ExperimentConfig["panel"] }))
    : [config];
  const results: ExactPanel[] = [];
  for (const c of panels) {
    const e = await exactPanel(c, dialogues);
    results.push(e);
    log("", `-- ${e.kind ? `the ${e.kind} panel` : "its panel"}: ${e.members.join(", ")}`);
    for (const line of diversityLines(e.diversity)) log(line);
    if (e.separation) {
      const g = separationGaps(e.separation);
      log(
        `separation, ${e.separation.adaptive.label} − ${e.separation.script.label} (points): humans ${points(g.humans)}, training simulator ${points(g.training)}, panel ${points(g.panel)}`,
      );
      for (const line of separationLines(e.separation)) log(line);
    }
  }
  log("", `(${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  json[id] = { rule, panels: results };
}
if (values.json) writeFileSync(values.json, JSON.stringify(json, null, 1) + "\n");
