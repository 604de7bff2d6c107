// Success with the humans of each latent type, for a run's committed policies (src/experiment/by-type.ts):
//   npx tsx scripts/by-type.ts <report.json> [--policies <dir>] [--dialogues 400]
//     [--conditions single,vs,population] [--json <out.json>]
// The policies default to <report>.policies/ beside the report. The draws are fixed by each seed,
// the same for every condition of that seed, so conditions are compared on the same people.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { adaptiveAgent, modalScript } from "../src/benchmarks/cooperation/agents";
import { playEpisode, type CooperationBenchmark } from "../src/benchmarks/cooperation/bench";
import { benchmarkFor } from "../src/benchmarks/registry";
import { Rng } from "../src/engine/random";
import { byTypeRng, successByType, TypeHumans, type TypeSuccess } from "../src/experiment/by-type";
import { validateConfig, type ConditionId } from "../src/experiment/config";
import { createNodeBackend } from "../src/experiment/node-webgpu";
import { openPolicyFolder } from "../src/experiment/node-policies";
import { policiesBeside } from "../src/experiment/policies";
import { modelOptions } from "../src/experiment/pretrain";
import { parseReport } from "../src/experiment/report-schema";
import { table } from "../src/util/format";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    policies: { type: "string" },
    dialogues: { type: "string", default: "400" },
    conditions: { type: "string", default: "single,vs,population" },
    json: { type: "string" },
  },
});
const fail = (m: string): never => {
  process.stderr.write(`by-type: ${m}\n`);
  process.exit(2);
};
const reportPath = positionals[0] ?? fail("give the run's report: by-type.ts <report.json>");
const perType = Number(values.dialogues);
if (!(Number.isInteger(perType) && perType > 0))
  fail(`--dialogues must be a positive integer, not ${values.dialogues}`);
/** The value of `read`, or the script's exit with a one-line error that names `what`. */
function orFail<T>(what: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    return fail(`${what}: ${(e as Error).message}`);
  }
}
const report = orFail(reportPath, () => parseReport(readFileSync(reportPath, "utf8")));
const config = validateConfig(report.config);
if (config.humans)
  fail("the run's humans are an imported corpus, whose people have no latent type");
const dir = values.policies ?? policiesBeside(reportPath);
const folder = orFail(dir, () => openPolicyFolder(dir, config));
const { index } = folder;
const conditions = values.conditions!.split(",") as ConditionId[];
for (const c of conditions)
  if (!index.policies.some((p) => p.condition === c)) fail(`${dir} holds no policy of ${c}`);

const bench = benchmarkFor(config);
const opts = modelOptions(bench, config);
const { backend } = await createNodeBackend(index.backend as "wasm" | "webgpu" | "float64");
const seeds = [...new Set(index.policies.map((p) => p.seed))].sort((a, b) => a - b);

interface Row {
  condition: ConditionId;
  seed: number;
  types: TypeSuccess[];
  mix: number;
}
const rows: Row[] = [];
for (const condition of conditions)
  for (const seed of seeds) {
    const policy = backend.createModel(folder.checkpoint(condition, seed), opts);
    try {
      const r = await successByType(
        bench,
        policy,
        perType,
        byTypeRng(seed),
        config.rl.temperature,
        opts.capacity,
      );
      rows.push({ condition, seed, ...r });
      process.stderr.write(`by-type: ${condition} seed ${seed} done\n`);
    } finally {
      policy.dispose();
    }
  }

/** Cooperation's scripted reference agents with people of each type (4,000 dialogues a type, fixed draws). */
const REFERENCE_DIALOGUES = 4000;
const REFERENCE_SEED = 300;
const references =
  config.benchmark === "cooperation"
    ? [
        { agent: "dutiful partner's script", make: modalScript },
        { agent: "adaptive agent", make: adaptiveAgent },
      ].map(({ agent, make }) => {
        const coop = bench as CooperationBenchmark;
        const act = make(coop.params.maxExchanges);
        const types = bench.humans.types.map((_, z) => {
          const rng = Rng.seed(REFERENCE_SEED).fork(z);
          const people = new TypeHumans(bench, z).personas(REFERENCE_DIALOGUES, rng);
          const wins = people.filter((p) => bench.success(playEpisode(coop, p, act, rng))).length;
          return wins / REFERENCE_DIALOGUES;
        });
        const mix = types.reduce((a, x, z) => a + bench.humans.types[z].prior * x, 0);
        return { agent, types, mix };
      })
    : [];

const names = bench.humans.types.filter((t) => t.prior > 0).map((t) => t.name);
const pct = (x: number) => (100 * x).toFixed(1);
const meanOf = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const means = conditions.map((condition) => {
  const rs = rows.filter((r) => r.condition === condition);
  return {
    condition,
    types: names.map((_, j) => meanOf(rs.map((r) => r.types[j].success))),
    mix: meanOf(rs.map((r) => r.mix)),
  };
});
process.stdout.write(
  `${report.preset ?? "run"} (${reportPath}): success with humans of each latent type, %, ` +
    `${perType} dialogues per type and policy; "all" is the prior-weighted mix\n` +
    table([
      ["policy", "seed", ...names, "all"],
      ...rows.map((r) => [
        r.condition,
        String(r.seed),
        ...r.types.map((t) => pct(t.success)),
        pct(r.mix),
      ]),
      ...means.map((m) => [m.condition, "mean", ...m.types.map(pct), pct(m.mix)]),
      ...references.map((r) => [r.agent, "", ...r.types.map(pct), pct(r.mix)]),
    ]) +
    (references.length
      ? `\n(the scripted agents: ${REFERENCE_DIALOGUES} dialogues per type)`
      : "") +
    "\n",
);
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify(
      {
        about: `success with humans of each latent type: scripts/by-type.ts ${reportPath} --dialogues ${perType}`,
        report: reportPath,
        dialoguesPerType: perType,
        types: bench.humans.types.map(({ name, prior }) => ({ name, prior })),
        rows,
        means,
        references,
      },
      null,
      1,
    ) + "\n",
  );
