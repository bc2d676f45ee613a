"""Exact results for small K by enumerating every score vector.

A score vector ``n = (n_1, ..., n_K)`` gives the task units each worker has finished; worker i has
then delivered every row with ``row_units <= n_i``. Because workers are i.i.d., the probability that
the iteration is not complete at time t depends only on the *type* of n (how many workers are at each
score), so

    P(T > t) = sum over types  (#non-recoverable vectors of that type) * prod_s p_s(t)^(N_s),

with ``p_s(t)`` of :func:`gcc.cpgc.delay.prob_tasks_done`, and ``E[T] = int_0^inf P(T > t) dt``.
Recoverability is decided by :func:`gcc.cpgc.rref_recoverable` on all the rows delivered, not by the
incremental master.
"""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from ..validation import InstanceOf, invalid, validate_params
from .codes import CPGCCode
from .delay import ALPHA, MU, prob_tasks_done
from .master import TOLERANCE, required_blocks, rref_recoverable

#: the codes enumerated here
CODE = InstanceOf(CPGCCode, "a CPGCCode (gcc.cpgc.make_code(...))")
#: most score vectors :func:`type_counts` enumerates
MAX_VECTORS = 200_000

__all__ = ["type_counts", "exact_mean_time"]


def _is_complete(code, scores, tolerance: float) -> bool:
    """Whether a score vector (task units done per worker, shape (K,)) completes the iteration."""
    if code.any_k is not None:
        return int((scores >= code.row_units[-1]).sum()) >= code.any_k
    need = required_blocks(code.n_blocks, tolerance) if code.partial else code.n_blocks
    rows = [code.coefficients[i, j] for i in range(code.n_workers)
            for j in range(code.n_rows) if code.row_units[j] <= scores[i]]
    if len(rows) == 0:
        return need == 0
    return int(rref_recoverable(np.array(rows, dtype=float))[0].sum()) >= need


@validate_params({"code": CODE, "tolerance": TOLERANCE})
def type_counts(code, tolerance: float = 0.0) -> dict:
    """Count recoverable score vectors per type.

    Returns
    -------
    dict
        ``{(N_load, ..., N_1, N_0): (recoverable, total)}`` where ``N_s`` is the number of workers with
        exactly s task units done (the paper's (N2, N1, N0) order for load 2).

    Examples
    --------
    >>> from gcc.cpgc import mds_code
    >>> from gcc.cpgc.enumeration import type_counts
    >>> counts = type_counts(mds_code(4, n_tasks=2))          # (2, 4) MDS: any 2 finished workers
    >>> counts[(2, 1, 1)], counts[(1, 3, 0)]
    ((12, 12), (0, 4))
    """
    K, load = code.n_workers, int(code.load)
    if (load + 1) ** K > MAX_VECTORS:
        raise invalid("code", "type_counts", f"small enough to enumerate ((load+1)^K <= {MAX_VECTORS})",
                      f"K={K}, load={load}")
    rec, tot = Counter(), Counter()
    for scores in itertools.product(range(load + 1), repeat=K):
        c = Counter(scores)
        key = tuple(c.get(s, 0) for s in range(load, -1, -1))
        tot[key] += 1
        if _is_complete(code, scores, tolerance):
            rec[key] += 1
    return {key: (rec[key], tot[key]) for key in sorted(tot, reverse=True)}


@validate_params({"code": CODE, "tolerance": TOLERANCE, "mu": MU, "alpha": ALPHA})
def exact_mean_time(code, tolerance: float = 0.0, mu: float = 10.0, alpha: float = 0.01) -> float:
    """Exact ``E[T]`` by integrating ``P(T > t)`` over the enumerated types (small K only).

    Examples
    --------
    >>> from gcc.cpgc import closed_forms, mds_code
    >>> from gcc.cpgc.enumeration import exact_mean_time
    >>> exact = exact_mean_time(mds_code(4, n_tasks=2), mu=10.0, alpha=0.01)
    >>> round(exact, 6), round(closed_forms.mds_mean_time(4, 2, mu=10.0, alpha=0.01), 6)
    (0.136667, 0.136667)
    """
    from scipy import integrate  # only here: keeps ``import gcc`` light

    load = int(code.load)
    counts = type_counts(code, tolerance)
    terms = [(np.array(key[::-1]), total - good) for key, (good, total) in counts.items() if total > good]

    def survival(t):
        p = np.array([prob_tasks_done(s, t, mu, alpha, load) for s in range(load + 1)])
        return sum(bad * np.prod(p ** n_s) for n_s, bad in terms)

    kinks = [s * alpha for s in range(1, load + 2)]
    head = load * (alpha + 10.0 / mu)
    val, _ = integrate.quad(survival, 0.0, head, points=kinks, limit=400, epsabs=1e-12, epsrel=1e-10)
    tail, _ = integrate.quad(survival, head, np.inf, limit=200, epsabs=1e-12)
    return float(val + tail)
