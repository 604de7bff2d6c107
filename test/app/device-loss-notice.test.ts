// What the person sees when the run's WebGPU device is lost mid-run (the pool then runs on wasm;
// test/browser/device-loss.test.ts loses a real device): one plain notice in the run bar that
// says what happened and that the run goes on, and a report that says where it ran.
import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/svelte";
import RunBar from "../../src/app/components/RunBar.svelte";
import { ExperimentState, type ControlledExecutor } from "../../src/app/state/experiment.svelte";
import { createBackend } from "../../src/engine/backends/index";
import { InlineExecutor, type Task } from "../../src/experiment/tasks";
import { parseReport } from "../../src/experiment/report-schema";
import { parseUrlState } from "../../src/app/lib/url-state";
import type { BackendDecision } from "../../src/app/lib/backend-choice";
import { TEST_CONFIG } from "./report-fixture";

const onWebgpu = async (): Promise<BackendDecision> => ({
  requested: "webgpu",
  name: "webgpu",
  reason: "WebGPU was chosen",
});

describe("a device lost mid-run, as the person sees it", () => {
  it("says the GPU was lost and the run moved to wasm keeping its finished tasks; the report says it changed backend", async () => {
    const { backend } = await createBackend("float64");
    let finished = 0;
    // an executor that loses its device after its second task, as WebWorkerExecutor reports it
    const losing = (): ControlledExecutor => {
      const inner = new InlineExecutor(backend);
      return {
        parallelism: 1,
        run: async (t: Task, p?: never) => {
          const r = await inner.run(t, p);
          if (++finished === 2)
            exp.fellBack("the WebGPU device was lost: Device was destroyed.", 2);
          return r;
        },
        close: () => inner.close(),
      } as ControlledExecutor;
    };
    const exp = new ExperimentState({
      createExecutor: losing,
      decideBackend: onWebgpu,
      parallelism: 1,
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
    render(RunBar, { exp });
    const report = await exp.run();
    expect(exp.status).toBe("done");

    const notice =
      "The GPU was lost (Device was destroyed): the run moved to the CPU (wasm), keeping its 2 finished tasks.";
    expect(screen.getAllByRole("status").map((e) => e.textContent)).toContain(notice);
    expect(screen.getAllByText(notice)).toHaveLength(1); // said once
    expect(screen.getByTestId("backend").textContent).toBe("wasm");
    expect(report?.env.backend).toBe("wasm (started on webgpu)");
    expect(report?.env.fallback).toBe(
      "moved to wasm after 2 finished tasks on webgpu: the WebGPU device was lost: Device was destroyed.",
    );
    expect(parseReport(JSON.stringify(report)).env.fallback).toBe(report?.env.fallback); // an exported report keeps it
    // a report from before the field still reads
    const { fallback: _, ...oldEnv } = report!.env;
    expect(parseReport(JSON.stringify({ ...report, env: oldEnv })).env.fallback).toBeUndefined();
  }, 120_000);
});
