"""Coordination overhead of one coded batch on a local Dask cluster (issue 7).

Overhead = latency of the batch (encode -> submit -> gather -> decode) minus the
busy time of the slowest worker whose result was used: what Dask and the
master add on top of the work itself. Goal: median under 50 ms at N = 8.

Run:  .venv/bin/python benchmarks/bench_dask_overhead.py [--n-workers 8] [--batches 60]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


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
    from gcc.machine import describe

    rng = np.random.default_rng(args.seed)
    code = gcc.SplineCode(n_inputs=args.n_inputs, n_workers=args.n_workers)
    # No stragglers: the injected sleep is the "work"; nothing to interrupt, so no cancel event.
    inj = Injection(base_s=args.base_ms / 1e3, interruptible=False)
    t_start = time.perf_counter()
    with open_cluster(n_workers=args.n_workers, timeout=120) as client:
        startup = time.perf_counter() - t_start
        workers = worker_addresses(client)
        results = []
        for b in range(args.warmup + args.batches):
            X = rng.uniform(-1, 1, size=(args.n_inputs, args.dim))
            res = coded_compute(client, code, X, np.tanh, n_stragglers=args.stragglers, injection=inj,
                                seed=b, timeout=60, workers=workers)
            if b >= args.warmup:
                results.append(res)
        machine = describe(client=client)

    over = np.array([r.overhead_s for r in results]) * 1e3
    lat = np.array([r.latency_s for r in results]) * 1e3
    enc = np.array([r.encode_s for r in results]) * 1e3
    dec = np.array([r.decode_s for r in results]) * 1e3
    summary = {
        "n_workers": args.n_workers, "n_inputs": args.n_inputs, "stragglers": args.stragglers,
        "batches": args.batches, "base_ms": args.base_ms,
        "overhead_p50_ms": float(np.median(over)), "overhead_p90_ms": float(np.percentile(over, 90)),
        "overhead_mean_ms": float(over.mean()), "latency_p50_ms": float(np.median(lat)),
        "encode_p50_ms": float(np.median(enc)), "decode_p50_ms": float(np.median(dec)),
        "cluster_startup_s": startup,
    }
    print(f"machine: {machine}")
    print(f"coded batch on a LocalCluster: N={args.n_workers} workers x 1 thread, K={args.n_inputs}, "
          f"S={args.stragglers}, d={args.dim}, emulated compute {args.base_ms:g} ms/task, {args.batches} batches")
    print(f"  latency   p50 {summary['latency_p50_ms']:.1f} ms")
    print(f"  overhead  p50 {summary['overhead_p50_ms']:.1f} ms   p90 {summary['overhead_p90_ms']:.1f} ms   "
          f"mean {summary['overhead_mean_ms']:.1f} ms   (encode p50 {summary['encode_p50_ms']:.2f} ms, "
          f"decode p50 {summary['decode_p50_ms']:.2f} ms)")
    verdict = "PASS" if summary["overhead_p50_ms"] < 50 else "FAIL"
    print(f"  goal: median overhead < 50 ms ... {verdict}")
    return summary


if __name__ == "__main__":
    main()
