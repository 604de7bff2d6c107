import { createBackend } from "./src/engine/backends";
import { presetConfig } from "./src/experiment/presets";
import { pretrainAll } from "./src/experiment/pretrain";
import { runUnit } from "./src/experiment/runner";
const { backend } = await createBackend("wasm");
const cfg = presetConfig("persuasion-quick");
const pre = await pretrainAll(backend, cfg, Number(process.argv[2] ?? 0));
console.log("ref nll", pre.reference.nll.map((x) => x.toFixed(3)).join(" "), "| policy", pre.basePolicy.nll.map((x) => x.toFixed(3)).join(" "));
for (const p of pre.panel) console.log(p.name, p.result.nll.slice(-1)[0]);
for (const c of ["single", "vs", "cotrain", "population", "ensemble"]) {
  try {
    const m = await runUnit(backend, cfg, pre, c as any);
    console.log(c, m.trainSuccess.toFixed(3), m.heldoutSuccess.toFixed(3), m.humanSuccess.toFixed(3), m.policyEntropy.toFixed(3), (m.ms / 1000).toFixed(1) + "s");
  } catch (e) { console.log(c, "FAILED", (e as Error).message); }
}
