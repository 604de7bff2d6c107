// Boots a worker_threads worker with tsx, so it can load the TypeScript sources.
import { register } from "tsx/esm/api";

register();
await import("./node-worker.ts");
