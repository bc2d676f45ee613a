"""Monte Carlo throughput of gcc.cpgc.simulate at K = 40 (trials per second, one core).

Usage: python benchmarks/bench_cpgc.py [--trials 2000] [--repeat 3]

Prints, per scheme and tolerance, the best wall-clock and process-CPU throughput over the repeats.
BLAS and OpenMP are pinned to one thread so the numbers are single-core. The goal for RCSC is
>= 2000 trials/s.
"""
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

from gcc import cpgc  # noqa: E402
from gcc.machine import summary_line  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"# {summary_line()}, python {platform.python_version()}, "
          f"K=40, mu=10, alpha=0.01, trials={args.trials}, best of {args.repeat}")
    print(f"{'scheme':<12}{'q':>6}{'E[T]':>10}{'msgs':>8}{'trials/s wall':>16}{'trials/s cpu':>15}")
    for scheme, setting in [("rcsc", None), ("icassp-mds", None), ("uc-mmc", None), ("uc-smc", None),
                            ("mds", None), ("rcsc", "communication"), ("gc", None)]:
        for q in (0.0, 0.15, 0.3):
            wall, cpu = [], []
            for rep in range(args.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                res = cpgc.simulate(scheme, n_workers=40, tolerance=q, trials=args.trials, seed=rep,
                                    setting=setting)
                wall.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            label = scheme + ("/comm" if setting else "")
            print(f"{label:<12}{q:>6.2f}{res.mean_time:>10.4f}{res.mean_messages:>8.2f}"
                  f"{args.trials / min(wall):>16.0f}{args.trials / max(min(cpu), 1e-9):>15.0f}")


if __name__ == "__main__":
    main()
