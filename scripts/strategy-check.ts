// Prints the strategy measures of Service's reference agents with humans (docs/science.md#metrics):
// the modal script with its blind fixes in random order against the careful agent.
//   npx tsx scripts/strategy-check.ts [dialogues] [seed]
import { benchmarkFor } from "../src/benchmarks/registry";
import type { ServiceBenchmark } from "../src/benchmarks/service/bench";
import { referenceStrategies } from "../src/benchmarks/service/strategy-check";
import { defaultConfig } from "../src/experiment/config";
import { table } from "../src/util/format";

const dialogues = Number(process.argv[2] ?? 8000);
const seed = Number(process.argv[3] ?? 1);
const bench = benchmarkFor(defaultConfig("service")) as ServiceBenchmark;
const rows = referenceStrategies(bench, dialogues, seed);
process.stdout.write(
  `Service, ${dialogues} dialogues with humans (seed ${seed}); nats\n` +
    table([
      [
        "agent",
        "success",
        "policy entropy / turn",
        "strategy entropy | intent",
        "I(strategy; type | intent) corrected",
        "plug-in",
        "strategies",
        "modes (≥ 5)",
        `left: ${bench.humans.types.map((t) => t.name).join(", ")}`,
      ],
      ...rows.map((r) => [
        r.agent,
        r.success.toFixed(3),
        r.policyEntropy.toFixed(3),
        r.measures.entropy.toFixed(3),
        r.measures.typeInformation.toFixed(3),
        r.measures.typeInformationPlugIn.toFixed(3),
        String(r.measures.distinct),
        String(r.measures.modes),
        r.left.map((x) => `${Math.round(100 * x)} %`).join(", "),
      ]),
    ]) +
    "\n",
);
