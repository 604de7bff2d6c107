// Dialogues as model inputs. The policy reads [BOS, acts…] and learns the agent's acts; a
// simulator reads [card…, BOS, acts…] and learns the user's acts. Each position carries the
// mask class its token was drawn from, so learned and sampled distributions are the same.
import type { Benchmark, Dialogue } from "./types";
import type { EngineModel, TrainBatch } from "../engine/backend";
import type { Decoder } from "../engine/decode";

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
      const prefix = { card: d.card, acts: d.acts.slice(0, i), hidden: d.hidden };
      const who = bench.turn(prefix);
      tokens[row + off + i] = a;
      // the world's own moves (env) are read by both roles and learned by neither
      cls[row + off + i] =
        who === "agent" ? bench.agentClass(prefix) : who === "user" ? bench.userClass(prefix) : 0;
      mask[row + off + i] =
        (who === "agent" && role === "policy") || (who === "user" && role === "simulator") ? 1 : 0;
    });
  });
  return { rows, tokens, cls, mask };
}

/**
 * Each model's incremental decoder, with its slots assigned to dialogues by identity: a dialogue
 * that grows turn by turn (as in `play`) keeps its slot, so each call feeds only its new acts.
 * The decoder checks every row's tokens against its slot, so a reused slot is only slower.
 */
class DialogueSlots {
  readonly decoder: Decoder;
  readonly #slotOf = new WeakMap<Dialogue, number>();
  readonly #owner: (Dialogue | undefined)[];
  readonly #lastUse: Float64Array;
  #clock = 0;

  constructor(model: EngineModel, allRows: boolean) {
    this.decoder = model.decoder({ allRows });
    this.#owner = new Array<Dialogue | undefined>(model.capacity);
    this.#lastUse = new Float64Array(model.capacity);
  }

  /** Distinct slots for ≤ capacity dialogues: their own where they have one, else the least recently used. */
  assign(dialogues: Dialogue[]): Int32Array {
    const slots = new Int32Array(dialogues.length).fill(-1);
    const taken = new Uint8Array(this.#owner.length);
    const tick = ++this.#clock;
    dialogues.forEach((d, r) => {
      const s = this.#slotOf.get(d);
      if (s !== undefined && this.#owner[s] === d && !taken[s]) {
        slots[r] = s;
        taken[s] = 1;
      }
    });
    const free = Array.from({ length: this.#owner.length }, (_, s) => s)
      .filter((s) => !taken[s])
      .sort((a, b) => this.#lastUse[a] - this.#lastUse[b]);
    let next = 0;
    dialogues.forEach((d, r) => {
      if (slots[r] < 0) {
        slots[r] = free[next++];
        this.#owner[slots[r]] = d;
        this.#slotOf.set(d, slots[r]);
      }
      this.#lastUse[slots[r]] = tick;
    });
    return slots;
  }
}

const slotsByModel = new WeakMap<EngineModel, DialogueSlots>();

export type DecodingMode = "incremental" | "all-rows" | "full";
let decoding: DecodingMode = "incremental";

/**
 * `all-rows` decodes incrementally but computes every slot in every call, as before row buckets;
 * `full` runs the whole padded sequence for every call, as before incremental decoding
 * (benchmarks compare the three).
 */
export function setDecoding(mode: DecodingMode): void {
  decoding = mode;
}

/** Log-probs [rows, V] of each dialogue's next act under a model, in chunks of its capacity (incremental decoding). */
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
  let slots = slotsByModel.get(model);
  if (!slots && decoding !== "full")
    slotsByModel.set(model, (slots = new DialogueSlots(model, decoding === "all-rows")));
  for (let start = 0; start < dialogues.length; start += model.capacity) {
    const chunk = dialogues.slice(start, start + model.capacity);
    const { tokens } = encode(bench, chunk, role);
    const pos = Int32Array.from(chunk, (d) => off + d.acts.length);
    const cls = Int32Array.from(chunk, (d) =>
      bench.turn(d) === "agent" ? bench.agentClass(d) : bench.userClass(d),
    );
    for (const p of pos) if (p >= T) throw new Error(`dialogue too long for context ${T}`);
    if (decoding === "full")
      out.set(await model.nextLogprobs(tokens, chunk.length, pos, cls, dist), start * V);
    else
      out.set(
        await slots!.decoder.next({ slots: slots!.assign(chunk), tokens, pos, cls }, dist),
        start * V,
      );
  }
  return out;
}
