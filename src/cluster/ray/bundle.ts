// The working directory of a collapse-lab Ray job, as the zip Ray's runtime_env takes: the Node
// code as one bundled file (collapse-lab-ray.mjs: the engine, the benchmarks and the experiment),
// driver.py, the stored pretrained models the run loads (a subset of the store, with its own
// index.json) and, for WebGPU jobs, Dawn (the `webgpu` package's native addon for linux-x64, which
// cannot be bundled). The zip's bytes depend only on its contents, so its name (a hash of them)
// says whether the cluster already has it.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { zipSync, type Zippable } from "fflate";
import type { ExperimentConfig } from "../../experiment/config";
import { STORE_DIR } from "../../experiment/node-store";
import { INDEX_FORMAT, parseIndex, runJobKeys, type StoreIndex } from "../../experiment/store";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const FIXED_TIME = new Date("2000-01-01T00:00:00Z"); // the same contents make the same zip

export interface JobPackage {
  name: string; // _ray_pkg_<hash>.zip
  uri: string; // gcs://<name>, for runtime_env.working_dir
  zip: Uint8Array;
  files: string[];
  /** How many stored models it carries. */
  models: number;
}

/** Bundles the Node side of a job (node-entry.ts and everything it imports) into one ES module. */
export async function bundleNodeEntry(): Promise<Uint8Array> {
  const out = await build({
    entryPoints: [join(HERE, "node-entry.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "silent",
    legalComments: "none",
    // webgpu: a native addon, shipped beside the bundle in node_modules/ when a job needs it;
    // transformers-ort: the browser's wasm URLs (a Vite plugin), never imported under Node
    external: ["webgpu", "transformers-ort:*"],
    // CommonJS dependencies call require(); an ES module has none of its own
    banner: {
      js: 'import { createRequire as __collapseLabRequire } from "node:module"; const require = __collapseLabRequire(import.meta.url);',
    },
  });
  return out.outputFiles[0].contents;
}

const WEBGPU_DIR = fileURLToPath(new URL("../../../node_modules/webgpu/", import.meta.url));
const DAWN_PLATFORM = "linux-x64"; // the nodes of the clusters this is for

/**
 * The store's models in the job's working directory: those a run of `run.config` on `run.backend`
 * loads (every seed's pretraining jobs), or the whole store when no run is given; with an index.json
 * of just those. A store without an index, or a model whose file is missing, gives none (the run
 * pretrains it live and says so); an unreadable index is refused.
 */
function storeFiles(
  storeDir: string,
  run?: { config: ExperimentConfig; backend: string },
): Zippable {
  const indexFile = join(storeDir, "index.json");
  if (!existsSync(indexFile)) return {};
  let index: StoreIndex;
  try {
    index = parseIndex(readFileSync(indexFile, "utf8"));
  } catch (e) {
    throw new Error(
      `${indexFile} is unreadable (${(e as Error).message}): mend it (collapse-lab store), or submit with --no-store`,
      { cause: e },
    );
  }
  const wanted = run && new Set(runJobKeys(run.config, run.backend));
  const keys = Object.keys(index.models)
    .filter((k) => (!wanted || wanted.has(k)) && existsSync(join(storeDir, index.models[k].file)))
    .sort();
  const files: Zippable = {};
  for (const k of keys)
    files[`pretrained/${index.models[k].file}`] = [
      readFileSync(join(storeDir, index.models[k].file)),
      { mtime: FIXED_TIME, level: 0 },
    ];
  if (keys.length === 0) return files;
  const subset = {
    format: INDEX_FORMAT,
    models: Object.fromEntries(keys.map((k) => [k, index.models[k]])),
  };
  files["pretrained/index.json"] = [
    new TextEncoder().encode(JSON.stringify(subset)),
    { mtime: FIXED_TIME },
  ];
  return files;
}

/**
 * The job's working directory as a zip. `run` narrows the pretrained models to those its config and
 * backend load; `store: false` leaves them all out; `webgpu: true` adds Dawn.
 */
export async function buildJobPackage(
  opts: {
    store?: boolean;
    storeDir?: string;
    run?: { config: ExperimentConfig; backend: string };
    webgpu?: boolean;
  } = {},
): Promise<JobPackage> {
  const models = opts.store === false ? {} : storeFiles(opts.storeDir ?? STORE_DIR, opts.run);
  const files: Zippable = {
    "collapse-lab-ray.mjs": [await bundleNodeEntry(), { mtime: FIXED_TIME }],
    "driver.py": [readFileSync(join(HERE, "driver.py")), { mtime: FIXED_TIME }],
    ...models,
  };
  if (opts.webgpu) {
    const dist = join(WEBGPU_DIR, "dist", DAWN_PLATFORM);
    if (!existsSync(join(dist, "dawn.node")))
      throw new Error(
        `a WebGPU job needs Dawn for ${DAWN_PLATFORM} (${dist}/dawn.node), which this checkout lacks: run npm ci`,
      );
    for (const f of ["package.json", "index.js"])
      files[`node_modules/webgpu/${f}`] = [
        readFileSync(join(WEBGPU_DIR, f)),
        { mtime: FIXED_TIME },
      ];
    for (const f of readdirSync(dist).sort())
      files[`node_modules/webgpu/dist/${DAWN_PLATFORM}/${f}`] = [
        readFileSync(join(dist, f)),
        { mtime: FIXED_TIME },
      ];
  }
  const zip = zipSync(files, { mtime: FIXED_TIME });
  const name = `_ray_pkg_${createHash("sha256").update(zip).digest("hex").slice(0, 32)}.zip`;
  const count = Object.keys(models).filter((f) => f.endsWith(".bin")).length;
  return { name, uri: `gcs://${name}`, zip, files: Object.keys(files), models: count };
}
