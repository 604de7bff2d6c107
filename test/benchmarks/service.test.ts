// The Service world (docs/architecture.md#service): episode rules and the device state machine on hand-written
// dialogues, reward and outcomes, the population's reply rows on their classes, the exact type and
// task posteriors and Bayes predictive against Monte Carlo estimates from the population itself,
// pass^k, and the config sections.
import { describe, expect, it } from "vitest";
import { carefulAgent } from "../../src/benchmarks/service/agents";
import { createService, outcomeOf, playEpisode, reward } from "../../src/benchmarks/service/bench";
import { meanPassK, passK } from "../../src/benchmarks/service/calibration";
import {
  DEFAULT_WORLD,
  ServiceCorpusSchema,
  ServiceWorldSchema,
  service,
} from "../../src/benchmarks/service/index";
import { DEFAULT_PARAMS, enumerateTasks } from "../../src/benchmarks/service/population";
import {
  ACTS,
  CLASS,
  FACTORS,
  MASK_CLASSES,
  VOCAB,
  actId,
  allResolved,
  fixLength,
  type Hidden,
} from "../../src/benchmarks/service/world";
import type { Dialogue } from "../../src/benchmarks/types";
import { Rng } from "../../src/engine/random";
import { maxZ, sum } from "../stats-helpers";

const bench = createService();
const pop = bench.humans;
const acts = (...names: string[]) => names.map(actId);
const CARD = pop.cardDistribution()[0].card;

/** A hidden task: the intent and the named faults ("apn=broken"), every other factor fine. */
function task(intent: number, ...faults: string[]): Hidden {
  const h = [intent, ...FACTORS.map(() => 0)];
  for (const f of faults) {
    const [name, value] = f.split("=");
    const i = FACTORS.findIndex((x) => x.name === name);
    h[1 + i] = FACTORS[i].values.indexOf(value);
    if (i < 0 || h[1 + i] < 0) throw new Error(`no fault ${f}`);
  }
  return h;
}
const dialogue = (hidden: Hidden, ...names: string[]): Dialogue => ({
  card: CARD,
  acts: acts(...names),
  hidden,
});

describe("episode rules and the device", () => {
  it("the world opens with the ticket, screens and look-ups are its moves, steps go to the customer, and the context holds the longest dialogue", () => {
    const h = task(1, "apn=broken");
    expect(bench.turn(dialogue(h))).toBe("env");
    expect(ACTS[bench.envAct!(dialogue(h), Rng.seed(0))].name).toBe("ticket:mobile-data");
    expect(bench.turn(dialogue(h, "ticket:mobile-data"))).toBe("agent");
    expect(bench.turn(dialogue(h, "ticket:mobile-data", "check:apn"))).toBe("env");
    expect(
      ACTS[bench.envAct!(dialogue(h, "ticket:mobile-data", "check:apn"), Rng.seed(0))].name,
    ).toBe("see:apn-bad");
    expect(bench.turn(dialogue(h, "ticket:mobile-data", "fix:reset-apn"))).toBe("user");
    expect(bench.turn(dialogue(h, "ticket:mobile-data", "account:refuel-data"))).toBe("env");
    expect(bench.turn(dialogue(h, "ticket:mobile-data", "transfer"))).toBe("done");
    expect(bench.turn(dialogue(h, "ticket:mobile-data", "fix:reset-apn", "leave"))).toBe("done");
    expect(bench.userClass(dialogue(h, "ticket:mobile-data", "fix:reset-apn"))).toBe(
      CLASS.fixReply,
    );
    expect(bench.userClass(dialogue(h, "ticket:mobile-data", "check:apn"))).toBe(CLASS.env);
    // maxExchanges agent turns, then done; the longest dialogue fits the context
    const d = dialogue(h, "ticket:mobile-data");
    for (let i = 0; i < DEFAULT_WORLD.maxExchanges; i++) {
      expect(bench.turn(d)).toBe("agent");
      d.acts.push(actId("check:data"), actId("see:data-ok"));
    }
    expect(bench.turn(d)).toBe("done");
    expect(bench.cardLen + 1 + d.acts.length).toBeLessThanOrEqual(bench.context);
    expect(bench.context).toBeLessThanOrEqual(64);
    expect(VOCAB).toBeLessThanOrEqual(128);
    expect(ACTS[0].name).toBe("<bos>");
  });

  it("a broken APN needs the reset and then a restart: a restart first does not count, and the screen shows it", () => {
    const h = task(1, "apn=broken");
    const base = ["ticket:mobile-data", "fix:reboot", "did-fix", "fix:reset-apn", "did-fix"];
    expect(allResolved(h, acts(...base))).toBe(false);
    expect(ACTS[bench.envAct!(dialogue(h, ...base, "check:apn"), Rng.seed(0))].name).toBe(
      "see:apn-bad",
    );
    const fixed = [...base, "fix:reboot", "did-fix"];
    expect(allResolved(h, acts(...fixed))).toBe(true);
    expect(ACTS[bench.envAct!(dialogue(h, ...fixed, "check:apn"), Rng.seed(0))].name).toBe(
      "see:apn-ok",
    );
    // a step the customer failed changes nothing
    expect(
      allResolved(
        h,
        acts("ticket:mobile-data", "fix:reset-apn", "failed-fix", "fix:reboot", "did-fix"),
      ),
    ).toBe(false);
    expect(fixLength(h)).toBe(2);
  });

  it("an overdue bill: only the look-up shows it, and it needs request, payment, resume and restart in that order", () => {
    const h = task(0, "account=bill-overdue");
    expect(
      ACTS[bench.envAct!(dialogue(h, "ticket:no-service", "query-account"), Rng.seed(0))].name,
    ).toBe("account:bill-overdue");
    const plan = [
      "ticket:no-service",
      "account:request-payment",
      "done",
      "fix:pay-bill",
      "did-fix",
      "account:resume-line",
      "done",
      "fix:reboot",
      "did-fix",
    ];
    expect(allResolved(h, acts(...plan))).toBe(true);
    expect(ACTS[bench.envAct!(dialogue(h, ...plan, "query-account"), Rng.seed(0))].name).toBe(
      "account:ok",
    );
    expect(
      allResolved(
        h,
        acts(
          "ticket:no-service",
          "fix:pay-bill",
          "did-fix",
          "account:request-payment",
          "done",
          "account:resume-line",
          "done",
          "fix:reboot",
          "did-fix",
        ),
      ),
    ).toBe(false);
    expect(fixLength(h)).toBe(2); // pay and restart
  });

  it("reward: 1 for a confirmed fix or a transfer of what cannot be fixed, 0 otherwise; outcomes in words", () => {
    const h = task(0, "airplane=on");
    const fixed = dialogue(
      h,
      "ticket:no-service",
      "fix:toggle-airplane",
      "did-fix",
      "confirm",
      "confirm-ok",
    );
    expect(reward(fixed)).toBe(1);
    expect(bench.success(fixed)).toBe(true);
    expect(outcomeOf(fixed)).toBe("fixed");
    // a simulator may say it works when it does not: no reward
    const premature = dialogue(h, "ticket:no-service", "confirm", "confirm-ok");
    expect(reward(premature)).toBe(0);
    expect(outcomeOf(premature)).toBe("confirmed, not fixed");
    // fixed but never confirmed
    expect(reward(dialogue(h, "ticket:no-service", "fix:toggle-airplane", "did-fix"))).toBe(0);
    // transfer: right only when it cannot be fixed
    expect(reward(dialogue(h, "ticket:no-service", "transfer"))).toBe(0);
    expect(outcomeOf(dialogue(h, "ticket:no-service", "transfer"))).toBe("transferred (fixable)");
    const locked = task(0, "sim=pin-locked", "airplane=on");
    expect(
      ACTS[bench.envAct!(dialogue(locked, "ticket:no-service", "check:sim"), Rng.seed(0))].name,
    ).toBe("see:sim-locked");
    const t = dialogue(locked, "ticket:no-service", "check:sim", "see:sim-locked", "transfer");
    expect(reward(t)).toBe(1);
    expect(outcomeOf(t)).toBe("transferred (could not be fixed)");
    expect(
      reward(
        dialogue(
          locked,
          "ticket:no-service",
          "fix:toggle-airplane",
          "did-fix",
          "confirm",
          "confirm-ok",
        ),
      ),
    ).toBe(0);
    expect(outcomeOf(dialogue(h, "ticket:no-service", "fix:toggle-airplane", "leave"))).toBe(
      "customer left",
    );
  });

  it("render names the speaker of every act: agent, customer, or the world", () => {
    const h = task(1, "data=off");
    const lines = bench.render(
      dialogue(
        h,
        "ticket:mobile-data",
        "check:data",
        "see:data-bad",
        "fix:toggle-data",
        "did-fix",
        "confirm",
        "confirm-ok",
      ),
      Rng.seed(2),
    );
    expect(lines.map((l) => l.speaker)).toEqual([
      "env",
      "agent",
      "env",
      "agent",
      "user",
      "agent",
      "user",
    ]);
    for (const l of lines) expect(l.text.length).toBeGreaterThan(0);
    for (const a of ACTS.slice(1))
      expect(a.templates.length).toBeGreaterThanOrEqual(
        a.kind === "agent" || a.kind === "user" ? 2 : 1,
      );
  });
});

describe("the human population", () => {
  it("priors, cards and tasks are distributions, and sampling follows them", () => {
    expect(sum(pop.types.map((t) => t.prior))).toBeCloseTo(1, 12);
    const cards = pop.cardDistribution();
    expect(sum(cards.map((c) => c.p))).toBeCloseTo(1, 12);
    for (let i = 0; i < 3; i++)
      expect(sum(enumerateTasks(DEFAULT_PARAMS, i).map((t) => t.p))).toBeCloseTo(1, 12);
    const rng = Rng.seed(1);
    const n = 20000;
    const types = new Array<number>(pop.types.length).fill(0);
    const intents = [0, 0, 0];
    for (let i = 0; i < n; i++) {
      const p = pop.sample(rng);
      types[p.type]++;
      intents[p.hidden![0]]++;
      expect(p.hidden!.slice(1).some((v) => v !== 0)).toBe(true);
    }
    const chi2 = (counts: number[], p: number[]) =>
      counts.reduce((s, c, i) => s + (c - n * p[i]) ** 2 / (n * p[i]), 0);
    expect(
      chi2(
        types,
        pop.types.map((t) => t.prior),
      ),
    ).toBeLessThan(16.3); // 3 degrees of freedom, 99.9 %
    expect(chi2(intents, DEFAULT_PARAMS.intentPrior)).toBeLessThan(13.8); // 2 degrees of freedom
  });

  it("replyProbs rows sum to 1 over exactly the allowed class, 0 elsewhere, at every reachable customer state sampled", () => {
    const rng = Rng.seed(3);
    const careful = carefulAgent(DEFAULT_PARAMS.faultPrior, DEFAULT_WORLD.maxExchanges);
    const bad: string[] = [];
    const classes = new Set<number>();
    let checked = 0;
    for (let i = 0; i < 400; i++) {
      const persona = pop.sample(rng);
      // the corpus agent, the careful agent, and a random agent (states no sensible agent reaches)
      const agent =
        i % 3 === 0
          ? (d: Dialogue) => careful(d)
          : i % 3 === 1
            ? (d: Dialogue, r: Rng) =>
                MASK_CLASSES[CLASS.agent].allowed[r.int(MASK_CLASSES[CLASS.agent].allowed.length)]
            : undefined;
      const d = agent
        ? playEpisode(bench, persona, agent, rng)
        : service.corpusDialogue(bench, service.defaultCorpus, rng);
      for (let j = 1; j < d.acts.length; j++) {
        const pre = { card: d.card, acts: d.acts.slice(0, j), hidden: d.hidden };
        if (bench.turn(pre) !== "user") continue;
        const cls = bench.userClass(pre);
        classes.add(cls);
        const allowed = new Set(MASK_CLASSES[cls].allowed);
        for (let z = 0; z < pop.types.length; z++) {
          const row = pop.replyProbs(z, pre);
          checked++;
          if (Math.abs(sum(row) - 1) > 1e-12) bad.push(`sum ${sum(row)}`);
          row.forEach((p, v) => {
            if (!allowed.has(v) && p !== 0)
              bad.push(`${ACTS[v].name} outside class ${MASK_CLASSES[cls].name}`);
            if (p < 0) bad.push(`negative ${ACTS[v].name}`);
          });
        }
        const pred = bench.bayesPredictive(pre);
        if (Math.abs(sum(pred) - 1) > 1e-12) bad.push(`predictive sums to ${sum(pred)}`);
        pred.forEach(
          (p, v) =>
            !allowed.has(v) && p !== 0 && bad.push(`predictive: ${ACTS[v].name} outside the class`),
        );
      }
    }
    expect(bad.slice(0, 5)).toEqual([]);
    expect(checked).toBeGreaterThan(5000);
    expect([...classes].sort()).toEqual([CLASS.fixReply, CLASS.ackReply, CLASS.confirmReply]);
  });

  it("a confirm reads the phone: the customer says it works exactly when it does", () => {
    const h = task(1, "data=off");
    for (let z = 0; z < pop.types.length; z++) {
      const before = pop.replyProbs(z, dialogue(h, "ticket:mobile-data", "confirm"));
      const after = pop.replyProbs(
        z,
        dialogue(h, "ticket:mobile-data", "fix:toggle-data", "did-fix", "confirm"),
      );
      expect(before[actId("confirm-ok")]).toBe(0);
      expect(after[actId("not-ok")]).toBe(0);
    }
    // without the hidden state (a probe state) the phone is marginalised: P(confirm-ok) = P(fixed | acts) × the type's own confirm
    const seen = {
      card: CARD,
      acts: acts("ticket:mobile-data", "fix:toggle-data", "did-fix", "confirm"),
    };
    const pFixed = pop.taskPosterior(seen).pFixed;
    expect(pFixed).toBeGreaterThan(0);
    expect(pFixed).toBeLessThan(1);
    for (let z = 0; z < pop.types.length; z++) {
      const marginal = pop.replyProbs(z, seen);
      const fixed = pop.replyRow(z, seen, 1);
      const broken = pop.replyRow(z, seen, 0);
      for (let v = 0; v < marginal.length; v++)
        expect(marginal[v]).toBeCloseTo(pFixed * fixed[v] + (1 - pFixed) * broken[v], 12);
    }
  });
});

describe("the exact posterior and Bayes predictive", () => {
  it("hand-computed cases: without evidence the posterior is the card's; a screen pins its factor; with uninformative cards the prior", () => {
    const flat = createService({ ...DEFAULT_PARAMS, cardInformativeness: 0 });
    const post = flat.humans.posterior({ card: CARD, acts: acts("ticket:mms") });
    DEFAULT_PARAMS.types.forEach((t, z) => expect(post[z]).toBeCloseTo(t.prior, 12));
    // the screen says airplane mode is on: P(on) = 1; nothing else moves but through "≥ 1 fault"
    const tp = pop.taskPosterior({
      card: CARD,
      acts: acts("ticket:no-service", "check:airplane", "see:airplane-bad"),
    });
    expect(tp.marginals[0][1]).toBeCloseTo(1, 12);
    // with airplane mode on, "some fault" holds, so the SIM keeps its prior
    DEFAULT_PARAMS.faultPrior[0][1].forEach((p, v) =>
      expect(tp.marginals[1][v]).toBeCloseTo(p, 12),
    );
    // a no-service task whose airplane mode, SIM and account are all fine cannot exist: flagged, the screens alone used
    expect(
      pop.taskPosterior({
        card: CARD,
        acts: acts(
          "ticket:no-service",
          "check:airplane",
          "see:airplane-ok",
          "check:sim",
          "see:sim-ok",
          "query-account",
          "account:ok",
        ),
      }).consistent,
    ).toBe(false);
    // P(fixed) after fixing airplane mode, no-service: the chance that nothing else is broken
    const a = DEFAULT_PARAMS.faultPrior[0];
    const pNothingElse = a[1][0] * a[9][0];
    const pf = pop.taskPosterior({
      card: CARD,
      acts: acts(
        "ticket:no-service",
        "check:airplane",
        "see:airplane-bad",
        "fix:toggle-airplane",
        "did-fix",
        "confirm",
      ),
    }).pFixed;
    expect(pf).toBeCloseTo(pNothingElse, 12);
  });

  it("the task posterior's P(fixed) and marginals match enumerating every task", () => {
    const d = {
      card: CARD,
      acts: acts(
        "ticket:mobile-data",
        "check:data",
        "see:data-bad",
        "fix:toggle-data",
        "did-fix",
        "confirm",
        "not-ok",
        "query-account",
        "account:ok",
        "fix:reset-apn",
        "did-fix",
        "confirm",
      ),
    };
    let z = 0;
    let fixed = 0;
    const apn = [0, 0];
    const done = d.acts;
    for (const t of enumerateTasks(DEFAULT_PARAMS, 1)) {
      // likelihood of the world's moves and the "not ok" under this task: screens must match, and not everything fixed at the not-ok
      const h = t.hidden;
      if (h[1 + 2] !== 1 || h[1 + 9] !== 0) continue; // data off (screen), account fine (look-up)
      if (allResolved(h, done.slice(0, 6))) continue; // "not ok" after fixing data
      z += t.p;
      if (allResolved(h, done)) fixed += t.p;
      apn[h[1 + 3]] += t.p;
    }
    const tp = pop.taskPosterior(d);
    expect(tp.consistent).toBe(true);
    expect(tp.pFixed).toBeCloseTo(fixed / z, 12);
    expect(tp.marginals[3][1]).toBeCloseTo(apn[1] / z, 12);
  });

  it("posterior and Bayes predictive match Monte Carlo over customers of one card with a fixed agent (|z| < 4.5)", () => {
    // every customer with the card plays the same deterministic agent; group the states by prefix.
    // Two agents: the careful one (steps, reassurance), and one that fixes mobile data blindly and
    // then keeps asking whether it works (confirm states: the task posterior's P(fixed))
    const card = pop.cardDistribution().reduce((a, b) => (b.p > a.p ? b : a)).card;
    const careful = carefulAgent(DEFAULT_PARAMS.faultPrior, DEFAULT_WORLD.maxExchanges);
    const confirmer = (d: Dialogue) =>
      d.acts.length < 2 ? actId("fix:toggle-data") : actId("confirm");
    const rng = Rng.seed(9);
    let worst = 0;
    let confirms = 0;
    let groupsChecked = 0;
    for (const agent of [(d: Dialogue) => careful(d), confirmer]) {
      const groups = new Map<string, { d: Dialogue; next: number[]; types: number[] }>();
      let kept = 0;
      while (kept < 25000) {
        const persona = pop.sample(rng);
        if (persona.card.join(",") !== card.join(",")) continue;
        kept++;
        const d = playEpisode(bench, persona, agent, rng);
        for (let j = 1; j < Math.min(d.acts.length, 14); j++) {
          const pre = { card, acts: d.acts.slice(0, j) };
          if (bench.turn(pre) !== "user") continue;
          const key = pre.acts.join(",");
          let g = groups.get(key);
          if (!g)
            groups.set(
              key,
              (g = {
                d: pre,
                next: new Array<number>(VOCAB).fill(0),
                types: new Array<number>(pop.types.length).fill(0),
              }),
            );
          g.next[d.acts[j]]++;
          g.types[persona.type]++;
        }
      }
      for (const g of [...groups.values()].filter((x) => sum(x.next) >= 1500)) {
        groupsChecked++;
        if (g.d.acts[g.d.acts.length - 1] === actId("confirm")) confirms++;
        worst = Math.max(
          worst,
          maxZ(g.next, bench.bayesPredictive(g.d)),
          maxZ(g.types, pop.posterior(g.d)),
        );
      }
    }
    expect(groupsChecked).toBeGreaterThan(8);
    expect(confirms).toBeGreaterThanOrEqual(2);
    expect(worst).toBeLessThan(4.5);
  });
});

describe("pass^k", () => {
  it("is C(c, k) / C(n, k): hand-computed cases", () => {
    expect(passK(2, 4, 2)).toBeCloseTo(1 / 6, 15);
    expect(passK(3, 4, 1)).toBeCloseTo(3 / 4, 15);
    expect(passK(4, 4, 4)).toBe(1);
    expect(passK(3, 4, 4)).toBe(0);
    expect(passK(0, 4, 1)).toBe(0);
    expect(meanPassK([4, 2, 0], 4, 2)).toBeCloseTo((1 + 1 / 6 + 0) / 3, 15);
    expect(() => passK(5, 4, 2)).toThrow(/0 ≤ c ≤ n/);
    expect(() => passK(2, 4, 0)).toThrow(/1 ≤ k ≤ n/);
  });
});

describe("config sections", () => {
  it("the defaults parse and build a world; a type prior replaces the mixture (normalised)", () => {
    expect(ServiceWorldSchema.parse(service.defaultWorld)).toEqual(service.defaultWorld);
    expect(ServiceCorpusSchema.parse(service.defaultCorpus)).toEqual(service.defaultCorpus);
    const skewed = service.create(service.defaultWorld, [1, 1, 0, 0]);
    expect(skewed.humans.types.map((t) => t.prior)).toEqual([0.5, 0.5, 0, 0]);
    expect(service.typeNames).toEqual(DEFAULT_PARAMS.types.map((t) => t.name));
  });

  it("rejects unknown keys, wrong types and out-of-range values, naming the path", () => {
    const issue = (r: {
      success: boolean;
      error?: { issues: { path: PropertyKey[]; message: string }[] };
    }) => {
      expect(r.success).toBe(false);
      return r.error!.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    };
    expect(issue(ServiceWorldSchema.safeParse({ ...DEFAULT_WORLD, maxExchanges: 30 }))).toMatch(
      /^maxExchanges: /,
    );
    expect(
      issue(ServiceWorldSchema.safeParse({ ...DEFAULT_WORLD, cardInformativeness: "high" })),
    ).toMatch(/^cardInformativeness: /);
    expect(issue(ServiceWorldSchema.safeParse({ ...DEFAULT_WORLD, typePrior: [1, 2] }))).toMatch(
      /^typePrior: /,
    );
    expect(issue(ServiceWorldSchema.safeParse({ ...DEFAULT_WORLD, gamma: 3 }))).toMatch(/gamma/);
    expect(issue(ServiceCorpusSchema.safeParse({ dialogues: 0 }))).toMatch(/^dialogues: /);
    expect(() => createService({ ...DEFAULT_PARAMS, maxExchanges: 30 })).toThrow(/context 65 > 64/);
  });
});
