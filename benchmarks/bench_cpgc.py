"""Monte Carlo throughput of gcc.cpgc.simulate (trials per second, one core) at K = 40 and K = 1000.

Usage: python benchmarks/bench_cpgc.py [--trials 2000] [--trials-large 200] [--repeat 3] [--quick]

Prints, per scheme and tolerance, the best wall-clock and process-CPU throughput over the repeats,
then the goal lines of issue 16: RCSC at K = 40 >= 20,000 trials/s and at K = 1000 >= 50 trials/s.
BLAS and OpenMP are pinned to one thread so the numbers are single-core; on a shared machine the
CPU-time figure is the fairer one (wall time includes waiting for the core).
"""
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

from gcc import cpgc  # noqa: E402
from gcc.machine import summary_line  # noqa: E402

GOALS = {40: 20000.0, 1000: 50.0}


def _throughput(scheme, K, q, trials, repeat, setting=None):
    wall, cpu = [], []
    for rep in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = cpgc.simulate(scheme, n_workers=K, tolerance=q, trials=trials, seed=rep, setting=setting)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return res, trials / min(wall), trials / max(min(cpu), 1e-9)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000, help="trials per run at K = 40")
    parser.add_argument("--trials-large", type=int, default=200, help="trials per run at K = 1000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="K = 40 RCSC only, fewer trials at K = 1000")
    args = parser.parse_args(argv)
    if args.quick:
        args.trials_large, args.repeat = 50, 2
    print(f"# {summary_line()}, python {platform.python_version()}, {time.strftime('%Y-%m-%d')}, "
          f"mu=10, alpha=0.01, best of {args.repeat}")
    print(f"{'scheme':<12}{'K':>6}{'q':>6}{'E[T]':>10}{'msgs':>10}{'trials/s wall':>16}{'trials/s cpu':>15}")
    best = {}
    runs = [("rcsc", None)] if args.quick else [
        ("rcsc", None), ("icassp-mds", None), ("uc-mmc", None), ("uc-smc", None), ("mds", None),
        ("rcsc", "communication"), ("gc", None)]
    for scheme, setting in runs:
        for q in (0.0, 0.15, 0.3):
            res, wall, cpu = _throughput(scheme, 40, q, args.trials, args.repeat, setting)
            label = scheme + ("/comm" if setting else "")
            print(f"{label:<12}{40:>6}{q:>6.2f}{res.mean_time:>10.4f}{res.mean_messages:>10.2f}"
                  f"{wall:>16.0f}{cpu:>15.0f}")
            if label == "rcsc":
                best[(40, q)] = (wall, cpu)
    for q in (0.0, 0.15, 0.3):
        res, wall, cpu = _throughput("rcsc", 1000, q, args.trials_large, args.repeat)
        print(f"{'rcsc':<12}{1000:>6}{q:>6.2f}{res.mean_time:>10.4f}{res.mean_messages:>10.2f}"
              f"{wall:>16.1f}{cpu:>15.1f}")
        best[(1000, q)] = (wall, cpu)
    for (K, q), (wall, cpu) in best.items():
        goal = GOALS[K]
        print(f"RATIO rcsc K={K} q={q:.2f}: {cpu:.0f} trials/s cpu ({wall:.0f} wall) / goal {goal:.0f} = "
              f"{cpu / goal:.2f} cpu ({wall / goal:.2f} wall); goal ratio >= 1")


if __name__ == "__main__":
    main()
