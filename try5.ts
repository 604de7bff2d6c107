import { createBackend } from "./src/engine/backends";
import { presetConfig } from "./src/experiment/presets";
import { merge, validateConfig } from "./src/experiment/config";
import { pretrainAll } from "./src/experiment/pretrain";
import { runUnit } from "./src/experiment/runner";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import v8 from "node:v8";
const { backend } = await createBackend("wasm");
const cfg = validateConfig(merge(presetConfig(process.env.PRESET ?? "persuasion-paper"), JSON.parse(process.argv[2] ?? "{}")));
const seed = Number(process.argv[3] ?? 0);
const key = createHash("sha1").update(JSON.stringify([cfg.simulator, cfg.policy, cfg.corpus, cfg.panel, cfg.world, cfg.ensemble, seed])).digest("hex").slice(0, 12);
const file = `/tmp/pcache/${key}.bin`;
const pre = existsSync(file) ? v8.deserialize(readFileSync(file)) : await pretrainAll(backend, cfg, seed);
if (!existsSync(file)) writeFileSync(file, v8.serialize(pre));
const out: string[] = [];
for (const c of (process.argv[4] ?? "").split(",").filter(Boolean)) {
  const t = performance.now();
  const m = await runUnit(backend, cfg, pre, c as any);
  const top = Object.entries(m.strategyHistogram).filter(([, v]) => v > 0.08).map(([k, v]) => `${k}:${v.toFixed(2)}`).join(" ");
  out.push(`${c.padEnd(10)} tr ${m.trainSuccess.toFixed(2)} ho ${m.heldoutSuccess.toFixed(2)} hu ${m.humanSuccess.toFixed(2)} H ${m.policyEntropy.toFixed(2)} ${((performance.now() - t) / 1000).toFixed(0)}s | ${top}`);
}
console.log(process.argv[2], "seed", seed, "\n" + out.join("\n"));
