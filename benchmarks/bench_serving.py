"""Coordination overhead of coded serving of a trained network at N = 8, against plain Dask (issue 24).

Overhead of a request = its latency (encode -> submit -> first N - S answers -> decode -> cancel)
minus the busy time of the slowest worker whose output was used: what the master and Dask add on
top of the workers' work (the network's forward pass on one coded image plus the emulated
compute). Measured by ``overhead_rotation.py`` (shared with ``bench_dask_overhead.py``) in one run, request by request in rotation, on the same cluster, the same
images and the same per-task work:

* ``coded``: ``coded_compute(...)`` with the network held by every worker
  (``gcc.distributed.serving.network_ref``), GCC, decode from the fastest N - S;
* ``plain``: the same N coded images as N pinned tasks by ``client.submit`` + ``client.gather``
  (no decode, no cancel): Dask's own cost for the batch.

Goal: coded overhead median <= 10 ms at N = 8. The ratio to plain is printed beside it.

Run:  .venv/bin/python benchmarks/bench_serving.py [--model lenet5] [--requests 60] [--weights PATH]
(the weights: the entry of the model cache named ``--model``, the default profile's before the ci
profile's, the newest first; ``$GCC_MODEL_CACHE`` or ``_build/cache/models``).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

GOAL_MS = 10.0


def _weights(model: str) -> Path:
    from gcc.dnn.training import cache_dir

    entries = []
    for meta in Path(cache_dir()).glob("*.json"):
        try:
            info = json.loads(meta.read_text())
        except (OSError, ValueError):
            continue
        if info.get("name") == model and meta.with_suffix(".pt").exists():
            # the default profile's weights (trained on every image) before the ci profile's shorter ones
            full = (info.get("recipe") or {}).get("train_images") is None
            entries.append((full, meta.stat().st_mtime, meta.with_suffix(".pt")))
    if not entries:
        raise SystemExit(f"no cached {model} in {cache_dir()}: python -m gcc.reproduce --only dnn_models")
    return max(entries)[2]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="lenet5", help="name of a cached network (lenet5, repvgg, vit)")
    parser.add_argument("--weights", default=None, help="a <key>.pt of the weight cache (overrides --model)")
    parser.add_argument("--n-workers", type=int, default=8, help="N: coded workers = cluster workers")
    parser.add_argument("--n-inputs", type=int, default=4, help="K: images per request")
    parser.add_argument("--stragglers", type=int, default=1, help="S: decode from the fastest N - S")
    parser.add_argument("--base-ms", type=float, default=10.0, help="emulated compute per task (ms)")
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import gcc.codes as codes
    from gcc.distributed import Injection, open_cluster, worker_addresses
    from gcc.distributed.serving import load_on_workers, network_ref
    from gcc.dnn.data import load_images
    from gcc.machine import summary_line

    from overhead_rotation import measure, report

    weights = Path(args.weights) if args.weights else _weights(args.model)
    ref = network_ref(weights)
    images = load_images().x_test
    rng = np.random.default_rng(args.seed)
    N = args.n_workers
    code = codes.make("gcc", args.n_inputs, N)
    inj = Injection(base_s=args.base_ms / 1e3)      # the same work on every task, nothing slowed
    t_start = time.perf_counter()
    with open_cluster(n_workers=N, timeout=180) as client:
        startup = time.perf_counter() - t_start
        devices = load_on_workers(client, [ref])
        machine = summary_line()
        measured = measure(client, code, lambda b: images[rng.choice(len(images), size=args.n_inputs, replace=False)],
                           ref, inj, n_stragglers=args.stragglers, batches=args.requests, warmup=args.warmup,
                           workers=worker_addresses(client), modes=("coded", "plain"))

    device = sorted({d for per in devices.values() for d in per.values()})
    print(f"# {machine}, {time.strftime('%Y-%m-%d')}, cluster start-up {startup:.1f} s, network {weights.stem[:12]} "
          f"({args.model if not args.weights else 'given'}) on {', '.join(device)}")
    print(f"coded serving on a LocalCluster: N={N} workers x 1 thread, K={args.n_inputs}, S={args.stragglers}, "
          f"emulated compute {args.base_ms:g} ms/task, {args.requests} requests per mode (rotating order), "
          f"encode p50 {np.median(measured['encode']):.2f} ms, decode p50 {np.median(measured['decode']):.2f} ms")
    summary = {"n_workers": N, "requests": args.requests, "cluster_startup_s": startup}
    summary.update(report(measured, GOAL_MS))
    return summary


if __name__ == "__main__":
    main()
