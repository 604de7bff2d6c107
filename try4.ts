import { createBackend } from "./src/engine/backends";
import { presetConfig } from "./src/experiment/presets";
import { merge, validateConfig } from "./src/experiment/config";
import { pretrainAll } from "./src/experiment/pretrain";
import { runUnit } from "./src/experiment/runner";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import v8 from "node:v8";
const { backend } = await createBackend("wasm");
const cfg = validateConfig(merge(presetConfig("persuasion-quick"), JSON.parse(process.argv[2] ?? "{}")));
const seed = Number(process.argv[3] ?? 0);
const file = `/tmp/pcache/quick-${seed}-${cfg.simulator.pretrain.steps}-${cfg.policy.pretrain.steps}-${cfg.policy.model.d}.bin`;
const pre = existsSync(file) ? v8.deserialize(readFileSync(file)) : await pretrainAll(backend, cfg, seed);
if (!existsSync(file)) writeFileSync(file, v8.serialize(pre));
const out: string[] = [];
for (const c of (process.argv[4] ?? "single,vs,population").split(",")) {
  const m = await runUnit(backend, cfg, pre, c as any);
  out.push(`${c.padEnd(10)} train ${m.trainSuccess.toFixed(3)} heldout ${m.heldoutSuccess.toFixed(3)} human ${m.humanSuccess.toFixed(3)} ent ${m.policyEntropy.toFixed(3)} ${(m.ms / 1000).toFixed(1)}s`);
}
console.log(process.argv[2], "seed", seed, "\n" + out.join("\n"));
