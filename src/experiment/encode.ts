// Dialogues as model inputs. The policy reads [BOS, acts…] and learns the agent's acts; a
// simulator reads [card…, BOS, acts…] and learns the user's acts. Each position carries the
// mask class its token was drawn from, so learned and sampled distributions are the same.
import type { Benchmark, Dialogue } from "../benchmarks/types";
import type { EngineModel, TrainBatch } from "../engine/backend";

export type Role = "policy" | "simulator";

const BOS = 0; // every benchmark puts <bos> first in its vocabulary

export function offset(bench: Benchmark, role: Role): number {
  return role === "policy" ? 1 : bench.cardLen + 1;
}

/** Tokens, classes and the role's loss mask, [rows, T]. */
export function encode(bench: Benchmark, dialogues: Dialogue[], role: Role): TrainBatch {
  const T = bench.context;
  const rows = dialogues.length;
  const tokens = new Int32Array(rows * T);
  const cls = new Int32Array(rows * T);
  const mask = new Float32Array(rows * T);
  const off = offset(bench, role);
  dialogues.forEach((d, b) => {
    const row = b * T;
    if (role === "simulator") d.card.forEach((c, j) => (tokens[row + j] = c));
    tokens[row + off - 1] = BOS;
    d.acts.forEach((a, i) => {
      const prefix = { card: d.card, acts: d.acts.slice(0, i) };
      const agent = bench.turn(prefix) === "agent";
      tokens[row + off + i] = a;
      cls[row + off + i] = agent ? bench.agentClass(prefix) : bench.userClass(prefix);
      mask[row + off + i] = agent === (role === "policy") ? 1 : 0;
    });
  });
  return { rows, tokens, cls, mask };
}

/** Log-probs [rows, V] of each dialogue's next act under a model, in chunks of its capacity. */
export async function nextActLogprobs(
  bench: Benchmark,
  model: EngineModel,
  dialogues: Dialogue[],
  role: Role,
  dist: { temperature?: number; logitScale?: number } = {},
): Promise<Float32Array> {
  const V = model.config.vocab;
  const T = bench.context;
  const out = new Float32Array(dialogues.length * V);
  const off = offset(bench, role);
  for (let start = 0; start < dialogues.length; start += model.capacity) {
    const chunk = dialogues.slice(start, start + model.capacity);
    const { tokens } = encode(bench, chunk, role);
    const pos = Int32Array.from(chunk, (d) => off + d.acts.length);
    const cls = Int32Array.from(chunk, (d) => (bench.turn(d) === "agent" ? bench.agentClass(d) : bench.userClass(d)));
    for (const p of pos) if (p >= T) throw new Error(`dialogue too long for context ${T}`);
    out.set(await model.nextLogprobs(tokens, chunk.length, pos, cls, dist), start * V);
  }
  return out;
}
