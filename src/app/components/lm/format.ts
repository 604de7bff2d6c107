// Number formatting shared by the LM lab's components: "–" for anything missing or not finite.

export function num(x: number | null | undefined, digits = 2): string {
  return x == null || !Number.isFinite(x) ? "–" : x.toFixed(digits);
}

export function bytes(n: number): string {
  if (!(n > 0)) return "0 B";
  const units = ["B", "kB", "MB", "GB"];
  const i = Math.min(units.length - 1, Math.floor(Math.log10(n) / 3));
  return `${(n / 1000 ** i).toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

export const plural = (n: number, word: string, many = `${word}s`) =>
  `${n} ${n === 1 ? word : many}`;

/** A standard error: two decimals, or two significant digits when smaller than 0.1. */
export function se(x: number | null | undefined): string {
  if (x == null || !Number.isFinite(x)) return "–";
  return x >= 0.1 || x === 0 ? x.toFixed(2) : x.toPrecision(2);
}
