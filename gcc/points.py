"""Point sets on [-1, 1] for the data points (alphas) and worker points (betas).

The paper's experiments use Chebyshev points of the first kind for the K data points and
of the second kind for the N worker points ("for fair comparison with BACC"); the noisy
theory (Theorem 2) needs a bounded gap ratio, which equispaced points satisfy.
"""
from __future__ import annotations

import numpy as np

from .validation import check_int, check_choice

__all__ = ["chebyshev_points", "equispaced_points"]


def chebyshev_points(n, kind=1) -> np.ndarray:
    """Chebyshev points on [-1, 1], in ascending order.

    Parameters
    ----------
    n : int
        Number of points, ``n >= 1``.
    kind : {1, 2}
        1: roots of T_n, ``cos((2k-1) pi / (2n))`` for k = 1..n (interior points);
        2: extrema of T_{n-1}, ``cos((k-1) pi / (n-1))`` for k = 1..n, which include -1 and 1.
        ``kind=2`` with ``n=1`` returns ``[0.]``.

    Returns
    -------
    ndarray, shape (n,)
        Strictly increasing points.

    Notes
    -----
    The points are computed as ``sin(pi * (2k - n - 1) / (2n))`` (kind 1) and
    ``sin(pi * (2k - n - 1) / (2(n-1)))`` (kind 2), which equal the cosine forms above after
    sorting, but are exactly antisymmetric, give an exact 0 at the centre and exact +-1 at
    the ends (kind 2). Exact coincidences between a kind-1 and a kind-2 point (e.g. K=2,
    N=5) therefore show up as exact equalities, which the interpolating codes handle.

    References
    ----------
    .. [1] Moradi, Tahmasebi, Maddah-Ali, "Coded Computing for Resilient Distributed
       Computing: A Learning-Theoretic Framework", NeurIPS 2024, arXiv:2406.00300, Sec. 5.
    """
    n = check_int(n, "n", "chebyshev_points", minimum=1)
    if isinstance(kind, bool) or kind not in (1, 2):
        from .validation import raise_invalid
        raise_invalid("kind", "chebyshev_points", "1 or 2", kind)
    k = np.arange(1, n + 1, dtype=np.float64)
    if kind == 1:
        return np.sin(np.pi * (2 * k - n - 1) / (2 * n))
    if n == 1:
        return np.zeros(1)
    return np.sin(np.pi * (2 * k - n - 1) / (2 * (n - 1)))


def equispaced_points(n, endpoints=True) -> np.ndarray:
    """Equispaced points on [-1, 1], in ascending order.

    Parameters
    ----------
    n : int
        Number of points, ``n >= 1``.
    endpoints : bool
        True: ``linspace(-1, 1, n)`` (includes -1 and 1; ``n=1`` gives ``[0.]``).
        False: interior midpoints ``-1 + (2k-1)/n``, k = 1..n (cell centres of n equal cells).

    Returns
    -------
    ndarray, shape (n,)
    """
    n = check_int(n, "n", "equispaced_points", minimum=1)
    if not isinstance(endpoints, (bool, np.bool_)):
        from .validation import raise_invalid
        raise_invalid("endpoints", "equispaced_points", "a bool", endpoints)
    if endpoints:
        return np.zeros(1) if n == 1 else np.linspace(-1.0, 1.0, n)
    k = np.arange(1, n + 1, dtype=np.float64)
    return -1.0 + (2 * k - 1) / n


def code_points(n_inputs: int, n_workers: int, points: str, owner: str):
    """Default (alphas, betas) of a code for ``points`` in {"chebyshev", "equispaced"}."""
    check_choice(points, "points", owner, ("chebyshev", "equispaced"))
    if points == "chebyshev":
        return chebyshev_points(n_inputs, 1), chebyshev_points(n_workers, 2)
    return equispaced_points(n_inputs, endpoints=False), equispaced_points(n_workers, True)
