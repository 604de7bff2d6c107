// Text helpers shared by the command line, the app and the benchmarks' descriptions.

/** A fraction as a percentage, with a narrow no-break space before the sign: pct(0.891) is
 * "89 %"; "–" for anything missing or not finite. */
export function pct(x: number | null | undefined, digits = 0): string {
  return x == null || !Number.isFinite(x) ? "–" : `${(100 * x).toFixed(digits)}\u202f%`;
}

/** A fraction in percentage points, without the sign (for a column or an axis headed "%"). */
export const points = (x: number, digits = 1) => (100 * x).toFixed(digits);

/** A p-value in three decimals, "<0.001" below that, "–" when there is none. */
export const pValue = (p: number | undefined) =>
  p === undefined || !Number.isFinite(p) ? "–" : p < 0.001 ? "<0.001" : p.toFixed(3);

export const fixed = (x: number, digits = 3) => x.toFixed(digits);
export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A plain aligned table: first row is the header. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ");
  return [
    line(rows[0]),
    widths.map((w) => "─".repeat(w)).join("  "),
    ...rows.slice(1).map(line),
  ].join("\n");
}
