"""Time of the exact worst-case search over all contiguous straggler blocks.

Run from the repository root::

    python benchmarks/bench_worst_case.py           # N = 2048, K = 10, S = 5, f(x) = x sin x
    python benchmarks/bench_worst_case.py --quick   # fewer repeats

Prints, in one run:
  * the time of ``gcc.worst_case_stragglers(code, f, X, S, search="contiguous")`` at
    N = 2048 (all N - S + 1 = 2044 blocks; includes encoding, f on all workers and the
    three-block consistency check against ``code.decode``) for SplineCode with
    lam_dec = 0 (the theory's decoder; goal < 1 s), SplineCode with lam_dec > 0,
    BerrutCode, and a vector-valued f with 10 outputs;
  * the same search as a loop of one ``code.decode`` per block (timed on a subset of blocks
    and extrapolated linearly: every block costs the same) and the speed-up ratio;
  * the batched time against N.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gcc  # noqa: E402
from gcc.codes.base import block_received  # noqa: E402


def f_scalar(x):
    return x * np.sin(x)


def f_vector(x):
    x = np.asarray(x)
    return np.tanh(np.outer(x, np.linspace(0.5, 3.0, 10)))


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _loop_time(code, f, X, S, n_blocks):
    """Seconds per block of the reference loop (one code.decode per block)."""
    Y = f(code.encode(X))
    true = f(X)
    N = code.n_workers
    starts = np.linspace(0, N - S, n_blocks).astype(int)
    t0 = time.perf_counter()
    for s in starts:
        r = block_received(N, S, s)
        est = code.decode(Y[r], r)
        np.mean(np.sum((est - true).reshape(len(X), -1) ** 2, axis=1))
    per_block = (time.perf_counter() - t0) / n_blocks
    code.clear_cache()
    return per_block


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7
    K, N, S = 10, 2048, 5
    X = np.linspace(-3.0, 2.0, K)
    print(f"worst-case contiguous search, K = {K}, N = {N}, S = {S} "
          f"({N - S + 1} blocks); {platform.processor() or platform.machine()}, "
          f"numpy {np.__version__}, median of {repeats}")
    cases = [
        ("SplineCode lam_dec=0, f = x sin x", gcc.SplineCode(K, N), f_scalar),
        ("SplineCode lam_dec=0, f: R -> R^10", gcc.SplineCode(K, N), f_vector),
        ("SplineCode lam_dec=1e-6, f = x sin x", gcc.SplineCode(K, N, lam_dec=1e-6), f_scalar),
        ("BerrutCode, f = x sin x", gcc.BerrutCode(K, N), f_scalar),
    ]
    goal_time = None
    for label, code, f in cases:
        gcc.worst_case_stragglers(code, f, X, S)  # warm-up (operator caches, imports)
        t = _median_time(lambda: gcc.worst_case_stragglers(code, f, X, S), repeats)
        per_block = _loop_time(code, f, X, S, n_blocks=40 if args.quick else 100)
        loop = per_block * (N - S + 1)
        print(f"  {label:40s} batched {t * 1e3:8.1f} ms   loop (extrapolated) "
              f"{loop * 1e3:9.1f} ms   speed-up {loop / t:6.1f}x")
        if goal_time is None:
            goal_time = t
    verdict = "meets" if goal_time < 1.0 else "MISSES"
    print(f"goal: SplineCode (lam_dec = 0) at N = 2048 under 1 s: {goal_time:.3f} s, {verdict} "
          "the goal")
    print("batched time against N (SplineCode lam_dec = 0, S = 5, scalar f):")
    for n in (128, 256, 512, 1024, 2048, 4096):
        code = gcc.SplineCode(K, n)
        gcc.worst_case_stragglers(code, f_scalar, X, S)
        t = _median_time(lambda: gcc.worst_case_stragglers(code, f_scalar, X, S), repeats)
        print(f"  N = {n:5d}: {t * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
