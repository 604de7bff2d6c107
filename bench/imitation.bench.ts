// Can a preset's policy model play the benchmark's adaptive agent (the diagnostics' adaptive probe:
// Service's careful agent, Persuasion's adapt-once persuader)? Side by side in one run, two policies
// of the preset's size are pretrained exactly as its base policy is (same steps, batch, learning
// rate), one on the behaviour agent's corpus (the base policy RL starts from) and one on the
// adaptive agent's dialogues with humans; each then plays humans at temperature 1, as RL's
// evaluation does. A clone close to the agent says the model can represent the adaptive strategy,
// so a condition that does not reach it is limited by RL, not by the model's size.
// Usage: npm run bench:imitation [-- --preset service-quick --dialogues 4096 --episodes 512]
import { parseArgs } from "node:util";
import { table } from "../src/util/format";
import { benchmarkFor, benchmarkModule } from "../src/benchmarks/registry";
import type { Benchmark, Dialogue } from "../src/benchmarks/types";
import { createBackend } from "../src/engine/backends";
import { Rng } from "../src/engine/random";
import { validateConfig } from "../src/experiment/config";
import { presetConfig } from "../src/experiment/presets";
import { buildCorpus, modelOptions, pretrain } from "../src/experiment/pretrain";
import { evaluate } from "../src/experiment/runner";
import { Humans } from "../src/simulators/simulator";

const { values } = parseArgs({
  options: {
    preset: { type: "string", default: "service-quick" },
    dialogues: { type: "string", default: "4096" },
    episodes: { type: "string", default: "512" },
  },
});
const dialogues = Number(values.dialogues);
const episodes = Number(values.episodes);
for (const [name, n] of [
  ["--dialogues", dialogues],
  ["--episodes", episodes],
] as const) {
  if (!Number.isInteger(n) || n < 1) {
    console.error(`bench: ${name} must be a positive integer`);
    process.exit(2);
  }
}

let config;
try {
  config = validateConfig(presetConfig(values.preset!));
} catch (e) {
  console.error(`bench: ${(e as Error).message}`);
  process.exit(2);
}
const module = benchmarkModule(config.benchmark);
const bench = benchmarkFor(config);
const probe = module.adaptiveProbe?.(bench);
if (!probe) {
  console.error(`bench: ${module.title} has no adaptive agent to imitate`);
  process.exit(2);
}

/** n dialogues of a deterministic agent with humans of the benchmark's population. */
function withHumans(b: Benchmark, act: (d: Dialogue) => number, n: number, rng: Rng): Dialogue[] {
  return Array.from({ length: n }, () => {
    const persona = b.humans.sample(rng);
    const d: Dialogue = persona.hidden
      ? { card: persona.card, acts: [], hidden: persona.hidden }
      : { card: persona.card, acts: [] };
    for (let t = b.turn(d); t !== "done"; t = b.turn(d)) {
      if (t === "agent") d.acts.push(act(d));
      else if (t === "env") d.acts.push(b.envAct!(d, rng));
      else d.acts.push(rng.categorical(b.humans.replyProbs(persona.type, d)));
    }
    return d;
  });
}

const success = (ds: Dialogue[]) => ds.filter((d) => bench.success(d)).length / ds.length;
const { backend } = await createBackend("wasm");
const p = config.policy;
console.log(
  `imitation bench — ${values.preset}: policy d ${p.model.d}, ${p.model.layers} layer(s), ${p.pretrain.steps} pretraining steps of ${p.pretrain.batch}; ${dialogues} dialogues to imitate, ${episodes} with humans to evaluate`,
);
console.log(`adaptive agent: ${probe.description}\n`);

const corpora = [
  {
    name: "behaviour agent (the base policy)",
    corpus: buildCorpus(config, bench, dialogues, Rng.seed(1)),
  },
  {
    name: "adaptive agent",
    corpus: withHumans(bench, (d) => probe.act(d), dialogues, Rng.seed(1)),
  },
];
const rows: string[][] = [];
for (const { name, corpus } of corpora) {
  const t0 = performance.now();
  const result = await pretrain(backend, bench, corpus, "policy", p, 3);
  const policy = backend.createModel(result.checkpoint, modelOptions(bench, config));
  const { outcome } = await evaluate(
    bench,
    policy,
    new Humans(bench),
    episodes,
    Rng.seed(11),
    1,
    config.rl.prompts * config.rl.groupSize,
  );
  policy.dispose();
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  const se = (x: number, n: number) => (100 * Math.sqrt((x * (1 - x)) / n)).toFixed(1);
  rows.push([
    name,
    pct(success(corpus)),
    `${pct(outcome.success)} ± ${se(outcome.success, episodes)}`,
    outcome.entropy.toFixed(2),
    result.nll[result.nll.length - 1].toFixed(3),
    `${((performance.now() - t0) / 1000).toFixed(0)} s`,
  ]);
}
console.log(
  table([
    [
      "imitated",
      "agent with humans",
      "clone with humans (± se)",
      "clone entropy (nats)",
      "final nll",
      "time",
    ],
    ...rows,
  ]),
);
