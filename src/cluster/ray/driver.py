"""The entrypoint of a collapse-lab Ray job.

The experiment itself runs in Node (collapse-lab-ray.mjs, beside this file in the job's working
directory): its driver decides which tasks to run and assembles the report. This script holds the
Ray connection for it. Node asks for a task on its stdout, one JSON line each; this script runs it
as a Ray task (which runs the same bundle in `task` mode on whichever node Ray picks) and answers
on Node's stdin. Node's stderr, and anything else it prints, goes to the job's log.

Needs Node.js >= 20 on every node (on PATH, or COLLAPSE_LAB_NODE), and nothing else beyond Ray.
"""

import argparse
import base64
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

import ray

BUNDLE = "collapse-lab-ray.mjs"


def die_with_parent():
    """Linux: the child is killed when the process that started it dies (a stopped job, a killed worker)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def node_binary():
    node = os.environ.get("COLLAPSE_LAB_NODE") or shutil.which("node")
    if not node:
        raise RuntimeError("Node.js was not found on this node (put node >= 20 on PATH, or set COLLAPSE_LAB_NODE)")
    return node


def last_words(text, n=1500):
    """What a crashed Node said that matters: V8's fatal error or our own message, else its last lines."""
    lines = [l for l in text.strip().splitlines() if l.strip()]
    for l in lines:
        if "FATAL ERROR" in l or l.startswith("collapse-lab: "):
            return l.strip()[:n]
    text = "\n".join(lines)
    return text if len(text) <= n else "..." + text[-n:]


@ray.remote
def run_task(payload, backend, heap_mb, label):
    bundle = os.path.abspath(BUNDLE)
    if not os.path.exists(bundle):
        raise RuntimeError(f"{label}: {BUNDLE} is not in this task's working directory ({os.getcwd()})")
    args = [node_binary()]
    if heap_mb:
        args.append(f"--max-old-space-size={heap_mb}")
    with tempfile.TemporaryDirectory(prefix="collapse-lab-") as tmp:
        out = os.path.join(tmp, "result.bin")
        args += [bundle, "task", "--backend", backend, "--out", out]
        p = subprocess.run(args, input=payload, stderr=subprocess.PIPE, preexec_fn=die_with_parent)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != 0:
            how = f"was killed by signal {-p.returncode}" if p.returncode < 0 else f"exited with code {p.returncode}"
            raise RuntimeError(f"the task {label} crashed: node {how}: {last_words(err) or '(it printed nothing)'}")
        if err.strip():
            sys.stderr.write(err)
        with open(out, "rb") as f:
            return f.read()


def fail(message):
    """Ends the job with its cause, in the form the CLI and the Remote page read (job-log.ts)."""
    print("@@collapse-lab " + json.dumps({"t": "error", "message": message}), flush=True)
    sys.stderr.write(f"collapse-lab: {message}\n")
    sys.exit(1)


def cause_of(e):
    cause = getattr(e, "cause", None)
    return str(cause) if cause is not None else str(e).strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", help="a config file (default: the JSON in $COLLAPSE_LAB_CONFIG)")
    ap.add_argument("--backend", default="wasm", choices=["wasm", "webgpu", "float64"])
    ap.add_argument("--preset")
    ap.add_argument("--no-store", action="store_true")
    ap.add_argument("--task-cpus", type=float, default=1.0)
    ap.add_argument("--task-gpus", type=float, default=None, help="default: 1 with --backend webgpu, else 0")
    ap.add_argument("--task-heap-mb", type=int, default=0, help="Node's heap limit per task (0: Node's default)")
    a = ap.parse_args()
    gpus_per_task = a.task_gpus if a.task_gpus is not None else (1.0 if a.backend == "webgpu" else 0.0)

    ray.init()
    res = ray.cluster_resources()
    cpus, gpus = res.get("CPU", 0.0), res.get("GPU", 0.0)
    if cpus < a.task_cpus or gpus < gpus_per_task:
        fail(
            f"the cluster has {cpus:g} CPU(s) and {gpus:g} GPU(s); "
            f"a task asks for {a.task_cpus:g} CPU(s) and {gpus_per_task:g} GPU(s), so none could ever run"
            + (" (--backend webgpu asks for a GPU per task)" if a.backend == "webgpu" and gpus < gpus_per_task else "")
        )
    parallelism = int(cpus // a.task_cpus)
    if gpus_per_task:
        parallelism = min(parallelism, int(gpus // gpus_per_task))
    nodes = len([n for n in ray.nodes() if n.get("Alive")])

    try:
        cmd = [node_binary(), os.path.abspath(BUNDLE), "driver", "--backend", a.backend]
    except RuntimeError as e:
        fail(str(e))
    if a.config:
        cmd += ["--config", a.config]
    if a.preset:
        cmd += ["--preset", a.preset]
    if a.no_store:
        cmd.append("--no-store")
    node = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=die_with_parent)
    send_lock = threading.Lock()

    def send(msg):
        with send_lock:
            try:
                node.stdin.write((json.dumps(msg) + "\n").encode())
                node.stdin.flush()
            except BrokenPipeError:
                pass

    send({"op": "hello", "cpus": cpus, "gpus": gpus, "nodes": nodes, "parallelism": max(1, parallelism)})

    requests = queue.Queue()

    def read_requests():
        for raw in node.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line.startswith('{"op":'):
                requests.put(json.loads(line))
            elif line:
                print(line, flush=True)  # stray output of the Node driver: keep it in the log
        requests.put(None)

    threading.Thread(target=read_requests, daemon=True).start()

    pending = {}  # ObjectRef -> request id
    reading = True
    while reading or pending:
        try:
            while True:
                msg = requests.get(timeout=0.05 if pending else 1.0)
                if msg is None:  # the Node driver is gone: nothing will collect the tasks' results
                    for ref in pending:
                        ray.cancel(ref, force=True)
                    pending.clear()
                    reading = False
                    break
                if msg.get("op") == "close":
                    reading = False
                    break
                if msg.get("op") != "run":
                    continue
                opts = {"num_cpus": a.task_cpus, "num_gpus": gpus_per_task, "name": msg["label"][:120]}
                ref = run_task.options(**opts).remote(base64.b64decode(msg["payload"]), a.backend, a.task_heap_mb, msg["label"])
                pending[ref] = msg["id"]
        except queue.Empty:
            pass
        if not pending:
            continue
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.2)
        for ref in ready:
            rid = pending.pop(ref)
            try:
                send({"op": "done", "id": rid, "result": base64.b64encode(ray.get(ref)).decode()})
            except Exception as e:  # a task that failed: its cause goes back to the Node driver
                send({"op": "failed", "id": rid, "error": cause_of(e)})

    try:
        node.stdin.close()
    except BrokenPipeError:
        pass
    sys.exit(node.wait())


if __name__ == "__main__":
    main()
