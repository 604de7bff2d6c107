// One dialogue on the Play page, act by act: a trained policy (the persuader) against a person
// who plays the user, choosing each reply from the acts the world allows at that turn, shown as
// text. The policy's next act is drawn from its distribution (encode.ts's nextActLogprobs, the
// same as in training and evaluation, at the run's temperature) with an Rng seeded by the
// dialogue's session seed, so the person's replies and that seed reproduce the dialogue
// (`replay`). Policies run on the float64 reference engine: a tiny model, one row, no compile
// wait, and the same draws on every device.
import { benchmarkModule } from "../../benchmarks/registry";
import { nextActLogprobs } from "../../benchmarks/encode";
import type { Benchmark, Dialogue, Turn } from "../../benchmarks/types";
import type { EngineModel } from "../../engine/backend";
import type { Checkpoint } from "../../engine/checkpoint";
import { Float64Backend } from "../../engine/backends/float64";
import { Rng } from "../../engine/random";
import { drawFromLogprobs } from "../../engine/sampling";
import type { ExperimentConfig } from "../../experiment/config";
import { modelOptions } from "../../experiment/pretrain";

/** A reply a person can choose: the act and the text it is shown as. */
export interface ReplyOption {
  act: number;
  name: string;
  text: string;
}

export interface TranscriptLine {
  speaker: "agent" | "user" | "env";
  act: string;
  text: string;
}

/**
 * A played dialogue as lines of text: the persuader's wording is drawn with a seed of its own from
 * the session seed (the same every time it is shown), the person's replies read as the option they chose.
 */
export function transcript(bench: Benchmark, d: Dialogue, sessionSeed: number): TranscriptLine[] {
  const lines = bench.render(d, Rng.seed(sessionSeed ^ 0x5bd1e995));
  return lines.map((l, i) =>
    l.speaker === "user" ? { ...l, text: bench.acts[d.acts[i]].templates[0] } : l,
  );
}

/** The transcript of a stored record (acts and card by name); null when a name is not in this benchmark. */
export function recordTranscript(
  bench: Benchmark,
  record: { acts: string[]; persona: { card: string[] }; sessionSeed: number },
): TranscriptLine[] | null {
  const id = (name: string) => bench.acts.findIndex((a) => a.name === name);
  const acts = record.acts.map(id);
  const card = record.persona.card.map(id);
  if (acts.some((a) => a < 0) || card.some((c) => c < 0)) return null;
  return transcript(bench, { card, acts }, record.sessionSeed);
}

const playableCache = new Map<string, boolean>();

/**
 * Whether a person can play the user of this benchmark here: its user ends with an outcome the page
 * can read (its lm part), and the world has no moves and no hidden state of its own (a phone's
 * screen or faults the person would have to be shown), so replies alone make the game.
 */
export function playable(benchmark: string): boolean {
  let ok = playableCache.get(benchmark);
  if (ok === undefined) {
    const m = benchmarkModule(benchmark);
    const bench = m.create(m.defaultWorld);
    ok = !!m.lm && !bench.envAct && !bench.humans.sampleHidden;
    playableCache.set(benchmark, ok);
  }
  return ok;
}

/** The policy as an engine model of one row on the reference engine. */
export function policyModel(
  bench: Benchmark,
  config: ExperimentConfig,
  checkpoint: Checkpoint,
): EngineModel {
  return new Float64Backend().createModel(checkpoint, {
    ...modelOptions(bench, config),
    capacity: 1,
  });
}

export class PlayDialogue {
  readonly dialogue: Dialogue;
  readonly #rng: Rng;

  constructor(
    readonly bench: Benchmark,
    readonly policy: EngineModel,
    readonly temperature: number,
    readonly sessionSeed: number,
    card: number[],
  ) {
    this.dialogue = { card: [...card], acts: [] };
    this.#rng = Rng.seed(sessionSeed);
  }

  get turn(): Turn {
    return this.bench.turn(this.dialogue);
  }

  /** The policy's next act, drawn and appended; only at the agent's turn. */
  async agentMove(): Promise<number> {
    if (this.turn !== "agent") throw new Error(`not the persuader's turn (${this.turn})`);
    const lp = await nextActLogprobs(this.bench, this.policy, [this.dialogue], "policy", {
      temperature: this.temperature,
    });
    const act = drawFromLogprobs(lp, 1, this.bench.acts.length, this.#rng).tokens[0];
    this.dialogue.acts.push(act);
    return act;
  }

  /** The replies allowed now (talk, or the decision when it is due), each as its first template. */
  options(): ReplyOption[] {
    if (this.turn !== "user") return [];
    const cls = this.bench.maskClasses[this.bench.userClass(this.dialogue)];
    return cls.allowed.map((act) => ({
      act,
      name: this.bench.acts[act].name,
      text: this.bench.acts[act].templates[0],
    }));
  }

  /** True when the person's next reply ends the dialogue with their decision. */
  get decisionDue(): boolean {
    return (
      this.turn === "user" && this.options().every((o) => this.bench.acts[o.act].kind === "outcome")
    );
  }

  choose(act: number): void {
    if (!this.options().some((o) => o.act === act))
      throw new Error(`act ${act} is not a reply allowed now`);
    this.dialogue.acts.push(act);
  }

  /** The dialogue so far as lines of text. */
  lines(): TranscriptLine[] {
    return transcript(this.bench, this.dialogue, this.sessionSeed);
  }

  get done(): boolean {
    return this.turn === "done";
  }

  /** The outcome of a finished dialogue: the number (a donation) in the benchmark's words, reward and success. */
  result(): { outcome: number; words: string; reward: number; success: boolean } {
    const m = benchmarkModule(this.bench.id);
    const words = m.outcome(this.bench, this.dialogue);
    return {
      outcome: m.lm?.parseOutcome(words) ?? NaN,
      words,
      reward: this.bench.reward(this.dialogue),
      success: this.bench.success(this.dialogue),
    };
  }
}

/** Plays a dialogue again from its record: the same policy, session seed and user replies give the same persuader acts. */
export async function replay(
  bench: Benchmark,
  policy: EngineModel,
  temperature: number,
  sessionSeed: number,
  card: number[],
  acts: number[],
): Promise<number[]> {
  const d = new PlayDialogue(bench, policy, temperature, sessionSeed, card);
  for (let i = 0; !d.done;) {
    if (d.turn === "agent") await d.agentMove();
    else if (d.turn === "user") d.choose(acts[d.dialogue.acts.length] ?? -1);
    else throw new Error(`cannot replay a turn of "${d.turn}"`);
    if (++i > 1000) throw new Error("replay did not end");
  }
  return d.dialogue.acts;
}
