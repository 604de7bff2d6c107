// The flags that say which Ray cluster a `collapse-lab ray …` command talks to, and its client.
import type { Command } from "commander";
import { RayJobsClient } from "../cluster/ray/jobs";
import { plainFetch } from "../cluster/ray/node-http";

const DEFAULT_TOKEN_ENV = "COLLAPSE_LAB_RAY_TOKEN";

export interface Connection {
  address?: string;
  tokenEnv: string;
}

export function addConnection(cmd: Command): Command {
  return cmd
    .option(
      "--address <url>",
      "the Ray dashboard, e.g. http://HEAD:8265 (default: $RAY_API_SERVER_ADDRESS, then $RAY_ADDRESS when it is http)",
    )
    .option(
      "--token-env <name>",
      "the environment variable holding the cluster's token, sent as a Bearer token",
      DEFAULT_TOKEN_ENV,
    );
}

export function client(opts: Connection, usageError: (m: string) => never): RayJobsClient {
  const fromEnv = [process.env.RAY_API_SERVER_ADDRESS, process.env.RAY_ADDRESS].find(
    (a) => a && /^https?:\/\//.test(a),
  );
  const address = opts.address ?? fromEnv;
  if (!address)
    usageError(
      "give the Ray dashboard's address: --address http://HEAD:8265 (or set RAY_API_SERVER_ADDRESS)",
    );
  try {
    return new RayJobsClient(address, { token: process.env[opts.tokenEnv], fetch: plainFetch });
  } catch (e) {
    usageError((e as Error).message);
  }
}
