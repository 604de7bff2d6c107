// The Play page's parts in jsdom, on the persuasion-smoke recording and its shipped policies
// (public/recorded/, served by a fetch stub): policies load and are refused for another config;
// a dialogue replays from its record; the assignment is balanced; results, CSV and merging; and
// the page itself played with the keyboard, with no condition name on it until the decision.
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import PlayPage from "../../src/app/pages/PlayPage.svelte";
import { benchmarkFor } from "../../src/benchmarks/registry";
import { CONDITIONS } from "../../src/experiment/config";
import { Rng } from "../../src/engine/random";
import { parseReport } from "../../src/experiment/report-schema";
import { CONDITION_INFO } from "../../src/app/lib/conditions";
import { assign } from "../../src/app/lib/play-assign";
import { formatPlaySetup, parsePlaySetup } from "../../src/app/lib/play-link";
import { recordedPolicies, runKey, storedPolicies } from "../../src/app/lib/play-policies";
import {
  EMPTY_MERGE,
  mergeFiles,
  parsePlayFile,
  playFile,
  recordsCsv,
  summariseRecords,
  type MergedSet,
  type PlayRecord,
} from "../../src/app/lib/play-results";
import { PlayDialogue, policyModel, replay } from "../../src/app/lib/play-session";
import { DEFAULT_SETUP, PlayState } from "../../src/app/lib/play-state.svelte";
import { MemoryPlayStore } from "../../src/app/lib/play-store";
import { TEST_CONFIG } from "./report-fixture";
import { createBackend } from "../../src/engine/backends/index";
import { runExperiment } from "../../src/experiment/experiment";
import { InlineExecutor } from "../../src/experiment/tasks";
import type { StoredRun } from "../../src/app/lib/run-store";
import { readReply } from "../../src/app/lib/play-freetext";
import type { LanguageModel, LmPrompt } from "../../src/lm/types";

/** A fake LM: a label scores high when a word of it appears in the person's words (the prompt's last reply). */
function fakeLm(): LanguageModel & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    id: "fake",
    prompts,
    generate: async () => [],
    score: async (prompt: LmPrompt, continuations: string[]) => {
      const text = "text" in prompt ? prompt.text : "";
      prompts.push(text);
      const said = text.split("\n").at(-3)?.toLowerCase() ?? ""; // "Persuadee: <their words>"
      return continuations.map((c) => ({
        logprob:
          c
            .toLowerCase()
            .split(/\W+/)
            .filter((w) => w.length > 3 && said.includes(w)).length *
            3 -
          5,
        tokens: 4,
      }));
    },
  };
}

const RECORDED = join(__dirname, "../../public/recorded");
const BASE = "http://localhost/";
const text = readFileSync(join(RECORDED, "persuasion-smoke.json"), "utf8");
const report = parseReport(text);
const bench = benchmarkFor(report.config);

/** Serves public/recorded/ (a missing file is a 404); `policies: false` serves the report alone. */
function stubFetch({ policies = true } = {}) {
  return vi.fn(async (url: string) => {
    const path = /recorded\/(.+)$/.exec(String(url))?.[1];
    if (!path || (!policies && path.includes(".policies/")))
      return new Response("not found", { status: 404 });
    try {
      return new Response(readFileSync(join(RECORDED, path)));
    } catch {
      return new Response("not found", { status: 404 });
    }
  }) as unknown as typeof fetch;
}

/** A person who always takes the first reply, and the `n`-th amount when deciding. */
async function playThrough(d: PlayDialogue, amount = 2): Promise<void> {
  while (!d.done) {
    if (d.turn === "agent") await d.agentMove();
    else d.choose(d.options()[d.decisionDue ? amount : 0].act);
  }
}

const conditionWords = new RegExp(
  `\\b(${CONDITIONS.map((c) => CONDITION_INFO[c].label).join("|")})\\b`,
  "i",
);

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("a recording's policies", () => {
  it("load for every condition of persuasion-smoke, and play a dialogue that replays from its record", async () => {
    const source = await recordedPolicies("persuasion-smoke", report, stubFetch(), BASE);
    if (typeof source === "string") throw new Error(source);
    expect(source.available.map((p) => p.condition).sort()).toEqual(
      [...report.config.conditions].sort(),
    );
    const ck = await source.load("single", 0);
    const d = new PlayDialogue(
      bench,
      policyModel(bench, report.config, ck),
      report.config.rl.temperature,
      1234,
      bench.humans.sample(Rng.seed(1)).card,
    );
    await playThrough(d);
    const acts = [...d.dialogue.acts];
    expect(acts.length).toBeGreaterThanOrEqual(2);
    expect(d.result().outcome).toBe(1); // the third amount: $1
    expect(d.result().success).toBe(true);
    const again = await replay(
      bench,
      policyModel(bench, report.config, ck),
      report.config.rl.temperature,
      1234,
      d.dialogue.card,
      acts,
    );
    expect(again).toEqual(acts);
  });

  it("say clearly when a recording has none, and refuse files written for another config", async () => {
    const none = await recordedPolicies(
      "persuasion-smoke",
      report,
      stubFetch({ policies: false }),
      BASE,
    );
    expect(none).toMatch(
      /has no trained policies yet: record it again with bash scripts\/record-presets\.sh persuasion-smoke/,
    );
    const changed = parseReport(text);
    changed.config.rl.lr *= 2; // a re-recorded preset with other settings
    const source = await recordedPolicies("persuasion-smoke", changed, stubFetch(), BASE);
    if (typeof source === "string") throw new Error(source);
    await expect(source.load("single", 0)).rejects.toThrow(
      /single-0\.bin: it was trained by another run than this recording/,
    );
  });

  it("a stored run's policies come from its finished unit tasks; a run without them says why", async () => {
    const source = await recordedPolicies("persuasion-smoke", report, stubFetch(), BASE);
    if (typeof source === "string") throw new Error(source);
    const ck = await source.load("vs", 0);
    const tasks = new Map<string, unknown>([["unit:vs:0", { finalPolicy: ck }]]);
    const runs = {
      taskCache: () => ({ get: async (k: string) => tasks.get(k), put: async () => {} }),
    };
    const stored = await storedPolicies(runs, "r1", report);
    if (typeof stored === "string") throw new Error(stored);
    expect(stored.available).toEqual([{ condition: "vs", seed: 0 }]);
    expect(await stored.load("vs", 0)).toBe(ck);
    tasks.clear();
    expect(await storedPolicies(runs, "r1", report)).toMatch(/kept no trained policies/);
  });
});

describe("a run made in this browser", () => {
  it("keeps each unit's trained policy with its finished tasks, out of the report, and the Play page plays it", async () => {
    const { backend } = await createBackend("float64");
    const tasks = new Map<string, unknown>();
    const handed: string[] = [];
    const made = await runExperiment(TEST_CONFIG, new InlineExecutor(backend), {
      backend: "float64",
      preset: "test",
      cache: { get: async (k) => tasks.get(k), put: async (k, v) => void tasks.set(k, v) },
      onPolicy: (condition, seed) => handed.push(`${condition}:${seed}`),
    });
    expect(JSON.stringify(made)).not.toContain("finalPolicy");
    expect(handed.sort()).toEqual(
      TEST_CONFIG.conditions.flatMap((c) => [`${c}:0`, `${c}:1`]).sort(),
    );
    const run: StoredRun = {
      id: "r1",
      createdAt: 0,
      updatedAt: 0,
      status: "done",
      title: "test run",
      url: { preset: "persuasion-smoke", sets: [], backend: "auto", autorun: false, page: "play" },
      backend: "float64",
      report: made,
      tasksDone: 1,
      tasksTotal: 1,
    };
    const runs = {
      list: async () => [run],
      get: async () => run,
      taskCache: () => ({ get: async (k: string) => tasks.get(k), put: async () => {} }),
    };
    const results = new MemoryPlayStore();
    const play = new PlayState({ runs, results, fetch: stubFetch(), base: BASE });
    await play.open(formatPlaySetup({ ...DEFAULT_SETUP, run: { kind: "stored", id: "r1" } }));
    expect(play.unavailable).toBeNull();
    expect(play.storedRuns).toEqual([{ id: "r1", title: "test run" }]);
    expect(play.playableConditions).toEqual(TEST_CONFIG.conditions);
    await play.start();
    for (let i = 0; i < 20 && play.phase === "playing"; i++) await play.choose(play.options[0].act);
    expect(play.phase).toBe("revealed");
    expect((await results.records())[0]).toMatchObject({ run: "stored/r1", runKey: runKey(made) });
  });
});

describe("assignment", () => {
  const seeds = () => [0, 1];
  it("blocks: every prefix of a player's dialogues is balanced to within one, and players get different orders", () => {
    const conditions = ["base", "single", "vs", "population"] as const;
    const orders = new Set<string>();
    for (const player of ["p1", "p2", "p3", "p4", "p5", "p6"]) {
      const counts = new Map<string, number>(conditions.map((c) => [c, 0]));
      const seq: string[] = [];
      for (let index = 0; index < 12; index++) {
        const a = assign({ study: "room", player, scheme: "blocks", conditions, seeds, index });
        counts.set(a.condition, counts.get(a.condition)! + 1);
        seq.push(a.condition);
        expect(Math.max(...counts.values()) - Math.min(...counts.values())).toBeLessThanOrEqual(1);
        expect([0, 1]).toContain(a.seed);
      }
      orders.add(seq.join(","));
      // the same inputs give the same assignment (no server: every browser computes it)
      expect(
        assign({ study: "room", player, scheme: "blocks", conditions, seeds, index: 5 }),
      ).toEqual(assign({ study: "room", player, scheme: "blocks", conditions, seeds, index: 5 }));
    }
    expect(orders.size).toBeGreaterThan(1);
  });

  it("random: every condition is drawn, close to uniformly over many dialogues", () => {
    const conditions = ["base", "single", "vs"] as const;
    const counts = new Map<string, number>();
    for (let index = 0; index < 3000; index++) {
      const c = assign({
        study: null,
        player: "p",
        scheme: "random",
        conditions,
        seeds,
        index,
      }).condition;
      counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    for (const c of conditions) expect(Math.abs(counts.get(c)! / 3000 - 1 / 3)).toBeLessThan(0.04); // ≈ 4.6 sd
  });

  it("the class study link round-trips and names what it cannot read", () => {
    const setup = {
      run: { kind: "recorded" as const, preset: "persuasion-smoke" },
      conditions: ["single" as const, "population" as const],
      scheme: "blocks" as const,
      dialogues: 3,
      study: "room-1",
    };
    expect(parsePlaySetup(formatPlaySetup(setup), DEFAULT_SETUP)).toEqual({ setup, problems: [] });
    const bad = parsePlaySetup(
      "run:recorded/nope;conditions:single,typo;dialogues:99;study:a b;zzz:1",
      DEFAULT_SETUP,
    );
    expect(bad.setup).toEqual(DEFAULT_SETUP);
    expect(bad.problems).toHaveLength(5);
    expect(bad.problems.join("\n")).toMatch(
      /no preset "nope"[\s\S]*conditions "single,typo"[\s\S]*dialogues "99"[\s\S]*study "a b"[\s\S]*unknown setting "zzz"/,
    );
  });
});

function record(over: Partial<PlayRecord> = {}): PlayRecord {
  return {
    id: `d${Math.random().toString(36).slice(2, 10)}`,
    player: "p1",
    study: "room",
    run: "recorded/persuasion-smoke",
    runKey: runKey(report),
    index: 0,
    condition: "single",
    seed: 0,
    sessionSeed: 7,
    persona: {
      source: "drawn",
      card: ["card:agreeable-high", "card:caring-low", "card:rational-high"],
      type: "skeptic",
    },
    acts: ["ask", "$1"],
    outcome: 1,
    success: true,
    reward: 0.5,
    startedAt: 1_700_000_000_000,
    finishedAt: 1_700_000_060_000,
    ...over,
  };
}

describe("results", () => {
  it("per condition: n, players, success with a binomial interval clustered by player, mean donation", () => {
    const rs = [
      record(),
      record({ success: false, outcome: 0, player: "p2" }),
      record({ outcome: 2 }),
      record({ condition: "vs", outcome: 0.5, success: false }),
    ];
    const [single, vs, base] = summariseRecords(rs, ["single", "vs", "base"]);
    expect(single).toMatchObject({ condition: "single", n: 3, players: 2, outcome: 1 });
    // p1 played twice (2 of 2), p2 once (0 of 1): clustered by player (metrics/proportion.ts)
    expect(single.success).toMatchObject({ method: "clustered", clusters: 2, successes: 2 });
    expect(single.success!.mean).toBeCloseTo(2 / 3);
    expect(single.success!.hi - single.success!.lo).toBeGreaterThan(0.9); // two players say little
    expect(single.success!.nEffective).toBeLessThan(1);
    // one dialogue, a failure: the exact interval [0, 1 − 0.025]
    expect(vs).toMatchObject({ n: 1, outcome: 0.5 });
    expect(vs.success).toMatchObject({ method: "exact", lo: 0 });
    expect(vs.success!.hi).toBeCloseTo(0.975, 9);
    expect(base).toMatchObject({ n: 0, success: null, outcome: null });
  });

  it("CSV: one row per dialogue that reads back", () => {
    const rs = [record(), record({ condition: "vs" })];
    const rows = parse(recordsCsv(rs), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.condition)).toEqual(["single", "vs"]);
    expect(rows[0].acts).toBe("ask > $1");
    expect(rows[0].success).toBe("1");
  });

  it("merging: duplicates counted once, a bad file and another run's file named and skipped, the set before unchanged", () => {
    const a = [record({ player: "a" }), record({ player: "a", condition: "vs" })];
    const b = [record({ player: "b" })];
    const first = mergeFiles(EMPTY_MERGE, [
      { name: "a.json", text: JSON.stringify(playFile(a)) },
      { name: "b.json", text: JSON.stringify(playFile(b)) },
    ]);
    expect(first.problems).toEqual([]);
    expect(first.set.records).toHaveLength(3);
    const before = structuredClone(first.set);
    const second = mergeFiles(first.set, [
      { name: "a-again.json", text: JSON.stringify(playFile(a)) },
      { name: "broken.json", text: '{"format": "collapse-lab/play-results@1", "records": [' },
      {
        name: "other.json",
        text: JSON.stringify(
          playFile([record({ runKey: "0".repeat(32), run: "recorded/persuasion-quick" })]),
        ),
      },
      { name: "report.json", text },
    ]);
    expect(first.set).toEqual(before);
    expect(second.set.records).toHaveLength(3);
    expect(second.messages).toEqual([
      "a-again.json: 0 dialogues added, 2 already merged (duplicates) left out",
    ]);
    expect(second.problems).toHaveLength(3);
    expect(second.problems[0]).toMatch(/^broken\.json: not JSON .* — skipped$/);
    expect(second.problems[1]).toMatch(
      /^other\.json: played against another run \(recorded\/persuasion-quick/,
    );
    expect(second.problems[2]).toMatch(
      /^report\.json: not a Play results file: .*this is a RunReport/,
    );
    expect(() =>
      parsePlayFile(JSON.stringify({ ...playFile(a), records: [{ ...a[0], condition: "nope" }] })),
    ).toThrow(/records\.0\.condition/);
  });
});

describe("PlayState.merge", () => {
  it("keeps the stored merged set when every new file is bad, and stores the new set when one is good", async () => {
    const results = new MemoryPlayStore();
    const play = new PlayState({ results, fetch: stubFetch(), base: BASE });
    await play.merge([
      { name: "a.json", text: JSON.stringify(playFile([record({ player: "a" })])) },
    ]);
    const stored = await results.merged();
    expect(stored.records).toHaveLength(1);
    await play.merge([
      { name: "bad.json", text: "[]" },
      { name: "empty.json", text: "" },
    ]);
    expect(play.mergeProblems).toEqual([
      "bad.json: not a Play results file: expected a JSON object — skipped",
      expect.stringMatching(/^empty\.json: not JSON/),
    ]);
    expect(await results.merged()).toEqual(stored);
    await play.merge([
      { name: "b.json", text: JSON.stringify(playFile([record({ player: "b" })])) },
    ]);
    expect((await results.merged()).records.map((r) => r.player)).toEqual(["a", "b"]);
  });

  it("a second drop while the first is being stored merges into the first's set, and the stores land in order", async () => {
    class SlowStore extends MemoryPlayStore {
      writes: MergedSet[] = [];
      override async putMerged(set: MergedSet) {
        await new Promise((r) => setTimeout(r, this.writes.length === 0 ? 50 : 0)); // the first write is the slow one
        this.writes.push(set);
        await super.putMerged(set);
      }
    }
    const results = new SlowStore();
    const play = new PlayState({ results, fetch: stubFetch(), base: BASE });
    const a = { name: "a.json", text: JSON.stringify(playFile([record({ player: "a" })])) };
    const b = { name: "b.json", text: JSON.stringify(playFile([record({ player: "b" })])) };
    const first = play.merge([a]);
    const second = play.merge([a, b]);
    await Promise.all([first, second]);
    expect(play.mergeMessages).toEqual([
      "a.json: 0 dialogues added, 1 already merged (duplicates) left out",
      "b.json: 1 dialogue added",
    ]);
    expect(results.writes.map((s) => s.records.length)).toEqual([1, 2]);
    expect((await results.merged()).records.map((r) => r.player)).toEqual(["a", "b"]);
  });

  it("a store that fails keeps the merged set on the page and says to export it", async () => {
    class FullStore extends MemoryPlayStore {
      override async putMerged(): Promise<void> {
        throw new Error("QuotaExceededError");
      }
    }
    const play = new PlayState({ results: new FullStore(), fetch: stubFetch(), base: BASE });
    await play.merge([
      { name: "a.json", text: JSON.stringify(playFile([record({ player: "a" })])) },
    ]);
    expect(play.merged.records).toHaveLength(1);
    expect(play.mergeProblems).toEqual([
      expect.stringMatching(
        /^The merged set could not be stored in this browser \(QuotaExceededError\); .* export it/,
      ),
    ]);
  });
});

describe("a person's own words", () => {
  const id = (name: string) => bench.acts.findIndex((a) => a.name === name);
  it("are read as an act with the LM's label scores over the allowed replies, as the LM simulator scores them", async () => {
    const lm = fakeLm();
    const d = { card: bench.humans.sample(Rng.seed(2)).card, acts: [id("credibility")] };
    const r = await readReply(lm, bench, d, "  Honestly, how would I know they are honest? ");
    expect(r.how).toBe("lm");
    expect(bench.acts[r.act].name).toBe("object-trust");
    expect(r.probs.map((p) => p.act).sort((a, b) => a - b)).toEqual(
      bench.maskClasses[bench.userClass(d)].allowed,
    );
    expect(r.probs.reduce((a, p) => a + p.p, 0)).toBeCloseTo(1);
    expect(lm.prompts[0]).toMatch(/Persuadee: Honestly, how would I know they are honest\?\n/);
  });

  it("a stated donation is taken as stated", async () => {
    const lm = fakeLm();
    const d = { card: bench.humans.sample(Rng.seed(3)).card, acts: [id("ask")] };
    const r = await readReply(lm, bench, d, "fine, I'll give $1.50");
    expect(r).toMatchObject({ how: "stated", act: id("$1.5") });
    expect(lm.prompts).toEqual([]);
  });

  it("on the page: typed, read, sent, and kept with the record; the digits type instead of choosing while writing", async () => {
    const results = new MemoryPlayStore();
    const lm = fakeLm();
    const play = new PlayState({ results, fetch: stubFetch(), base: BASE, lm: () => lm });
    render(PlayPage, { state: play, linkFor: (p: string) => p });
    const start = await screen.findByTestId("play-start");
    await waitFor(() => expect((start as HTMLButtonElement).disabled).toBe(false));
    await fireEvent.click(start);
    await screen.findByTestId("play-options");
    const input = screen.getByLabelText(/in your own words/) as HTMLInputElement;
    const before = play.lines.length;
    await fireEvent.keyDown(input, { key: "1" });
    expect(play.lines.length).toBe(before); // no reply chosen
    await fireEvent.input(input, {
      target: { value: play.decisionDue ? "I'll give $2" : "I have kids too, it gets to me" },
    });
    await fireEvent.submit(screen.getByTestId("play-words"));
    const reading = await screen.findByTestId("play-reading");
    await fireEvent.click(within(reading).getByText("Send"));
    for (let step = 0; step < 20 && !screen.queryByTestId("play-reveal"); step++) {
      await waitFor(() =>
        expect(
          screen.queryByTestId("play-options") ?? screen.queryByTestId("play-reveal"),
        ).not.toBeNull(),
      );
      if (screen.queryByTestId("play-reveal")) break;
      await fireEvent.keyDown(window, { key: "1" });
    }
    await screen.findByTestId("play-reveal");
    const [rec] = await results.records();
    expect(rec.ownWords).toEqual([{ at: 1, text: expect.stringMatching(/^I/) }]);
    expect(rec.acts[1]).toMatch(/^(share-personal|\$2)$/);
    expect(parsePlayFile(JSON.stringify(playFile([rec]))).records[0].ownWords).toEqual(
      rec.ownWords,
    );
  });
});

describe("PlayPage (jsdom)", () => {
  it("renders imported text as text, never as HTML, and no Play source uses {@html}", async () => {
    const sources = [
      "pages/PlayPage.svelte",
      ...["PlayChat", "PersonaCard", "PlayResults", "PlayDialogues", "StudyPanel"].map(
        (c) => `components/play/${c}.svelte`,
      ),
    ];
    for (const f of sources)
      expect(readFileSync(join(__dirname, "../../src/app", f), "utf8")).not.toMatch(
        /\{@html|innerHTML/,
      );
    const play = new PlayState({ results: new MemoryPlayStore(), fetch: stubFetch(), base: BASE });
    render(PlayPage, { state: play, linkFor: (p: string) => p });
    await screen.findByTestId("play-start");
    const evil = '<img src="x" onerror="window.pwned = 1">';
    await play.merge([
      {
        name: "evil.json",
        text: JSON.stringify(
          playFile([
            record({ run: evil, persona: { source: "own", card: [evil], type: "<b>bold</b>" } }),
          ]),
        ),
      },
    ]);
    expect((await screen.findByTestId("merged-results-caption")).textContent).toContain(evil);
    expect(document.querySelector("img, b")).toBeNull();
  });

  it("plays a dialogue with the keyboard; no condition name is on the page until the decision, then it is revealed and counted", async () => {
    const results = new MemoryPlayStore("tester");
    const play = new PlayState({ results, fetch: stubFetch(), base: BASE });
    render(PlayPage, {
      state: play,
      setup: formatPlaySetup({
        ...DEFAULT_SETUP,
        conditions: ["single", "population"],
        study: "room-9",
        dialogues: 2,
      }),
      linkFor: (p: string) => `?play=${p}#play`,
    });
    const start = await screen.findByTestId("play-start");
    await waitFor(() => expect((start as HTMLButtonElement).disabled).toBe(false));
    expect(screen.getByTestId("study-summary").textContent).toContain(
      "Please play 2 dialogues: 0 done, 2 to go",
    );
    await fireEvent.click(start);
    for (let step = 0; step < 20 && !screen.queryByTestId("play-reveal"); step++) {
      await waitFor(() =>
        expect(
          screen.queryByTestId("play-options") ?? screen.queryByTestId("play-reveal"),
        ).not.toBeNull(),
      );
      if (screen.queryByTestId("play-reveal")) break;
      expect(document.body.textContent).not.toMatch(conditionWords);
      expect(document.body.innerHTML).not.toMatch(conditionWords);
      await fireEvent.keyDown(window, { key: "1" });
    }
    const revealed = await screen.findByTestId("revealed-condition");
    expect(["single", "population"]).toContain(revealed.textContent);
    const [stored] = await results.records();
    expect(stored).toMatchObject({
      player: "tester",
      study: "room-9",
      condition: revealed.textContent,
      index: 0,
      runKey: runKey(report),
    });
    expect(stored.acts.length).toBeGreaterThanOrEqual(2);
    expect(screen.getByTestId("study-summary").textContent).toContain("1 done, 1 to go");
    expect(
      screen.getByTestId("play-results").querySelector(`tr[data-condition="${stored.condition}"]`)
        ?.textContent,
    ).toMatch(/^\D*1\s*1/);
  });

  it("a recording without policies says so, and Start stays off", async () => {
    const play = new PlayState({
      results: new MemoryPlayStore(),
      fetch: stubFetch({ policies: false }),
      base: BASE,
    });
    render(PlayPage, { state: play, linkFor: (p: string) => p });
    expect((await screen.findByTestId("play-unavailable")).textContent).toMatch(
      /has no trained policies yet/,
    );
    expect((screen.getByTestId("play-start") as HTMLButtonElement).disabled).toBe(true);
  });
});
