// Small text helpers for the command line.
export const pct = (x: number, digits = 0) => `${(100 * x).toFixed(digits)}%`;
export const fixed = (x: number, digits = 3) => x.toFixed(digits);
export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A plain aligned table: first row is the header. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ");
  return [line(rows[0]), widths.map((w) => "─".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}
