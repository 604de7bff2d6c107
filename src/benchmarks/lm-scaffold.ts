// The prompt shapes every benchmark's lm-prompts.ts shares (docs/architecture.md#the-lm-tier): the
// Direct and Verbalized Sampling chat prompts, the base-model transcript and the act-label prompt
// of the LM simulator, each built from what the benchmark says in words (its task, persona and
// dialogue); and a module's `lm` part from those prompts and its reading of outcomes.
import type { ChatMessage, LmPrompt } from "../lm/types";
import { vsInstruction, type VsPromptOptions } from "../lm/vs-prompt";
import type { BenchmarkLm, Dialogue, LabelPromptStyle } from "./types";

/** What a benchmark says to make an LM play its user. */
export interface UserPromptParts {
  agentName: string; // the agent, in instructions and base-model transcripts: "Persuader"
  baseUserName: string; // the user in base-model transcripts: "Persuadee"
  checkUserTurn(d: Dialogue, fn: string): void; // throws, naming fn, unless the user replies next
  systemPrompt(d: Dialogue): string; // the task, the persona and how to answer
  conversation(d: Dialogue): string; // the dialogue so far, introduced
  baseHeader(d: Dialogue): string; // the base-model transcript's opening: the scene in the third person
  renderTranscript(d: Dialogue, names: { agent: string; user: string }): string;
  allowedActs(d: Dialogue): readonly number[]; // the user acts allowed now, in the world's order
  actLabel(act: number): string; // the phrase that stands for a user act
}

export interface ActLabelPrompt {
  prompt: LmPrompt;
  acts: number[]; // the allowed user acts, in the world's order
  continuations: string[]; // what is scored for each act (label, with a leading space in text style)
}

/** A reply as a continuation of a base-model prompt: one leading space, no trailing whitespace. */
export const baseContinuation = (reply: string) => ` ${reply.trim()}`;

/** The prompts that make an LM play a benchmark's user, from what the benchmark says. */
export function userPrompts(p: UserPromptParts) {
  /** (a) Direct: one reply, as chat messages. */
  function directPrompt(d: Dialogue): { chat: ChatMessage[] } {
    p.checkUserTurn(d, "directPrompt");
    return {
      chat: [
        { role: "system", content: p.systemPrompt(d) },
        {
          role: "user",
          content: `${p.conversation(d)}\n\nWrite your next reply to the ${p.agentName}. Output ONLY the reply, with no explanation or extra text.`,
        },
      ],
    };
  }

  /** (b) Verbalized Sampling: k replies with probabilities, as JSON {"responses":[{"text","probability"}]}. */
  function vsPrompt(d: Dialogue, opts: VsPromptOptions = {}): { chat: ChatMessage[] } {
    p.checkUserTurn(d, "vsPrompt");
    const { k, text } = vsInstruction(opts);
    return {
      chat: [
        { role: "system", content: `${p.systemPrompt(d)}\n\n${text}` },
        {
          role: "user",
          content: `${p.conversation(d)}\n\nGenerate ${k} possible next replies of yours to the ${p.agentName}.`,
        },
      ],
    };
  }

  /**
   * (c) For base models: a third-person transcript ending in the user's name and a colon, so that a
   * reply r is scored as the continuation `baseContinuation(r)`.
   */
  function baseTextPrompt(d: Dialogue): { text: string } {
    p.checkUserTurn(d, "baseTextPrompt");
    const header = p.baseHeader(d);
    return {
      text: `${header}\n\n${p.renderTranscript(d, { agent: p.agentName, user: p.baseUserName })}\n${p.baseUserName}:`,
    };
  }

  /**
   * The prompt whose continuations are the allowed user acts' labels: `text` (default) is the
   * base-model transcript, whose continuations are " " + label; `chat` is the Direct prompt, whose
   * assistant reply is the label itself.
   */
  function actLabelPrompt(d: Dialogue, style: LabelPromptStyle = "text"): ActLabelPrompt {
    p.checkUserTurn(d, "actLabelPrompt");
    const acts = [...p.allowedActs(d)];
    const labels = acts.map(p.actLabel);
    if (style === "text")
      return { prompt: baseTextPrompt(d), acts, continuations: labels.map(baseContinuation) };
    if (style === "chat") return { prompt: directPrompt(d), acts, continuations: labels };
    throw new Error(`actLabelPrompt: unknown style ${JSON.stringify(style satisfies never)}`);
  }

  return { directPrompt, vsPrompt, baseTextPrompt, actLabelPrompt };
}

/** The prompt functions and presets a benchmark's lm-prompts.ts exports. */
export interface LmPromptModule {
  actLabelPrompt: BenchmarkLm["actLabelPrompt"];
  directPrompt: BenchmarkLm["directPrompt"];
  vsPrompt: BenchmarkLm["vsPrompt"];
  baseTextPrompt: BenchmarkLm["baseTextPrompt"];
  baseContinuation: BenchmarkLm["baseContinuation"];
  renderTranscript(d: Dialogue): string;
  describeCard: BenchmarkLm["describeCard"];
  decisionDue: BenchmarkLm["decisionDue"];
  LM_CARDS: BenchmarkLm["cards"];
  LM_STATES: BenchmarkLm["states"];
}

/** A module's `lm` part: its prompts and presets, with how it names and reads outcomes. */
export function benchmarkLm(
  prompts: LmPromptModule,
  outcomes: Pick<BenchmarkLm, "outcomeName" | "parseOutcome" | "compareOutcomes" | "outcomeView">,
): BenchmarkLm {
  return {
    actLabelPrompt: prompts.actLabelPrompt,
    directPrompt: prompts.directPrompt,
    vsPrompt: prompts.vsPrompt,
    baseTextPrompt: prompts.baseTextPrompt,
    baseContinuation: prompts.baseContinuation,
    renderTranscript: (d) => prompts.renderTranscript(d), // the default names (the model is the user)
    describeCard: prompts.describeCard,
    decisionDue: prompts.decisionDue,
    cards: prompts.LM_CARDS,
    states: prompts.LM_STATES,
    ...outcomes,
  };
}
