// Sweeps kept in IndexedDB (through idb), apart from the runs' database: imported ones, with the
// reports of their points that came with them, and those run in the app, whose points are also
// ordinary stored runs (their ids kept, so a stopped sweep resumes point by point).
import { openDB, type DBSchema, type IDBPDatabase } from "idb";
import type { RunReport } from "../../experiment/experiment";
import type { SweepAxis, SweepSummary } from "../../experiment/sweep";
import type { UrlState } from "./url-state";

export interface StoredSweep {
  id: string;
  createdAt: number;
  title: string;
  source: "imported" | "app";
  /** Absent while an app sweep is under way, or when it stopped before its last point. */
  summary?: SweepSummary;
  /** Point reports by file name (imported sweeps). */
  reports: Record<string, RunReport>;
  /** An app sweep: what it runs, and each point's stored run (RunStore) once started. */
  plan?: { url: UrlState; grid: SweepAxis[]; runs: Record<string, string> };
}

interface Schema extends DBSchema {
  sweeps: { key: string; value: StoredSweep; indexes: { createdAt: number } };
}

export class SweepStore {
  readonly #db: Promise<IDBPDatabase<Schema>>;

  constructor(name = "collapse-lab-sweeps") {
    this.#db = openDB<Schema>(name, 1, {
      upgrade(db) {
        db.createObjectStore("sweeps", { keyPath: "id" }).createIndex("createdAt", "createdAt");
      },
    });
  }

  /** Newest first. */
  async list(): Promise<StoredSweep[]> {
    return (await (await this.#db).getAllFromIndex("sweeps", "createdAt")).reverse();
  }

  async get(id: string): Promise<StoredSweep | undefined> {
    return (await this.#db).get("sweeps", id);
  }

  /** Callers pass plain data ($state.snapshot): proxies cannot be cloned. */
  async put(sweep: StoredSweep): Promise<void> {
    await (await this.#db).put("sweeps", sweep);
  }

  async delete(id: string): Promise<void> {
    await (await this.#db).delete("sweeps", id);
  }
}
