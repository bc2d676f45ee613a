"""Coordination overhead of one coded batch on a local Dask cluster, against plain Dask (issue 16).

Overhead = latency of the batch (encode -> submit -> gather -> decode) minus the busy time of the
slowest worker whose result was used: what Dask and the master add on top of the work itself.
Measured in one run, batch by batch in rotation:

* ``coded``: ``coded_compute(...)``, one kept actor per worker, called directly;
* ``plain``: the same N tasks (same function, inputs and injected work, pinned the same way) by
  ``client.submit`` + ``client.gather``, no coding: Dask's own overhead for the batch.

Goals: coded overhead median <= 10 ms at N = 8, and coded / plain <= 1.5.

Run:  .venv/bin/python benchmarks/bench_dask_overhead.py [--n-workers 8] [--batches 60]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

GOAL_MS, GOAL_RATIO = 10.0, 1.5


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-workers", type=int, default=8, help="N: coded workers = cluster workers")
    parser.add_argument("--n-inputs", type=int, default=4, help="K")
    parser.add_argument("--stragglers", type=int, default=0, help="S: decode from the fastest N - S")
    parser.add_argument("--dim", type=int, default=256, help="input dimension of each x_k")
    parser.add_argument("--base-ms", type=float, default=20.0, help="emulated compute per task (ms)")
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import gcc
    from gcc.distributed import Injection, open_cluster, worker_addresses
    from gcc.machine import summary_line

    from overhead_rotation import measure, report

    rng = np.random.default_rng(args.seed)
    N = args.n_workers
    code = gcc.SplineCode(n_inputs=args.n_inputs, n_workers=N)
    # No stragglers: the injected sleep is the "work"; nothing to interrupt, so no cancel event.
    inj = Injection(base_s=args.base_ms / 1e3, interruptible=False)
    t_start = time.perf_counter()
    with open_cluster(n_workers=N, timeout=120) as client:
        startup = time.perf_counter() - t_start
        machine = summary_line()
        measured = measure(client, code, lambda b: rng.uniform(-1, 1, size=(args.n_inputs, args.dim)), np.tanh, inj,
                           n_stragglers=args.stragglers, batches=args.batches, warmup=args.warmup,
                           workers=worker_addresses(client), modes=("coded", "plain"))

    print(f"# {machine}, {time.strftime('%Y-%m-%d')}, cluster start-up {startup:.1f} s")
    print(f"coded batch on a LocalCluster: N={N} workers x 1 thread, K={args.n_inputs}, S={args.stragglers}, "
          f"d={args.dim}, emulated compute {args.base_ms:g} ms/task, {args.batches} batches per mode "
          f"(rotating order), encode p50 {np.median(measured['encode']):.2f} ms, decode p50 "
          f"{np.median(measured['decode']):.2f} ms")
    summary = {"n_workers": N, "batches": args.batches, "cluster_startup_s": startup}
    summary.update(report(measured, GOAL_MS, GOAL_RATIO))
    return summary


if __name__ == "__main__":
    main()
