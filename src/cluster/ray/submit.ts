// Submitting a collapse-lab experiment as a Ray job: the job package (bundle.ts) is uploaded once
// per content, the config travels in the job's environment, and the entrypoint is driver.py.
// Shared by the CLI (`collapse-lab ray submit`) and the relay (the app's Remote page).
import { randomBytes } from "node:crypto";
import type { BackendName } from "../../engine/backend";
import type { ExperimentConfig } from "../../experiment/config";
import { buildJobPackage, type JobPackage } from "./bundle";
import { RayJobsError, type RayJobsClient, type RayJobSubmission } from "./jobs";

export interface RunJobOptions {
  config: ExperimentConfig;
  backend: BackendName;
  preset?: string;
  store?: boolean; // ship and use the pretrained store (default true)
  taskCpus?: number; // CPUs Ray reserves per task (default 1)
  taskGpus?: number; // GPUs per task (default: 1 on webgpu, else 0)
  taskHeapMb?: number; // Node's heap limit in each task (default: Node's own)
  python?: string; // the head's Python with Ray (default `python`, as in Ray's docs)
  env?: Record<string, string>; // more environment for the driver and every task (e.g. VK_ICD_FILENAMES)
  submissionId?: string;
}

const ENTRY_ID = /^[A-Za-z0-9_.-]{1,100}$/;

/** The Jobs API body of a run, given the uploaded package's URI. */
export function runSubmission(opts: RunJobOptions, workingDir: string): RayJobSubmission {
  const { config, backend } = opts;
  const python = opts.python ?? "python";
  if (!/^[A-Za-z0-9_./-]+$/.test(python))
    throw new RayJobsError(
      "refused",
      `--python must be a plain command or path, not ${JSON.stringify(python)}`,
    );
  if (opts.preset !== undefined && !ENTRY_ID.test(opts.preset))
    throw new RayJobsError(
      "refused",
      `preset id ${JSON.stringify(opts.preset)} has characters a command line cannot carry`,
    );
  const args = [python, "driver.py", "--backend", backend];
  if (opts.preset) args.push("--preset", opts.preset);
  if (opts.store === false) args.push("--no-store");
  if (opts.taskCpus !== undefined) args.push("--task-cpus", String(opts.taskCpus));
  if (opts.taskGpus !== undefined) args.push("--task-gpus", String(opts.taskGpus));
  if (opts.taskHeapMb) args.push("--task-heap-mb", String(opts.taskHeapMb));
  const id =
    opts.submissionId ??
    `collapse-lab-${opts.preset ?? "run"}-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, "")}-${randomBytes(3).toString("hex")}`;
  for (const name of Object.keys(opts.env ?? {}))
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new RayJobsError(
        "refused",
        `--env ${JSON.stringify(name)}: not an environment variable's name`,
      );
  if (!ENTRY_ID.test(id))
    throw new RayJobsError(
      "refused",
      `submission id ${JSON.stringify(id)}: use letters, digits, ".", "_" and "-" only`,
    );
  return {
    entrypoint: args.join(" "),
    submission_id: id,
    runtime_env: {
      working_dir: workingDir,
      // the Node driver reads the config from here; Ray would fold repeated task lines into one
      env_vars: { ...opts.env, COLLAPSE_LAB_CONFIG: JSON.stringify(config), RAY_DEDUP_LOGS: "0" },
    },
    metadata: {
      "collapse-lab": "run",
      preset: opts.preset ?? "custom",
      backend,
      seeds: `${config.seeds} from ${config.seedBase}`,
      conditions: config.conditions.join(" "),
    },
  };
}

/** Uploads the package (unless the cluster has it) and submits the run; returns the job's id. */
export async function submitRun(
  client: RayJobsClient,
  opts: RunJobOptions,
  onNote?: (m: string) => void,
): Promise<{ id: string; pkg: JobPackage; uploaded: boolean }> {
  const pkg = await buildJobPackage({
    store: opts.store,
    run: { config: opts.config, backend: opts.backend },
    webgpu: opts.backend === "webgpu",
  });
  const uploaded = !(await client.hasPackage(pkg.name));
  if (uploaded) {
    onNote?.(
      `uploading the job's working directory (${(pkg.zip.length / 1e6).toFixed(1)} MB: the bundled code, driver.py${opts.store === false ? "" : `, ${pkg.models} stored model(s) the run loads`}${opts.backend === "webgpu" ? ", Dawn for linux-x64" : ""}) as ${pkg.uri}`,
    );
    await client.uploadPackage(pkg.name, pkg.zip);
  } else onNote?.(`the cluster already has this working directory (${pkg.uri})`);
  const id = await client.submit(runSubmission(opts, pkg.uri));
  return { id, pkg, uploaded };
}
