// `collapse-lab ray relay`: serves the app's Remote page the job endpoints of a Ray cluster
// (src/cluster/ray/relay.ts), with the cluster's token read from an environment variable and kept
// on this side. Prints the URL it listens on; Ctrl-C stops it.
import type { Command } from "commander";
import { RayJobsClient, RayJobsError, rayAddress } from "../cluster/ray/jobs";
import { plainFetch } from "../cluster/ray/node-http";
import { buildRelay } from "../cluster/ray/relay";
import { DEFAULT_ORIGINS, type CliHelpers } from "./remote-commands";

const DEFAULT_TOKEN_ENV = "COLLAPSE_LAB_RAY_TOKEN";
const ANY_INTERFACE = new Set(["0.0.0.0", "::", "[::]"]);

interface RelayCliOptions {
  ray: string;
  host: string;
  port: number;
  corsOrigin: string[];
  tokenEnv?: string;
  quiet?: boolean;
}

function checkedAddress(raw: string, usageError: (m: string) => never): string {
  try {
    return rayAddress(raw);
  } catch (e) {
    return usageError(`ray relay: --ray: ${(e as Error).message}`);
  }
}

export function registerRelayCommand(
  ray: Command,
  { integer, collect, usageError }: CliHelpers,
): void {
  ray
    .command("relay")
    .description(
      "serve the app's Remote page a Ray cluster's job endpoints (status, log, stop, submit), the token kept here",
    )
    .requiredOption("--ray <url>", "the Ray dashboard, e.g. http://HEAD:8265")
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option("--port <n>", "port", integer(0), 8266)
    .option(
      "--cors-origin <origin>",
      `an origin the app is served from (repeatable; default ${DEFAULT_ORIGINS.join(", ")})`,
      collect,
      [] as string[],
    )
    .option(
      "--token-env <name>",
      `the environment variable holding the cluster's token (default ${DEFAULT_TOKEN_ENV}, when set)`,
    )
    .option("--quiet", "do not log requests")
    .action(async (opts: RelayCliOptions) => {
      const log = (s: string) => process.stderr.write(`${s}\n`);
      const address = checkedAddress(opts.ray, usageError);
      const tokenEnv = opts.tokenEnv ?? DEFAULT_TOKEN_ENV;
      const token = process.env[tokenEnv] || undefined;
      if (opts.tokenEnv && !token)
        usageError(
          `ray relay: --token-env ${opts.tokenEnv}: that environment variable is empty or unset`,
        );
      for (const o of opts.corsOrigin) {
        if (!/^https?:\/\/[^/]+$/.test(o))
          usageError(
            `ray relay: --cors-origin ${o}: an origin is scheme://host[:port], with no path (e.g. http://127.0.0.1:5178)`,
          );
      }
      const origins = opts.corsOrigin.length ? opts.corsOrigin : DEFAULT_ORIGINS;
      const anywhere = ANY_INTERFACE.has(opts.host);
      const app = buildRelay({
        ray: address,
        token,
        origins,
        hosts: anywhere ? null : [opts.host],
        onRequest: opts.quiet ? undefined : log,
        onNote: (m) => log(`relay: ${m}`),
      });
      const url = await app.listen({ host: opts.host, port: opts.port });
      try {
        const version = await new RayJobsClient(address, { token, fetch: plainFetch }).version();
        log(
          `collapse-lab ray relay: Ray ${version} at ${address}${token ? ` (token from $${tokenEnv})` : ""}`,
        );
      } catch (e) {
        if (!(e instanceof RayJobsError)) throw e;
        log(
          `collapse-lab ray relay: warning: ${e.message} (the relay serves anyway and reaches Ray once it answers)`,
        );
      }
      if (anywhere)
        log(
          `warning: listening on every interface (${opts.host}): anyone who can reach this machine can submit and stop jobs through it`,
        );
      log(
        `pages allowed: ${origins.join(", ")}; in the app's Remote page, connect to the URL below. Ctrl-C stops`,
      );
      process.stdout.write(`${url}\n`);
      const stop = () => void app.close().then(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
