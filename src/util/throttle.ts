// Progress throttling for worker callbacks: every postMessage costs the UI thread, so a
// training loop reports at most once per interval, and always its last value.

export interface Throttled<T> {
  (value: T): void;
  /** Sends the latest value not yet sent, if any. */
  flush(): void;
}

export function throttle<T>(
  fn: (value: T) => void,
  intervalMs: number,
  now: () => number = () => performance.now(),
): Throttled<T> {
  let last = -Infinity;
  let pending: { value: T } | null = null;
  const call = ((value: T) => {
    const t = now();
    if (t - last >= intervalMs) {
      last = t;
      pending = null;
      fn(value);
    } else {
      pending = { value };
    }
  }) as Throttled<T>;
  call.flush = () => {
    if (pending) {
      last = now();
      const { value } = pending;
      pending = null;
      fn(value);
    }
  };
  return call;
}
