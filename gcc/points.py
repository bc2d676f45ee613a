"""Point sets on [-1, 1] for the data points (alphas) and worker points (betas)."""
from __future__ import annotations

from numbers import Integral

import numpy as np

from .validation import BOOL, Interval, Options, validate_params

__all__ = ["chebyshev_points", "equispaced_points", "code_points", "POINT_SETS"]

#: the default point sets of a code (its ``points`` argument)
POINT_SETS = Options(("chebyshev", "equispaced"))
# n of a point set: 10**7 points (80 MB) lie far beyond any code the book builds (N <= 4,096); a larger n
# is a mistake that numpy would report as a MemoryError naming no argument (10**12 points are 7 TiB)
_N = Interval(Integral, 1, 10**7)


@validate_params({"n": _N, "kind": Options((1, 2))})
def chebyshev_points(n, kind=1) -> np.ndarray:
    """Chebyshev points on [-1, 1], in ascending order.

    Parameters
    ----------
    n : int in [1, 10**7]
    kind : {1, 2}
        1: roots of T_n, ``cos((2k-1) pi / (2n))``; 2: extrema of T_{n-1}, ``cos((k-1) pi / (n-1))``
        (with -1 and 1; ``[0.]`` for ``n = 1``).

    Returns
    -------
    ndarray, shape (n,)
        Strictly increasing points.

    Notes
    -----
    Computed in the sine form ``sin(pi (2k - n - 1) / (2n))`` (kind 1; ``2(n-1)`` for kind 2): exactly
    antisymmetric, with an exact 0 and exact ends, so kind-1 and kind-2 points coincide exactly.

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
    gcc.validation.InvalidParameterError: The 'n' parameter of chebyshev_points must be an int in [1, 10000000]. Got 0 instead.
    """
    k = np.arange(1, n + 1, dtype=np.float64)
    if kind == 1:
        return np.sin(np.pi * (2 * k - n - 1) / (2 * n))
    if n == 1:
        return np.zeros(1)
    return np.sin(np.pi * (2 * k - n - 1) / (2 * (n - 1)))


@validate_params({"n": _N, "endpoints": BOOL})
def equispaced_points(n, endpoints=True) -> np.ndarray:
    """Equispaced points on [-1, 1], in ascending order.

    Parameters
    ----------
    n : int in [1, 10**7]
    endpoints : bool
        True: ``linspace(-1, 1, n)`` (``[0.]`` for ``n = 1``); False: the centres of n equal cells.

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


@validate_params({"n_inputs": _N, "n_workers": _N, "points": POINT_SETS}, skip_nested=True)
def code_points(n_inputs: int, n_workers: int, points: str = "chebyshev"):
    """Default (alphas, betas) of a code for ``points`` in {"chebyshev", "equispaced"}.

    Parameters
    ----------
    n_inputs, n_workers : int in [1, 10**7]
        K and N.
    points : {"chebyshev", "equispaced"}
        Chebyshev: first kind for the alphas, second for the betas (the paper's experiments);
        equispaced: cell centres for the alphas, ``linspace(-1, 1, N)`` for the betas.

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
