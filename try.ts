import { createBackend } from "./src/engine/backends";
import { DEFAULT_CONFIG, merge } from "./src/experiment/config";
import { pretrainAll } from "./src/experiment/pretrain";
import { runUnit } from "./src/experiment/runner";
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createHash } from "node:crypto";
import v8 from "node:v8";
const { backend } = await createBackend("wasm");
const cfg = merge(DEFAULT_CONFIG, JSON.parse(process.argv[2] ?? "{}"));
const conds = (process.argv[3] ?? "base,single,vs,population").split(",");
const seed = Number(process.argv[4] ?? 0);
const key = createHash("sha1").update(JSON.stringify([cfg.simulator, cfg.policy, cfg.corpus, cfg.panel, cfg.world, cfg.ensemble, seed])).digest("hex").slice(0, 12);
mkdirSync("/tmp/pcache", { recursive: true });
let t = performance.now();
const file = `/tmp/pcache/${key}.bin`;
const pre = existsSync(file) ? v8.deserialize(readFileSync(file)) : await pretrainAll(backend, cfg, seed);
if (!existsSync(file)) writeFileSync(file, v8.serialize(pre));
console.log("pretrain", ((performance.now() - t) / 1000).toFixed(1), "s");
const f = (k: string, v: unknown) => (typeof v === "number" ? +v.toFixed(3) : v);
for (const c of conds) {
  t = performance.now();
  const m = await runUnit(backend, cfg, pre, c as any, (p) => { if (p.point && process.env.CURVE) console.log("  ", c, JSON.stringify(p.point, f)); });
  console.log(c.padEnd(10), "train", m.trainSuccess.toFixed(3), "heldout", m.heldoutSuccess.toFixed(3), "human", m.humanSuccess.toFixed(3), "entropy", m.policyEntropy.toFixed(3), JSON.stringify(m.heldoutByMember, f), ((performance.now() - t) / 1000).toFixed(1), "s");
  if (process.env.STRAT) console.log("   strategies", JSON.stringify(m.strategyHistogram, f));
}
