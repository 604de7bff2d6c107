// Playing dialogues: the policy and a user simulator take turns on a batch of personas until every
// dialogue is done. All rows advance in lockstep (agent and user turns alternate the same way in
// every row), each half-turn one batched forward pass.
import type { Benchmark, Dialogue, Persona } from "../benchmarks/types";
import type { EngineModel } from "../engine/backend";
import type { Rng } from "../engine/random";
import { drawFromLogprobs } from "../engine/sampling";
import type { UserSimulator } from "../simulators/simulator";
import { nextActLogprobs } from "./encode";

export interface Played {
  dialogues: Dialogue[];
  personas: Persona[];
  entropySum: Float64Array; // per row: Σ over the agent's turns of the policy's entropy
  agentTurns: Int32Array; // per row
}

export async function play(bench: Benchmark, policy: EngineModel, user: UserSimulator, personas: Persona[], rng: Rng, temperature: number): Promise<Played> {
  const n = personas.length;
  const V = bench.acts.length;
  const dialogues: Dialogue[] = personas.map((p) => ({ card: p.card, acts: [] }));
  const entropySum = new Float64Array(n);
  const agentTurns = new Int32Array(n);
  for (;;) {
    const turns = dialogues.map((d) => bench.turn(d));
    const active = turns.flatMap((t, b) => (t === "done" ? [] : [b]));
    if (active.length === 0) break;
    const who = turns[active[0]];
    if (active.some((b) => turns[b] !== who)) throw new Error("dialogues fell out of lockstep");
    const ds = active.map((b) => dialogues[b]);
    let acts: Int32Array;
    if (who === "agent") {
      const lp = await nextActLogprobs(bench, policy, ds, "policy", { temperature });
      const draw = drawFromLogprobs(lp, active.length, V, rng);
      acts = draw.tokens;
      active.forEach((b, j) => {
        entropySum[b] += draw.entropy[j];
        agentTurns[b] += 1;
      });
    } else {
      acts = await user.reply(
        ds,
        active.map((b) => personas[b]),
        rng,
      );
    }
    active.forEach((b, j) => dialogues[b].acts.push(acts[j]));
  }
  return { dialogues, personas, entropySum, agentTurns };
}

export interface Outcome {
  success: number; // fraction of dialogues with success
  reward: number; // mean reward
  entropy: number; // mean per-turn policy entropy (nats)
  episodes: number;
}

export function outcome(bench: Benchmark, p: Played): Outcome {
  const n = p.dialogues.length;
  let success = 0;
  let reward = 0;
  let ent = 0;
  let turns = 0;
  p.dialogues.forEach((d, b) => {
    success += bench.success(d) ? 1 : 0;
    reward += bench.reward(d);
    ent += p.entropySum[b];
    turns += p.agentTurns[b];
  });
  return { success: success / n, reward: reward / n, entropy: turns ? ent / turns : 0, episodes: n };
}

/** Personas for a GRPO batch: `prompts` start states, each repeated groupSize times (rows g·G … g·G+G−1). */
export function groupedPersonas(user: UserSimulator, prompts: number, groupSize: number, rng: Rng): Persona[] {
  return user.personas(prompts, rng).flatMap((p) => Array.from({ length: groupSize }, () => ({ ...p, card: [...p.card] })));
}
