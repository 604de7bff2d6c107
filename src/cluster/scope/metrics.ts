// SCOPE's logged metrics — JSON lines of {"step": n, "data": {name: value, …}} — read into one
// series per metric name, from a file or from a job's log, where they sit among other text. Bad
// lines are counted and skipped, never thrown: a log that is still being written ends mid-line,
// and a crashed run leaves half a record behind.

export interface MetricPoint {
  step: number;
  value: number;
}

/** Metric name → its points in step order. */
export type MetricSeries = Record<string, MetricPoint[]>;

export interface ScopeMetrics {
  series: MetricSeries;
  /** Lines read as records. */
  records: number;
  /** Lines that are not a JSON object (other log text): ignored, not malformed. */
  textLines: number;
  /** Lines that look like a record ({…}) and are skipped: the sum of `reasons`. */
  malformed: number;
  reasons: {
    notJson: number; // starts with { but does not parse
    noStep: number; // no "step" that is an integer in 0 … 2^53 − 1 (larger ones are not exact in JSON numbers)
    badData: number; // "data" missing or not an object
  };
  /** Values left out of records that were kept: null, NaN, ±Infinity, strings, booleans, lists. */
  skippedValues: number;
  /**
   * A metric logged again at a step it already had (a job resumed from a checkpoint logs the steps
   * after it again): the later value is kept, as the run that went on produced it.
   */
  replacedSteps: number;
}

// Ray prefixes what its actors and tasks print with "(Name pid=…, ip=…) "
const RAY_PREFIX = /^\([^()]*pid=\d+[^()]*\)\s*/;

/** Reads SCOPE's metrics incrementally: push chunks as they arrive (split anywhere), then `end()`. */
export class ScopeMetricsReader {
  #rest = "";
  #decoder = new TextDecoder();
  #points = new Map<string, Map<number, number>>();
  #counts = {
    records: 0,
    textLines: 0,
    notJson: 0,
    noStep: 0,
    badData: 0,
    skippedValues: 0,
    replacedSteps: 0,
  };

  /** A chunk of text or bytes (UTF-8, a character may be split between chunks). */
  push(chunk: string | Uint8Array): void {
    const text = typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true });
    const lines = (this.#rest + text).split("\n");
    this.#rest = lines.pop() ?? "";
    for (const line of lines) this.#line(line);
  }

  /** The last line, when the text does not end with a newline. */
  end(): ScopeMetrics {
    const tail = this.#rest + this.#decoder.decode();
    this.#rest = "";
    if (tail.length) this.#line(tail);
    return this.result();
  }

  /** What was read so far (a partial last line is not included until `end()`). */
  result(): ScopeMetrics {
    // fromEntries defines a metric named "__proto__" as its own key instead of setting the prototype
    const series: MetricSeries = Object.fromEntries(
      [...this.#points].map(([name, byStep]) => [
        name,
        [...byStep].map(([step, value]) => ({ step, value })).sort((a, b) => a.step - b.step),
      ]),
    );
    const { records, textLines, notJson, noStep, badData, skippedValues, replacedSteps } =
      this.#counts;
    return {
      series,
      records,
      textLines,
      malformed: notJson + noStep + badData,
      reasons: { notJson, noStep, badData },
      skippedValues,
      replacedSteps,
    };
  }

  #line(raw: string): void {
    const line = raw.replace(/\r$/, "").trim().replace(RAY_PREFIX, "");
    if (!line.startsWith("{")) {
      if (line.length) this.#counts.textLines++;
      return;
    }
    const record = parseRecord(line);
    if (record === undefined) return void this.#counts.notJson++;
    const step = (record as { step?: unknown } | null)?.step;
    if (typeof step !== "number" || !Number.isSafeInteger(step) || step < 0)
      return void this.#counts.noStep++;
    const data = (record as { data?: unknown }).data;
    if (!isPlainObject(data)) return void this.#counts.badData++;
    this.#counts.records++;
    this.#values(step, data, "");
  }

  #values(step: number, data: Record<string, unknown>, prefix: string): void {
    for (const [key, value] of Object.entries(data)) {
      const name = prefix + key;
      // nested objects (as some trackers log them) become "outer/inner"
      if (isPlainObject(value)) this.#values(step, value, `${name}/`);
      else if (typeof value === "number" && Number.isFinite(value)) {
        let byStep = this.#points.get(name);
        if (!byStep) this.#points.set(name, (byStep = new Map()));
        if (byStep.has(step)) this.#counts.replacedSteps++;
        byStep.set(step, value);
      } else this.#counts.skippedValues++;
    }
  }
}

/** Reads a whole text (a metrics file or a job's log). */
export function readScopeMetrics(text: string): ScopeMetrics {
  const reader = new ScopeMetricsReader();
  reader.push(text);
  return reader.end();
}

/** Reads a stream of chunks (a file stream, a fetch body, log lines). */
export async function readScopeMetricsStream(
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
): Promise<ScopeMetrics> {
  const reader = new ScopeMetricsReader();
  for await (const chunk of chunks) reader.push(chunk);
  return reader.end();
}

/**
 * JSON, and Python's json.dumps as well, which writes NaN, Infinity and -Infinity bare: they
 * become null (then a skipped value). undefined: not JSON.
 */
function parseRecord(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    if (!/NaN|Infinity/.test(line)) return undefined;
    // replace the bare words only outside strings
    const patched = line.replace(/"(?:[^"\\]|\\.)*"|-?\bInfinity\b|\bNaN\b/g, (m) =>
      m.startsWith('"') ? m : "null",
    );
    try {
      return JSON.parse(patched) as unknown;
    } catch {
      return undefined;
    }
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** collapse-lab's learning-curve series (src/experiment/runner.ts CurvePoint) that a SCOPE metric is. */
export type CurveSeriesName = "reward" | "entropy";

/**
 * SCOPE and Slime metric names with a collapse-lab counterpart, first match wins:
 * reward — the mean reward of a step's rollouts (SCOPE's usim/core/rollout_metrics.py logs
 * rollout/raw_reward/mean; Slime's own rollout logging rollout/raw_reward), as CurvePoint.reward;
 * entropy — Slime's train/entropy_loss, the policy's mean token entropy on its training rollouts:
 * the same kind of measure as collapse-lab's policy entropy (per turn, talking to humans), not the
 * same number. SCOPE's evaluation metrics (one per panel model) keep their own names.
 */
export const CURVE_ALIASES: Readonly<Record<CurveSeriesName, readonly string[]>> = Object.freeze({
  reward: ["rollout/raw_reward/mean", "rollout/raw_reward"],
  entropy: ["train/entropy_loss"],
});

/**
 * The series under collapse-lab's names where SCOPE's have a counterpart (CURVE_ALIASES), every
 * other series under its own name. A series already named reward or entropy is kept as it is.
 */
export function toCurveSeries(series: MetricSeries): MetricSeries {
  const has = (name: string) => Object.hasOwn(series, name);
  const out: [string, MetricPoint[]][] = [];
  const taken = new Set<string>();
  for (const [curve, aliases] of Object.entries(CURVE_ALIASES)) {
    if (has(curve)) continue;
    const source = aliases.find(has);
    if (source) {
      out.push([curve, series[source]]);
      taken.add(source);
    }
  }
  for (const [name, points] of Object.entries(series))
    if (!taken.has(name)) out.push([name, points]);
  return Object.fromEntries(out);
}
