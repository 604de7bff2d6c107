// The act-text chat format: how a toy dialogue travels as OpenAI chat messages between
// `collapse-lab serve` and the remote simulator (and any client that wants to play a served
// model). Each act is one message whose content is the act's first template; the served model's
// own acts are "assistant" messages, the other side's and the world's are "user" messages; the
// persona card, which simulators read, is a system message "Persona card: a; b; c" of the card
// acts' templates. A reply is one act's text. Parsing accepts any template of an act (or its
// name), ignoring case and spacing, and checks whose turn each message is and that its act is
// allowed there, so a wrong dialogue is a clear error instead of a silently different one.
import type { Benchmark, Dialogue } from "../benchmarks/types";
import type { ChatMessageIn } from "../remote/client";
import { Rng } from "../engine/random";

export type Side = "user" | "agent"; // the side the served model plays

export const CARD_PREFIX = "Persona card:";

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

/** The text of an act: its first template (its name where it has none). */
export function actText(bench: Benchmark, act: number): string {
  const a = bench.acts[act];
  if (!a) throw new Error(`act ${act} is not in the ${bench.title} vocabulary`);
  return a.templates[0] || a.name;
}

/** The system message that carries a persona card. */
export function cardMessage(bench: Benchmark, card: readonly number[]): ChatMessageIn {
  return {
    role: "system",
    content: `${CARD_PREFIX} ${card.map((t) => actText(bench, t)).join("; ")}`,
  };
}

/** A dialogue as chat messages for a model that plays `side` (the card first when `withCard`). */
export function dialogueMessages(
  bench: Benchmark,
  d: Dialogue,
  side: Side,
  withCard = side === "user",
): ChatMessageIn[] {
  const out: ChatMessageIn[] = withCard ? [cardMessage(bench, d.card)] : [];
  d.acts.forEach((a, i) => {
    const speaker = bench.turn({ card: d.card, acts: d.acts.slice(0, i) });
    out.push({ role: speaker === side ? "assistant" : "user", content: actText(bench, a) });
  });
  return out;
}

/** The acts that may be said at a dialogue state (by whoever's turn it is). */
export function allowedActs(bench: Benchmark, d: Dialogue): number[] {
  const t = bench.turn(d);
  if (t === "agent") return [...bench.maskClasses[bench.agentClass(d)].allowed];
  if (t === "user") return [...bench.maskClasses[bench.userClass(d)].allowed];
  if (t === "env") return bench.acts.flatMap((a, i) => (a.kind === "env" ? [i] : []));
  return [];
}

/**
 * A short valid dialogue that ends at `side`'s turn (for probes and /v1/models' example_messages):
 * the first allowed act that hands the turn to `side` where there is one (else the first allowed),
 * and the world's own move where it moves (on a fixed hidden state).
 */
export function exampleDialogue(bench: Benchmark, side: Side): Dialogue {
  const rng = Rng.seed(0);
  const hidden = bench.humans.sampleHidden?.(rng);
  const d: Dialogue = { card: bench.humans.cardDistribution()[0].card, acts: [] };
  for (let i = 0; i < bench.context; i++) {
    const t = bench.turn(d);
    if (t === side || t === "done") break;
    const allowed = allowedActs(bench, d);
    if (t === "env")
      d.acts.push(
        bench.envAct ? bench.envAct({ ...d, ...(hidden ? { hidden } : {}) }, rng) : allowed[0],
      );
    else
      d.acts.push(
        allowed.find((a) => bench.turn({ card: d.card, acts: [...d.acts, a] }) === side) ??
          allowed[0],
      );
  }
  return { card: d.card, acts: d.acts };
}

/** The act among `candidates` that `text` says (any template or the name, case and spacing ignored); null if none. */
export function matchAct(
  bench: Benchmark,
  text: string,
  candidates: readonly number[],
): number | null {
  const t = norm(text);
  for (const c of candidates) {
    const a = bench.acts[c];
    if (norm(a.name) === t || a.templates.some((s) => norm(s) === t)) return c;
  }
  return null;
}

export class ActTextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ActTextError";
  }
}

const speakerName = (side: Side | "env", names: { agent: string; user: string }) =>
  side === "env" ? "the world" : `the ${names[side]}`;

/**
 * Reads chat messages back into a dialogue for a model playing `side`; the dialogue must end at
 * that side's turn. `defaultCard` is used when there is no card message (policies do not read it).
 */
export function parseMessages(
  bench: Benchmark,
  messages: readonly ChatMessageIn[],
  side: Side,
  names: { agent: string; user: string },
  defaultCard?: number[],
): Dialogue {
  const cardActs = bench.acts.flatMap((a, i) => (a.kind === "card" ? [i] : []));
  let card: number[] | undefined;
  const acts: number[] = [];
  messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (typeof m?.content !== "string")
      throw new ActTextError(`${where}: content must be a string`);
    if (m.role === "system") {
      const line = m.content.split(/\r?\n/).find((l) => l.trim().startsWith(CARD_PREFIX));
      if (!line) return; // other instructions are allowed and ignored
      const parts = line
        .trim()
        .slice(CARD_PREFIX.length)
        .split(";")
        .map((s) => s.trim())
        .filter(Boolean);
      card = parts.map((p) => {
        const c = matchAct(bench, p, cardActs);
        if (c === null)
          throw new ActTextError(
            `${where}: ${JSON.stringify(p)} is not a persona trait of ${bench.title}; traits: ${cardActs.map((c) => JSON.stringify(actText(bench, c))).join(", ")}`,
          );
        return c;
      });
      if (card.length !== bench.cardLen)
        throw new ActTextError(
          `${where}: a persona card has ${bench.cardLen} traits, got ${card.length}`,
        );
      return;
    }
    if (m.role !== "user" && m.role !== "assistant")
      throw new ActTextError(
        `${where}: role must be system, user or assistant, got ${JSON.stringify(m.role)}`,
      );
    const d = { card: card ?? defaultCard ?? [], acts };
    const turn = bench.turn(d);
    if (turn === "done")
      throw new ActTextError(`${where}: the dialogue is already over before this message`);
    const expected = turn === side ? "assistant" : "user";
    if (m.role !== expected)
      throw new ActTextError(
        `${where}: it is ${speakerName(turn, names)}'s turn, so this message's role must be "${expected}" (the served model plays ${names[side]})`,
      );
    const allowed = allowedActs(bench, d);
    const act = matchAct(bench, m.content, allowed);
    if (act === null)
      throw new ActTextError(
        `${where}: ${JSON.stringify(m.content.slice(0, 120))} is not an act ${speakerName(turn, names)} can say here; say one of: ${allowed.map((a) => JSON.stringify(actText(bench, a))).join(", ")}`,
      );
    acts.push(act);
  });
  const finalCard = card ?? defaultCard;
  if (!finalCard)
    throw new ActTextError(
      `the ${names.user}'s simulator needs the persona card: a system message "${CARD_PREFIX} ${cardActs
        .slice(0, bench.cardLen)
        .map((c) => actText(bench, c))
        .join("; ")}" (one trait per slot)`,
    );
  const d: Dialogue = { card: finalCard, acts };
  const turn = bench.turn(d);
  if (turn !== side)
    throw new ActTextError(
      `after these messages it is ${turn === "done" ? "nobody's turn (the dialogue is over)" : `${speakerName(turn, names)}'s turn`}, not the turn of the ${names[side]} that this model plays`,
    );
  return d;
}
