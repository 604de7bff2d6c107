// The recordings shipped with the app (public/recorded/<preset>.json, one per preset that has
// one): fetched, checked with parseReport, and listed on the Runs page next to the user's runs.
// A preset without a recording is left out; a recording that fails to load becomes an entry with
// its reason, so one bad file loses nothing else.
import type { RunReport } from "../../experiment/experiment";
import { PRESETS, type Preset } from "../../experiment/presets";
import { parseReport } from "../../experiment/report-schema";

export type Recording =
  | { preset: Preset; report: RunReport; error?: undefined }
  | { preset: Preset; report?: undefined; error: string };

/** The recording of one preset: its report, null when there is none, or throws why it failed. */
export async function fetchRecording(
  preset: string,
  fetchFn: typeof fetch = fetch,
): Promise<RunReport | null> {
  const res = await fetchFn(`recorded/${preset}.json`);
  // no recording of this preset (a static host may answer a missing file with the app's page)
  if (res.status === 404 || res.headers.get("content-type")?.includes("text/html")) return null;
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return parseReport(await res.text());
}

/** Every preset's recording, in PRESETS order, fetched in parallel. */
export async function loadRecordings(
  presets: readonly Preset[] = PRESETS,
  fetchFn: typeof fetch = fetch,
): Promise<Recording[]> {
  const all = await Promise.all(
    presets.map(async (preset): Promise<Recording | null> => {
      try {
        const report = await fetchRecording(preset.id, fetchFn);
        return report ? { preset, report } : null;
      } catch (e) {
        return { preset, error: (e as Error).message };
      }
    }),
  );
  return all.filter((r) => r !== null);
}
