// A command's outputs, through the real command: checked before any work (a missing folder is
// created and said, a path that cannot be written is refused at once with exit 2, before any
// pretraining), written whole (a temporary file and a rename), and a report whose final write
// fails anyway is kept in a fallback file the message names.
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeFileAtomic, writeFolderAtomic } from "../../src/experiment/node-write";
import { parseReport } from "../../src/experiment/report-schema";
import { ROOT, runCli } from "./harness";

const tmp = mkdtempSync(join(tmpdir(), "collapse-lab-outputs-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SMALL = [
  "run",
  "--preset",
  "persuasion-smoke",
  "--set",
  'conditions=["base","single"]',
  "--parallel",
  "1",
];
/** What a refused output must not have started. */
const NO_WORK = /pretraining|train |evaluate/;

describe("outputs checked before any work", () => {
  it("creates --out's missing folders, says so, and writes the report there", async () => {
    const out = join(tmp, "new", "deeper", "report.json");
    const r = await runCli([...SMALL, "--out", out, "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`created ${join(tmp, "new")}, ${join(tmp, "new", "deeper")}`);
    expect(parseReport(readFileSync(out, "utf8")).config.conditions).toEqual(["base", "single"]);
    expect(readdirSync(join(tmp, "new", "deeper")), "no temporary file left").toEqual([
      "report.json",
    ]);
  }, 300_000);

  it("refuses at once, exit 2 and one line, an --out under a file, or one that is a folder", async () => {
    writeFileSync(join(tmp, "a-file"), "x");
    mkdirSync(join(tmp, "a-folder"), { recursive: true });
    for (const [out, why] of [
      [join(tmp, "a-file", "report.json"), `${join(tmp, "a-file")} is a file, not a folder`],
      [join(tmp, "a-folder"), "is a folder; give a file name"],
    ]) {
      const r = await runCli([...SMALL, "--out", out]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(`--out ${out}`);
      expect(r.stderr).toContain(why);
      expect(r.stderr).not.toMatch(NO_WORK);
      expect(r.stdout).toBe("");
    }
  });

  it("refuses --policies that is a file or a folder of other files, and merge's --out under a file", async () => {
    writeFileSync(join(tmp, "notes.txt"), "mine");
    mkdirSync(join(tmp, "other"), { recursive: true });
    writeFileSync(join(tmp, "other", "keep.txt"), "mine");
    for (const dir of [join(tmp, "notes.txt"), join(tmp, "other")]) {
      const r = await runCli([...SMALL, "--policies", dir]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`--policies ${dir}`);
      expect(r.stderr).not.toMatch(NO_WORK);
    }
    expect(readFileSync(join(tmp, "other", "keep.txt"), "utf8")).toBe("mine");
    const m = await runCli([
      "merge",
      "a.json",
      "b.json",
      "--out",
      join(tmp, "notes.txt", "m.json"),
    ]);
    expect(m.code).toBe(2);
    expect(m.stderr).toContain("is a file, not a folder");
  });
});

describe("a report whose final write fails", () => {
  it("is kept in a fallback file in the run's cache folder that the message names, the command exits 1, and `cache prune` keeps it", async () => {
    const out = join(tmp, "taken.json");
    const cacheRoot = join(tmp, "cache");
    const env = { COLLAPSE_LAB_CACHE: cacheRoot };
    const child = spawn(process.execPath, ["bin/collapse-lab.mjs", ...SMALL, "--out", out], {
      cwd: ROOT,
      env: { ...process.env, ...env, NO_COLOR: "1" },
    });
    let stderr = "";
    let taken = false;
    child.stderr.on("data", (b) => {
      stderr += b;
      // once the work is under way (the check passed), the path becomes a folder with a file in it
      if (!taken && /train /.test(stderr)) {
        taken = true;
        mkdirSync(out);
        writeFileSync(join(out, "someone-else's"), "x");
      }
    });
    child.stdout.resume();
    const code = await new Promise<number | null>((done) => child.on("close", done));
    expect(taken, stderr).toBe(true);
    expect(code, stderr).toBe(1);
    const kept = /it is kept in (\S+\.json)/.exec(stderr)?.[1];
    expect(kept, stderr).toBeDefined();
    expect(kept!.startsWith(join(cacheRoot, "persuasion-smoke-"))).toBe(true);
    expect(parseReport(readFileSync(kept!, "utf8")).config.conditions).toEqual(["base", "single"]);
    expect(readdirSync(out)).toEqual(["someone-else's"]);
    // the run is left unfinished, so pruning the finished runs does not remove its report
    const prune = await runCli(["cache", "prune"], { env });
    expect(prune.code, prune.stderr).toBe(0);
    expect(prune.stdout).toContain("0 run(s) removed");
    expect(existsSync(kept!)).toBe(true);
  }, 300_000);
});

describe("atomic writes", () => {
  it("a file: written beside its target and renamed over it; a failed rename leaves no temporary file", () => {
    const dir = join(tmp, "atomic");
    mkdirSync(join(dir, "taken"), { recursive: true });
    writeFileSync(join(dir, "taken", "inside"), "x");
    const file = join(dir, "f.json");
    writeFileAtomic(file, "old");
    writeFileAtomic(file, "new");
    expect(readFileSync(file, "utf8")).toBe("new");
    // the rename onto a non-empty folder fails after the temporary file was written in full
    expect(() => writeFileAtomic(join(dir, "taken"), "report")).toThrow();
    expect(readdirSync(dir).sort()).toEqual(["f.json", "taken"]);
    expect(readdirSync(join(dir, "taken"))).toEqual(["inside"]);
  });

  it("a folder: replaced whole, the earlier set kept when the new one cannot be written", () => {
    const dir = join(tmp, "policies");
    writeFolderAtomic(
      dir,
      new Map([
        ["a.bin", new Uint8Array([1])],
        ["b.bin", new Uint8Array([2])],
      ]),
    );
    writeFolderAtomic(dir, new Map([["c.bin", new Uint8Array([3])]]));
    expect(readdirSync(dir)).toEqual(["c.bin"]);
    expect(() =>
      writeFolderAtomic(dir, new Map([["no/such/sub.bin", new Uint8Array([4])]])),
    ).toThrow();
    expect(readdirSync(dir)).toEqual(["c.bin"]);
    expect(
      readdirSync(tmp).filter((f) => f.startsWith(".policies")),
      "no temporary folder left",
    ).toEqual([]);
    expect(existsSync(join(dir, "no"))).toBe(false);
  });
});
