// The customer prompts of Service: the card in words, the call with the act templates and the
// right speakers (Agent, You, System), the problem and the screens seen in the system message,
// Direct vs VS chat messages (VS in the format vs-parse reads), the base-model transcript, act
// labels that are exactly the allowed reply class and distinct, the lab's presets, clear errors off
// the customer's turn, and the outcome read from text (good and bad text, the module's own words).
import { describe, expect, it } from "vitest";
import {
  ACTS,
  CARD_ACTS,
  CLASS,
  MASK_CLASSES,
  R,
  USER_ACTS,
  actId,
  replyClass,
} from "../../src/benchmarks/service/world";
import { createService } from "../../src/benchmarks/service/bench";
import type { Dialogue } from "../../src/benchmarks/types";
import {
  LM_CARDS,
  LM_STATES,
  actLabel,
  actLabelPrompt,
  baseContinuation,
  baseTextPrompt,
  decisionDue,
  describeCard,
  directPrompt,
  renderTranscript,
  vsPrompt,
} from "../../src/benchmarks/service/lm-prompts";
import { compareResolved, parseResolved } from "../../src/benchmarks/service/lm-measures";
import { benchmarkModule } from "../../src/benchmarks/registry";
import { parseVs } from "../../src/lm/vs-parse";
import { promptKey } from "../../src/lm/types";

const card = [CARD_ACTS[0][2], CARD_ACTS[1][0], CARD_ACTS[2][1]]; // senior, tech-low, stressed
const acts = (...names: string[]) => names.map(actId);
const step: Dialogue = {
  card,
  acts: acts(
    "ticket:mobile-data",
    "query-account",
    "account:ok",
    "check:apn",
    "see:apn-bad",
    "fix:reset-apn",
  ),
};
const reassured: Dialogue = {
  card,
  acts: acts("ticket:no-service", "check:sim", "see:sim-bad", "reassure"),
};
const confirm: Dialogue = {
  card,
  acts: acts("ticket:mms", "fix:grant-permission", "did-fix", "confirm"),
};
const bench = createService();

describe("persona and transcript", () => {
  it("describes the card (age, tech, mood) in words and refuses other tokens", () => {
    expect(describeCard(card)).toBe("a senior, not at ease with phone settings and stressed");
    expect(describeCard([CARD_ACTS[0][0], CARD_ACTS[1][1], CARD_ACTS[2][2]])).toBe(
      "young, at ease with phone settings and in a hurry",
    );
    expect(() => describeCard([CARD_ACTS[1][0], CARD_ACTS[0][0], CARD_ACTS[2][0]])).toThrow(
      /not a service card age value/,
    );
    expect(() => describeCard([CARD_ACTS[0][0]])).toThrow(/3 tokens/);
  });

  it("renders the call with the first template of each act: System for the ticket and screens, Agent, You", () => {
    expect(renderTranscript(step)).toBe(
      [
        "System: [Ticket] My mobile data doesn't work.",
        "Agent: Let me look up your account.",
        "System: (account) The account is in good standing.",
        "Agent: Could you open the APN settings and read me the entry?",
        "System: (screen) APN: custom entry, invalid.",
        "Agent: Please reset the APN settings to default.",
      ].join("\n"),
    );
    expect(renderTranscript(confirm).split("\n")[2]).toBe("You: Done.");
    // the same texts as the world's own rendering (first templates)
    expect(
      renderTranscript(step)
        .split("\n")
        .map((l) => l.slice(l.indexOf(": ") + 2)),
    ).toEqual(bench.render(step).map((l) => l.text));
  });
});

describe("Direct and VS prompts", () => {
  it("Direct: the task, persona, problem and the screens seen in the system message; the call in the user message", () => {
    const { chat } = directPrompt(step);
    expect(chat.map((m) => m.role)).toEqual(["system", "user"]);
    expect(chat[0].content).toContain("support line");
    expect(chat[0].content).toContain(
      "you are a senior, not at ease with phone settings and stressed",
    );
    expect(chat[0].content).toContain("Your problem: My mobile data doesn't work.");
    expect(chat[0].content).toContain(
      "What your phone has shown so far: APN: custom entry, invalid.",
    );
    expect(chat[0].content).not.toContain("whether it works now");
    expect(chat[1].content).toContain(renderTranscript(step));
    expect(chat[1].content).toMatch(/Output ONLY the reply/);
    expect(directPrompt(confirm).chat[0].content).toContain(
      "You have not looked at any settings yet.",
    );
  });

  it("asks whether the phone works exactly when the agent asked to try it", () => {
    expect(decisionDue(confirm)).toBe(true);
    expect(decisionDue(step)).toBe(false);
    expect(decisionDue(reassured)).toBe(false);
    expect(directPrompt(confirm).chat[0].content).toContain("say whether it works now");
  });

  it("VS: the same persona and call plus k responses as JSON, which vs-parse reads", () => {
    const direct = directPrompt(step).chat;
    const { chat } = vsPrompt(step, { k: 4 });
    expect(chat[0].content.startsWith(direct[0].content)).toBe(true);
    expect(chat[0].content).toContain("Generate 4 different responses to your interlocutor");
    expect(chat[0].content).toContain('"responses"');
    expect(chat[0].content).toContain("Only output the JSON object");
    expect(chat[1].content).toContain(renderTranscript(step));
    expect(vsPrompt(step).chat[0].content).toContain("Generate 5 different");
    expect(vsPrompt(step, { probabilityBelow: 0.1 }).chat[0].content).toContain("below 0.1");
    expect(() => vsPrompt(step, { k: 0 })).toThrow(/k must be a positive integer/);
    expect(() => vsPrompt(step, { probabilityBelow: 2 })).toThrow(/probabilityBelow/);
    // an answer in the asked-for format parses into its k candidates
    const answer = JSON.stringify({
      responses: [0.5, 0.3, 0.2].map((probability, i) => ({
        text: ACTS[USER_ACTS[i]].templates[0],
        probability,
      })),
    });
    const parsed = parseVs(answer, { k: 3 });
    expect(parsed.format).toBe("json");
    expect(parsed.candidates.map((c) => c.text)).toEqual(
      USER_ACTS.slice(0, 3).map((a) => ACTS[a].templates[0]),
    );
    expect(parsed.warnings).toEqual([]);
  });

  it("the base-model prompt is a third-person transcript ending in 'Customer:'", () => {
    const { text } = baseTextPrompt(confirm);
    expect(text).toContain(
      "The Customer is a senior, not at ease with phone settings and stressed.",
    );
    expect(text).toContain("Customer: Done.");
    expect(text.endsWith("Agent: Could you try now: does it work?\nCustomer:")).toBe(true);
    expect(baseContinuation("  Yes! \n")).toBe(" Yes!");
  });

  it("refuses a call that is not at the customer's turn", () => {
    for (const [d, why] of [
      [{ card, acts: [] }, /system's turn/],
      [{ card, acts: acts("ticket:mms") }, /agent's turn/],
      [{ card, acts: acts("ticket:mms", "check:sim") }, /system's turn/],
      [{ card, acts: [...confirm.acts, R["confirm-ok"]] }, /over/],
      [{ card, acts: acts("ticket:mms", "transfer") }, /over/],
    ] as const) {
      for (const f of [directPrompt, vsPrompt, baseTextPrompt, actLabelPrompt])
        expect(() => f(d as Dialogue), f.name).toThrow(why);
      expect(() => directPrompt(d as Dialogue)).toThrow(/not the customer's/);
    }
  });
});

describe("act labels", () => {
  it("every customer act's label is its first template, and they are distinct", () => {
    expect(USER_ACTS.map(actLabel)).toEqual(USER_ACTS.map((a) => ACTS[a].templates[0]));
    expect(new Set(USER_ACTS.map(actLabel)).size).toBe(USER_ACTS.length);
    expect(() => actLabel(actId("confirm"))).toThrow(/not a customer act/);
    expect(() => actLabel(actId("see:sim-ok"))).toThrow(/not a customer act/);
  });

  it("the label prompt lists exactly the allowed reply class: a step's outcomes, an acknowledgement, a confirmation", () => {
    for (const [d, cls] of [
      [step, CLASS.fixReply],
      [reassured, CLASS.ackReply],
      [confirm, CLASS.confirmReply],
    ] as const) {
      expect(replyClass(d.acts)).toBe(cls);
      const t = actLabelPrompt(d);
      expect(t.acts).toEqual(MASK_CLASSES[cls].allowed);
      expect(t.acts).toEqual(bench.maskClasses[bench.userClass(d)].allowed);
      expect(t.continuations).toEqual(t.acts.map((a) => " " + actLabel(a)));
      expect(new Set(t.continuations).size).toBe(t.acts.length);
      expect(t.prompt).toEqual(baseTextPrompt(d));
      const c = actLabelPrompt(d, "chat");
      expect(c.prompt).toEqual(directPrompt(d));
      expect(c.continuations).toEqual(t.acts.map(actLabel));
    }
    expect(actLabelPrompt(confirm).acts).toEqual([R["confirm-ok"], R["not-ok"], R.leave]);
  });

  it("equal dialogues give equal prompt keys, different ones different keys", () => {
    expect(promptKey(actLabelPrompt(step).prompt)).toBe(
      promptKey(actLabelPrompt({ card: [...card], acts: [...step.acts] }).prompt),
    );
    expect(promptKey(actLabelPrompt(step).prompt)).not.toBe(
      promptKey(actLabelPrompt(confirm).prompt),
    );
    expect(promptKey(actLabelPrompt(step).prompt)).not.toBe(
      promptKey(actLabelPrompt({ card: LM_CARDS[0].card, acts: step.acts }).prompt),
    );
  });
});

describe("the LM lab's presets", () => {
  it("distinct cards in words, each a card of the population; states at the customer's turn, some asking whether it works", () => {
    const known = new Set(bench.humans.cardDistribution().map((c) => c.card.join(",")));
    expect(LM_CARDS.length).toBeGreaterThanOrEqual(4);
    expect(new Set(LM_CARDS.map((c) => c.label)).size).toBe(LM_CARDS.length);
    for (const c of LM_CARDS) {
      expect(known.has(c.card.join(",")), c.id).toBe(true);
      expect(c.label).toBe(describeCard(c.card));
    }
    expect(new Set(LM_STATES.map((s) => s.id)).size).toBe(LM_STATES.length);
    for (const s of LM_STATES) {
      const d = { card: LM_CARDS[0].card, acts: s.acts.map(actId) };
      expect(bench.turn(d), s.id).toBe("user");
      expect(() => directPrompt(d), s.id).not.toThrow();
    }
    expect(
      LM_STATES.filter((s) => decisionDue({ card, acts: s.acts.map(actId) })).length,
    ).toBeGreaterThanOrEqual(2);
  });

  it("the module's lm part is these functions and presets", () => {
    const lm = benchmarkModule("service").lm!;
    expect(lm.cards).toBe(LM_CARDS);
    expect(lm.states).toBe(LM_STATES);
    expect(lm.actLabelPrompt(step)).toEqual(actLabelPrompt(step));
    expect(lm.renderTranscript(step)).toBe(renderTranscript(step));
    expect(lm.outcomeView.reference).toBeNull();
    expect(lm.outcomeView.format(1)).toBe("works");
    expect(lm.outcomeView.format(0)).toBe("not working");
    expect(lm.outcomeView.format(0.25)).toBe("25\u202f%");
  });
});

describe("the outcome in text: does the phone work?", () => {
  it("reads 'it works' as 1 and 'it does not' or leaving as 0", () => {
    for (const t of [
      "Yes, it works now!",
      "Great, it's working.",
      "It's fixed, thank you so much!",
      "Oh! My data is back to normal.",
      "Yes it works now, thanks, bye!",
      "No wait, it works now.",
    ])
      expect(parseResolved(t), t).toBe(1);
    for (const t of [
      "No, it still doesn't work.",
      "Still nothing, sorry.",
      "I don't think it works.",
      "It is not working.",
      "It worked for a second, but now it doesn't work again.",
      "I still can't send pictures.",
      "I don't have time for this. Bye.",
      "Forget it, I'll go to the shop.",
      "No worries, but it still does not work",
    ])
      expect(parseResolved(t), t).toBe(0);
  });

  it("says nothing for replies that state no verdict, questions and hedges", () => {
    for (const t of [
      "",
      "Done.",
      "Okay.",
      "Sorry, where is that?",
      "I'd rather not do that, I might lose everything.",
      "Does it work now?",
      "I don't know if it works.",
      "I'm working on it.",
      "I pressed something… was that it?",
    ])
      expect(parseResolved(t), JSON.stringify(t)).toBeNull();
  });

  it("every label reads as its act means: the confirm replies 1 / 0 / 0, the others no verdict", () => {
    expect(parseResolved(actLabel(R["confirm-ok"]))).toBe(1);
    expect(parseResolved(actLabel(R["not-ok"]))).toBe(0);
    expect(parseResolved(actLabel(R.leave))).toBe(0);
    for (const a of [
      R["did-fix"],
      R["failed-fix"],
      R["did-something-else"],
      R.confused,
      R.refuse,
      R.ack,
    ])
      expect(parseResolved(actLabel(a)), ACTS[a].name).toBeNull();
    // every template, not only the first
    for (const t of ACTS[R["confirm-ok"]].templates) expect(parseResolved(t)).toBe(1);
    for (const t of [...ACTS[R["not-ok"]].templates, ...ACTS[R.leave].templates])
      expect(parseResolved(t)).toBe(0);
  });

  it("reads the module's own outcome words: fixed 1, every other end 0", () => {
    const m = benchmarkModule("service");
    const words = {
      fixed: 1,
      "confirmed, not fixed": 0,
      "transferred (could not be fixed)": 0,
      "transferred (fixable)": 0,
      "customer left": 0,
      "not fixed (out of time)": 0,
    };
    for (const [w, v] of Object.entries(words)) expect(m.lm!.parseOutcome(w), w).toBe(v);
  });

  it("compares nothing with real data: a histogram on {0, 1}, the share resolved, no human, KS or L1", () => {
    const c = compareResolved([1, 0, null, 1, 1]);
    expect(c).toEqual({
      amounts: [0, 1],
      counts: [1, 3],
      fractions: [0.25, 0.75],
      human: [],
      parsed: 4,
      unparsed: 1,
      mean: 0.75,
      ks: null,
      l1: null,
    });
    expect(compareResolved([null, null])).toMatchObject({
      parsed: 0,
      unparsed: 2,
      mean: null,
      fractions: [0, 0],
    });
    expect(() => compareResolved([NaN])).toThrow(/not a number/);
  });
});
