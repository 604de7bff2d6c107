// The Cooperation world (docs/architecture.md#cooperation, after CooperBench): turn rules and masks, the merge and its
// conflict rules on hand-made dialogues, reward, outcomes and failure causes, the partner
// population (each type's characteristic behaviour, reply rows on their classes), the exact type
// posterior and Bayes predictive against Monte Carlo estimates from the population itself, the
// solo reference, and the config sections.
import { describe, expect, it } from "vitest";
import {
  adaptiveAgent,
  behaviourAgent,
  modalScript,
  soloAgent,
} from "../../src/benchmarks/cooperation/agents";
import {
  createCooperation,
  failureCause,
  playEpisode,
} from "../../src/benchmarks/cooperation/bench";
import {
  CooperationCorpusSchema,
  CooperationWorldSchema,
  DEFAULT_WORLD,
  PROBE_STATES,
  cooperation,
} from "../../src/benchmarks/cooperation/index";
import { DEFAULT_PARAMS, overlapShare } from "../../src/benchmarks/cooperation/population";
import {
  ACTS,
  CARD_ACTS,
  CLASS,
  FEATURE_CARD,
  FILES,
  MASK_CLASSES,
  NPLANS,
  PLANS,
  VOCAB,
  actId,
  merge,
  reward,
  type Plans,
} from "../../src/benchmarks/cooperation/world";
import { encode } from "../../src/benchmarks/encode";
import type { Dialogue } from "../../src/benchmarks/types";
import { Rng } from "../../src/engine/random";
import { maxZ, sum } from "../stats-helpers";

const bench = createCooperation();
const pop = bench.humans;
const E = bench.params.maxExchanges;
const acts = (...names: string[]) => names.map(actId);
const plan = (a: string, b: string) =>
  PLANS.findIndex(([x, y]) => FILES[x] === a && FILES[y] === b);
/** A card for a partner with plan b (the type hints fixed), and a dialogue with both plans [agent's, partner's]. */
const cardFor = (b: number) => [CARD_ACTS[0][0], CARD_ACTS[1][0], FEATURE_CARD[b]];
const dialogue = (h: Plans, ...names: string[]): Dialogue => ({
  card: cardFor(h[1]),
  acts: acts(...names),
  hidden: [h[0]],
});
const TYPE = Object.fromEntries(pop.types.map((t, z) => [t.name, z])) as Record<string, number>;
const argmaxName = (p: ArrayLike<number>) =>
  ACTS[Array.from(p).reduce((b, x, i, a) => (x > a[b] ? i : b), 0)].name;

describe("episode rules", () => {
  it("the world opens with the agent's task; agent and partner alternate; a side that is done is skipped; each side has maxExchanges moves", () => {
    const h = [plan("models", "views"), plan("views", "utils")];
    expect(bench.turn(dialogue(h))).toBe("env");
    expect(ACTS[bench.envAct!(dialogue(h), Rng.seed(0))].name).toBe("task:models+views");
    expect(bench.turn(dialogue(h, "task:models+views"))).toBe("agent");
    expect(bench.turn(dialogue(h, "task:models+views", "wait"))).toBe("user");
    expect(bench.turn(dialogue(h, "task:models+views", "wait", "they-done"))).toBe("agent");
    // the partner is done: the agent moves on its own until it is done or out of moves
    expect(bench.turn(dialogue(h, "task:models+views", "wait", "they-done", "edit:models"))).toBe(
      "agent",
    );
    expect(bench.turn(dialogue(h, "task:models+views", "wait", "they-done", "done"))).toBe("done");
    // the agent is done: the partner keeps moving
    expect(bench.turn(dialogue(h, "task:models+views", "done"))).toBe("user");
    expect(bench.turn(dialogue(h, "task:models+views", "done", "they-edit:views"))).toBe("user");
    // out of moves
    const d = dialogue(h, "task:models+views");
    for (let i = 0; i < E; i++) {
      expect(bench.turn(d)).toBe("agent");
      d.acts.push(actId("wait"));
      expect(bench.turn(d)).toBe("user");
      d.acts.push(actId("they-wait"));
    }
    expect(bench.turn(d)).toBe("done");
    expect(bench.cardLen + 1 + d.acts.length).toBeLessThanOrEqual(bench.context);
    expect(bench.context).toBeLessThanOrEqual(64);
    expect(VOCAB).toBeLessThanOrEqual(128);
    expect(ACTS[0].name).toBe("<bos>");
    expect(d.acts.length).toBeLessThanOrEqual(1 + 12); // the task and ≤ 12 agent + partner acts
  });

  it("masks: the partner may ack or reject only right after an agent message that wants an answer; every played act lies in its class", () => {
    const h = [0, 5];
    expect(bench.userClass(dialogue(h, "task:models+views", "claim:models"))).toBe(CLASS.answer);
    expect(bench.userClass(dialogue(h, "task:models+views", "ask"))).toBe(CLASS.answer);
    expect(bench.userClass(dialogue(h, "task:models+views", "edit:models"))).toBe(CLASS.move);
    expect(MASK_CLASSES[CLASS.move].allowed).not.toContain(actId("they-ack"));
    expect(MASK_CLASSES[CLASS.answer].allowed).toContain(actId("they-ack"));
    for (const a of MASK_CLASSES[CLASS.agent].allowed) expect(ACTS[a].kind).toBe("agent");
    for (const c of [CLASS.answer, CLASS.move])
      for (const a of MASK_CLASSES[c].allowed) expect(ACTS[a].kind).toBe("user");
    // every act of played dialogues (the corpus, the reference agents, a random agent) is in the class its position is encoded with
    const rng = Rng.seed(5);
    const agentActs = MASK_CLASSES[CLASS.agent].allowed;
    const agents = [
      behaviourAgent(E),
      (d: Dialogue) => modalScript(E)(d),
      (d: Dialogue) => adaptiveAgent(E)(d),
      (_: Dialogue, r: Rng) => agentActs[r.int(agentActs.length)],
    ];
    const dialogues = Array.from({ length: 400 }, (_, i) =>
      playEpisode(bench, pop.sample(rng), agents[i % agents.length], rng),
    );
    for (const role of ["policy", "simulator"] as const) {
      const batch = encode(bench, dialogues, role);
      const off = role === "policy" ? 1 : bench.cardLen + 1;
      dialogues.forEach((d, r) =>
        d.acts.forEach((a, i) => {
          const cls = batch.cls![r * bench.context + off + i];
          expect(MASK_CLASSES[cls].allowed).toContain(a);
        }),
      );
    }
  });
});

describe("the merge", () => {
  const h = [plan("models", "views"), plan("views", "utils")]; // views is shared
  it("both features pass when every needed file is edited once: a shared file edited by one side carries both changes", () => {
    const d = dialogue(
      h,
      "task:models+views",
      "wait",
      "they-plan:views+utils",
      "edit:models",
      "they-edit:views",
      "done",
      "they-edit:utils",
      "they-done",
    );
    expect(merge(h, d.acts).conflicts).toEqual([]);
    expect(reward(h, d.acts)).toBe(1);
    expect(bench.success(d)).toBe(true);
    expect(cooperation.outcome(bench, d)).toBe("both pass");
    expect(failureCause(h, d.acts)).toBeNull();
  });
  it("a file edited by both is a conflict and breaks the whole merge", () => {
    const d = dialogue(
      h,
      "task:models+views",
      "edit:views",
      "they-edit:views",
      "edit:models",
      "they-edit:utils",
      "done",
      "they-done",
    );
    expect(merge(h, d.acts).conflicts).toEqual([1]);
    expect(reward(h, d.acts)).toBe(0);
    expect(cooperation.outcome(bench, d)).toBe("merge conflict in views.py");
    // nobody had named views before its first edit: missing communication
    expect(failureCause(h, d.acts)).toBe("communication");
    // a conflict on a file neither feature needs breaks the merge too
    const stray = dialogue(
      h,
      "task:models+views",
      "edit:models",
      "they-edit:config",
      "edit:views",
      "they-edit:utils",
      "edit:config",
      "they-done",
    );
    expect(reward(h, stray.acts)).toBe(0);
  });
  it("only the agent's feature passing is worth 0.5 (SCOPE); a needed file nobody edited is an unmet expectation", () => {
    const d = dialogue(
      h,
      "task:models+views",
      "wait",
      "they-plan:views+utils",
      "edit:models",
      "they-edit:views",
      "done",
      "they-done",
    );
    expect(reward(h, d.acts)).toBe(0.5);
    expect(bench.success(d)).toBe(false);
    expect(cooperation.outcome(bench, d)).toBe("only ours passes");
    expect(failureCause(h, d.acts)).toBe("expectation");
    const theirs = dialogue(
      h,
      "task:models+views",
      "wait",
      "they-plan:views+utils",
      "done",
      "they-edit:views",
      "they-edit:utils",
      "they-done",
    );
    expect(reward(h, theirs.acts)).toBe(0);
    expect(cooperation.outcome(bench, theirs)).toBe("only theirs passes");
  });
  it("failure causes: an agreement broken is a commitment; a named file edited anyway without agreement is an expectation", () => {
    // the partner acknowledged the agent's claim on views and edited it anyway
    const broken = dialogue(
      h,
      "task:models+views",
      "claim:views",
      "they-ack",
      "edit:views",
      "they-edit:views",
      "edit:models",
      "they-edit:utils",
    );
    expect(failureCause(h, broken.acts)).toBe("commitment");
    // the agent acknowledged the partner's plan naming views, then edited views itself
    const own = dialogue(
      h,
      "task:models+views",
      "wait",
      "they-plan:views+utils",
      "ack",
      "they-edit:utils",
      "edit:views",
      "they-edit:views",
    );
    expect(failureCause(h, own.acts)).toBe("commitment");
    // the agent claimed views, the partner never answered and edited it: the agent expected its word to be heeded
    const unheard = dialogue(
      h,
      "task:models+views",
      "claim:views",
      "they-plan:views+utils",
      "edit:views",
      "they-edit:views",
    );
    expect(failureCause(h, unheard.acts)).toBe("expectation");
  });
  it("render names both agents' messages and edits, and ends with the merge result", () => {
    const d = dialogue(
      h,
      "task:models+views",
      "wait",
      "they-plan:views+utils",
      "edit:models",
      "they-edit:views",
      "done",
      "they-edit:utils",
      "they-done",
    );
    const lines = bench.render(d, Rng.seed(2));
    expect(lines.map((l) => l.speaker)).toEqual([
      "env",
      "agent",
      "user",
      "agent",
      "user",
      "agent",
      "user",
      "user",
      "env",
    ]);
    expect(lines.at(-1)!.text).toBe("(merge) both pass.");
    expect(bench.mode(d)).toBe("done+plan|both pass");
    expect(lines[4].text).toMatch(/views\.py/);
    for (const a of ACTS.slice(1))
      expect(a.templates.length).toBeGreaterThanOrEqual(
        a.kind === "agent" || a.kind === "user" ? 2 : 1,
      );
    // an unfinished dialogue has no merge line
    expect(bench.render(dialogue(h, "task:models+views", "wait")).length).toBe(2);
  });
});

describe("the partner population", () => {
  it("priors, cards and plan pairs are distributions; 77 % of pairs share a file; sampling follows the priors", () => {
    expect(sum(pop.types.map((t) => t.prior))).toBeCloseTo(1, 12);
    expect(sum(pop.cardDistribution().map((c) => c.p))).toBeCloseTo(1, 12);
    expect(sum(DEFAULT_PARAMS.planPrior)).toBeCloseTo(1, 12);
    let shares = 0;
    for (let a = 0; a < NPLANS; a++)
      for (let b = 0; b < NPLANS; b++)
        if (PLANS[b].some((f) => PLANS[a].includes(f)))
          shares += DEFAULT_PARAMS.planPrior[a] * DEFAULT_PARAMS.planPrior[b];
    expect(overlapShare(DEFAULT_PARAMS.planPrior)).toBeCloseTo(shares, 12);
    expect(shares).toBeCloseTo(0.77, 2);
    const modal = pop.types.reduce((m, t, z) => (t.prior > pop.types[m].prior ? z : m), 0);
    expect(pop.types[modal].name).toBe("dutiful");
    const rng = Rng.seed(1);
    const n = 20000;
    const counts = new Array<number>(pop.types.length).fill(0);
    for (let i = 0; i < n; i++) counts[pop.sample(rng).type]++;
    const chi2 = counts.reduce(
      (s, c, z) => s + (c - n * pop.types[z].prior) ** 2 / (n * pop.types[z].prior),
      0,
    );
    expect(chi2).toBeLessThan(20.5); // 5 degrees of freedom, 99.9 %
  });

  it("each type's characteristic move", () => {
    const h = [plan("models", "views"), plan("views", "utils")];
    const move = (type: string, ...names: string[]) =>
      argmaxName(pop.replyProbs(TYPE[type], dialogue(h, ...names)));
    // at the start, after the agent waits
    expect(move("dutiful", "task:models+views", "wait")).toBe("they-plan:views+utils");
    expect(move("silent", "task:models+views", "wait")).toBe("they-edit:views");
    expect(move("ignorer", "task:models+views", "wait")).toBe("they-plan:views+utils");
    expect(move("deferrer", "task:models+views", "wait")).toBe("they-ask");
    // asked: those who answer state their plan; the silent one does not
    expect(move("deferrer", "task:models+views", "ask")).toBe("they-plan:views+utils");
    expect(move("silent", "task:models+views", "ask")).toBe("they-edit:views");
    // the agent claimed views and the partner agreed: the dutiful one stays off, the breaker often does not, the ignorer never read it
    const claimed = ["task:models+views", "claim:views", "they-ack", "edit:views"];
    expect(move("dutiful", ...claimed)).toBe("they-plan:views+utils");
    expect(move("dutiful", ...claimed, "they-plan:views+utils", "edit:models")).toBe(
      "they-edit:utils",
    );
    const breaker = pop.replyProbs(
      TYPE.breaker,
      dialogue(h, ...claimed, "they-plan:views+utils", "edit:models"),
    );
    expect(breaker[actId("they-edit:views")]).toBeCloseTo(
      (1 - 0.2) * (1 - bench.params.noise) +
        bench.params.noise / MASK_CLASSES[CLASS.move].allowed.length,
      12,
    );
    expect(
      move("ignorer", "task:models+views", "claim:views", "they-plan:views+utils", "edit:models"),
    ).toBe("they-edit:views");
    // a claim on a file it already edited is rejected
    expect(
      move(
        "dutiful",
        "task:models+views",
        "wait",
        "they-plan:views+utils",
        "edit:models",
        "they-edit:views",
        "claim:views",
      ),
    ).toBe("they-reject");
    // the passive partner says done after one edit, leaving utils
    expect(
      move(
        "passive",
        "task:models+views",
        "wait",
        "they-plan:views+utils",
        "edit:models",
        "they-edit:views",
        "wait",
      ),
    ).toBe("they-done");
    expect(
      move(
        "dutiful",
        "task:models+views",
        "wait",
        "they-plan:views+utils",
        "edit:models",
        "they-edit:views",
        "wait",
      ),
    ).toBe("they-edit:utils");
    // the breaker strays outside its plan once its own files are done
    const strayed = pop.replyProbs(
      TYPE.breaker,
      dialogue(
        h,
        "task:models+views",
        "wait",
        "they-plan:views+utils",
        "wait",
        "they-edit:views",
        "wait",
        "they-edit:utils",
        "wait",
      ),
    );
    expect(strayed[actId("they-edit:models")]).toBeGreaterThan(0.5);
    expect(
      pop.replyProbs(
        TYPE.dutiful,
        dialogue(
          h,
          "task:models+views",
          "wait",
          "they-plan:views+utils",
          "wait",
          "they-edit:views",
          "wait",
          "they-edit:utils",
          "wait",
        ),
      )[actId("they-done")],
    ).toBeGreaterThan(0.9);
  });

  it("replyProbs rows and the predictive sum to 1 over exactly the allowed class at every reachable partner state sampled", () => {
    const rng = Rng.seed(3);
    const agentActs = MASK_CLASSES[CLASS.agent].allowed;
    const bad: string[] = [];
    const classes = new Set<number>();
    let checked = 0;
    for (let i = 0; i < 300; i++) {
      const agent =
        i % 2 === 0
          ? behaviourAgent(E)
          : (_: Dialogue, r: Rng) => agentActs[r.int(agentActs.length)];
      const d = playEpisode(bench, pop.sample(rng), agent, rng);
      for (let j = 1; j < d.acts.length; j++) {
        for (const hidden of [d.hidden, undefined]) {
          const pre = { card: d.card, acts: d.acts.slice(0, j), hidden };
          if (bench.turn(pre) !== "user") continue;
          const cls = bench.userClass(pre);
          classes.add(cls);
          const allowed = new Set(MASK_CLASSES[cls].allowed);
          const rows = [
            ...pop.types.map((_, z) => pop.replyProbs(z, pre)),
            bench.bayesPredictive(pre),
          ];
          for (const row of rows) {
            checked++;
            if (Math.abs(sum(row) - 1) > 1e-12) bad.push(`sum ${sum(row)}`);
            row.forEach((p, v) => {
              if (!allowed.has(v) && p !== 0)
                bad.push(`${ACTS[v].name} outside class ${MASK_CLASSES[cls].name}`);
              if (p < 0) bad.push(`negative ${ACTS[v].name}`);
            });
          }
        }
      }
    }
    expect(bad.slice(0, 5)).toEqual([]);
    expect(checked).toBeGreaterThan(3000);
    expect([...classes].sort()).toEqual([CLASS.answer, CLASS.move]);
  });

  it("the exact posterior and Bayes predictive match the population's own frequencies", () => {
    // a deterministic agent makes whole dialogues repeat: group sampled episodes by (card, acts)
    const agent = modalScript(E);
    const rng = Rng.seed(7);
    const byState = new Map<string, { d: Dialogue; types: number[]; next: number[] }>();
    for (let i = 0; i < 60000; i++) {
      const persona = pop.sample(rng);
      const d = playEpisode(bench, persona, (x: Dialogue) => agent(x), rng);
      for (let j = 2; j < d.acts.length; j++) {
        const pre = { card: d.card, acts: d.acts.slice(0, j) };
        if (bench.turn(pre) !== "user") continue;
        const key = `${pre.card.join(",")}|${pre.acts.join(",")}`;
        let s = byState.get(key);
        if (!s)
          byState.set(
            key,
            (s = {
              d: pre,
              types: new Array<number>(pop.types.length).fill(0),
              next: new Array<number>(VOCAB).fill(0),
            }),
          );
        s.types[persona.type]++;
        s.next[d.acts[j]]++;
      }
    }
    const frequent = [...byState.values()].filter((s) => sum(s.types) >= 400);
    expect(frequent.length).toBeGreaterThan(10);
    let worstPosterior = 0;
    let worstPredictive = 0;
    for (const s of frequent) {
      worstPosterior = Math.max(worstPosterior, maxZ(s.types, pop.posterior(s.d)));
      worstPredictive = Math.max(worstPredictive, maxZ(s.next, bench.bayesPredictive(s.d)));
    }
    // |z| ≤ 5 over some hundred comparisons: a wrong posterior is off by far more at these counts
    expect(worstPosterior).toBeLessThan(5);
    expect(worstPredictive).toBeLessThan(5);
  });

  it("the posterior is prior × card likelihood × the product of the type's reply probabilities, normalised (a direct computation)", () => {
    const rng = Rng.seed(9);
    for (let i = 0; i < 40; i++) {
      const d = cooperation.corpusDialogue(bench, cooperation.defaultCorpus, rng);
      const like = pop.cardLikelihood(d.card);
      const w = pop.types.map((t, z) => {
        let x = t.prior * like[z];
        d.acts.forEach((a, j) => {
          if (ACTS[a].kind === "user")
            x *= pop.replyProbs(z, { card: d.card, acts: d.acts.slice(0, j), hidden: d.hidden })[a];
        });
        return x;
      });
      const post = pop.posterior(d);
      w.forEach((x, k) => expect(post[k]).toBeCloseTo(x / sum(w), 10));
    }
  });
});

describe("reference agents", () => {
  it("the solo agent (both features, no partner) succeeds on every one of the 36 plan pairs, exactly", () => {
    const solo = soloAgent();
    for (let a = 0; a < NPLANS; a++)
      for (let b = 0; b < NPLANS; b++) {
        const d = playEpisode(
          bench,
          { card: cardFor(b), type: 0, hidden: [a] },
          (x: Dialogue) => solo(x),
          Rng.seed(0),
          "solo",
        );
        expect(bench.success(d)).toBe(true);
      }
  });

  it("probe states are partner turns reachable under the population", () => {
    for (const s of PROBE_STATES) {
      const d = { card: cardFor(0), acts: s.acts.map(actId) };
      expect(bench.turn(d)).toBe("user");
      expect(sum(pop.posterior(d))).toBeCloseTo(1, 12);
    }
  });
});

describe("config sections", () => {
  it("defaults parse; a type prior must have one weight per type; a prior replaces the mixture", () => {
    expect(CooperationWorldSchema.parse(DEFAULT_WORLD)).toEqual(DEFAULT_WORLD);
    expect(CooperationCorpusSchema.parse(cooperation.defaultCorpus)).toEqual(
      cooperation.defaultCorpus,
    );
    expect(() => CooperationWorldSchema.parse({ ...DEFAULT_WORLD, typePrior: [1, 0] })).toThrow();
    expect(() => CooperationWorldSchema.parse({ ...DEFAULT_WORLD, maxExchanges: 31 })).toThrow();
    const skewed = cooperation.create(DEFAULT_WORLD, [0, 1, 0, 0, 0, 1]);
    expect(skewed.humans.types.map((t) => t.prior)).toEqual([0, 0.5, 0, 0, 0, 0.5]);
    expect(() => cooperation.create(DEFAULT_WORLD, [0, 0, 0, 0, 0, 0])).toThrow(/positive/);
    expect(cooperation.typeNames).toEqual([
      "dutiful",
      "silent",
      "ignorer",
      "breaker",
      "passive",
      "deferrer",
    ]);
  });
});
