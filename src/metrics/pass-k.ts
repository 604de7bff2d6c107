// pass^k (τ-bench, Yao et al. 2024): the chance that k trials of one task all succeed, estimated
// without bias from c successes in n ≥ k trials as C(c, k) / C(n, k), then averaged over tasks.

/** C(c, k) / C(n, k) for c successes in n trials; 0 when c < k. */
export function passK(c: number, n: number, k: number): number {
  if (
    !(Number.isInteger(c) && Number.isInteger(n) && Number.isInteger(k)) ||
    c < 0 ||
    c > n ||
    k < 1 ||
    k > n
  )
    throw new Error(`passK: need integers 0 ≤ c ≤ n and 1 ≤ k ≤ n, got c=${c}, n=${n}, k=${k}`);
  let p = 1;
  for (let i = 0; i < k; i++) p *= (c - i) / (n - i); // C(c,k)/C(n,k) = Π (c−i)/(n−i)
  return Math.max(0, p);
}

/** pass^1 … pass^n averaged over tasks, from each task's successes in n trials. */
export function passCurve(successes: readonly number[], n: number): number[] {
  if (successes.length === 0) throw new Error("passCurve: no tasks");
  return Array.from(
    { length: n },
    (_, j) => successes.reduce((s, c) => s + passK(c, n, j + 1), 0) / successes.length,
  );
}
