"""Closed-form mean completion times of the threshold schemes (MDS-coded computation, GC).

With ``Y_i = alpha + X_i`` and ``X_i ~ Exp(mu)`` i.i.d., the k-th smallest of K exponentials has mean
``(H_K - H_{K-k}) / mu`` (Renyi's representation: the spacings are independent exponentials with
rates ``mu K, mu (K-1), ...``). A threshold scheme whose workers send one message after r task units
and that needs any k of them completes at ``r (alpha + X_(k:K))``.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import digamma

from ..validation import Interval, validate, validate_params
from .delay import ALPHA, MU

__all__ = ["harmonic", "threshold_mean_time", "mds_mean_time", "gc_mean_time"]


_COUNT = Interval(Integral, 1, None)
_UNITS = Interval(Real, 0, None, closed="neither")


@validate_params({"n": Interval(Integral, 0, None)})
def harmonic(n: int) -> float:
    """The n-th harmonic number ``H_n = sum_{i=1}^n 1/i`` (``H_0 = 0``), via the digamma function.

    Examples
    --------
    >>> from gcc.cpgc.closed_forms import harmonic
    >>> harmonic(0), round(harmonic(4), 12)                  # 1 + 1/2 + 1/3 + 1/4 = 25/12
    (0.0, 2.083333333333)
    """
    return float(digamma(n + 1) + np.euler_gamma)


@validate_params({"n_workers": _COUNT, "units": _UNITS, "mu": MU, "alpha": ALPHA})
def threshold_mean_time(n_workers: int, k: int, units: float, mu: float = 10.0, alpha: float = 0.01) -> float:
    """``E[T] = units (alpha + (H_K - H_{K-k}) / mu)`` for a scheme needing any k one-message workers.

    Examples
    --------
    >>> from gcc.cpgc.closed_forms import threshold_mean_time
    >>> round(threshold_mean_time(2, 2, units=3, mu=1.0, alpha=0.5), 12)    # 3 (0.5 + 1 + 1/2)
    6.0
    """
    k = validate(k, Interval(Integral, 1, n_workers), "k", "threshold_mean_time")
    return float(units) * (alpha + (harmonic(n_workers) - harmonic(n_workers - k)) / mu)


@validate_params({"n_workers": _COUNT, "n_tasks": _COUNT, "mu": MU, "alpha": ALPHA})
def mds_mean_time(n_workers: int = 40, n_tasks: int = 3, k_bar: int | None = None, mu: float = 10.0,
                  alpha: float = 0.01) -> float:
    """MDS-coded computation: ``r (alpha + (H_K - H_{K - k_bar}) / mu)``, ``k_bar = ceil(K / r)`` by default.

    References
    ----------
    K. Lee et al., "Speeding up distributed machine learning using codes", IEEE Trans. IT 64(3), 2018.

    Examples
    --------
    >>> from gcc.cpgc.closed_forms import mds_mean_time
    >>> round(mds_mean_time(40, 3, mu=10.0, alpha=0.01), 4)      # (14, 40): 3 (0.01 + (H_40 - H_26) / 10)
    0.1572
    """
    K, r = n_workers, n_tasks
    kb = int(np.ceil(K / r)) if k_bar is None else validate(k_bar, Interval(Integral, 1, K), "k_bar",
                                                             "mds_mean_time")
    return threshold_mean_time(K, kb, r, mu, alpha)


@validate_params({"n_workers": _COUNT, "mu": MU, "alpha": ALPHA})
def gc_mean_time(n_workers: int = 40, load: int = 6, mu: float = 10.0, alpha: float = 0.01) -> float:
    """Gradient coding with load r: ``r (alpha + (H_K - H_{r-1}) / mu)`` (any K - r + 1 workers).

    References
    ----------
    R. Tandon et al., "Gradient coding: avoiding stragglers in distributed learning", ICML 2017.

    Examples
    --------
    >>> from gcc.cpgc.closed_forms import gc_mean_time
    >>> round(gc_mean_time(40, 6, mu=10.0, alpha=0.01), 4)       # 6 (0.01 + (H_40 - H_5) / 10)
    1.2571
    """
    K = n_workers
    r = validate(load, Interval(Integral, 1, K), "load", "gc_mean_time")
    return threshold_mean_time(K, K - r + 1, r, mu, alpha)
