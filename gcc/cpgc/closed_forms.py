"""Closed-form mean completion times of the threshold schemes (MDS-coded computation, GC).

With ``Y_i = alpha + X_i`` and ``X_i ~ Exp(mu)`` i.i.d., the k-th smallest of K exponentials has mean
``(H_K - H_{K-k}) / mu`` (Renyi's representation: the spacings are independent exponentials with
rates ``mu K, mu (K-1), ...``). A threshold scheme whose workers send one message after r task units
and that needs any k of them completes at ``r (alpha + X_(k:K))``.
"""
from __future__ import annotations

import numpy as np
from scipy.special import digamma

from ._checks import check_int, check_positive

__all__ = ["harmonic", "order_statistic_mean", "threshold_mean_time", "mds_mean_time", "gc_mean_time"]


def harmonic(n: int) -> float:
    """The n-th harmonic number ``H_n = sum_{i=1}^n 1/i`` (``H_0 = 0``), via the digamma function."""
    n = check_int(n, "n", "harmonic", minimum=0)
    return float(digamma(n + 1) + np.euler_gamma)


def order_statistic_mean(n_workers: int, k: int, mu: float = 10.0) -> float:
    """Mean of the k-th smallest of ``n_workers`` i.i.d. Exp(mu) variables: ``(H_K - H_{K-k}) / mu``."""
    K = check_int(n_workers, "n_workers", "order_statistic_mean", minimum=1)
    k = check_int(k, "k", "order_statistic_mean", minimum=1, maximum=K)
    mu = check_positive(mu, "mu", "order_statistic_mean")
    return (harmonic(K) - harmonic(K - k)) / mu


def threshold_mean_time(n_workers: int, k: int, units: float, mu: float = 10.0, alpha: float = 0.01) -> float:
    """``E[T] = units (alpha + (H_K - H_{K-k}) / mu)`` for a scheme needing any k one-message workers."""
    alpha = check_positive(alpha, "alpha", "threshold_mean_time", allow_zero=True)
    return float(units) * (alpha + order_statistic_mean(n_workers, k, mu))


def mds_mean_time(n_workers: int = 40, n_tasks: int = 3, k_bar: int | None = None, mu: float = 10.0,
                  alpha: float = 0.01) -> float:
    """MDS-coded computation: ``r (alpha + (H_K - H_{K - k_bar}) / mu)``, ``k_bar = ceil(K / r)`` by default.

    References
    ----------
    K. Lee et al., "Speeding up distributed machine learning using codes", IEEE Trans. IT 64(3), 2018.
    """
    K = check_int(n_workers, "n_workers", "mds_mean_time", minimum=1)
    r = check_int(n_tasks, "n_tasks", "mds_mean_time", minimum=1)
    kb = int(np.ceil(K / r)) if k_bar is None else k_bar
    return threshold_mean_time(K, kb, r, mu, alpha)


def gc_mean_time(n_workers: int = 40, load: int = 6, mu: float = 10.0, alpha: float = 0.01) -> float:
    """Gradient coding with load r: ``r (alpha + (H_K - H_{r-1}) / mu)`` (any K - r + 1 workers).

    References
    ----------
    R. Tandon et al., "Gradient coding: avoiding stragglers in distributed learning", ICML 2017.
    """
    K = check_int(n_workers, "n_workers", "gc_mean_time", minimum=1)
    r = check_int(load, "load", "gc_mean_time", minimum=1, maximum=K)
    return threshold_mean_time(K, K - r + 1, r, mu, alpha)
