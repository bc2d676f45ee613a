"""The completion-time tables of the chapter, with their independent references and verdicts.

Rows are tidy (one per scheme, setting and tolerance). Where an independent value exists it is put
beside the Monte Carlo estimate: the harmonic-number closed form for MDS and GC. The digest quotes no
numbers from the authors' tables, so for the other schemes the verdict says so instead of inventing
a comparison.
"""
from __future__ import annotations

import numpy as np

from ._checks import check_int
from .closed_forms import gc_mean_time, mds_mean_time
from .simulate import simulate

__all__ = ["COMPUTATION_SCHEMES", "COMMUNICATION_SCHEMES", "completion_time_table", "code_variability_table"]

#: Schemes of the coded-computation table (r = len(degrees) task units per worker).
COMPUTATION_SCHEMES = ("rcsc", "icassp-mds", "uc-mmc", "uc-smc", "mds")
#: Schemes of the coded-communication table (load sum(degrees) partial gradients per worker).
COMMUNICATION_SCHEMES = ("rcsc", "uc-mmc", "uc-smc", "gc")


def _reference(res, n_workers, mu, alpha):
    code = res.code
    if code.name == "mds":
        return mds_mean_time(n_workers, code.load, code.n_blocks, mu, alpha), "closed form r(a + (H_K - H_{K-k})/mu)"
    if code.name == "gc":
        return gc_mean_time(n_workers, code.load, mu, alpha), "closed form r(a + (H_K - H_{r-1})/mu)"
    return np.nan, "none in the digest"


def completion_time_table(tolerances=(0.0, 0.15, 0.3), trials: int = 2000, seed: int = 0, n_workers: int = 40,
                          mu: float = 10.0, alpha: float = 0.01, degrees=(1, 2, 3),
                          computation=COMPUTATION_SCHEMES, communication=COMMUNICATION_SCHEMES) -> list[dict]:
    """Mean completion time and messages per iteration for both settings and every tolerance.

    Returns
    -------
    list of dict
        :meth:`SimulationResult.summary` rows plus ``reference``, ``reference_source``,
        ``relative_gap`` and ``verdict`` (``"agrees"`` when the reference lies within the 95 %
        interval widened by 1 % of the reference, ``"differs"`` otherwise, ``"no reference"``).
    """
    check_int(trials, "trials", "completion_time_table", minimum=2)
    rows = []
    jobs = [(s, "computation") for s in computation] + [(s, "communication") for s in communication]
    for n, (scheme, setting) in enumerate(jobs):
        for m, q in enumerate(tolerances):
            res = simulate(scheme, n_workers=n_workers, tolerance=q, trials=trials, seed=seed + 1000 * n + m,
                           mu=mu, alpha=alpha, degrees=degrees, setting=setting, code_seed=seed)
            row = res.summary()
            ref, source = _reference(res, n_workers, mu, alpha)
            row.update(reference=ref, reference_source=source)
            if np.isnan(ref):
                row.update(relative_gap=np.nan, verdict="no reference")
            else:
                gap = row["mean_time"] - ref
                ok = abs(gap) <= row["time_ci_half"] + 0.01 * ref
                row.update(relative_gap=gap / ref, verdict="agrees" if ok else "differs")
            rows.append(row)
    return rows


def code_variability_table(n_codes: int = 10, tolerances=(0.0, 0.15, 0.3), trials: int = 2000, seed: int = 0,
                           n_workers: int = 40, mu: float = 10.0, alpha: float = 0.01,
                           degrees=(1, 2, 3)) -> list[dict]:
    """E[T] of RCSC for several independently drawn codes (ambiguity 3: one code per run or per trial).

    The same delays (``seed``) are used for every code, so the spread across codes is the effect of
    the code alone.
    """
    n_codes = check_int(n_codes, "n_codes", "code_variability_table", minimum=1)
    rows = []
    for c in range(n_codes):
        for q in tolerances:
            res = simulate("rcsc", n_workers=n_workers, tolerance=q, trials=trials, seed=seed, mu=mu,
                           alpha=alpha, degrees=degrees, code_seed=10_000 + c)
            rows.append({"code": c, "shifts": " ".join(map(str, res.code.params["shifts"])), "tolerance": q,
                         "mean_time": res.mean_time, "mean_messages": res.mean_messages, "trials": trials})
    return rows
