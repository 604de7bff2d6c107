import { createBackend } from "./src/engine/backends";
import { DEFAULT_CONFIG, merge } from "./src/experiment/config";
import { pretrainAll, benchmarkFor } from "./src/experiment/pretrain";
import { runUnit } from "./src/experiment/runner";
const { backend } = await createBackend("wasm");
const cfg = merge(DEFAULT_CONFIG, JSON.parse(process.argv[2] ?? "{}"));
const conds = (process.argv[3] ?? "base,single,vs,population").split(",");
let t = performance.now();
const pre = await pretrainAll(backend, cfg, 0, (s) => {});
console.log("pretrain", ((performance.now() - t) / 1000).toFixed(1), "s; ref nll", pre.reference.nll.map((x) => x.toFixed(3)).join(" "), "policy nll", pre.basePolicy.nll.slice(-1)[0].toFixed(3));
for (const c of conds) {
  t = performance.now();
  const m = await runUnit(backend, cfg, pre, c as any, (p) => { if (p.point) console.log("  ", c, p.step, JSON.stringify(p.point, (k, v) => typeof v === "number" ? +v.toFixed(3) : v)); });
  console.log(c, "train", m.trainSuccess.toFixed(3), "heldout", m.heldoutSuccess.toFixed(3), "human", m.humanSuccess.toFixed(3), "entropy", m.policyEntropy.toFixed(3), JSON.stringify(m.heldoutByMember, (k, v) => typeof v === "number" ? +v.toFixed(2) : v), ((performance.now() - t) / 1000).toFixed(1), "s");
  console.log("   strategies", JSON.stringify(m.strategyHistogram, (k, v) => typeof v === "number" ? +v.toFixed(2) : v));
}
