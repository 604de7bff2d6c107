// throttle: the first call passes, the rest within the interval are held, flush() sends the latest.
import { describe, it, expect } from "vitest";
import { throttle } from "../../src/util/throttle";

describe("throttle", () => {
  it("passes the first call, holds the rest within the interval, flushes the latest", () => {
    let now = 0;
    const got: number[] = [];
    const t = throttle(
      (v: number) => got.push(v),
      100,
      () => now,
    );
    t(1);
    now = 50;
    t(2);
    t(3);
    expect(got).toEqual([1]);
    now = 120;
    t(4);
    expect(got).toEqual([1, 4]);
    t(5);
    t.flush();
    t.flush();
    expect(got).toEqual([1, 4, 5]);
  });
});
