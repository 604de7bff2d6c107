// Reading SCOPE's metrics JSON lines ({"step", "data"}) from a file or a job's log: malformed
// lines are skipped and counted by reason, other log text is ignored, chunks may split anywhere.
import { describe, expect, it } from "vitest";
import {
  readScopeMetrics,
  readScopeMetricsStream,
  ScopeMetricsReader,
  toCurveSeries,
} from "../../src/cluster/scope/metrics";

const SAMPLE = [
  "2026-04-03 10:00:00 - train_p4g_slime - INFO - starting", // log text
  '{"step": 0, "data": {"rollout/raw_reward/mean": 0.25, "train/entropy_loss": 1.5, "perf/step_time": 12.0}}',
  '{"step": 1, "data": {"rollout/raw_reward/mean": 0.5, "train/entropy_loss": 1.25}}',
  "(RolloutManager pid=4242, ip=10.0.0.2) [P4G] Rollout 1: 128 samples in 16 groups", // Ray-prefixed text
  '(RolloutManager pid=4242, ip=10.0.0.2) {"step": 2, "data": {"rollout/raw_reward/mean": 0.75}}', // a Ray-prefixed record
  '{"step": 3, "data": {"rollout/raw_reward/mean": 0.8', // truncated: not JSON
  "{not json at all}", // not JSON
  '{"data": {"rollout/raw_reward/mean": 0.9}}', // no step
  '{"step": "4", "data": {"rollout/raw_reward/mean": 0.9}}', // step a string
  '{"step": -1, "data": {"x": 1}}', // negative step
  '{"step": 2.5, "data": {"x": 1}}', // fractional step
  '{"step": 5, "data": [1, 2]}', // data not an object
  '{"step": 6}', // no data
  "[1, 2, 3]", // JSON, not an object: log text
  '{"step": 7, "data": {"rollout/raw_reward/mean": NaN, "train/entropy_loss": Infinity, "eval/p4g_test_haiku": -Infinity, "note": "NaN stays text", "ok": true, "eval/p4g_test_gpt5mini": 0.4}}',
  '{"step": 1, "data": {"rollout/raw_reward/mean": 0.55}}', // step 1 again: the later value wins
  "",
  '  {"step": 9007199254740991, "data": {"rollout/raw_reward/mean": 1.0}}  \r', // the largest exact step, spaces and CR
  '{"step": 18446744073709551616, "data": {"rollout/raw_reward/mean": 1.0}}', // 2^64: not exact in a JSON number
  '{"step": 1000000000000, "data": {"nested": {"a": 2, "b": {"c": 3}}}}',
].join("\n");

describe("readScopeMetrics", () => {
  const m = readScopeMetrics(SAMPLE);

  it("reads every record into series sorted by step", () => {
    expect(m.series["rollout/raw_reward/mean"]).toEqual([
      { step: 0, value: 0.25 },
      { step: 1, value: 0.55 },
      { step: 2, value: 0.75 },
      { step: 9007199254740991, value: 1 },
    ]);
    expect(m.series["train/entropy_loss"]).toEqual([
      { step: 0, value: 1.5 },
      { step: 1, value: 1.25 },
    ]);
    expect(m.series["perf/step_time"]).toEqual([{ step: 0, value: 12 }]);
    expect(m.series["eval/p4g_test_gpt5mini"]).toEqual([{ step: 7, value: 0.4 }]);
    expect(m.series["nested/a"]).toEqual([{ step: 1e12, value: 2 }]);
    expect(m.series["nested/b/c"]).toEqual([{ step: 1e12, value: 3 }]);
    expect(Object.keys(m.series).sort()).toEqual([
      "eval/p4g_test_gpt5mini",
      "nested/a",
      "nested/b/c",
      "perf/step_time",
      "rollout/raw_reward/mean",
      "train/entropy_loss",
    ]);
  });

  it("counts what it skipped, by reason", () => {
    expect(m.records).toBe(7); // steps 0, 1, 2, 7, 1 again, 2^53 − 1, 10^12
    expect(m.reasons).toEqual({ notJson: 2, noStep: 5, badData: 2 });
    expect(m.malformed).toBe(9);
    expect(m.textLines).toBe(3); // the INFO line, the Ray-prefixed text, the JSON list
    expect(m.skippedValues).toBe(5); // NaN, Infinity, -Infinity, a string, a boolean
    expect(m.replacedSteps).toBe(1);
  });

  it("never throws, whatever the input", () => {
    for (const text of [
      "",
      "\n\n",
      "{",
      "}",
      '{"step":',
      "\u0000{\u0000",
      "{".repeat(10_000),
      '{"step": 1, "data": {"__proto__": {"x": 1}}}',
    ]) {
      expect(() => readScopeMetrics(text)).not.toThrow();
    }
    const proto = readScopeMetrics('{"step": 1, "data": {"__proto__": 5}}');
    expect(Object.getPrototypeOf(proto.series)).toBe(Object.prototype);
    expect(Object.hasOwn(proto.series, "__proto__")).toBe(true);
    expect(readScopeMetrics("")).toEqual({
      series: {},
      records: 0,
      textLines: 0,
      malformed: 0,
      reasons: { notJson: 0, noStep: 0, badData: 0 },
      skippedValues: 0,
      replacedSteps: 0,
    });
  });

  it("a last line without a newline is read; a record on Windows line ends too", () => {
    expect(readScopeMetrics('{"step": 3, "data": {"x": 1}}').series.x).toEqual([
      { step: 3, value: 1 },
    ]);
    expect(
      readScopeMetrics('{"step": 3, "data": {"x": 1}}\r\n{"step": 4, "data": {"x": 2}}\r\n').series
        .x,
    ).toHaveLength(2);
  });
});

describe("chunks split anywhere", () => {
  it("gives the same result for every split of the sample into two, and for one character at a time", () => {
    const whole = readScopeMetrics(SAMPLE);
    for (let cut = 0; cut <= SAMPLE.length; cut += 7) {
      const r = new ScopeMetricsReader();
      r.push(SAMPLE.slice(0, cut));
      r.push(SAMPLE.slice(cut));
      expect(r.end()).toEqual(whole);
    }
    const r = new ScopeMetricsReader();
    for (const ch of SAMPLE) r.push(ch);
    expect(r.end()).toEqual(whole);
  });

  it("bytes split inside a multi-byte character, from a stream", async () => {
    const text = '{"step": 1, "data": {"süß/∑": 0.5}}\n{"step": 2, "data": {"süß/∑": 0.75}}\n';
    const bytes = new TextEncoder().encode(text);
    async function* oneByteAtATime() {
      for (const b of bytes) yield new Uint8Array([b]);
    }
    const m = await readScopeMetricsStream(oneByteAtATime());
    expect(m.series["süß/∑"]).toEqual([
      { step: 1, value: 0.5 },
      { step: 2, value: 0.75 },
    ]);
    expect(m.malformed).toBe(0);
  });

  it("result() before end() holds the complete lines only", () => {
    const r = new ScopeMetricsReader();
    r.push('{"step": 1, "data": {"x": 1}}\n{"step": 2, "da');
    expect(r.result().series.x).toEqual([{ step: 1, value: 1 }]);
    r.push('ta": {"x": 2}}');
    expect(r.end().series.x).toEqual([
      { step: 1, value: 1 },
      { step: 2, value: 2 },
    ]);
  });
});

describe("toCurveSeries", () => {
  it("names SCOPE's reward and Slime's entropy as collapse-lab's curves and keeps the rest", () => {
    const { series } = readScopeMetrics(SAMPLE);
    const curves = toCurveSeries(series);
    expect(curves.reward).toBe(series["rollout/raw_reward/mean"]);
    expect(curves.entropy).toBe(series["train/entropy_loss"]);
    expect(Object.keys(curves).sort()).toEqual([
      "entropy",
      "eval/p4g_test_gpt5mini",
      "nested/a",
      "nested/b/c",
      "perf/step_time",
      "reward",
    ]);
  });
  it("takes the first alias present, and leaves a series already named reward alone", () => {
    const a = [{ step: 0, value: 1 }];
    const b = [{ step: 0, value: 2 }];
    expect(toCurveSeries({ "rollout/raw_reward": a })).toEqual({ reward: a });
    expect(toCurveSeries({ "rollout/raw_reward": a, "rollout/raw_reward/mean": b })).toEqual({
      reward: b,
      "rollout/raw_reward": a,
    });
    expect(toCurveSeries({ reward: a, "rollout/raw_reward/mean": b })).toEqual({
      reward: a,
      "rollout/raw_reward/mean": b,
    });
  });
});
