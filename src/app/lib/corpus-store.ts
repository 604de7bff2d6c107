// Dialogue corpora a person dropped on the Experiment page (docs/humans.md), kept in IndexedDB
// (through idb) by the SHA-256 of their bytes, so a reload, or a link that names one, finds it
// again. A file is stored only after it was read without a problem (corpus-import.ts): a bad file
// never replaces or loses one stored before. MemoryCorpusStore is the same contract in memory.
import { openDB, type DBSchema, type IDBPDatabase } from "idb";

export interface StoredCorpus {
  sha256: string;
  file: string; // the file's name
  bytes: Uint8Array; // exactly as dropped: its hash is the corpus' name in configs and reports
  benchmark: string;
  dialogues: number;
  addedAt: number;
}

export interface CorpusStore {
  get(sha256: string): Promise<StoredCorpus | undefined>;
  /** The latest stored file of this name, for a config that names a corpus by file only. */
  byName(file: string): Promise<StoredCorpus | undefined>;
  put(corpus: StoredCorpus): Promise<void>;
  /** Newest first. */
  list(): Promise<StoredCorpus[]>;
  delete(sha256: string): Promise<void>;
}

interface Schema extends DBSchema {
  corpora: { key: string; value: StoredCorpus; indexes: { addedAt: number } };
}

export class IdbCorpusStore implements CorpusStore {
  readonly #db: Promise<IDBPDatabase<Schema>>;

  constructor(name = "collapse-lab-corpora") {
    this.#db = openDB<Schema>(name, 1, {
      upgrade(db) {
        db.createObjectStore("corpora", { keyPath: "sha256" }).createIndex("addedAt", "addedAt");
      },
    });
  }

  async get(sha256: string) {
    return (await this.#db).get("corpora", sha256);
  }

  async byName(file: string) {
    return (await this.list()).find((c) => c.file === file);
  }

  async put(corpus: StoredCorpus) {
    await (await this.#db).put("corpora", corpus);
  }

  async list() {
    return (await (await this.#db).getAllFromIndex("corpora", "addedAt")).reverse();
  }

  async delete(sha256: string) {
    await (await this.#db).delete("corpora", sha256);
  }
}

export class MemoryCorpusStore implements CorpusStore {
  #corpora = new Map<string, StoredCorpus>();
  async get(sha256: string) {
    return this.#corpora.get(sha256);
  }
  async byName(file: string) {
    return (await this.list()).find((c) => c.file === file);
  }
  async put(corpus: StoredCorpus) {
    this.#corpora.set(corpus.sha256, structuredClone(corpus));
  }
  async list() {
    return [...this.#corpora.values()].sort((a, b) => b.addedAt - a.addedAt);
  }
  async delete(sha256: string) {
    this.#corpora.delete(sha256);
  }
}
