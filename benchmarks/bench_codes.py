"""Encode + decode cost of SplineCode against BerrutCode and a per-column scipy loop.

Run from the repository root::

    python benchmarks/bench_codes.py            # (K, N) = (60, 100), d = 150528, m = 1000
    python benchmarks/bench_codes.py --quick    # smaller d, fewer repeats (smoke test)
    python benchmarks/bench_codes.py --decode-only    # just the new-set decode ratios

Prints, in one run:
  * the decode of new received sets at (N, K, m) = (100, 60, 10), warm and right after
    cache-thrashing work (cold caches), GCC (SplineCode, lam_dec = 0, 1e-4 and --lam)
    against BACC (BerrutCode), interleaved set by set, with the ratio lines and their goal;
    then the same on float32 CPU tensors (warm);
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
from gcc.machine import summary_line  # noqa: E402
from scipy.interpolate import make_smoothing_spline  # noqa: E402


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _thrash(buf):
    """Cache-thrashing work between two timed decodes: one pass over a 64 MiB buffer."""
    buf += 1.0


def decode_new_sets(args, rng):
    """Time the decode of new received sets, GCC against BACC, warm and with cold caches."""
    N, K, m, S = args.decode_workers, args.decode_inputs, args.decode_outputs, args.decode_stragglers
    lams = sorted({0.0, 1e-4, args.lam})     # 1e-4: the DNN experiments' lam (coding_cost)
    codes = {f"gcc(lam={lam:g})": gcc.SplineCode(K, N, lam_enc=lam, lam_dec=lam) for lam in lams}
    codes["bacc"] = gcc.BerrutCode(K, N)
    Y = rng.normal(size=(N, m))
    sets = [np.sort(rng.choice(N, N - S, replace=False)) for _ in range(args.decode_sets)]
    print(f"decode of a new received set, (N, K, m) = ({N}, {K}, {m}), S = {S} random stragglers, "
          f"float64 numpy; {args.decode_sets} sets per round, every code decodes every set once, "
          f"interleaved (rotating order); 'cold': a 64 MiB pass before each decode")
    for name, code in codes.items():   # one-time state per code and |F| (the encoder's kind of cost)
        t0 = time.perf_counter()
        code.decode(Y[sets[0]], sets[0])
        print(f"  first decode of {name} (builds what every set of this size shares): "
              f"{(time.perf_counter() - t0) * 1e3:.2f} ms")
    buf = np.zeros(8 * 2 ** 20)
    names = list(codes)
    gccs = names[:-1]
    ratios = {(mode, n): [] for mode in ("warm", "cold") for n in gccs}
    for rnd in range(args.decode_rounds):
        for mode in ("warm", "cold"):
            times = {n: [] for n in names}
            for i, F in enumerate(sets):
                y = Y[F]
                for j in range(len(names)):
                    name = names[(i + j) % len(names)]
                    code = codes[name]
                    code.clear_cache(encoder=False)   # a new set, even in the second round
                    if mode == "cold":
                        _thrash(buf)
                    t0 = time.perf_counter()
                    code.decode(y, F)
                    times[name].append(time.perf_counter() - t0)
            med = {n: float(np.median(t)) for n, t in times.items()}
            line = "; ".join(f"{n} {med[n] * 1e3:.4f} ms" for n in names)
            rr = []
            for n in gccs:
                ratios[(mode, n)].append(med[n] / med["bacc"])
                rr.append(f"{n}/bacc {med[n] / med['bacc']:.3f}")
            print(f"  round {rnd + 1} {mode}: {line}  ->  " + ", ".join(rr))
    for (mode, n), vals in ratios.items():
        print(f"RATIO decode new set {n}/bacc ({mode}) = {np.median(vals):.3f} "
              f"(rounds: {', '.join(f'{v:.3f}' for v in vals)}; goal <= 1.0)")
    decode_torch_cpu(codes, Y, sets)
    # A recurring set: third decode against BACC's cached operator.
    F = sets[0]
    for name in names:
        code = codes[name]
        code.clear_cache(encoder=False)
        for _ in range(2):
            code.decode(Y[F], F)
        t = _median_time(lambda code=code: code.decode(Y[F], F), 200)
        print(f"  recurring set (third decode on): {name} {t * 1e3:.4f} ms")


def decode_torch_cpu(codes, Y, sets):
    """The same new-set decodes on float32 CPU tensors (the DNN experiments' outputs), warm."""
    try:
        import torch
    except ImportError:
        print("  torch not installed: no tensor decode timed")
        return
    torch.set_num_threads(1)
    Yt = torch.from_numpy(Y.astype(np.float32))
    times = {n: [] for n in codes}
    for i, F in enumerate(sets):
        y = Yt[torch.as_tensor(F)]
        for j in range(len(codes)):
            name = list(codes)[(i + j) % len(codes)]
            codes[name].clear_cache(encoder=False)
            t0 = time.perf_counter()
            codes[name].decode(y, F, check_finite=False)
            times[name].append(time.perf_counter() - t0)
    med = {n: float(np.median(t)) for n, t in times.items()}
    print("  float32 CPU tensors: " + "; ".join(f"{n} {v * 1e3:.4f} ms" for n, v in med.items()))
    for n in list(codes)[:-1]:
        print(f"RATIO decode new set, float32 CPU tensor, {n}/bacc = {med[n] / med['bacc']:.3f} (goal <= 1.0)")


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
    parser.add_argument("--decode-only", action="store_true", help="only the new-set decode ratios")
    parser.add_argument("--decode-workers", type=int, default=100)
    parser.add_argument("--decode-inputs", type=int, default=60)
    parser.add_argument("--decode-outputs", type=int, default=10)
    parser.add_argument("--decode-stragglers", type=int, default=20)
    parser.add_argument("--decode-sets", type=int, default=1000)
    parser.add_argument("--decode-rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.quick:
        args.input_dim, args.repeats, args.loop_columns, args.build_sets = 4096, 3, 50, 200
        args.decode_sets, args.decode_rounds = 200, 2

    K, N, S, d, m = args.n_inputs, args.n_workers, args.n_stragglers, args.input_dim, args.output_dim
    rng = np.random.default_rng(args.seed)
    dtype = np.dtype(args.dtype)
    X = rng.normal(size=(K, d)).astype(dtype)
    # Worker outputs: any (N, m) array; the decoders only see the received rows.
    Y_all = rng.normal(size=(N, m)).astype(dtype)

    def fresh_set():
        return np.sort(rng.choice(N, N - S, replace=False))

    print(f"# {summary_line()}, python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}")
    decode_new_sets(args, np.random.default_rng(args.seed))
    if args.decode_only:
        return
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
