"""The measurement both Dask overhead benchmarks share: coded batches beside plain submit + gather.

``bench_dask_overhead.py`` (a toy function) and ``bench_serving.py`` (a trained network) time the
same three modes, batch by batch in rotating order on one cluster, the same inputs and the same
per-task work:

* ``coded``: :func:`gcc.distributed.coded_compute` (encode, the N calls, the first N - S answers,
  decode, stop the rest);
* ``plain``: the same N coded inputs as N pinned tasks by ``client.submit`` + ``client.gather``
  (no decode, no cancel): Dask's own cost for the batch.

Overhead of a batch = its latency minus the busy time of the slowest worker whose output was
used: what the master and Dask add on top of the work.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

MODES = ("coded", "plain")


def plain_task(f, x, fault):
    """One plain Dask task: f on the coded input, then the fault's injected sleep; (f(x), busy seconds)."""
    t0 = time.perf_counter()
    y = f(x)
    time.sleep(max(fault.injected_s(time.perf_counter() - t0), 0.0))
    return y, time.perf_counter() - t0


def measure(client, code, make_batch: Callable[[int], np.ndarray], f, injection, *, n_stragglers: int,
            batches: int, warmup: int, workers: Sequence[str], modes: Sequence[str] = MODES) -> dict:
    """Overhead and latency (ms) of every mode, ``batches`` each after ``warmup`` unrecorded rounds.

    ``make_batch(b)`` gives the K inputs of round ``b`` (all modes of a round share them); the
    injection's plan of round ``b`` is drawn from seed ``b`` for every mode.

    Returns
    -------
    dict
        ``overhead`` and ``latency`` (mode -> list of ms), ``encode`` and ``decode`` (ms of the
        first coded mode).
    """
    from gcc.distributed import coded_compute

    n = code.n_workers
    out = {"overhead": {m: [] for m in modes}, "latency": {m: [] for m in modes}, "encode": [], "decode": []}
    first_coded = next(m for m in modes if m != "plain")
    for b in range(warmup + batches):
        X = make_batch(b)
        for j in range(len(modes)):
            mode = modes[(b + j) % len(modes)]
            if mode == "plain":
                coded = code.encode(X)
                faults = injection.plan(len(workers), np.random.default_rng(b))[:n]
                t0 = time.perf_counter()
                futs = [client.submit(plain_task, f, coded[i], faults[i], workers=[workers[i]],
                                      allow_other_workers=False, pure=False) for i in range(n)]
                outs = client.gather(futs)
                latency = time.perf_counter() - t0
                overhead = latency - max(busy for _, busy in outs)
            else:
                res = coded_compute(client, code, X, f, n_stragglers=n_stragglers, injection=injection, seed=b,
                                    timeout=60, workers=workers)
                latency, overhead = res.latency_s, res.overhead_s
                if mode == first_coded and b >= warmup:
                    out["encode"].append(res.encode_s * 1e3)
                    out["decode"].append(res.decode_s * 1e3)
            if b >= warmup:
                out["overhead"][mode].append(overhead * 1e3)
                out["latency"][mode].append(latency * 1e3)
    return out


def report(measured: dict, goal_ms: float, goal_ratio: float | None = None) -> dict:
    """Print one line per mode and the ratios to the goal and to plain; return the summary per mode."""
    summary = {}
    for mode, values in measured["overhead"].items():
        o = np.asarray(values)
        summary[mode] = {"overhead_p50_ms": float(np.median(o)), "overhead_p90_ms": float(np.percentile(o, 90)),
                         "overhead_mean_ms": float(o.mean()),
                         "latency_p50_ms": float(np.median(measured["latency"][mode]))}
        s = summary[mode]
        print(f"  {mode:<13} overhead p50 {s['overhead_p50_ms']:6.1f} ms  p90 {s['overhead_p90_ms']:6.1f} ms  "
              f"mean {s['overhead_mean_ms']:6.1f} ms   latency p50 {s['latency_p50_ms']:6.1f} ms")
    plain = summary["plain"]["overhead_p50_ms"]
    for mode in summary:
        if mode == "plain":
            continue
        p50 = summary[mode]["overhead_p50_ms"]
        goal = f" (goal <= {goal_ratio:g})" if goal_ratio is not None else ""
        print(f"RATIO {mode} overhead p50 / goal = {p50:.1f} / {goal_ms:g} ms = {p50 / goal_ms:.2f} (goal <= 1); "
              f"{mode} / plain submit + gather = {p50 / plain:.2f}{goal}")
    return summary
