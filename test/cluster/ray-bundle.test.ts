// The Ray job's working directory carries the stored models its run loads, and no others: a small
// store in a temporary folder holds one preset's models and a stranger; the package for that
// preset's config carries that preset's, with an index.json of just them, which the store reader
// accepts; for another backend, with --no-store, or with a model's file missing it carries fewer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unzipSync } from "fflate";
import { validateConfig } from "../../src/experiment/config";
import { STORE_DIR } from "../../src/experiment/node-store";
import { presetConfig } from "../../src/experiment/presets";
import { parseIndex, runJobKeys } from "../../src/experiment/store";
import { buildJobPackage } from "../../src/cluster/ray/bundle";

const config = validateConfig(presetConfig("persuasion-smoke"));
const keys = runJobKeys(config, "wasm");
let dir: string;
let stranger: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "collapse-lab-bundle-"));
  const index = parseIndex(readFileSync(join(STORE_DIR, "index.json"), "utf8"));
  stranger = Object.keys(index.models).find((k) => !keys.includes(k))!;
  const kept = [...keys, stranger];
  for (const k of kept)
    copyFileSync(join(STORE_DIR, index.models[k].file), join(dir, index.models[k].file));
  writeFileSync(
    join(dir, "index.json"),
    JSON.stringify({
      format: index.format,
      models: Object.fromEntries(kept.map((k) => [k, index.models[k]])),
    }),
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const models = (files: string[]) =>
  files.filter((f) => f.startsWith("pretrained/") && f.endsWith(".bin")).sort();

describe("the Ray job's working directory", () => {
  it("carries the stored models its run loads, with an index of just them", async () => {
    expect(keys.length).toBeGreaterThan(0);
    const pkg = await buildJobPackage({ storeDir: dir, run: { config, backend: "wasm" } });
    const files = unzipSync(pkg.zip);
    const index = parseIndex(new TextDecoder().decode(files["pretrained/index.json"]));
    expect(Object.keys(index.models).sort()).toEqual([...keys].sort());
    expect(models(Object.keys(files))).toEqual(
      keys.map((k) => `pretrained/${index.models[k].file}`).sort(),
    );
    expect(pkg.models).toBe(keys.length);
    for (const k of keys)
      expect(
        Buffer.from(files[`pretrained/${index.models[k].file}`]).equals(
          readFileSync(join(dir, index.models[k].file)),
        ),
      ).toBe(true);

    const whole = await buildJobPackage({ storeDir: dir });
    expect(whole.models).toBe(keys.length + 1);
  });

  it("carries none for another backend's run or with --no-store, and leaves out a model whose file is missing", async () => {
    for (const pkg of [
      await buildJobPackage({ storeDir: dir, run: { config, backend: "webgpu" } }),
      await buildJobPackage({ storeDir: dir, store: false, run: { config, backend: "wasm" } }),
    ]) {
      expect(pkg.models).toBe(0);
      expect(pkg.files.filter((f) => f.startsWith("pretrained/"))).toEqual([]);
    }
    const index = parseIndex(readFileSync(join(dir, "index.json"), "utf8"));
    rmSync(join(dir, index.models[keys[0]].file));
    const pkg = await buildJobPackage({ storeDir: dir, run: { config, backend: "wasm" } });
    expect(pkg.models).toBe(keys.length - 1);
    const shipped = parseIndex(
      new TextDecoder().decode(unzipSync(pkg.zip)["pretrained/index.json"]),
    );
    expect(Object.keys(shipped.models)).not.toContain(keys[0]);
  });

  it("refuses an unreadable index, naming it", async () => {
    writeFileSync(join(dir, "index.json"), "{ not json");
    await expect(
      buildJobPackage({ storeDir: dir, run: { config, backend: "wasm" } }),
    ).rejects.toThrow(
      /index\.json is unreadable \(not JSON .*\): mend it .* or submit with --no-store/,
    );
  });
});
