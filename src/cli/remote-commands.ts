// The CLI's remote-tier commands: `serve` (the project's simulators and policies behind the
// OpenAI-compatible API) and `remote-probe` (what a model server offers). main.ts registers them
// and hands in its small argument helpers.
import { existsSync, readFileSync } from "node:fs";
import { Option, type Command } from "commander";
import { createBackend } from "../engine/backends";
import { applySet, ConfigError, validateConfig, type ExperimentConfig } from "../experiment/config";
import { nodeStore } from "../experiment/node-store";
import { policiesBeside } from "../experiment/policies";
import { parseReport } from "../experiment/report-schema";
import { presetConfig } from "../experiment/presets";
import { describeCapabilities, RemoteClient, type ChatMessageIn } from "../remote/client";
import { RemoteError } from "../remote/errors";
import { printable } from "../remote/printable";
import { apiKeyFor, promptApiKey, rememberApiKey } from "../remote/secrets";
import { loadServedWorld } from "../serve/models";
import { buildServer } from "../serve/server";
import { loadGgufModel, RealLmMissingError, type ServedTextModel } from "../serve/gguf";

export interface CliHelpers {
  integer: (min: number) => (value: string) => number;
  collect: (value: string, previous: string[]) => string[];
  usageError: (message: string) => never;
}

export const DEFAULT_ORIGINS = ["http://127.0.0.1:5178", "http://localhost:5178"]; // the app under `npm start`

export function registerRemoteCommands(
  program: Command,
  { integer, collect, usageError }: CliHelpers,
): void {
  program
    .command("serve")
    .description(
      "serve a preset's simulators (reference, aligned, VS, panel, human types, Bayes) and policies as models behind the OpenAI-compatible API",
    )
    .option("--preset <id>", "the experiment preset whose models to serve")
    .option(
      "--report <file>",
      "serve the world of a RunReport instead (its config), with its trained policies (--policies)",
    )
    .option(
      "--gguf <file>",
      "also serve a real LM from a GGUF file (llama.cpp on the CPU; `bash scripts/real-lm.sh` installs it and SmolLM2-135M-Instruct into .real-lm/); alone without --preset / --report",
    )
    .option(
      "--gguf-threads <n>",
      "CPU threads for the GGUF model (more help only on an idle machine)",
      integer(1),
      1,
    )
    .option(
      "--policies <dir>",
      "trained policies written by `run --policies` (default with --report: <report>.policies/ when it exists)",
    )
    .option("--seed <n>", "which seed's models (default: the config's first)", integer(0))
    .option("--set <path=value>", "override a config value (repeatable)", collect, [] as string[])
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--port <n>", "port (0: any free one)", integer(0), 8000)
    .option(
      "--cors-origin <origin>",
      `an origin a browser page may call from (repeatable; default ${DEFAULT_ORIGINS.join(", ")})`,
      collect,
      [] as string[],
    )
    .option("--api-key-env <name>", "require the API key held in this environment variable")
    .addOption(
      new Option("--backend <name>", "engine backend").choices(["wasm", "float64"]).default("wasm"),
    )
    .option("--no-store", "pretrain every model live instead of loading stored ones")
    .option("--quiet", "do not log requests")
    .action(
      async (opts: {
        preset?: string;
        report?: string;
        gguf?: string;
        ggufThreads: number;
        policies?: string;
        seed?: number;
        set: string[];
        host: string;
        port: number;
        corsOrigin: string[];
        apiKeyEnv?: string;
        backend: "wasm" | "float64";
        store: boolean;
        quiet?: boolean;
      }) => {
        if (opts.preset && opts.report)
          usageError("serve: give one of --preset ID and --report FILE, not both");
        if (!opts.preset && !opts.report && !opts.gguf)
          usageError("serve: give one of --preset ID and --report FILE, or --gguf FILE");
        let config: ExperimentConfig | null = null;
        let label = "";
        let policies = opts.policies;
        try {
          if (opts.report) {
            config = parseReport(readFileSync(opts.report, "utf8")).config;
            label = opts.report;
            const beside = policiesBeside(opts.report);
            if (!policies && existsSync(`${beside}/index.json`)) policies = beside;
          } else if (opts.preset) {
            config = presetConfig(opts.preset);
            label = opts.preset;
          }
          if (config) config = validateConfig(opts.set.reduce(applySet, config as unknown));
        } catch (e) {
          if (e instanceof ConfigError || opts.report || /preset/.test((e as Error).message))
            usageError((e as Error).message);
          throw e;
        }
        let apiKey: string | undefined;
        if (opts.apiKeyEnv) {
          apiKey = process.env[opts.apiKeyEnv];
          if (!apiKey)
            usageError(
              `serve: --api-key-env ${opts.apiKeyEnv}: that environment variable is empty or unset`,
            );
        }
        const log = (s: string) => process.stderr.write(s + "\n");
        const textModels: ServedTextModel[] = [];
        if (opts.gguf) {
          try {
            textModels.push(await loadGgufModel(opts.gguf, { threads: opts.ggufThreads }));
          } catch (e) {
            if (e instanceof RealLmMissingError) usageError(`serve: ${e.message}`);
            throw e;
          }
        }
        const world = config
          ? await loadServedWorld({
              config,
              label,
              seed: opts.seed,
              backend: (await createBackend(opts.backend)).backend,
              store: opts.store ? nodeStore() : undefined,
              policies: policies ? { dir: policies } : undefined,
              onNote: (m) => log(`serve: ${m}`),
            })
          : undefined;
        const app = buildServer({
          world,
          textModels,
          apiKey,
          corsOrigins: opts.corsOrigin.length ? opts.corsOrigin : DEFAULT_ORIGINS,
          onRequest: opts.quiet ? undefined : (l) => log(l),
        });
        const address = await app.listen({ host: opts.host, port: opts.port });
        const what = world ? `${world.source} (${world.bench.title})` : "a real LM";
        log(
          `collapse-lab serve: ${what} at ${address}/v1${apiKey ? `, API key required (from $${opts.apiKeyEnv})` : ""}`,
        );
        for (const m of [...textModels, ...(world?.models ?? [])])
          log(`  ${m.id.padEnd(22)} ${m.description}`);
        if (world)
          log(
            `every simulator and policy also answers in the Verbalized Sampling JSON format as <id>:vs`,
          );
        log("Ctrl-C stops");
        const stop = () => {
          void app.close().then(async () => {
            world?.dispose();
            for (const m of textModels) await m.dispose();
            process.exit(0);
          });
        };
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
        await new Promise(() => {}); // serve until stopped
      },
    );

  program
    .command("remote-chat")
    .description(
      "send one chat turn to a model server and print the reply as it streams in (control characters removed)",
    )
    .requiredOption(
      "--base-url <url>",
      "the server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1",
    )
    .requiredOption("--model <id>", "the model")
    .option(
      "--system <text>",
      'a system message first (serve: the persona card, e.g. "Persona card: agreeable; caring; rational")',
    )
    .option(
      "--message <text>",
      "a message, in order; prefix with assistant: for the model's own turns (repeatable)",
      collect,
      [] as string[],
    )
    .option("--seed <n>", "sampling seed", integer(0))
    .option("--temperature <t>", "sampling temperature", Number)
    .option("--max-tokens <n>", "longest reply", integer(1), 256)
    .option("--api-key-env <name>", "send the API key held in this environment variable")
    .option("--api-key-prompt", "ask for the API key on the terminal (not shown)")
    .option(
      "--timeout <ms>",
      "per request, and the longest silence in the stream",
      integer(1),
      60_000,
    )
    .action(
      async (opts: {
        baseUrl: string;
        model: string;
        system?: string;
        message: string[];
        seed?: number;
        temperature?: number;
        maxTokens: number;
        apiKeyEnv?: string;
        apiKeyPrompt?: boolean;
        timeout: number;
      }) => {
        if (opts.message.length === 0) usageError("remote-chat: give at least one --message");
        if (opts.temperature !== undefined && !(opts.temperature >= 0 && opts.temperature <= 2))
          usageError(`remote-chat: --temperature must lie in [0, 2], got ${opts.temperature}`);
        const messages: ChatMessageIn[] = [
          ...(opts.system ? [{ role: "system" as const, content: opts.system }] : []),
          ...opts.message.map((m) =>
            m.startsWith("assistant:")
              ? { role: "assistant" as const, content: m.slice(10).trim() }
              : { role: "user" as const, content: m.replace(/^user:/, "").trim() },
          ),
        ];
        try {
          const apiKey = opts.apiKeyPrompt
            ? await promptApiKey(opts.baseUrl)
            : apiKeyFor(opts.baseUrl, opts.apiKeyEnv);
          const client = new RemoteClient({
            baseUrl: opts.baseUrl,
            apiKey,
            timeoutMs: opts.timeout,
            retries: 2,
          });
          const req = {
            model: opts.model,
            messages,
            max_tokens: opts.maxTokens,
            ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
            ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
          };
          for await (const d of client.chatStream(req))
            if (d.index === 0) process.stdout.write(terminalSafe(d.content));
          process.stdout.write("\n");
        } catch (e) {
          if (e instanceof RemoteError) {
            process.stdout.write("\n");
            process.stderr.write(`collapse-lab: ${e.message}\n`);
            process.exit(1);
          }
          throw e;
        }
      },
    );

  program
    .command("remote-probe")
    .description(
      "list a model server's models and what it offers for one (chat log-probs, n, prompt log-probs)",
    )
    .requiredOption(
      "--base-url <url>",
      "the server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1",
    )
    .option("--model <id>", "the model to probe (default: the first listed)")
    .option("--api-key-env <name>", "send the API key held in this environment variable")
    .option("--api-key-prompt", "ask for the API key on the terminal (not shown)")
    .option("--timeout <ms>", "per request", integer(1), 30_000)
    .action(
      async (opts: {
        baseUrl: string;
        model?: string;
        apiKeyEnv?: string;
        apiKeyPrompt?: boolean;
        timeout: number;
      }) => {
        try {
          const apiKey = opts.apiKeyPrompt
            ? await promptApiKey(opts.baseUrl)
            : apiKeyFor(opts.baseUrl, opts.apiKeyEnv);
          const client = new RemoteClient({
            baseUrl: opts.baseUrl,
            apiKey,
            timeoutMs: opts.timeout,
            retries: 2,
          });
          const model = opts.model ?? (await client.models())[0]?.id;
          if (!model) usageError(`${client.baseUrl} lists no models`);
          process.stdout.write(describeCapabilities(await client.probe(model)) + "\n");
        } catch (e) {
          if (e instanceof RemoteError) usageError(e.message);
          throw e;
        }
      },
    );
}

/** Asks once per remote panel member's base URL for its API key (those whose variable is unset) and keeps it in memory. */
export async function promptRemoteKeys(config: ExperimentConfig): Promise<void> {
  const asked = new Set<string>();
  for (const m of config.panel) {
    const r = m.remote;
    if (!r || asked.has(r.baseUrl) || apiKeyFor(r.baseUrl, r.apiKeyEnv)) continue;
    asked.add(r.baseUrl);
    const key = await promptApiKey(r.baseUrl);
    if (key) rememberApiKey(r.baseUrl, key);
  }
}

/** Remote text for a terminal: escape sequences and control characters (but newlines and tabs) removed. */
export function terminalSafe(text: string): string {
  return printable(text);
}
