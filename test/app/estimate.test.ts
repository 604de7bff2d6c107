// The live-run estimate: the recording's wall time scaled by this device's micro-benchmark and by
// the workers each side can use; nothing when the recording has no micro-benchmark.
import { describe, expect, it } from "vitest";
import type { RunReport } from "../../src/experiment/experiment";
import { estimateRun, roughDuration } from "../../src/app/lib/estimate";

const report = (microBenchmark?: { msPerStep: number }, parallel = 2) =>
  ({
    env: {
      backend: "wasm",
      parallel,
      versions: {},
      microBenchmark: microBenchmark && {
        backend: "wasm",
        warmupMs: 1,
        iterations: 3,
        ...microBenchmark,
      },
    },
    conditions: [{ id: "single" }, { id: "vs" }],
    config: { seeds: 3 },
    timing: { totalMs: 120_000 },
  }) as unknown as RunReport;

describe("estimateRun", () => {
  it("scales by speed and by workers", () => {
    expect(estimateRun(report({ msPerStep: 100 }), 100, 2)!.ms).toBeCloseTo(120_000);
    expect(estimateRun(report({ msPerStep: 100 }), 200, 2)!.ms).toBeCloseTo(240_000); // a device half as fast
    expect(estimateRun(report({ msPerStep: 100 }), 100, 4)!.ms).toBeCloseTo(60_000); // twice the workers
    expect(estimateRun(report({ msPerStep: 100 }), 100, 16)!.ms).toBeCloseTo(120_000 / 3); // no more workers than 6 units
  });
  it("gives nothing without a recorded micro-benchmark or with a bad measurement", () => {
    expect(estimateRun(report(), 100, 2)).toBeNull();
    expect(estimateRun(report({ msPerStep: 100 }), 0, 2)).toBeNull();
    expect(estimateRun(report({ msPerStep: 100 }), Number.NaN, 2)).toBeNull();
  });
  it("reads as a rough duration", () => {
    expect(roughDuration(42_000)).toBe("about 40 s");
    expect(roughDuration(2_000)).toBe("about 5 s");
    expect(roughDuration(200_000)).toBe("about 3 min");
  });
});
