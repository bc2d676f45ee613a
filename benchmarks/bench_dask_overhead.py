"""Coordination overhead of one coded batch on a local Dask cluster, against plain Dask (issue 16).

Overhead = latency of the batch (encode -> submit -> gather -> decode) minus the busy time of the
slowest worker whose result was used: what Dask and the master add on top of the work itself.
Measured in one run, batch by batch in rotation:

* ``coded/tasks``: ``coded_compute(..., engine="tasks")``, one pinned task per coded input;
* ``coded/actors``: ``coded_compute(..., engine="actors")``, one kept actor per worker;
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
    from gcc.distributed import Injection, coded_compute, open_cluster, worker_addresses
    from gcc.distributed.coded import coded_task
    from gcc.machine import summary_line

    rng = np.random.default_rng(args.seed)
    N = args.n_workers
    code = gcc.SplineCode(n_inputs=args.n_inputs, n_workers=N)
    # No stragglers: the injected sleep is the "work"; nothing to interrupt, so no cancel event.
    inj = Injection(base_s=args.base_ms / 1e3, interruptible=False)
    modes = ("coded/tasks", "coded/actors", "plain")
    over = {m: [] for m in modes}
    lat = {m: [] for m in modes}
    enc, dec = [], []
    t_start = time.perf_counter()
    with open_cluster(n_workers=N, timeout=120) as client:
        startup = time.perf_counter() - t_start
        workers = worker_addresses(client)
        machine = summary_line()
        for b in range(args.warmup + args.batches):
            X = rng.uniform(-1, 1, size=(args.n_inputs, args.dim))
            for j in range(len(modes)):
                mode = modes[(b + j) % len(modes)]
                if mode == "plain":
                    coded = code.encode(X)
                    faults = inj.plan(len(workers), np.random.default_rng(b))[:N]
                    t0 = time.perf_counter()
                    futs = [client.submit(coded_task, np.tanh, coded[i], i, faults[i], workers=[workers[i]],
                                          allow_other_workers=False, pure=False) for i in range(N)]
                    outs = client.gather(futs)
                    latency = time.perf_counter() - t0
                    overhead = latency - max(timing["busy_s"] for _, timing in outs)
                else:
                    res = coded_compute(client, code, X, np.tanh, n_stragglers=args.stragglers, injection=inj,
                                        seed=b, timeout=60, workers=workers, engine=mode.split("/")[1])
                    latency, overhead = res.latency_s, res.overhead_s
                    if mode == "coded/tasks":
                        enc.append(res.encode_s)
                        dec.append(res.decode_s)
                if b >= args.warmup:
                    over[mode].append(overhead * 1e3)
                    lat[mode].append(latency * 1e3)

    print(f"# {machine}, {time.strftime('%Y-%m-%d')}, cluster start-up {startup:.1f} s")
    print(f"coded batch on a LocalCluster: N={N} workers x 1 thread, K={args.n_inputs}, S={args.stragglers}, "
          f"d={args.dim}, emulated compute {args.base_ms:g} ms/task, {args.batches} batches per mode "
          f"(rotating order), encode p50 {np.median(enc) * 1e3:.2f} ms, decode p50 {np.median(dec) * 1e3:.2f} ms")
    summary = {"n_workers": N, "batches": args.batches, "cluster_startup_s": startup}
    for mode in modes:
        o = np.array(over[mode])
        summary[mode] = {"overhead_p50_ms": float(np.median(o)), "overhead_p90_ms": float(np.percentile(o, 90)),
                         "latency_p50_ms": float(np.median(lat[mode]))}
        print(f"  {mode:<13} overhead p50 {np.median(o):6.1f} ms  p90 {np.percentile(o, 90):6.1f} ms  "
              f"mean {o.mean():6.1f} ms   latency p50 {np.median(lat[mode]):6.1f} ms")
    plain = summary["plain"]["overhead_p50_ms"]
    for mode in modes[:2]:
        p50 = summary[mode]["overhead_p50_ms"]
        print(f"RATIO {mode} overhead p50 / goal = {p50:.1f} / {GOAL_MS:g} ms = {p50 / GOAL_MS:.2f} (goal <= 1); "
              f"{mode} / plain = {p50 / plain:.2f} (goal <= {GOAL_RATIO:g})")
    return summary


if __name__ == "__main__":
    main()
