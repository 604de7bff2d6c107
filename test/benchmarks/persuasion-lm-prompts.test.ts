// The persuadee prompts: the card in words, the dialogue with the act templates and the right
// speakers (the final decision after the 5th exchange included), Direct vs VS chat messages, the
// base-model transcript, the act labels of the LM simulator, and clear errors off the user's turn.
import { describe, expect, it } from "vitest";
import {
  ACTS,
  AMOUNT_ACTS,
  ASK,
  CARD_ACTS,
  GREETING,
  STRATEGY_ACTS,
  USER_ACTS,
} from "../../src/benchmarks/persuasion/world";
import type { Dialogue } from "../../src/benchmarks/types";
import {
  actLabel,
  actLabelPrompt,
  baseContinuation,
  baseTextPrompt,
  describeCard,
  directPrompt,
  renderTranscript,
  vsPrompt,
} from "../../src/benchmarks/persuasion/lm-prompts";
import { promptKey } from "../../src/lm/types";

const card = [CARD_ACTS[1], CARD_ACTS[2], CARD_ACTS[5]]; // agreeable, not very caring, rational
const name = (n: string) => ACTS.findIndex((a) => a.name === n);
const talk: Dialogue = { card, acts: [GREETING, name("neutral"), name("credibility")] };
const asked: Dialogue = {
  card,
  acts: [GREETING, name("neutral"), name("credibility"), name("ask-question"), ASK],
};
// five exchanges without an ask: the persuadee states the donation at act index 10
const fifth: Dialogue = {
  card,
  acts: Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? STRATEGY_ACTS[i / 2] : USER_ACTS[0])),
};

describe("persona and transcript", () => {
  it("describes the card traits in words", () => {
    expect(describeCard(card)).toBe("agreeable, not very caring and rational");
    expect(describeCard([CARD_ACTS[0], CARD_ACTS[3], CARD_ACTS[4]])).toBe(
      "not very agreeable, caring and not very rational",
    );
    expect(() => describeCard([GREETING])).toThrow(/not a persuasion card trait/);
  });

  it("renders the dialogue with the first template of each act, Persuader and You taking turns", () => {
    expect(renderTranscript(asked)).toBe(
      [
        "Persuader: Hi! How are you today?",
        "You: Okay.",
        "Persuader: Save the Children has worked for a hundred years and is audited every year.",
        "You: How do I know the money gets there?",
        "Persuader: Would you like to donate some of your payment?",
      ].join("\n"),
    );
    const done = renderTranscript({ card, acts: [...fifth.acts, AMOUNT_ACTS[2]] }).split("\n");
    expect(done).toHaveLength(11);
    expect(done[10]).toBe("You: I'll donate $1.00."); // the final decision is the user's
  });
});

describe("Direct and VS prompts", () => {
  it("Direct: a system message with the task and persona, a user message with the conversation, one reply asked for", () => {
    const { chat } = directPrompt(talk);
    expect(chat.map((m) => m.role)).toEqual(["system", "user"]);
    expect(chat[0].content).toContain("Save the Children");
    expect(chat[0].content).toContain("you are agreeable, not very caring and rational");
    expect(chat[0].content).not.toContain("time to decide");
    expect(chat[1].content).toContain(renderTranscript(talk));
    expect(chat[1].content).toMatch(/Output ONLY the reply/);
  });

  it("asks for a donation amount when one is due (after an ask, and after the 5th exchange)", () => {
    expect(directPrompt(asked).chat[0].content).toContain("say how much you will donate");
    expect(directPrompt(fifth).chat[0].content).toContain("say how much you will donate");
  });

  it("VS: the same persona and conversation, plus k responses with probabilities as JSON", () => {
    const direct = directPrompt(talk).chat;
    const { chat } = vsPrompt(talk, { k: 4 });
    expect(chat[0].content.startsWith(direct[0].content)).toBe(true);
    expect(chat[0].content).toContain("Generate 4 different responses to your interlocutor");
    expect(chat[0].content).toContain('"responses"');
    expect(chat[0].content).toContain('"probability"');
    expect(chat[0].content).toContain("Only output the JSON object");
    expect(chat[0].content).not.toContain("below");
    expect(chat[1].content).toContain(renderTranscript(talk));
    expect(vsPrompt(talk).chat[0].content).toContain("Generate 5 different"); // default k
    expect(vsPrompt(talk, { probabilityBelow: 0.1 }).chat[0].content).toContain(
      "with the probability of each response below 0.1",
    );
    expect(() => vsPrompt(talk, { k: 0 })).toThrow(/k must be a positive integer/);
    expect(() => vsPrompt(talk, { probabilityBelow: 2 })).toThrow(/probabilityBelow/);
  });

  it("the base-model prompt is a third-person transcript ending in 'Persuadee:'", () => {
    const { text } = baseTextPrompt(asked);
    expect(text).toContain("The Persuadee is agreeable, not very caring and rational.");
    expect(text).toContain("Persuadee: How do I know the money gets there?");
    expect(
      text.endsWith("Persuader: Would you like to donate some of your payment?\nPersuadee:"),
    ).toBe(true);
    expect(baseContinuation("  I'll give $1. \n")).toBe(" I'll give $1.");
  });

  it("refuses a dialogue that is not at the persuadee's turn", () => {
    for (const d of [
      { card, acts: [] },
      { card, acts: [GREETING, name("neutral")] },
      { card, acts: [...asked.acts, AMOUNT_ACTS[0]] },
    ]) {
      expect(() => directPrompt(d)).toThrow(/not the persuadee's/);
      expect(() => vsPrompt(d)).toThrow(/not the persuadee's/);
      expect(() => actLabelPrompt(d)).toThrow(/not the persuadee's/);
    }
  });
});

describe("act labels", () => {
  it("talk acts are their first template; amounts share one sentence", () => {
    expect(USER_ACTS.map(actLabel)).toEqual(USER_ACTS.map((a) => ACTS[a].templates[0]));
    expect(AMOUNT_ACTS.map(actLabel)).toEqual([
      "I will donate $0.00.",
      "I will donate $0.50.",
      "I will donate $1.00.",
      "I will donate $1.50.",
      "I will donate $2.00.",
    ]);
    expect(() => actLabel(GREETING)).toThrow(/not a user act/);
  });

  it("the label prompt lists the allowed class: talk acts mid-dialogue, amounts when a donation is due", () => {
    const t = actLabelPrompt(talk);
    expect(t.acts).toEqual(USER_ACTS);
    expect(t.continuations).toEqual(USER_ACTS.map((a) => " " + actLabel(a)));
    expect(t.prompt).toEqual(baseTextPrompt(talk));
    for (const d of [asked, fifth]) expect(actLabelPrompt(d).acts).toEqual(AMOUNT_ACTS);
    const c = actLabelPrompt(asked, "chat");
    expect(c.prompt).toEqual(directPrompt(asked));
    expect(c.continuations).toEqual(AMOUNT_ACTS.map(actLabel));
  });

  it("equal dialogues give equal prompt keys, different ones different keys", () => {
    expect(promptKey(actLabelPrompt(talk).prompt)).toBe(
      promptKey(actLabelPrompt({ card: [...card], acts: [...talk.acts] }).prompt),
    );
    expect(promptKey(actLabelPrompt(talk).prompt)).not.toBe(
      promptKey(actLabelPrompt(asked).prompt),
    );
    expect(promptKey(directPrompt(talk))).not.toBe(promptKey(baseTextPrompt(talk)));
  });
});
