// Playing dialogues: the policy and a user simulator take turns on a batch of personas until every
// dialogue is done. Each round, the rows whose turn is the agent's get one batched forward pass of
// the policy, the rows at the user's turn one call of the simulator, and rows at the world's own
// turn (a tool's result) its envAct; rows may be at different turns (a tool call adds one to a
// row), and a benchmark whose turns alternate strictly plays in lockstep.
import type { Benchmark, Dialogue, Persona, Turn } from "../benchmarks/types";
import type { EngineModel } from "../engine/backend";
import type { Rng } from "../engine/random";
import { drawFromLogprobs } from "../engine/sampling";
import type { UserSimulator } from "../simulators/simulator";
import { nextActLogprobs } from "../benchmarks/encode";

export interface Played {
  dialogues: Dialogue[];
  personas: Persona[];
  entropySum: Float64Array; // per row: Σ over the agent's turns of the policy's entropy
  agentTurns: Int32Array; // per row
}

export async function play(
  bench: Benchmark,
  policy: EngineModel,
  user: UserSimulator,
  personas: Persona[],
  rng: Rng,
  temperature: number,
): Promise<Played> {
  const n = personas.length;
  const V = bench.acts.length;
  const dialogues: Dialogue[] = personas.map((p) =>
    p.hidden ? { card: p.card, acts: [], hidden: p.hidden } : { card: p.card, acts: [] },
  );
  const entropySum = new Float64Array(n);
  const agentTurns = new Int32Array(n);
  for (;;) {
    const turns = dialogues.map((d) => bench.turn(d));
    const rows = (who: Turn) => turns.flatMap((t, b) => (t === who ? [b] : []));
    const agents = rows("agent");
    const users = rows("user");
    const env = rows("env");
    if (agents.length + users.length + env.length === 0) break;
    // every draw of a round is made before any act is appended, so the order of the groups is fixed
    if (agents.length) {
      const lp = await nextActLogprobs(
        bench,
        policy,
        agents.map((b) => dialogues[b]),
        "policy",
        { temperature },
      );
      const draw = drawFromLogprobs(lp, agents.length, V, rng);
      agents.forEach((b, j) => {
        dialogues[b].acts.push(draw.tokens[j]);
        entropySum[b] += draw.entropy[j];
        agentTurns[b] += 1;
      });
    }
    if (users.length) {
      const acts = await user.reply(
        users.map((b) => dialogues[b]),
        users.map((b) => personas[b]),
        rng,
      );
      users.forEach((b, j) => dialogues[b].acts.push(acts[j]));
    }
    if (env.length) {
      if (!bench.envAct)
        throw new Error(`${bench.title}: turn() returned "env" but the benchmark has no envAct`);
      for (const b of env) dialogues[b].acts.push(bench.envAct(dialogues[b], rng));
    }
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
  return {
    success: success / n,
    reward: reward / n,
    entropy: turns ? ent / turns : 0,
    episodes: n,
  };
}

/** Personas for a GRPO batch: `prompts` start states, each repeated groupSize times (rows g·G … g·G+G−1). */
export function groupedPersonas(
  user: UserSimulator,
  prompts: number,
  groupSize: number,
  rng: Rng,
): Persona[] {
  return user.personas(prompts, rng).flatMap((p) =>
    Array.from({ length: groupSize }, () => ({
      ...p,
      card: [...p.card],
      ...(p.hidden ? { hidden: [...p.hidden] } : {}),
    })),
  );
}
