// The store of pretrained models: keys change with every input a pretraining job reads and with
// nothing else; a stored model is bit for bit what live pretraining gives on wasm (so the shipped
// files cannot drift from the code); a missing or corrupt file is never used — the job pretrains
// live and the message names the file; a run reports where each model came from.
import { createHash } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
  readdirSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBackend } from "../../src/engine/backends/index";
import type { EngineBackend } from "../../src/engine/backend";
import {
  applySet,
  seedsOf,
  validateConfig,
  type ExperimentConfig,
} from "../../src/experiment/config";
import { runExperiment } from "../../src/experiment/experiment";
import {
  fillStore,
  nodeStore,
  presetRequests,
  pruneStore,
  STORE_DIR,
  StoreLockedError,
} from "../../src/experiment/node-store";
import { presetConfig } from "../../src/experiment/presets";
import {
  describeJob,
  pretrainJobs,
  runPretrainJob,
  type PretrainJob,
  type PretrainResult,
} from "../../src/experiment/pretrain";
import { parseReport } from "../../src/experiment/report-schema";
import {
  canonicalJson,
  encodeStored,
  expectedShape,
  fileStore,
  jobInputs,
  jobKey,
  lookUp,
  STORE_VERSION,
  StoreError,
  StoreUnavailable,
  type StoreIndex,
} from "../../src/experiment/store";
import {
  InlineExecutor,
  type Executor,
  type Task,
  type TaskResult,
} from "../../src/experiment/tasks";
import { fakeResult, MemoryFiles } from "./store-fixture";

const QUICK = presetConfig("persuasion-quick");
const set = (c: ExperimentConfig, assignment: string) => validateConfig(applySet(c, assignment));

const JOBS: Record<string, PretrainJob> = {
  reference: { kind: "reference", seed: 0 },
  policy: { kind: "policy", seed: 0 },
  ensemble: { kind: "ensemble", seed: 0, member: 1 },
  panel: { kind: "panel", seed: 0, member: 1 },
};
const SIMULATOR_JOBS = ["reference", "ensemble", "panel"];

// every preset whose models ship in the store: service-paper's pretrain live (hours of wasm)
const STORED_PRESETS = [
  "persuasion-smoke",
  "persuasion-quick",
  "persuasion-paper",
  "persuasion-shifted-paper",
  "service-smoke",
  "service-quick",
  "cooperation-smoke",
  "cooperation-quick",
  "cooperation-paper",
];

describe("store keys", () => {
  it("are SHA-256 of the canonical JSON of the job's inputs (the same digest node:crypto gives)", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: 1, e: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[3,{"e":2,"f":1}]},"b":1}',
    );
    for (const job of Object.values(JOBS)) {
      const digest = createHash("sha256")
        .update(canonicalJson(jobInputs(QUICK, job, "wasm")))
        .digest("hex");
      expect(jobKey(QUICK, job, "wasm")).toBe(digest);
      expect(jobInputs(QUICK, job, "wasm").storeVersion).toBe(STORE_VERSION);
    }
  });

  it("change with every input a job reads", () => {
    const matters = [
      "world.cardInformativeness=0.5",
      "world.replySharpness=3",
      "world.repeatDecay=0.5",
      "world.typePrior=[1,1,1,1]",
      "corpus.dialogues=1000",
      "corpus.persuaderStyle=2",
    ];
    const role = (r: "simulator" | "policy") => {
      const { model: m, pretrain: p } = QUICK[r];
      return [
        `${r}.model.d=${m.d + 8}`,
        `${r}.model.layers=${m.layers === 1 ? 2 : 1}`,
        `${r}.model.heads=${m.heads === 2 ? 4 : 2}`,
        `${r}.model.mlpRatio=${m.mlpRatio === 2 ? 3 : 2}`,
        `${r}.pretrain.steps=${p.steps + 1}`,
        `${r}.pretrain.batch=${p.batch === 32 ? 48 : 32}`,
        `${r}.pretrain.lr=${p.lr * 2}`,
      ];
    };
    for (const [name, job] of Object.entries(JOBS)) {
      const key = jobKey(QUICK, job, "wasm");
      const own = SIMULATOR_JOBS.includes(name) ? role("simulator") : role("policy");
      for (const a of [...matters, ...own])
        expect(jobKey(set(QUICK, a), job, "wasm"), `${name}: ${a}`).not.toBe(key);
      expect(jobKey(QUICK, { ...job, seed: 1 }, "wasm"), `${name}: seed`).not.toBe(key);
      expect(jobKey(QUICK, job, "float64"), `${name}: backend`).not.toBe(key);
    }
    // members and the panel member's and the ensemble family's own settings
    expect(jobKey(QUICK, { kind: "ensemble", seed: 0, member: 2 }, "wasm")).not.toBe(
      jobKey(QUICK, JOBS.ensemble, "wasm"),
    );
    for (const a of [
      "panel.1.prior=[0.1,0.2,0.3,0.4]",
      "panel.1.corpusScale=0.75",
      "panel.1.seedOffset=7",
    ]) {
      expect(jobKey(set(QUICK, a), JOBS.panel, "wasm"), a).not.toBe(
        jobKey(QUICK, JOBS.panel, "wasm"),
      );
    }
    for (const a of [
      "ensemble.members.0.prior=[0.1,0.2,0.3,0.4]",
      "ensemble.members.0.corpusScale=0.3",
      "ensemble.members.0.seedOffset=7",
    ]) {
      expect(jobKey(set(QUICK, a), JOBS.ensemble, "wasm"), a).not.toBe(
        jobKey(QUICK, JOBS.ensemble, "wasm"),
      );
    }
    // the reference's family (no members listed): member 2 is another network than member 1
    const samples = set(QUICK, "ensemble.members=[]");
    expect(jobKey(samples, { kind: "ensemble", seed: 0, member: 2 }, "wasm")).not.toBe(
      jobKey(samples, JOBS.ensemble, "wasm"),
    );
    expect(jobKey(samples, JOBS.ensemble, "wasm")).not.toBe(jobKey(QUICK, JOBS.ensemble, "wasm"));
    // every job of a run has its own key (kinds, members, seeds: each seed its own panel)
    for (const preset of STORED_PRESETS) {
      const c = presetConfig(preset);
      const jobs = seedsOf(c).flatMap((s) => pretrainJobs(c, s));
      expect(new Set(jobs.map((j) => jobKey(c, j, "wasm"))).size, preset).toBe(jobs.length);
    }
  });

  it("stay the same when only inputs the job does not read change", () => {
    const ignored = [
      "rl.steps=7",
      "rl.prompts=2",
      "rl.groupSize=4",
      "rl.lr=0.5",
      "rl.temperature=2",
      "simulator.gamma=1",
      "eval.episodes=16",
      "eval.diagnosticSeeds=0",
      'conditions=["base","ensemble"]',
      "seeds=9",
      "vs.k=2",
      "cotrain.lr=0.5",
      "population.poolSize=2",
      "parallel=3",
      "panel.1.name=renamed",
      "panel.1.gamma=2",
      "ensemble.members.0.name=renamed",
      "ensemble.members.0.gamma=7",
      "panel.0.seedOffset=999", // another member
    ];
    for (const [name, job] of Object.entries(JOBS)) {
      const key = jobKey(QUICK, job, "wasm");
      const other = SIMULATOR_JOBS.includes(name) ? "policy" : "simulator";
      for (const a of [
        ...ignored,
        `${other}.model.d=32`,
        `${other}.pretrain.steps=7`,
        `${other}.pretrain.lr=0.001`,
      ]) {
        expect(jobKey(set(QUICK, a), job, "wasm"), `${name}: ${a}`).toBe(key);
      }
      // a job names its seed: seed s's models, its panel's too, are the same whatever the run's first seed
      expect(jobKey(set(QUICK, "seedBase=40"), job, "wasm"), `${name}: seedBase`).toBe(key);
    }
    // the reference's family: a member is keyed by its place, whatever the ensemble's size
    const samples = set(QUICK, "ensemble.members=[]");
    expect(jobKey(set(samples, "ensemble.k=5"), JOBS.ensemble, "wasm")).toBe(
      jobKey(samples, JOBS.ensemble, "wasm"),
    );
    // a panel member keeps its key wherever it stands in the panel
    const swapped = { ...QUICK, panel: [QUICK.panel[1], QUICK.panel[0], ...QUICK.panel.slice(2)] };
    expect(jobKey(swapped, { kind: "panel", seed: 0, member: 0 }, "wasm")).toBe(
      jobKey(QUICK, JOBS.panel, "wasm"),
    );
  });
});

// ---------------------------------------------------------------------------------------------

const SMOKE = presetConfig("persuasion-smoke");
let wasm: EngineBackend;
beforeAll(async () => {
  wasm = (await createBackend("wasm")).backend;
});

const bytesOf = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

describe("the shipped store (public/pretrained/)", () => {
  it("holds persuasion-smoke's models bit for bit as live pretraining on wasm gives them", async () => {
    const store = nodeStore();
    const index = JSON.parse(readFileSync(join(STORE_DIR, "index.json"), "utf8")) as StoreIndex;
    for (const job of [
      { kind: "reference", seed: SMOKE.seedBase },
      { kind: "policy", seed: SMOKE.seedBase },
    ] as PretrainJob[]) {
      const key = jobKey(SMOKE, job, "wasm");
      const stored = await store.get(key, expectedShape(SMOKE, job));
      expect(
        stored,
        `${describeJob(SMOKE, job)} of persuasion-smoke is not in the store: run bash scripts/store-pretrained.sh`,
      ).toBeDefined();
      const live = await runPretrainJob(wasm, SMOKE, job);
      expect(stored!.nll).toEqual(live.nll);
      expect(stored!.checkpoint.tensors.map((t) => t.name)).toEqual(
        live.checkpoint.tensors.map((t) => t.name),
      );
      stored!.checkpoint.tensors.forEach((t, i) =>
        expect(
          Buffer.from(bytesOf(t.data)).equals(bytesOf(live.checkpoint.tensors[i].data)),
          t.name,
        ).toBe(true),
      );
      expect(stored!.checkpoint.optimizer?.step).toBe(live.checkpoint.optimizer?.step);
      // the whole file, header and Adam moments included, is what the writer makes of the live result
      const file = readFileSync(join(STORE_DIR, index.models[key].file));
      expect(Buffer.from(encodeStored(key, describeJob(SMOKE, job), live)).equals(file)).toBe(true);
    }
  });

  it("holds every job of every preset's own seeds", () => {
    const index = JSON.parse(readFileSync(join(STORE_DIR, "index.json"), "utf8")) as StoreIndex;
    for (const preset of STORED_PRESETS) {
      const missing = presetRequests(preset).filter(
        (r) => !index.models[jobKey(r.config, r.job, "wasm")],
      );
      expect(
        missing.map((r) => `${r.job.kind} ${r.job.seed}`),
        `${preset}: run bash scripts/store-pretrained.sh ${preset}`,
      ).toEqual([]);
    }
  });
});

describe("a stored file that cannot be used", () => {
  const job = JOBS.reference;
  const expect_ = expectedShape(SMOKE, job);
  const key = jobKey(SMOKE, job, "wasm");

  async function problem(edit: (m: MemoryFiles, file: string) => void): Promise<string> {
    const m = new MemoryFiles();
    const file = m.put(SMOKE, job, fakeResult(SMOKE, job));
    edit(m, file);
    const found = await lookUp(m.store(), SMOKE, job, "wasm");
    expect(found.source).toBe("trained");
    if (found.source !== "trained") throw new Error("unreachable");
    expect(found.problem).toContain(`mem/${file}`);
    await expect(m.store().get(key, expect_)).rejects.toBeInstanceOf(StoreError);
    return found.problem!;
  }
  const corrupt =
    (f: (b: Uint8Array) => Uint8Array, sameSize = true) =>
    (m: MemoryFiles, file: string) => {
      const b = f(new Uint8Array(m.files.get(file)!));
      m.files.set(file, b);
      if (sameSize) m.index.models[key].bytes = b.length;
    };

  it("is a clean result when intact", async () => {
    const m = new MemoryFiles();
    const result = fakeResult(SMOKE, job);
    m.put(SMOKE, job, result);
    const found = await lookUp(m.store(), SMOKE, job, "wasm");
    expect(found.source).toBe("store");
    if (found.source === "store") expect(found.result).toEqual(result);
    // a policy keeps its Adam moments through the file
    const p = new MemoryFiles();
    const policy = fakeResult(SMOKE, JOBS.policy);
    p.put(SMOKE, JOBS.policy, policy);
    expect(
      await p.store().get(jobKey(SMOKE, JOBS.policy, "wasm"), expectedShape(SMOKE, JOBS.policy)),
    ).toEqual(policy);
    // a key the store does not hold is a plain miss
    expect(await lookUp(m.store(), SMOKE, JOBS.policy, "wasm")).toEqual({
      source: "trained",
      key: jobKey(SMOKE, JOBS.policy, "wasm"),
    });
  });

  it("is refused, with the file and the reason", async () => {
    expect(await problem((m, file) => m.files.delete(file))).toMatch(/the file is missing/);
    expect(await problem(corrupt((b) => b.slice(0, b.length - 4), false))).toMatch(
      /index\.json says .*truncated/,
    );
    expect(await problem(corrupt((b) => b.slice(0, b.length - 4)))).toMatch(/wrong size/);
    expect(await problem(corrupt((b) => (b.set([0x58], 0), b)))).toMatch(/no CLPT signature/);
    expect(await problem(corrupt((b) => (b.set([0x7b, 0x7b], 8), b)))).toMatch(/bad header/);
    const nan = corrupt((b) => {
      new DataView(b.buffer).setFloat32(b.length - 8, NaN, true);
      return b;
    });
    expect(await problem(nan)).toMatch(/NaN/);
    // a file holding another job's model, or a model of another shape, under this key
    expect(
      await problem((m, file) => {
        const other = new MemoryFiles();
        const f = other.put(SMOKE, JOBS.ensemble, fakeResult(SMOKE, JOBS.ensemble));
        m.files.set(file, other.files.get(f)!);
        m.index.models[key].bytes = other.files.get(f)!.length;
      }),
    ).toMatch(/holds the model of key/);
    expect(
      await problem((m, file) => {
        const wrong = fakeResult(set(SMOKE, "simulator.model.d=32"), job);
        const b = encodeStored(key, "reference simulator", wrong);
        m.files.set(file, b);
        m.index.models[key].bytes = b.length;
      }),
    ).toMatch(/config mismatch/);
  });

  it("without a readable index.json, there is no store (one kind of message)", async () => {
    const m = new MemoryFiles();
    m.put(SMOKE, job, fakeResult(SMOKE, job));
    await expect(m.store(false).get(key, expect_)).rejects.toBeInstanceOf(StoreUnavailable);
    const missing = await lookUp(m.store(false), SMOKE, job, "wasm");
    expect(missing).toMatchObject({
      source: "trained",
      unavailable: expect.stringMatching(/mem\/index\.json is missing/),
    });
    const garbage = fileStore("mem", async (name) =>
      name === "index.json" ? new TextEncoder().encode("{nope") : undefined,
    );
    expect(await lookUp(garbage, SMOKE, job, "wasm")).toMatchObject({
      source: "trained",
      unavailable: expect.stringMatching(/index\.json is unreadable/),
    });
  });
});

// ---------------------------------------------------------------------------------------------

/** Runs tasks inline, answering pretraining from `answer` when it has the job; counts what ran. */
class CountingExecutor implements Executor {
  readonly parallelism = 1;
  readonly pretrained: string[] = [];
  readonly inline: InlineExecutor;
  constructor(
    backend: EngineBackend,
    readonly answer?: (job: PretrainJob) => PretrainResult | undefined,
    readonly gate?: Promise<void>, // every task waits for it
  ) {
    this.inline = new InlineExecutor(backend);
  }
  async run<T extends Task>(task: T): Promise<TaskResult<T>> {
    await this.gate;
    if (task.kind === "pretrain") {
      this.pretrained.push(describeJob(task.config, task.job));
      const r = this.answer?.(task.job);
      if (r) return r as TaskResult<T>;
    }
    return this.inline.run(task);
  }
  async close() {}
}

describe("runExperiment with a store", () => {
  // two models pretrain live and two units run: minutes on a busy two-core machine
  it(
    "loads stored jobs (source store), pretrains the rest live (source trained) and names an unusable file",
    { timeout: 600_000 },
    async () => {
      // the ensemble of the preset's families, whose members the shipped store holds for persuasion-smoke
      const c = validateConfig({
        ...SMOKE,
        conditions: ["base", "ensemble"],
        eval: { ...SMOKE.eval, diagnosticSeeds: 0 },
      });
      const shipped = nodeStore();
      const m = new MemoryFiles();
      const jobs = pretrainJobs(c, c.seedBase);
      for (const job of jobs)
        m.put(c, job, (await shipped.get(jobKey(c, job, "wasm"), expectedShape(c, job)))!);
      // the ensemble's family-g is not stored; the reference's file is cut short
      delete m.index.models[jobKey(c, { kind: "ensemble", seed: 0, member: 2 }, "wasm")];
      const refFile = m.index.models[jobKey(c, JOBS.reference, "wasm")].file;
      m.files.set(refFile, m.files.get(refFile)!.slice(0, 100));

      const executor = new CountingExecutor(wasm);
      const notes: string[] = [];
      const details: string[] = [];
      const report = await runExperiment(c, executor, {
        backend: "wasm",
        store: m.store(),
        onNote: (n) => notes.push(n),
        onProgress: (p) => p.phase === "pretrain" && details.push(p.detail),
      });
      expect(executor.pretrained.sort()).toEqual([
        "ensemble simulator family-g",
        "reference simulator",
      ]);
      const models = report.pretraining[0].models!;
      expect(models).toHaveLength(jobs.length);
      for (const s of models)
        expect(s.source, s.model).toBe(
          ["ensemble simulator family-g", "reference simulator"].includes(s.model)
            ? "trained"
            : "store",
        );
      expect(models.find((s) => s.model === "reference simulator")!.problem).toMatch(
        new RegExp(`mem/${refFile}: 100 bytes, index.json says \\d+ \\(truncated`),
      );
      expect(
        models.find((s) => s.model === "ensemble simulator family-g")!.problem,
      ).toBeUndefined();
      expect(report.store).toEqual({
        location: "mem",
        loaded: jobs.length - 2,
        trained: 2,
        messages: [expect.stringContaining(`mem/${refFile}`)],
      });
      expect(notes).toEqual([
        expect.stringMatching(/reference simulator live instead/),
        `pretraining: ${jobs.length - 2} of ${jobs.length} models from the store (mem), 2 pretrained live`,
      ]);
      expect(details.filter((d) => d.endsWith("(from the store)"))).toHaveLength(jobs.length - 2);
      // the report reads back, and its models' sources are checked
      const text = JSON.stringify(report);
      expect(parseReport(text).pretraining[0].models).toEqual(models);
      expect(() => parseReport(text.replace('"source":"store"', '"source":"cloud"'))).toThrow(
        /pretraining\.0\.models\.\d+\.source/,
      );
    },
  );

  it("with no store says so once, and pretrains every model", async () => {
    const c = validateConfig({
      ...SMOKE,
      conditions: ["base"],
      eval: { ...SMOKE.eval, diagnosticSeeds: 0 },
    });
    // pretraining is answered from the shipped files, to keep this test fast: what matters is that it was asked for
    const shipped = new Map<string, PretrainResult>();
    const jobs = pretrainJobs(c, c.seedBase);
    for (const job of jobs)
      shipped.set(
        canonicalJson(job),
        (await nodeStore().get(jobKey(c, job, "wasm"), expectedShape(c, job)))!,
      );
    const executor = new CountingExecutor(wasm, (job) => shipped.get(canonicalJson(job)));
    const notes: string[] = [];
    const report = await runExperiment(c, executor, {
      backend: "wasm",
      store: new MemoryFiles().store(false),
      onNote: (n) => notes.push(n),
    });
    expect(executor.pretrained).toHaveLength(jobs.length);
    expect(report.store).toEqual({
      location: "mem",
      loaded: 0,
      trained: jobs.length,
      messages: [
        "no store of pretrained models: mem/index.json is missing; every model pretrains live",
      ],
    });
    expect(notes).toHaveLength(2);
    expect(
      report.pretraining[0].models!.every((s) => s.source === "trained" && s.problem === undefined),
    ).toBe(true);
  });
});

describe("reports", () => {
  it("recorded before the store still parse", () => {
    const dir = join(STORE_DIR, "..", "recorded");
    const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files)
      expect(() => parseReport(readFileSync(join(dir, f), "utf8")), f).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------

describe("the store's writer (collapse-lab store)", () => {
  const dir = mkdtempSync(join(tmpdir(), "collapse-lab-store-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("stores what the executor pretrains, keeps intact files, redoes broken ones and prunes", async () => {
    const requests = presetRequests("persuasion-smoke").filter(
      (r) => r.job.kind === "reference" || r.job.kind === "policy",
    );
    const executor = new CountingExecutor(wasm, (job) =>
      fakeResult(SMOKE, job, job.kind === "policy" ? 2 : 3),
    );
    const log: string[] = [];
    expect(await fillStore(dir, requests, executor, "wasm", (s) => log.push(s))).toEqual({
      stored: 2,
      kept: 0,
    });
    const store = nodeStore(dir);
    for (const r of requests)
      expect(
        await store.get(jobKey(r.config, r.job, "wasm"), expectedShape(r.config, r.job)),
      ).toEqual(fakeResult(SMOKE, r.job, r.job.kind === "policy" ? 2 : 3));
    expect(executor.pretrained).toHaveLength(2);

    // re-run: both kept; then one file broken: only that one again
    expect(await fillStore(dir, requests, executor, "wasm", (s) => log.push(s))).toEqual({
      stored: 0,
      kept: 2,
    });
    const refEntry = (JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as StoreIndex)
      .models[jobKey(SMOKE, requests[0].job, "wasm")];
    writeFileSync(join(dir, refEntry.file), "garbage");
    expect(await fillStore(dir, requests, executor, "wasm", (s) => log.push(s))).toEqual({
      stored: 1,
      kept: 1,
    });
    expect(log.some((l) => l.includes(refEntry.file) && l.includes("unusable"))).toBe(true);
    expect(executor.pretrained).toHaveLength(3);

    // prune: keep only the policy; a stray file goes too
    writeFileSync(join(dir, "stray.bin"), "x");
    const policyKey = jobKey(SMOKE, requests[1].job, "wasm");
    const removed = pruneStore(dir, new Set([policyKey]), () => undefined);
    expect(removed).toHaveLength(2);
    expect(
      Object.keys((JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as StoreIndex).models),
    ).toEqual([policyKey]);
    expect(readdirSync(dir).sort()).toEqual([`${policyKey.slice(0, 16)}.bin`, "index.json"]);
  });

  it("lets one writer in at a time: while one stores, a second store or a prune is refused, naming the lock, and nothing is lost", async () => {
    const own = mkdtempSync(join(tmpdir(), "collapse-lab-store-lock-"));
    try {
      const [first, second] = presetRequests("persuasion-smoke").filter(
        (r) => r.job.kind === "reference" || r.job.kind === "policy",
      );
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const answer = (job: PretrainJob) => fakeResult(SMOKE, job, 2);
      const slow = new CountingExecutor(wasm, answer, gate); // its pretraining waits at the gate, holding the lock
      const running = fillStore(own, [first], slow, "wasm", () => undefined);
      const fast = new CountingExecutor(wasm, answer);
      await expect(fillStore(own, [second], fast, "wasm", () => undefined)).rejects.toThrow(
        StoreLockedError,
      );
      await expect(fillStore(own, [second], fast, "wasm", () => undefined)).rejects.toThrow(
        /being written by another `collapse-lab store` \(it holds .*\.lock\)/,
      );
      expect(() => pruneStore(own, new Set(), () => undefined)).toThrow(StoreLockedError);
      expect(fast.pretrained).toEqual([]); // refused before any work
      open();
      expect(await running).toEqual({ stored: 1, kept: 0 });
      // released: the second writer gets in, and the index holds both
      expect(await fillStore(own, [second], fast, "wasm", () => undefined)).toEqual({
        stored: 1,
        kept: 0,
      });
      const keys = [first, second].map((r) => jobKey(r.config, r.job, "wasm")).sort();
      expect(
        Object.keys(
          (JSON.parse(readFileSync(join(own, "index.json"), "utf8")) as StoreIndex).models,
        ).sort(),
      ).toEqual(keys);
      expect(readdirSync(own)).not.toContain(".lock");
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("takes over a lock its writer stopped refreshing (a store that was killed)", async () => {
    const own = mkdtempSync(join(tmpdir(), "collapse-lab-store-stale-"));
    try {
      const lock = join(own, ".lock");
      mkdirSync(lock); // what a killed writer leaves, last refreshed an hour ago
      const old = new Date(Date.now() - 3_600_000);
      utimesSync(lock, old, old);
      const requests = presetRequests("persuasion-smoke").filter((r) => r.job.kind === "policy");
      expect(
        await fillStore(
          own,
          requests,
          new CountingExecutor(wasm, (job) => fakeResult(SMOKE, job, 2)),
          "wasm",
          () => undefined,
        ),
      ).toEqual({ stored: 1, kept: 0 });
      expect(readdirSync(own)).not.toContain(".lock");
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});
