// The Play page's results kept in IndexedDB (through idb), apart from the runs' database: this
// browser's player id, every dialogue played here, and the merged set of many players' files a
// lecturer builds. A merge replaces the stored set only with a good result (play-results.ts), so
// a bad file never loses what was stored. MemoryPlayStore is the same contract in memory (tests).
import { openDB, type DBSchema, type IDBPDatabase } from "idb";
import { EMPTY_MERGE, randomId, type MergedSet, type PlayRecord } from "./play-results";

export interface PlayStore {
  /** This browser's player id, made once. */
  player(): Promise<string>;
  records(): Promise<PlayRecord[]>;
  add(record: PlayRecord): Promise<void>;
  merged(): Promise<MergedSet>;
  putMerged(set: MergedSet): Promise<void>;
}

interface Schema extends DBSchema {
  records: { key: string; value: PlayRecord; indexes: { finishedAt: number } };
  meta: { key: string; value: unknown };
}

export class IdbPlayStore implements PlayStore {
  readonly #db: Promise<IDBPDatabase<Schema>>;

  constructor(name = "collapse-lab-play") {
    this.#db = openDB<Schema>(name, 1, {
      upgrade(db) {
        db.createObjectStore("records", { keyPath: "id" }).createIndex("finishedAt", "finishedAt");
        db.createObjectStore("meta");
      },
    });
  }

  async player(): Promise<string> {
    const db = await this.#db;
    const tx = db.transaction("meta", "readwrite");
    let id = (await tx.store.get("player")) as string | undefined;
    if (!id) await tx.store.put((id = randomId(10)), "player");
    await tx.done;
    return id;
  }

  async records(): Promise<PlayRecord[]> {
    return (await this.#db).getAllFromIndex("records", "finishedAt");
  }

  async add(record: PlayRecord): Promise<void> {
    await (await this.#db).put("records", record);
  }

  async merged(): Promise<MergedSet> {
    return ((await (await this.#db).get("meta", "merged")) as MergedSet | undefined) ?? EMPTY_MERGE;
  }

  async putMerged(set: MergedSet): Promise<void> {
    await (await this.#db).put("meta", set, "merged");
  }
}

export class MemoryPlayStore implements PlayStore {
  #records: PlayRecord[] = [];
  #merged: MergedSet = EMPTY_MERGE;
  constructor(readonly id = "player-test") {}
  async player() {
    return this.id;
  }
  async records() {
    return [...this.#records];
  }
  async add(record: PlayRecord) {
    this.#records = [...this.#records.filter((r) => r.id !== record.id), record];
  }
  async merged() {
    return this.#merged;
  }
  async putMerged(set: MergedSet) {
    this.#merged = structuredClone(set);
  }
}
