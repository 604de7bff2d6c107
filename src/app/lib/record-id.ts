/**
 * A fresh id for a record kept in the browser (a run, a sweep, an import): its kind, the time it was
 * made (so ids sort by age) and a random suffix from the Web Crypto API (getRandomValues, which also
 * works on a plain-http classroom server, unlike randomUUID).
 */
export function newRecordId(kind: string): string {
  const suffix = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");
  return `${kind}-${new Date().toISOString().replace(/[:.]/g, "-")}-${suffix}`;
}
