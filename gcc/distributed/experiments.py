"""The experiments of the "Distributed execution" chapter, as library calls.

The notebook ``notebooks/dask_latency.ipynb`` only opens a cluster, calls
:func:`latency_experiment` and :func:`cpgc_experiment`, saves the tables and
plots them.
"""
from __future__ import annotations

import functools

import numpy as np

from gcc.distributed.baselines import Replication, Uncoded
from gcc.distributed.coded import ModelRef, demo_mlp
from gcc.distributed.inject import Injection
from gcc.distributed.latency import run_requests

__all__ = ["standard_schemes", "make_function", "straggler_injection", "latency_experiment", "cpgc_experiment"]


def standard_schemes(n_inputs: int, n_workers: int, stragglers: int) -> dict:
    """The four schemes compared at the same worker count.

    Returns
    -------
    dict
        ``uncoded`` (K workers, waits for all K), ``replication`` (N workers, first
        copy of each input), ``gcc`` (``gcc.SplineCode``, fastest ``N - S``) and
        ``bacc`` (``gcc.BerrutCode``, fastest ``N - S``), as keyword arguments of
        :func:`~gcc.distributed.coded_compute`.
    """
    import gcc

    return {
        "uncoded": {"code": Uncoded(n_inputs)},
        "replication": {"code": Replication(n_inputs, n_workers)},
        "gcc": {"code": gcc.SplineCode(n_inputs=n_inputs, n_workers=n_workers), "n_stragglers": stragglers},
        "bacc": {"code": gcc.BerrutCode(n_inputs=n_inputs, n_workers=n_workers), "n_stragglers": stragglers},
    }


def make_function(name: str, dim: int, seed: int = 0):
    """The function the workers compute.

    Parameters
    ----------
    name : {"tanh", "mlp"}
        ``"tanh"``: elementwise ``numpy.tanh`` (no dependencies). ``"mlp"``: a
        fixed-weight torch MLP ``dim -> 32 -> 10`` with softmax output, loaded once
        per worker through a :class:`~gcc.distributed.ModelRef`.
    dim : int
        Input dimension.
    seed : int
        Seed of the MLP's weights.
    """
    if name == "tanh":
        return np.tanh
    if name == "mlp":
        return ModelRef(f"demo-mlp-{dim}-{seed}", functools.partial(demo_mlp, dim, 32, 10, seed), torch_io=True)
    raise ValueError(f"The 'name' parameter of make_function must be 'tanh' or 'mlp'. Got {name!r} instead.")


def straggler_injection(base_ms: float, slowdown: float, n_slow: int, jitter_ms: float) -> Injection:
    """``n_slow`` workers drawn per request slowed ``slowdown`` times, plus exponential jitter.

    Every task takes ``base_ms`` of emulated compute plus an ``Exp`` delay of mean
    ``jitter_ms`` (:class:`gcc.stragglers.ShiftedExponential` with shift 0); the
    slow ones take ``slowdown`` times the compute.
    """
    from gcc.stragglers import ShiftedExponential

    return Injection(base_s=base_ms / 1e3, n_random_slow=int(n_slow), slowdown=float(slowdown),
                     delay=ShiftedExponential(shift=0.0, rate=1.0) if jitter_ms > 0 else None,
                     delay_scale=jitter_ms / 1e3)


def latency_experiment(client, *, n_inputs: int, n_workers: int, dim: int, stragglers: int, n_requests: int,
                       injection: Injection, function: str = "tanh", seed: int = 0, timeout: float = 60.0):
    """Latency and loss per request of uncoded, replication, GCC and BACC on one cluster.

    Each request draws K fresh inputs ``x_k ~ U[-1, 1]^dim``; the loss is eq. (1)
    against ``f`` computed at the master.

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, request); see :func:`~gcc.distributed.latency.run_requests`.
    """
    f = make_function(function, dim, seed)
    schemes = standard_schemes(n_inputs, n_workers, stragglers)

    def batch(rng):
        X = rng.uniform(-1.0, 1.0, size=(n_inputs, dim))
        return X.astype(np.float32) if function == "mlp" else X

    return run_requests(client, schemes, batch, f, n_requests=n_requests, injection=injection, seed=seed,
                        timeout=timeout)


def cpgc_experiment(client, *, n_workers: int, tolerances=(0.0, 0.3), iterations: int = 10, dim: int = 80,
                    n_train: int = 400, n_test: int = 100, mu: float = 10.0, alpha: float = 0.01,
                    time_scale: float = 1.0, scheme: str = "rcsc", seed: int = 0):
    """Distributed CPGC runs, one per tolerance: measured and simulated time per iteration.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme``, ``n_workers``, ``tolerance``, ``iteration``, ``time_s``,
        ``simulated_s``, ``messages``, ``dropped``, ``recovered``, ``test_error``.
    """
    import pandas as pd

    import gcc.cpgc as cpgc
    from gcc.cpgc.regression import synthetic_regression
    from gcc.distributed.cpgc import run_cpgc

    problem = synthetic_regression(n_train=n_train, n_test=n_test, dim=dim, seed=seed)
    code = cpgc.make_code(scheme, n_workers=n_workers, seed=seed)
    frames = []
    for q in tolerances:
        run = run_cpgc(client, problem, code, tolerance=float(q), iterations=iterations, mu=mu, alpha=alpha,
                       time_scale=time_scale, seed=seed + 1)
        table = run.table()
        table.insert(0, "tolerance", float(q))
        table.insert(0, "n_workers", n_workers)
        table.insert(0, "scheme", scheme)
        table["test_error"] = run.test_error[1:]
        frames.append(table)
    return pd.DataFrame(pd.concat(frames, ignore_index=True))
