// Real LMs as held-out panel members (docs/architecture.md#the-lm-tier): a panel member with `lm` in the
// config is an LmSimulator scoring user-act labels under a transformers.js model instead of a
// pretrained network. transformers.js is imported here lazily, on first use, so experiments
// without LM members never load it. A task (unit or diagnosis) opens its LM members once, shares
// one loaded model — and its label scores — among members that name the same model (e.g. one
// model direct and VS), and disposes them at its end.
//
// A member with `remote` instead is a RemoteSimulator: a model on a server with the
// OpenAI-compatible API (vLLM, SGLang, collapse-lab serve), its key from the environment.
//
// `model` is a local Hugging Face folder when written as a path (/abs, ./rel, ../rel, ~/…; in the
// browser a URL path the app serves), else a hub id. Local folders are checked before anything is
// pretrained (checkLmPanel); hub ids are only checked when a task loads them.
import type { Benchmark } from "../benchmarks/types";
import type { BackendName } from "../engine/backend";
import type { TransformersLanguageModel } from "../lm/backend"; // a type only: the module itself is imported lazily
import { LmSimulator } from "../simulators/lm";
import { promptKey } from "../lm/types";
import type { ContinuationScore, LanguageModel } from "../lm/types";
import type { ExperimentConfig, PanelMemberConfig } from "./config";
import type { UserSimulator } from "../simulators/simulator";
import { RemoteClient, describeCapabilities } from "../remote/client";
import { RemoteSimulator, type RemoteSimulatorStats } from "../simulators/remote";
import { apiKeyFor } from "../remote/secrets";
import { dialogueMessages, exampleDialogue } from "../simulators/act-text";
import { benchmarkFor } from "../benchmarks/registry";

export type PanelLmConfig = NonNullable<PanelMemberConfig["lm"]>;
export type PanelRemoteConfig = NonNullable<PanelMemberConfig["remote"]>;

/** A remote member's client: its own (its request counts are its own), with the key for its base URL. */
function remoteClient(r: PanelRemoteConfig): RemoteClient {
  return new RemoteClient({
    baseUrl: r.baseUrl,
    apiKey: apiKeyFor(r.baseUrl, r.apiKeyEnv),
    timeoutMs: r.timeoutMs,
    retries: r.retries,
  });
}

/** A remote model as a simulator (a panel member, or a training simulator of single, ensemble or vs). */
export function remoteSimulator(
  bench: Benchmark,
  config: ExperimentConfig,
  name: string,
  r: PanelRemoteConfig,
): RemoteSimulator {
  const vs =
    r.mode === "vs" ? { k: r.k ?? config.vs.k, selection: r.selection ?? config.vs.selection } : {};
  return new RemoteSimulator(bench, remoteClient(r), {
    name,
    model: r.model,
    mode: r.mode,
    protocol: r.protocol,
    scoring: r.scoring,
    samples: r.samples,
    temperature: r.temperature,
    concurrency: r.concurrency,
    ...vs,
  });
}

/** Every remote model a config uses, with the name it plays under. */
function remoteModels(config: ExperimentConfig): { name: string; remote: PanelRemoteConfig }[] {
  const t = config.simulator.remote;
  return [
    ...config.panel.flatMap((m) =>
      m.remote ? [{ name: `panel member ${m.name}`, remote: m.remote }] : [],
    ),
    ...(t?.single ? [{ name: "single's training simulator", remote: t.single }] : []),
    ...(t?.ensemble ?? []).map((remote, i) => ({
      name: `ensemble's training simulator ${i + 1}`,
      remote,
    })),
    ...(t?.vs ? [{ name: "vs's training simulator", remote: t.vs }] : []),
  ];
}

const IS_NODE =
  typeof process !== "undefined" &&
  !!process.versions?.node &&
  typeof window === "undefined" &&
  typeof self === "undefined";

/** A path (a local folder), not a hub id: "owner/name" ids never start with / . ~ or a drive. */
export function isLocalModel(model: string): boolean {
  return /^(\/|\.\.?(\/|\\|$)|~(\/|$)|[A-Za-z]:[\\/])/.test(model) || model.includes("\\");
}

/** The folder a local model is read from: absolute (Node: resolved against the working directory). */
export function modelFolder(model: string): string {
  let p = model.replace(/[\\/]+$/, "");
  if (!IS_NODE) return p;
  if (p.startsWith("~")) p = (process.env.HOME ?? process.env.USERPROFILE ?? "~") + p.slice(1);
  if (p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p)) return p;
  const segments = `${process.cwd()}/${p}`.replace(/\\/g, "/").split("/");
  const out: string[] = [];
  for (const s of segments) {
    if (s === "..") out.pop();
    else if (s !== "." && s !== "") out.push(s);
  }
  return (/^[A-Za-z]:$/.test(out[0] ?? "") ? "" : "/") + out.join("/");
}

/** What LanguageModel.load needs: the backend's ModelSource, as plain data. */
export function modelSource(lm: PanelLmConfig): {
  id: string;
  localModelPath?: string;
  allowRemote: boolean;
  dtype?: PanelLmConfig["dtype"];
} {
  const dtype = lm.dtype ? { dtype: lm.dtype } : {};
  if (!isLocalModel(lm.model)) return { id: lm.model, allowRemote: true, ...dtype };
  const folder = modelFolder(lm.model);
  const cut = folder.lastIndexOf("/");
  return {
    id: folder.slice(cut + 1),
    localModelPath: folder.slice(0, cut + 1) || "/",
    allowRemote: false,
    ...dtype,
  };
}

function memberError(name: string, e: unknown): Error {
  return new Error(`panel member ${name}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
}

/** Exact scores are a function of (prompt, continuations): members of one model share them. */
type ScoreCache = Map<string, Promise<ContinuationScore[]>>;

/**
 * Fails fast, before any pretraining, when a local LM member's folder or its config.json is missing:
 * "panel member X: model not found at /path (…)". Hub ids are not checked here (that would download).
 */
export async function checkLmPanel(
  config: ExperimentConfig,
  onNote?: (message: string) => void,
): Promise<void> {
  // remote models are probed once, before pretraining: an unreachable server, a refused key or an unknown model fails now
  for (const { name, remote: r } of remoteModels(config)) {
    const bench = benchmarkFor(config);
    const model =
      r.mode === "vs" && (r.protocol ?? "acts") === "acts" && !r.model.endsWith(":vs")
        ? `${r.model}:vs`
        : r.model;
    // act-text models are never asked for JSON: their probe skips response_format
    const example =
      (r.protocol ?? "acts") === "acts"
        ? {
            messages: dialogueMessages(bench, exampleDialogue(bench, "user"), "user"),
            jsonSchema: false,
          }
        : {};
    const caps = await remoteClient({ ...r, retries: Math.min(r.retries ?? 2, 2) })
      .probe(model, example)
      .catch((e: unknown) => {
        throw new Error(`${name}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
      });
    onNote?.(`${name}: ${describeCapabilities(caps).replace(/\n/g, "\n  ")}`);
  }
  for (const m of config.panel) {
    if (!m.lm || !isLocalModel(m.lm.model)) continue;
    const folder = modelFolder(m.lm.model);
    const missing = (why: string) =>
      new Error(
        `panel member ${m.name}: model not found at ${folder} (${why}); give the folder of a Hugging Face model: config.json, tokenizer files, onnx/model.onnx`,
      );
    if (IS_NODE) {
      const { stat } = await import(/* @vite-ignore */ "node:fs/promises");
      const isDir = await stat(folder).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (!isDir) throw missing("no such folder");
      const hasConfig = await stat(`${folder}/config.json`).then(
        (s) => s.isFile(),
        () => false,
      );
      if (!hasConfig) throw missing("the folder has no config.json");
    } else {
      // a static host may answer a missing file with the app's index.html: only JSON counts
      const ok = await fetch(`${folder}/config.json`)
        .then(async (r) => {
          if (!r.ok) return false;
          JSON.parse(await r.text());
          return true;
        })
        .catch(() => false);
      if (!ok) throw missing("no config.json served there");
    }
  }
}

export interface LmPanel {
  /** One simulator per LM or remote member, by member name. */
  simulators: Map<string, UserSimulator>;
  /** What each remote member did (scoring, requests, fallbacks, unmapped replies), for the report. */
  remoteStats(): RemoteSimulatorStats[];
  dispose(): Promise<void>;
}

type OpenMember = { name: string; lm: PanelLmConfig } | { name: string; remote: PanelRemoteConfig };

/**
 * Loads the LM members' models (each distinct model once) and builds their simulators. Webgpu
 * engines run the LM on WebGPU when there is an adapter; wasm engines on wasm; Node on the CPU.
 * The simulators' randomness comes only from the Rng the rollouts pass in, so the numbers are a
 * function of config + seed + backend.
 */
export async function openLmPanel(
  bench: Benchmark,
  config: ExperimentConfig,
  all: OpenMember[],
  engine: BackendName,
): Promise<LmPanel> {
  const simulators = new Map<string, UserSimulator>();
  const remotes: RemoteSimulator[] = [];
  for (const m of all) {
    if (!("remote" in m)) continue;
    const sim = remoteSimulator(bench, config, m.name, m.remote);
    remotes.push(sim);
    simulators.set(m.name, sim);
  }
  const remoteStats = () => remotes.map((r) => ({ ...r.stats }));
  const members = all.flatMap((m) => ("lm" in m ? [m] : []));
  if (members.length === 0) return { simulators, remoteStats, dispose: async () => {} };
  const { TransformersLanguageModel: Lm } = await import("../lm/backend");
  const loaded = new Map<
    string,
    { model: Promise<TransformersLanguageModel>; scores: ScoreCache }
  >();
  const dispose = async () => {
    const models = await Promise.allSettled([...loaded.values()].map((l) => l.model));
    for (const m of models) if (m.status === "fulfilled") await m.value.dispose();
  };
  try {
    for (const { name, lm } of members) {
      const src = modelSource(lm);
      const key = JSON.stringify(src);
      if (!loaded.has(key))
        loaded.set(key, {
          model: Lm.load(src, { device: engine === "webgpu" ? "auto" : "wasm" }),
          scores: new Map(),
        });
      const { model: loading, scores } = loaded.get(key)!;
      const model = await loading.catch((e: unknown) => {
        throw memberError(name, e);
      });
      const named: LanguageModel = {
        id: model.id,
        generate: (p, o) => model.generate(p, o),
        score: (p, c) => {
          const k = `${promptKey(p)}\u0000${c.join("\u0001")}`;
          let hit = scores.get(k);
          if (!hit) scores.set(k, (hit = model.score(p, c)));
          // errors while scoring (e.g. a prompt longer than the model's context) name the member too
          return hit.catch((e: unknown) => Promise.reject(memberError(name, e)));
        },
      };
      const vs =
        lm.mode === "vs"
          ? {
              k: lm.k ?? config.vs.k,
              selection: lm.selection ?? config.vs.selection,
              exponent: lm.exponent ?? 1,
            }
          : {};
      simulators.set(
        name,
        new LmSimulator(bench, named, {
          name,
          mode: lm.mode,
          temperature: lm.temperature,
          lengthNormalise: lm.lengthNormalise,
          promptStyle: lm.promptStyle,
          ...vs,
        }),
      );
    }
  } catch (e) {
    await dispose();
    throw e;
  }
  return { simulators, remoteStats, dispose };
}
