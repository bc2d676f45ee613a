"""Encode + decode cost of SplineCode against BerrutCode and a per-column scipy loop.

Run from the repository root::

    python benchmarks/bench_codes.py            # (K, N) = (60, 100), d = 150528, m = 1000
    python benchmarks/bench_codes.py --quick    # smaller d, fewer repeats (smoke test)

Prints, in one run:
  * encode + decode time (numpy, CPU) of SplineCode and BerrutCode, each trial with a fresh
    random received set (S stragglers) so the decoder build is included;
  * the same computation as a Python loop over columns calling
    scipy.interpolate.make_smoothing_spline (timed on a subset of columns and extrapolated
    linearly to all d + m columns: the loop cost is the same for every column);
  * the ratio lines;
  * the time to build the decoder for a new received set (median over many random sets,
    decoder cache cleared), for every code.
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
from scipy.interpolate import make_smoothing_spline  # noqa: E402


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-inputs", type=int, default=60)
    parser.add_argument("--n-workers", type=int, default=100)
    parser.add_argument("--n-stragglers", type=int, default=20)
    parser.add_argument("--input-dim", type=int, default=224 * 224 * 3)
    parser.add_argument("--output-dim", type=int, default=1000)
    parser.add_argument("--lam", type=float, default=1e-6, help="lam_enc = lam_dec (eq. 4 convention)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--loop-columns", type=int, default=300,
                        help="columns timed in the scipy loop (then extrapolated)")
    parser.add_argument("--build-sets", type=int, default=2000,
                        help="random received sets for the decoder-build median")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.input_dim, args.repeats, args.loop_columns, args.build_sets = 4096, 3, 50, 200

    K, N, S, d, m = args.n_inputs, args.n_workers, args.n_stragglers, args.input_dim, args.output_dim
    rng = np.random.default_rng(args.seed)
    dtype = np.dtype(args.dtype)
    X = rng.normal(size=(K, d)).astype(dtype)
    # Worker outputs: any (N, m) array; the decoders only see the received rows.
    Y_all = rng.normal(size=(N, m)).astype(dtype)

    def fresh_set():
        return np.sort(rng.choice(N, N - S, replace=False))

    print(f"gcc {gcc.__version__}, numpy {np.__version__}, python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} logical CPUs")
    print(f"(K, N, S) = ({K}, {N}, {S}); input dim d = {d}; outputs m = {m}; dtype {dtype}; "
          f"lam_enc = lam_dec = {args.lam:g}; median of {args.repeats} repeats")

    codes = {
        "SplineCode": gcc.SplineCode(K, N, lam_enc=args.lam, lam_dec=args.lam),
        "BerrutCode": gcc.BerrutCode(K, N),
    }
    results = {}
    for name, code in codes.items():
        code.encoder_matrix()   # the encoder is fixed for the code: built once, outside timing
        code.encode(X[:, :8])   # warm up the float32 copy of the operator if needed

        def trial(code=code):
            F = fresh_set()
            code.clear_cache(encoder=False)  # new received set: decoder build is in the cost
            coded = code.encode(X)
            est = code.decode(Y_all[F], F)
            return coded, est

        enc = _median_time(lambda code=code: code.encode(X), args.repeats)
        total = _median_time(trial, args.repeats)
        results[name] = total
        print(f"{name:>11}: encode {enc * 1e3:9.2f} ms | encode + decode (new received set) "
              f"{total * 1e3:9.2f} ms")

    # --- per-column scipy loop (make_smoothing_spline needs >= 5 points: fine here)
    alphas, betas = codes["SplineCode"].alphas, codes["SplineCode"].betas
    n_enc = min(args.loop_columns, d)
    n_dec = min(args.loop_columns, m)
    F = fresh_set()
    Xd, Yd = X.astype(np.float64), Y_all.astype(np.float64)

    def loop_encode():
        for j in range(n_enc):
            make_smoothing_spline(alphas, Xd[:, j], lam=K * args.lam)(betas)

    def loop_decode():
        for j in range(n_dec):
            make_smoothing_spline(betas[F], Yd[F, j], lam=len(F) * args.lam)(alphas)

    t_enc_col = _median_time(loop_encode, max(1, args.repeats // 2)) / n_enc
    t_dec_col = _median_time(loop_decode, max(1, args.repeats // 2)) / n_dec
    loop_total = t_enc_col * d + t_dec_col * m
    print(f"scipy loop : encode+decode {loop_total * 1e3:9.1f} ms  (extrapolated: "
          f"{t_enc_col * 1e6:.1f} us/column timed on {n_enc} of {d} input columns, "
          f"{t_dec_col * 1e6:.1f} us/column on {n_dec} of {m} output columns)")

    ratio = results["SplineCode"] / results["BerrutCode"]
    speedup = loop_total / results["SplineCode"]
    print(f"ratio SplineCode / BerrutCode (encode+decode): {ratio:6.3f}   (goal <= 1.2)")
    print(f"speed-up SplineCode vs scipy loop            : {speedup:8.0f}x (goal >= 100x)")

    # --- decoder build for a new received set
    print(f"decoder build for a new received set, (K, N) = ({K}, {N}), median over "
          f"{args.build_sets} random sets, cache cleared (includes validating `received`):")
    all_codes = {"SplineCode(lam=0)": gcc.SplineCode(K, N),
                 f"SplineCode(lam={args.lam:g})": codes["SplineCode"],
                 "BerrutCode": codes["BerrutCode"]}
    all_codes["LagrangeCode"] = gcc.LagrangeCode(K, N)
    all_codes["BSplineCode"] = gcc.BSplineCode(K, N)
    for s in sorted({0, S, N // 2}):
        sets = [np.sort(rng.choice(N, N - s, replace=False)) for _ in range(args.build_sets)]
        line = []
        for name, code in all_codes.items():
            times = np.empty(len(sets))
            for i, F in enumerate(sets):
                code.clear_cache(encoder=False)
                t0 = time.perf_counter()
                code.decoder_matrix(F)
                times[i] = time.perf_counter() - t0
            line.append(f"{name} {np.median(times) * 1e3:.3f} ms")
        print(f"  S = {s:3d} (|F| = {N - s:3d}): " + "; ".join(line))
    print("goal for SplineCode: <= 0.2 ms (lam = 0 uses a tridiagonal solve, lam > 0 a "
          "pentadiagonal banded Cholesky with K right-hand sides)")


if __name__ == "__main__":
    main()
