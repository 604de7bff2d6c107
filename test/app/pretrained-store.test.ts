// The experiment page's state with a store of pretrained models: stored jobs are not sent to
// the executor, the page's notes say how many models came from the store and name a stored file
// that could not be used, and the report records each model's source.
import { describe, expect, it } from "vitest";
import { ExperimentState, type ControlledExecutor } from "../../src/app/state/experiment.svelte";
import { createBackend } from "../../src/engine/backends/index";
import { seedsOf } from "../../src/experiment/config";
import { describeJob, pretrainJobs } from "../../src/experiment/pretrain";
import { jobKey } from "../../src/experiment/store";
import { InlineExecutor, type Task } from "../../src/experiment/tasks";
import { parseUrlState } from "../../src/app/lib/url-state";
import type { BackendDecision } from "../../src/app/lib/backend-choice";
import { fakeResult, MemoryFiles } from "../experiment/store-fixture";
import { TEST_CONFIG } from "./report-fixture";

// keys are computed for the backend the page decided on (wasm); the tiny run itself goes on float64
const decide = async (): Promise<BackendDecision> => ({
  requested: "auto",
  name: "wasm",
  reason: "test",
});

describe("ExperimentState with a store of pretrained models", () => {
  it("loads stored models, pretrains the rest, and says so in its notes and the report", async () => {
    const { backend } = await createBackend("float64");
    const jobs = seedsOf(TEST_CONFIG).flatMap((s) => pretrainJobs(TEST_CONFIG, s));
    const files = new MemoryFiles();
    for (const job of jobs) files.put(TEST_CONFIG, job, fakeResult(TEST_CONFIG, job));
    const broken =
      files.index.models[jobKey(TEST_CONFIG, { kind: "reference", seed: 1 }, "wasm")].file;
    files.files.set(broken, new Uint8Array(12));

    const pretrained: string[] = [];
    const counting = () => {
      const inner = new InlineExecutor(backend);
      return {
        parallelism: 1,
        run: (t: Task, p?: never) => {
          if (t.kind === "pretrain")
            pretrained.push(`seed ${t.job.seed}: ${describeJob(t.config, t.job)}`);
          return inner.run(t, p);
        },
        close: () => inner.close(),
      } as ControlledExecutor;
    };
    const exp = new ExperimentState({
      createExecutor: counting,
      decideBackend: decide,
      parallelism: 1,
      pretrained: files.store(),
    });
    exp.setUrl(parseUrlState("?preset=persuasion-smoke").state);
    for (const key of [
      "seeds",
      "conditions",
      "corpus",
      "simulator",
      "policy",
      "rl",
      "panel",
      "eval",
    ] as const)
      exp.set(key, TEST_CONFIG[key]);
    const report = await exp.run();
    expect(exp.status).toBe("done");
    expect(pretrained).toEqual(["seed 1: reference simulator"]);
    expect(exp.notes).toEqual([
      expect.stringMatching(
        new RegExp(
          `^mem/${broken}: 12 bytes, index\\.json says \\d+ .* pretraining seed 1: reference simulator live instead$`,
        ),
      ),
      `pretraining: ${jobs.length - 1} of ${jobs.length} models from the store (mem), 1 pretrained live`,
    ]);
    expect(report?.store).toMatchObject({ location: "mem", loaded: jobs.length - 1, trained: 1 });
    expect(
      report?.pretraining[1].models?.find((m) => m.model === "reference simulator")?.source,
    ).toBe("trained");
    expect(report?.pretraining[0].models?.every((m) => m.source === "store")).toBe(true);
  }, 120_000);
});
