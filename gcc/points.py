"""Point sets on [-1, 1] for the data points (alphas) and worker points (betas).

The paper's experiments use Chebyshev points of the first kind for the K data points and
of the second kind for the N worker points ("for fair comparison with BACC"); the noisy
theory (Theorem 2) needs a bounded gap ratio, which equispaced points satisfy.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

from .validation import BOOL, Interval, Options, validate_params

__all__ = ["chebyshev_points", "equispaced_points", "code_points", "POINT_SETS"]

#: the default point sets of a code (its ``points`` argument)
POINT_SETS = Options(("chebyshev", "equispaced"))


@validate_params({"n": Interval(Integral, 1, None), "kind": Options((1, 2))})
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

    Examples
    --------
    >>> import gcc
    >>> gcc.chebyshev_points(3)                 # cos(5 pi / 6), 0, cos(pi / 6)
    array([-0.8660254,  0.       ,  0.8660254])
    >>> gcc.chebyshev_points(3, kind=2)
    array([-1.,  0.,  1.])
    >>> gcc.chebyshev_points(0)
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'n' parameter of chebyshev_points must be an int >= 1. Got 0 instead.
    """
    k = np.arange(1, n + 1, dtype=np.float64)
    if kind == 1:
        return np.sin(np.pi * (2 * k - n - 1) / (2 * n))
    if n == 1:
        return np.zeros(1)
    return np.sin(np.pi * (2 * k - n - 1) / (2 * (n - 1)))


@validate_params({"n": Interval(Integral, 1, None),
                  "endpoints": BOOL})
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

    Examples
    --------
    >>> import gcc
    >>> gcc.equispaced_points(5)
    array([-1. , -0.5,  0. ,  0.5,  1. ])
    >>> gcc.equispaced_points(4, endpoints=False)
    array([-0.75, -0.25,  0.25,  0.75])
    """
    if endpoints:
        return np.zeros(1) if n == 1 else np.linspace(-1.0, 1.0, n)
    k = np.arange(1, n + 1, dtype=np.float64)
    return -1.0 + (2 * k - 1) / n


@validate_params({"n_inputs": Interval(Integral, 1, None), "n_workers": Interval(Integral, 1, None),
                  "points": POINT_SETS}, skip_nested=True)
def code_points(n_inputs: int, n_workers: int, points: str = "chebyshev"):
    """Default (alphas, betas) of a code for ``points`` in {"chebyshev", "equispaced"}.

    Parameters
    ----------
    n_inputs, n_workers : int
        K and N, both >= 1.
    points : {"chebyshev", "equispaced"}
        Chebyshev: first kind for the alphas, second kind for the betas (the paper's
        experiments). Equispaced: cell centres for the alphas, ``linspace(-1, 1, N)`` for the
        betas.

    Returns
    -------
    alphas : ndarray, shape (n_inputs,)
    betas : ndarray, shape (n_workers,)

    Examples
    --------
    >>> from gcc.points import code_points
    >>> alphas, betas = code_points(2, 3, "equispaced")
    >>> alphas, betas
    (array([-0.5,  0.5]), array([-1.,  0.,  1.]))
    >>> code_points(2, 3, "random")
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'points' parameter of code_points must be one of 'chebyshev', 'equispaced'. Got 'random' instead.
    """
    if points == "chebyshev":
        return chebyshev_points(n_inputs, 1), chebyshev_points(n_workers, 2)
    return equispaced_points(n_inputs, endpoints=False), equispaced_points(n_workers, True)
