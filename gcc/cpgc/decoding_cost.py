"""The master's decoding work: RCSC peeling (plus rank test) against the dense MDS solve.

For each trial the worker speeds fix the arrival order; the master receives the actual result vectors
(block products of length ``b = ceil(d / n_blocks)``) one message at a time until the iteration is
complete, then decodes. We record the wall-clock time spent inside the master (receiving, peeling and
the final decode) and its operation count (multiply-adds on result vectors and coefficients).

Notes
-----
A degree-m RCSC result costs ``(m - 1) b`` subtractions to peel, so RCSC decoding is O(d L) and does not
grow with K. The (k_bar, K) MDS decoder solves a dense ``k_bar x k_bar`` system with ``b = d / k_bar``
right-hand sides: ``2 k_bar^3 / 3 + 2 k_bar d`` operations, growing linearly with K at fixed d, and it
cannot start before k_bar complete results have arrived.
"""
from __future__ import annotations

import time

import numpy as np

from ._checks import check_int, check_tolerance
from .codes import make_code
from .delay import worker_speeds
from .master import Master

__all__ = ["measure_decoding"]


def measure_decoding(scheme: str = "rcsc", n_workers: int = 40, dim: int = 1000, tolerance: float = 0.0,
                     trials: int = 5, seed: int = 0, mu: float = 10.0, alpha: float = 0.01,
                     degrees=(1, 2, 3)) -> list[dict]:
    """Measured decoding time and operation count of one iteration, per trial.

    Parameters
    ----------
    scheme : str
        Any scheme of :func:`gcc.cpgc.make_code` except ``"gc"`` (whose decoder output is a sum, not
        per-block values).
    n_workers : int
        K.
    dim : int
        d, the length of ``W theta``.
    tolerance, trials, seed, mu, alpha, degrees
        As in :func:`gcc.cpgc.simulate`.

    Returns
    -------
    list of dict
        Rows ``scheme, n_workers, dim, trial, decode_seconds, ops, ops_peel, ops_rank, messages,
        blocks_recovered, max_abs_error`` (error of the decoded blocks against the true products).
    """
    owner = "measure_decoding"
    K = check_int(n_workers, "n_workers", owner, minimum=1)
    d = check_int(dim, "dim", owner, minimum=1)
    q = check_tolerance(tolerance, owner)
    trials = check_int(trials, "trials", owner, minimum=1)
    rng = np.random.default_rng(seed)
    code = make_code(scheme, K, degrees, seed=rng, owner=owner)
    b = -(-d // code.n_blocks)
    rows = []
    for trial in range(trials):
        truth = rng.standard_normal((code.n_blocks, b))
        speeds = worker_speeds(rng, 1, K, mu, alpha, owner=owner)[0]
        times = speeds[:, None] * code.message_units()
        # Results are computed outside the timed region: only the master's work is measured.
        arrivals = []
        for flat in np.argsort(times, axis=None, kind="stable"):
            i, j = divmod(int(flat), code.n_messages)
            rows_j = code.message_rows(j)
            arrivals.append((i, j, code.coefficients[i, rows_j] @ truth))
        master = Master(code, q)
        start = time.perf_counter()
        for i, j, value in arrivals:
            if master.receive(i, j, value):
                break
        decoded = master.decode()
        elapsed = time.perf_counter() - start
        rec = master.recovered
        err = float(np.max(np.abs(decoded[rec] - truth[rec]))) if rec.any() else float("nan")
        rows.append({"scheme": code.name, "n_workers": K, "dim": d, "trial": trial, "decode_seconds": elapsed,
                     "ops": master.ops["peel"] + master.ops["rank"], "ops_peel": master.ops["peel"],
                     "ops_rank": master.ops["rank"], "messages": master.n_messages,
                     "blocks_recovered": int(rec.sum()), "max_abs_error": err})
    return rows
