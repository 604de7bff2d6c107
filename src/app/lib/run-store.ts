// Runs kept in IndexedDB (through idb): finished runs with their RunReport, in-progress runs with
// their URL state and every finished task (pretraining, condition × seed units, diagnostics), so
// a reload shows them again and an interrupted run resumes where it stopped.
import { openDB, type DBSchema, type IDBPDatabase } from "idb";
import type { RunReport, TaskCache } from "../../experiment/experiment";
import type { UrlState } from "./url-state";

export interface StoredRun {
  id: string;
  createdAt: number;
  updatedAt: number;
  status: "running" | "interrupted" | "done" | "imported";
  title: string;
  url: UrlState;
  backend: string;
  report?: RunReport;
  tasksDone: number;
  tasksTotal: number;
}

interface Schema extends DBSchema {
  runs: { key: string; value: StoredRun; indexes: { createdAt: number } };
  tasks: {
    key: [string, string];
    value: { runId: string; key: string; value: unknown };
    indexes: { runId: string };
  };
}

export class RunStore {
  readonly #db: Promise<IDBPDatabase<Schema>>;

  constructor(name = "collapse-lab") {
    this.#db = openDB<Schema>(name, 1, {
      upgrade(db) {
        db.createObjectStore("runs", { keyPath: "id" }).createIndex("createdAt", "createdAt");
        db.createObjectStore("tasks", { keyPath: ["runId", "key"] }).createIndex("runId", "runId");
      },
    });
  }

  async list(): Promise<StoredRun[]> {
    const runs = await (await this.#db).getAllFromIndex("runs", "createdAt");
    return runs.reverse();
  }

  async get(id: string): Promise<StoredRun | undefined> {
    return (await this.#db).get("runs", id);
  }

  async put(run: StoredRun): Promise<void> {
    // callers pass plain data ($state.snapshot of reactive state): proxies cannot be cloned
    await (await this.#db).put("runs", { ...run, updatedAt: Date.now() });
  }

  async delete(id: string): Promise<void> {
    const db = await this.#db;
    const tx = db.transaction(["runs", "tasks"], "readwrite");
    await tx.objectStore("runs").delete(id);
    for (const key of await tx.objectStore("tasks").index("runId").getAllKeys(id))
      await tx.objectStore("tasks").delete(key);
    await tx.done;
  }

  /** The finished tasks of one run, as the experiment's TaskCache. */
  taskCache(runId: string): TaskCache {
    return {
      get: async (key) => (await (await this.#db).get("tasks", [runId, key]))?.value,
      put: async (key, value) => {
        await (await this.#db).put("tasks", { runId, key, value });
      },
    };
  }
}
