// A worker_threads worker of NodeWorkerExecutor: one engine backend, tasks one at a time.
import { parentPort, workerData } from "node:worker_threads";
import { createNodeBackend } from "./node-webgpu";
import type { BackendName } from "../engine/backend";
import { type DecodingMode, setDecoding } from "../benchmarks/encode";
import { executeTask, type Task } from "./tasks";

const port = parentPort!;
const data = workerData as { backend: BackendName; decoding?: DecodingMode };
if (data.decoding) setDecoding(data.decoding);
const ready = createNodeBackend(data.backend); // webgpu runs on Dawn here too
ready.catch(() => {}); // a backend that cannot start fails each task with its reason, not the thread

port.on("message", async (task: Task) => {
  try {
    const { backend } = await ready;
    const result = await executeTask(backend, task, (progress) =>
      port.postMessage({ type: "progress", progress }),
    );
    port.postMessage({ type: "done", result });
  } catch (e) {
    port.postMessage({ type: "error", message: (e as Error).stack ?? String(e) });
  }
});
