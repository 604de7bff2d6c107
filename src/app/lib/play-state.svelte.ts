// The Play page's state: the setup (run, conditions, scheme, dialogues per player, study), the
// run and its policies, the dialogue being played, this browser's records and the merged set of
// many players' files. The condition of the dialogue in play is kept in a private field, never in
// reactive state the page renders, until the person has made their decision.
import { benchmarkFor, benchmarkModule } from "../../benchmarks/registry";
import type { Benchmark } from "../../benchmarks/types";
import type { Checkpoint } from "../../engine/checkpoint";
import { Rng } from "../../engine/random";
import type { ConditionId } from "../../experiment/config";
import type { RunReport } from "../../experiment/experiment";
import { PRESETS } from "../../experiment/presets";
import { fetchRecording } from "./recordings";
import type { RunStore } from "./run-store";
import { assign, hashSeed, type Assignment } from "./play-assign";
import {
  formatPlaySetup,
  parsePlaySetup,
  runRefText,
  type PlaySetup,
  type RunRef,
} from "./play-link";
import {
  hasRecordedPolicies,
  recordedPolicies,
  runKey,
  storedPolicies,
  type PolicySource,
} from "./play-policies";
import { EMPTY_MERGE, mergeFiles, randomId, type MergedSet, type PlayRecord } from "./play-results";
import {
  playable,
  PlayDialogue,
  policyModel,
  type ReplyOption,
  type TranscriptLine,
} from "./play-session";
import type { PlayStore } from "./play-store";
import { MAX_FREE_TEXT, readReply, type Reading } from "./play-freetext";
import type { LanguageModel } from "../../lm/types";

export interface PlayDeps {
  runs?: Pick<RunStore, "list" | "get" | "taskCache">;
  /** A real LM loaded in this tab (the LM lab's), which reads a person's own words; undefined when none is. */
  lm?: () => LanguageModel | undefined;
  results: PlayStore;
  fetch?: typeof fetch;
  base?: string; // where recorded/ is served (document.baseURI in the app)
}

/** The persona a person plays: their own card, or a person drawn from the population (with the type to play). */
export interface Persona {
  source: "own" | "drawn";
  card: number[];
  type: number | null;
}

export type Phase = "setup" | "playing" | "revealed";

export const PLAYABLE_PRESETS = PRESETS.filter((p) => playable(p.benchmark));
export const DEFAULT_SETUP: PlaySetup = {
  run: { kind: "recorded", preset: "persuasion-smoke" },
  conditions: [],
  scheme: "blocks",
  dialogues: 4,
  study: null,
};

export interface Reveal {
  record: PlayRecord;
  policyActs: string[]; // what the persuader did, in order
}

export class PlayState {
  setup = $state<PlaySetup>({ ...DEFAULT_SETUP });
  /** Settings fixed by a class study link (the page shows them, read only). */
  locked = $state(false);
  problems = $state<string[]>([]);
  report = $state.raw<RunReport | null>(null);
  policies = $state.raw<PolicySource | null>(null);
  /** Why the chosen run cannot be played (no policies, not found, another benchmark); null when it can. */
  unavailable = $state<string | null>(null);
  loading = $state(false);
  storedRuns = $state.raw<{ id: string; title: string }[]>([]);
  player = $state("");
  records = $state.raw<PlayRecord[]>([]);
  persona = $state<Persona>({ source: "drawn", card: [], type: null });
  phase = $state<Phase>("setup");
  lines = $state.raw<TranscriptLine[]>([]);
  options = $state.raw<ReplyOption[]>([]);
  decisionDue = $state(false);
  thinking = $state(false);
  error = $state<string | null>(null);
  reveal = $state.raw<Reveal | null>(null);
  /** The person's own words for the current turn, and how the LM read them. */
  words = $state("");
  reading = $state.raw<Reading | null>(null);
  readingBusy = $state(false);
  merged = $state.raw<MergedSet>(EMPTY_MERGE);
  mergeMessages = $state.raw<string[]>([]);
  mergeProblems = $state.raw<string[]>([]);

  #dialogue: PlayDialogue | null = null;
  #assignment: Assignment | null = null; // hidden until the decision
  #checkpoints = new Map<string, Promise<Checkpoint>>(); // the run's policies, fetched when it loads
  #ownWords: { at: number; text: string }[] = []; // replies given in the person's own words, by act position
  #startedAt = 0;
  #load = 0;
  #merges: Promise<void> = Promise.resolve(); // merges and clears, one after another

  constructor(readonly deps: PlayDeps) {}

  readonly bench = $derived<Benchmark | null>(
    this.report ? benchmarkFor(this.report.config) : null,
  );
  readonly key = $derived(this.report ? runKey(this.report) : null);
  /** The conditions this run has policies for, in the run's order. */
  readonly playableConditions = $derived.by<ConditionId[]>(() => {
    const have = new Set(this.policies?.available.map((p) => p.condition));
    return this.report ? this.report.config.conditions.filter((c) => have.has(c)) : [];
  });
  /** The conditions the next dialogue is drawn from: the setup's, where the run has them. */
  readonly conditions = $derived(
    this.setup.conditions.filter((c) => this.playableConditions.includes(c)),
  );
  /** This browser's dialogues in the current run and study. */
  readonly mine = $derived(
    this.records.filter(
      (r) => r.runKey === this.key && r.study === this.setup.study && r.player === this.player,
    ),
  );

  /** Reads the `play` URL parameter (a class study link locks the settings it names). */
  async open(play: string | undefined): Promise<void> {
    if (play) {
      const { setup, problems } = parsePlaySetup(play, DEFAULT_SETUP);
      this.setup = setup;
      this.problems = problems;
      this.locked = setup.study !== null;
    } else {
      // the most trained recording that has its policies: quick, then the paper's, then smoke
      const order = ["quick", "paper", "smoke"];
      for (const p of [...PLAYABLE_PRESETS].sort(
        (a, b) => order.indexOf(a.scale) - order.indexOf(b.scale),
      )) {
        if (await hasRecordedPolicies(p.id, this.deps.fetch ?? fetch, this.deps.base)) {
          this.setup = { ...this.setup, run: { kind: "recorded", preset: p.id } };
          break;
        }
      }
    }
    try {
      const [player, records, merged] = await Promise.all([
        this.deps.results.player(),
        this.deps.results.records(),
        this.deps.results.merged(),
      ]);
      this.player = player;
      this.records = records;
      this.merged = merged;
    } catch (e) {
      // without IndexedDB (a private window may refuse it) dialogues are played but not kept
      this.player ||= randomId(10);
      this.problems = [
        ...this.problems,
        `Results cannot be kept in this browser (${(e as Error).message}); export them before you leave the page.`,
      ];
    }
    const runs = (await this.deps.runs?.list()) ?? [];
    this.storedRuns = runs
      .filter((r) => r.report && playable(r.report.config.benchmark))
      .map((r) => ({ id: r.id, title: r.title }));
    await this.loadRun(this.setup.run);
  }

  /**
   * Loads a run and its policies; the setup keeps its conditions where the run has them, and takes
   * all of the new run's when none was chosen or every one of the previous run's was (nothing narrowed).
   */
  async loadRun(run: RunRef): Promise<void> {
    const token = ++this.#load;
    const before = this.playableConditions;
    const narrowed = before.length > 0 && !before.every((c) => this.setup.conditions.includes(c));
    this.setup = { ...this.setup, run };
    this.loading = true;
    this.unavailable = null;
    this.report = null;
    this.policies = null;
    try {
      let report: RunReport | null;
      let policies: PolicySource | string;
      if (run.kind === "recorded") {
        report = await fetchRecording(run.preset, this.deps.fetch ?? fetch);
        if (!report) throw new Error(`There is no recording of ${run.preset}.`);
        policies = playable(report.config.benchmark)
          ? await recordedPolicies(run.preset, report, this.deps.fetch ?? fetch, this.deps.base)
          : "";
      } else {
        const stored = await this.deps.runs?.get(run.id);
        report = stored?.report ?? null;
        if (!report)
          throw new Error(
            `The run ${run.id} is not stored in this browser (a class study link needs a recording, which every browser has).`,
          );
        policies = playable(report.config.benchmark)
          ? await storedPolicies(this.deps.runs!, run.id, report)
          : "";
      }
      if (token !== this.#load) return;
      this.report = report;
      if (!playable(report.config.benchmark))
        throw new Error(
          `A person cannot play this run here: ${benchmarkModule(report.config.benchmark).title} has moves or hidden state of its own that replies alone do not cover.`,
        );
      if (typeof policies === "string") throw new Error(policies);
      this.policies = policies;
      // every policy is fetched now, before any dialogue: which file a dialogue loads would show
      // its condition in the browser's network panel
      this.#checkpoints = new Map(
        policies.available.map(({ condition, seed }) => [
          `${condition}:${seed}`,
          policies.load(condition, seed),
        ]),
      );
      for (const p of this.#checkpoints.values()) p.catch(() => undefined); // reported when a dialogue needs it
      if (this.setup.conditions.length === 0 || !this.locked) {
        const keep = this.setup.conditions.filter((c) => this.playableConditions.includes(c));
        this.setup = {
          ...this.setup,
          conditions: narrowed && keep.length ? keep : [...this.playableConditions],
        };
      }
      if (this.bench && this.persona.card.length === 0) this.drawPersona();
    } catch (e) {
      if (token === this.#load) this.unavailable = (e as Error).message;
    } finally {
      if (token === this.#load) this.loading = false;
    }
  }

  /** The next dialogue's index: how many this player has finished in this run and study. */
  get nextIndex(): number {
    return this.mine.length;
  }

  /** A person drawn from the population, seeded by the player and the dialogue (reproducible). */
  drawPersona(): void {
    if (!this.bench) return;
    const p = this.bench.humans.sample(
      Rng.seed(
        hashSeed(this.setup.study ?? "solo", this.player, "persona", this.nextIndex, Date.now()),
      ),
    );
    this.persona = { source: "drawn", card: [...p.card], type: p.type };
  }

  /** The card positions and the card tokens each can hold (from the population's cards). */
  readonly cardSlots = $derived.by<number[][]>(() => {
    if (!this.bench) return [];
    const cards = this.bench.humans.cardDistribution().map((c) => c.card);
    return Array.from({ length: this.bench.cardLen }, (_, i) =>
      [...new Set(cards.map((c) => c[i]))].sort((a, b) => a - b),
    );
  });

  ownPersona(card: number[]): void {
    this.persona = { source: "own", card: [...card], type: null };
  }

  classLink(
    origin: string,
    search: (play: string) => string,
    study = this.setup.study ?? `study-${randomId(6)}`,
  ): string {
    return `${origin}${search(formatPlaySetup({ ...this.setup, conditions: this.conditions, study }))}`;
  }

  async start(): Promise<void> {
    if (
      !this.report ||
      !this.policies ||
      !this.bench ||
      this.conditions.length === 0 ||
      this.phase === "playing"
    )
      return;
    this.error = null;
    try {
      const available = this.policies.available;
      const seeds = (c: ConditionId) =>
        available.filter((p) => p.condition === c).map((p) => p.seed);
      const a = assign({
        study: this.setup.study,
        player: this.player,
        scheme: this.setup.scheme,
        conditions: this.conditions,
        seeds,
        index: this.nextIndex,
      });
      this.#assignment = a;
      const checkpoint = await (this.#checkpoints.get(`${a.condition}:${a.seed}`) ??
        this.policies.load(a.condition, a.seed));
      const model = policyModel(this.bench, this.report.config, checkpoint);
      if (this.persona.card.length !== this.bench.cardLen) this.drawPersona();
      this.#dialogue = new PlayDialogue(
        this.bench,
        model,
        this.report.config.rl.temperature,
        a.sessionSeed,
        this.persona.card,
      );
      this.#startedAt = Date.now();
      this.#ownWords = [];
      this.reveal = null;
      this.phase = "playing";
      await this.#advance();
    } catch (e) {
      this.error = (e as Error).message;
      this.phase = "setup";
    }
  }

  async choose(act: number): Promise<void> {
    const d = this.#dialogue;
    if (!d || this.thinking || d.turn !== "user") return;
    d.choose(act);
    await this.#advance();
  }

  /** Whether a real LM is loaded to read the person's own words. */
  get canWrite(): boolean {
    return !!this.deps.lm?.();
  }

  /** Reads the person's words as an act with the loaded LM (play-freetext.ts); the person then sends it or picks another. */
  async read(): Promise<void> {
    const lm = this.deps.lm?.();
    const d = this.#dialogue;
    if (!lm || !d || d.turn !== "user" || this.readingBusy) return;
    this.readingBusy = true;
    this.error = null;
    try {
      this.reading = await readReply(lm, d.bench, d.dialogue, this.words);
    } catch (e) {
      this.error = `Your words could not be read: ${(e as Error).message}`;
    } finally {
      this.readingBusy = false;
    }
  }

  /** Sends the reply the person's words were read as (or the one they picked instead); the words are kept in the record. */
  async sendWords(act: number): Promise<void> {
    const d = this.#dialogue;
    if (!d || !this.reading) return;
    this.#ownWords.push({
      at: d.dialogue.acts.length,
      text: this.words.trim().slice(0, MAX_FREE_TEXT),
    });
    await this.choose(act);
  }

  /** Plays the persuader until it is the person's turn or the dialogue ends. */
  async #advance(): Promise<void> {
    const d = this.#dialogue!;
    this.thinking = true;
    this.options = [];
    this.words = "";
    this.reading = null;
    this.lines = d.lines();
    try {
      while (d.turn === "agent") {
        await d.agentMove();
        this.lines = d.lines();
      }
      if (d.turn === "env")
        throw new Error("this world has moves of its own, which the Play page does not play");
    } catch (e) {
      // the dialogue cannot go on: it is dropped (nothing recorded) and the setup is back
      this.error = `The dialogue stopped: ${(e as Error).message}`;
      this.thinking = false;
      this.phase = "setup";
      d.policy.dispose();
      this.#dialogue = this.#assignment = null;
      return;
    } finally {
      this.thinking = false;
    }
    if (d.done) await this.#finish();
    else {
      this.options = d.options();
      this.decisionDue = d.decisionDue;
    }
  }

  async #finish(): Promise<void> {
    const d = this.#dialogue!;
    const a = this.#assignment!;
    const bench = d.bench;
    const r = d.result();
    const name = (t: number) => bench.acts[t].name;
    const record: PlayRecord = {
      id: randomId(),
      player: this.player,
      study: this.setup.study,
      run: runRefText(this.setup.run),
      runKey: this.key!,
      index: this.nextIndex,
      condition: a.condition,
      seed: a.seed,
      sessionSeed: a.sessionSeed,
      persona: {
        source: this.persona.source,
        card: this.persona.card.map(name),
        type: this.persona.type === null ? null : bench.humans.types[this.persona.type].name,
      },
      acts: d.dialogue.acts.map(name),
      outcome: r.outcome,
      success: r.success,
      reward: r.reward,
      startedAt: this.#startedAt,
      finishedAt: Date.now(),
      ...(this.#ownWords.length ? { ownWords: this.#ownWords } : {}),
    };
    await this.deps.results.add(record).catch((e: Error) => {
      this.problems = [
        ...this.problems,
        `Dialogue ${record.index + 1} could not be stored (${e.message}); export your results before you leave the page.`,
      ];
    });
    this.records = [...this.records, record];
    const policyActs = d.dialogue.acts
      .filter(
        (_, i) =>
          bench.turn({ card: d.dialogue.card, acts: d.dialogue.acts.slice(0, i) }) === "agent",
      )
      .map(name);
    this.reveal = { record, policyActs };
    this.phase = "revealed";
    d.policy.dispose();
    this.#dialogue = null;
    this.#assignment = null;
  }

  /** Back to the setup for the next dialogue, with a new person drawn when the last one was drawn. */
  next(): void {
    this.phase = "setup";
    this.lines = [];
    this.options = [];
    if (this.persona.source === "drawn") this.drawPersona();
  }

  /**
   * Adds players' files to the merged set; a bad file is named and skipped, and the stored set changes only when a file added something.
   * Merges run one after another, so a second drop while the first is being stored merges into the first's set.
   */
  merge(files: { name: string; text: string }[]): Promise<void> {
    return this.#afterMerges(async () => {
      const { set, messages, problems } = mergeFiles(this.merged, files);
      this.mergeMessages = messages;
      this.mergeProblems = problems;
      if (
        set.records.length !== this.merged.records.length ||
        set.files.length !== this.merged.files.length
      )
        await this.#storeMerged(set);
    });
  }

  clearMerged(): Promise<void> {
    return this.#afterMerges(async () => {
      this.mergeMessages = [];
      this.mergeProblems = [];
      await this.#storeMerged(EMPTY_MERGE);
    });
  }

  #afterMerges(step: () => Promise<void>): Promise<void> {
    const run = this.#merges.then(step);
    this.#merges = run.catch(() => undefined); // one failed step does not stop the next
    return run;
  }

  /** Stores the set and shows it; when the browser cannot store it, it is still shown, with a problem that says to export it. */
  async #storeMerged(set: MergedSet): Promise<void> {
    await this.deps.results.putMerged(set).catch((e: Error) => {
      this.mergeProblems = [
        ...this.mergeProblems,
        `The merged set could not be stored in this browser (${e.message}); it is shown here, so export it before you leave the page.`,
      ];
    });
    this.merged = set;
  }
}
