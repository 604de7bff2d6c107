// `collapse-lab ray …` against a real Ray head started here on 127.0.0.1 (Ray from .ray/venv):
// a submitted smoke run gives the local run's numbers; status, logs, fetch and stop work, a stopped
// job leaves nothing running; failures (a crashing task, a config the cluster refuses, a GPU the
// cluster lacks) end the job as FAILED with their cause.
import { readFileSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./harness";
import { driverLog, RAY_MISSING, startRayHead, type RayHead } from "../cluster/ray-head";
import { parseReport } from "../../src/experiment/report-schema";
import type { RunReport } from "../../src/experiment/experiment";
import { RayJobsClient, isTerminal, type RayJobInfo } from "../../src/cluster/ray/jobs";
import { plainFetch } from "../../src/cluster/ray/node-http";
import { buildJobPackage } from "../../src/cluster/ray/bundle";
import { runSubmission } from "../../src/cluster/ray/submit";
import { validateConfig, type ExperimentConfig } from "../../src/experiment/config";
import { presetConfig } from "../../src/experiment/presets";
import { SWIFTSHADER_ICD } from "../../src/experiment/node-webgpu";

const JOB_MS = 420_000; // a smoke run on a busy 2-core machine, with Ray's own start-up

/** A report's numbers: everything but how long things took and where they ran. */
function numbers(r: RunReport): unknown {
  const { timing: _t, env: _e, store: _s, ...rest } = r as RunReport & { store?: unknown };
  return JSON.parse(JSON.stringify(rest, (k, v) => (/Ms$|^ms$|^timing$/.test(k) ? undefined : v)));
}

describe.skipIf(RAY_MISSING)("collapse-lab ray, on a real Ray head", () => {
  let head: RayHead;
  let ray: RayJobsClient;
  const dir = mkdtempSync(join(tmpdir(), "ray-cli-"));
  const at = () => ["--address", head.address];

  async function until(
    id: string,
    done: (i: RayJobInfo) => boolean,
    ms = JOB_MS,
  ): Promise<RayJobInfo> {
    const end = Date.now() + ms;
    for (;;) {
      const info = await ray.info(id);
      if (done(info)) return info;
      if (Date.now() > end)
        throw new Error(`${id} is still ${info.status}:\n${driverLog(head, id).slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  beforeAll(async () => {
    head = await startRayHead({ cpus: 2 });
    ray = new RayJobsClient(head.address, { fetch: plainFetch });
  }, 240_000);
  afterAll(async () => {
    await head?.stop();
  }, 120_000);

  it(
    "runs persuasion-smoke as a Ray job with the same numbers as a local run; status, logs and fetch work",
    async () => {
      const local = await runCli(
        ["run", "--preset", "persuasion-smoke", "--quiet", "--out", join(dir, "local.json")],
        { timeoutMs: JOB_MS },
      );
      expect(local.code, local.stderr).toBe(0);

      const sub = await runCli(
        [
          "ray",
          "submit",
          ...at(),
          "--preset",
          "persuasion-smoke",
          "--follow",
          "--out",
          join(dir, "ray.json"),
        ],
        { timeoutMs: JOB_MS },
      );
      expect(sub.code, sub.stderr + sub.stdout).toBe(0);
      const id = sub.stdout.split("\n")[0].trim();
      expect(id).toMatch(/^collapse-lab-persuasion-smoke-/);
      expect(sub.stderr).toMatch(
        /uploading the job's working directory|already has this working directory/,
      );
      expect(sub.stdout).toContain("train-sim success %"); // the table, from the followed log
      expect(sub.stdout).not.toContain("@@collapse-lab");

      const a = parseReport(readFileSync(join(dir, "local.json"), "utf8"));
      const b = parseReport(readFileSync(join(dir, "ray.json"), "utf8"));
      expect(b.config).toEqual(a.config);
      expect(numbers(b)).toEqual(numbers(a));
      expect(b.env.backend).toBe("wasm");

      const status = await runCli(["ray", "status", id, ...at()]);
      expect(status.code).toBe(0);
      expect(status.stdout).toContain(`${id}: SUCCEEDED`);
      expect(status.stdout).toContain("persuasion-smoke");
      expect(status.stdout).toMatch(/progress: (train|diagnose) \d+\/\d+/);

      const logs = await runCli(["ray", "logs", id, ...at()]);
      expect(logs.stdout).toContain("collapse-lab on Ray: persuasion-smoke");
      expect(logs.stdout).not.toContain("@@collapse-lab");
      const raw = await runCli(["ray", "logs", id, ...at(), "--raw"]);
      expect(raw.stdout).toMatch(/\(unit \w+ seed \d+ pid=\d+\).* @@collapse-lab \{"t":"unit"/); // a unit's curve, from its Ray task

      const fetched = await runCli([
        "ray",
        "fetch",
        id,
        ...at(),
        "--out",
        join(dir, "fetched.json"),
        "--quiet",
      ]);
      expect(fetched.code, fetched.stderr).toBe(0);
      expect(parseReport(readFileSync(join(dir, "fetched.json"), "utf8"))).toEqual(b);
    },
    2 * JOB_MS,
  );

  it(
    "a webgpu job runs its tasks on Dawn (here SwiftShader, on a node without a GPU) with the numbers of a local webgpu run",
    async () => {
      const tiny = [
        "--preset",
        "persuasion-smoke",
        "--no-store",
        "--set",
        'conditions=["base","single"]',
        "--set",
        'panel=[{"name":"family-a","gamma":4,"corpusScale":1,"seedOffset":101}]',
        "--set",
        "eval.diagnosticSeeds=0",
        "--set",
        "simulator.pretrain.steps=30",
        "--set",
        "policy.pretrain.steps=10",
        "--set",
        "rl.steps=2",
      ];
      const icd = { VK_ICD_FILENAMES: SWIFTSHADER_ICD };
      const local = await runCli(
        ["run", ...tiny, "--backend", "webgpu", "--quiet", "--out", join(dir, "local-webgpu.json")],
        { timeoutMs: JOB_MS, env: icd },
      );
      expect(local.code, local.stderr).toBe(0);
      // the head has no GPU: the tasks ask for none and find SwiftShader through the job's environment
      const sub = await runCli(
        [
          "ray",
          "submit",
          ...at(),
          ...tiny,
          "--backend",
          "webgpu",
          "--task-gpus",
          "0",
          "--env",
          `VK_ICD_FILENAMES=${SWIFTSHADER_ICD}`,
          "--follow",
          "--out",
          join(dir, "ray-webgpu.json"),
        ],
        {
          timeoutMs: JOB_MS,
        },
      );
      expect(sub.code, sub.stderr + sub.stdout).toBe(0);
      expect(sub.stderr).toContain("Dawn for linux-x64");
      const a = parseReport(readFileSync(join(dir, "local-webgpu.json"), "utf8"));
      const b = parseReport(readFileSync(join(dir, "ray-webgpu.json"), "utf8"));
      expect(b.env.backend).toBe("webgpu");
      expect(numbers(b)).toEqual(numbers(a));
    },
    2 * JOB_MS,
  );

  it(
    "stops a running job: it ends as STOPPED and none of its processes is left",
    async () => {
      // every model pretrained live, so there is time to stop it while its tasks run
      const sub = await runCli([
        "ray",
        "submit",
        ...at(),
        "--preset",
        "persuasion-smoke",
        "--no-store",
      ]);
      expect(sub.code, sub.stderr).toBe(0);
      const id = sub.stdout.trim();
      const end = Date.now() + JOB_MS;
      while (head.processes("collapse-lab-ray.mjs task").length === 0) {
        if (Date.now() > end)
          throw new Error(`no task of ${id} started:\n${driverLog(head, id).slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      const stop = await runCli(["ray", "stop", id, ...at()]);
      expect(stop.code, stop.stderr).toBe(0);
      expect(stop.stdout).toContain(`${id}: STOPPED`);
      const gone = Date.now() + 60_000;
      while (head.processes("collapse-lab-ray.mjs").length > 0 && Date.now() < gone)
        await new Promise((r) => setTimeout(r, 500));
      expect(head.processes("collapse-lab-ray.mjs")).toEqual([]);
      expect((await ray.info(id)).status).toBe("STOPPED");
      const again = await runCli(["ray", "stop", id, ...at()]);
      expect(again.stdout).toContain("had already ended: STOPPED");
    },
    2 * JOB_MS,
  );

  it(
    "a crashing task fails the job with its cause",
    async () => {
      // 16 MB of heap is too little for a task: Node dies with "heap out of memory"
      const sub = await runCli(
        [
          "ray",
          "submit",
          ...at(),
          "--preset",
          "persuasion-smoke",
          "--task-heap-mb",
          "16",
          "--follow",
        ],
        { timeoutMs: JOB_MS },
      );
      expect(sub.code).toBe(1);
      const id = sub.stdout.split("\n")[0].trim();
      expect(sub.stderr).toContain(`${id}: FAILED`);
      expect(sub.stderr).toMatch(
        /cause: the task .* crashed: node (was killed by signal \d+|exited with code \d+): .*(heap|memory)/i,
      );
      const status = await runCli(["ray", "status", id, ...at()]);
      expect(status.stdout).toMatch(/cause: the task .* crashed/);
      const fetched = await runCli(["ray", "fetch", id, ...at(), "--out", join(dir, "none.json")]);
      expect(fetched.code).toBe(1);
      expect(fetched.stderr).toMatch(/wrote no report: it failed: the task .* crashed/);
    },
    JOB_MS,
  );

  it(
    "a config the cluster refuses, and a GPU it does not have, fail the job with their cause",
    async () => {
      const pkg = await buildJobPackage();
      if (!(await ray.hasPackage(pkg.name))) await ray.uploadPackage(pkg.name, pkg.zip);
      const config = validateConfig(presetConfig("persuasion-smoke"));
      // as a client of another version might send it: not valid here
      const bad = { ...config, seeds: 0 } as ExperimentConfig;
      const badId = await ray.submit(
        runSubmission({ config: bad, backend: "wasm", preset: "persuasion-smoke" }, pkg.uri),
      );
      const gpuId = await ray.submit(
        runSubmission({ config, backend: "webgpu", preset: "persuasion-smoke" }, pkg.uri),
      );
      for (const id of [badId, gpuId])
        expect((await until(id, (i) => isTerminal(i.status))).status).toBe("FAILED");
      const bs = await runCli(["ray", "status", badId, ...at()]);
      expect(bs.stdout).toMatch(
        /cause: the experiment's config is invalid on the cluster: .*seeds/,
      );
      const gs = await runCli(["ray", "status", gpuId, ...at()]);
      expect(gs.stdout).toMatch(
        /cause: the cluster has 2 CPU\(s\) and 0 GPU\(s\); a task asks for 1 CPU\(s\) and 1 GPU\(s\).*webgpu asks for a GPU/,
      );
    },
    JOB_MS,
  );

  it(
    "submits SCOPE's entrypoint as built, and reads SCOPE's metrics from a job's log",
    async () => {
      const args = ["ray", "scope-command", "--condition", "vs", "--preset", "persuasion-paper"];
      const printed = await runCli(args);
      expect(printed.code, printed.stderr).toBe(0);
      const sub = await runCli([...args, "--submit", ...at()]);
      expect(sub.code, sub.stderr).toBe(0);
      const id = sub.stdout.trim();
      // SCOPE is not installed on this head: the job runs its entrypoint, which fails
      const info = await until(id, (i) => isTerminal(i.status));
      expect(info.entrypoint).toBe(printed.stdout.trim());
      expect(info.status).toBe("FAILED");

      // a job that logs metrics as SCOPE does, among other lines
      const lines = [
        '{"step": 1, "data": {"rollout/raw_reward": 0.25}}',
        "some other line",
        '{"step": 2, "data": {"rollout/raw_reward": 0.5}}',
        "{broken",
      ];
      const script = `import json\nfor l in ${JSON.stringify(lines)}: print(l, flush=True)`;
      const logId = await ray.submit({
        entrypoint: `python -c '${script.replace(/'/g, "'\\''")}'`,
      });
      expect((await until(logId, (i) => isTerminal(i.status))).status).toBe("SUCCEEDED");
      const m = await runCli([
        "ray",
        "scope-metrics",
        "--job",
        logId,
        ...at(),
        "--curves",
        "--json",
      ]);
      expect(m.code, m.stderr).toBe(0);
      const read = JSON.parse(m.stdout) as {
        series: Record<string, { step: number; value: number }[]>;
        malformed: number;
      };
      expect(read.series.reward).toEqual([
        { step: 1, value: 0.25 },
        { step: 2, value: 0.5 },
      ]);
      expect(read.malformed).toBe(1);
    },
    JOB_MS,
  );

  it("refuses bad input before anything reaches the cluster", async () => {
    const noAddr = await runCli(["ray", "status", "x"]);
    expect(noAddr.code).toBe(2);
    expect(noAddr.stderr).toMatch(/give the Ray dashboard's address/);
    const badSet = await runCli([
      "ray",
      "submit",
      ...at(),
      "--preset",
      "persuasion-smoke",
      "--set",
      "rl.steps=-3",
    ]);
    expect(badSet.code).toBe(2);
    expect(badSet.stderr).toMatch(/rl\.steps/);
    const unknown = await runCli(["ray", "status", "no-such-job", ...at()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not found \(404\)/);
    const early = await runCli([
      "ray",
      "submit",
      ...at(),
      "--preset",
      "persuasion-smoke",
      "--out",
      "x.json",
    ]);
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(/--out needs --follow/);
  });
});
