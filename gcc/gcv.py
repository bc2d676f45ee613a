"""Choosing the smoothing parameter by generalised cross-validation (Craven & Wahba 1979).

:func:`gcv_lambda` scores a scale-free grid of lam values (:func:`gcv_grid`) with the smoother
matrices of :func:`gcc.splines.reinsch_smoother`; ``gcc.smoothing_spline(..., lam="gcv")`` uses it.
"""
from __future__ import annotations

import numpy as np

from .splines import check_y, reinsch_smoother
from .validation import check_int, check_points, raise_invalid

__all__ = ["gcv_grid", "gcv_lambda"]


def gcv_grid(x, num=61, low=1e-10, high=1e2) -> np.ndarray:
    """Default scale-free log-spaced lam grid of :func:`gcv_lambda`.

    Parameters
    ----------
    x : array_like, shape (n,)
        Knots; only their range r = max x - min x is used.
    num : int
        Number of grid points.
    low, high : float
        Range of the scale-free parameter ``lam / r**3``.

    Returns
    -------
    ndarray, shape (num,)
        ``logspace(log10(low), log10(high), num) * r**3``: rescaling x by c multiplies
        ``int u''^2`` by c^-3, so the same relative smoothness is selected in any units.

    Examples
    --------
    >>> from gcc.gcv import gcv_grid
    >>> gcv_grid([0.0, 2.0], num=3)
    array([8.e-10, 8.e-04, 8.e+02])
    """
    owner = "gcv_grid"
    x = check_points(x, "x", owner, low=None, high=None)
    num = check_int(num, "num", owner, minimum=1)
    r = float(x[-1] - x[0]) if x.shape[0] > 1 else 1.0
    return np.logspace(np.log10(low), np.log10(high), num) * r ** 3


def gcv_lambda(x, y, grid=None):
    """Choose lam by generalised cross-validation (Craven & Wahba 1979).

    Parameters
    ----------
    x : array_like, shape (n,)
        Strictly increasing knots, n >= 3.
    y : array_like, shape (n, ...)
        Data; all columns share one lam (scores are summed over columns).
    grid : array_like, shape (g,), optional
        Candidate lam values (eq. (4) convention, all >= 0). Default :func:`gcv_grid`.

    Returns
    -------
    lam : float
        The grid value minimising the GCV score.
    scores : ndarray, shape (g,)
        ``V(lam) = n * RSS(lam) / (n - tr S_lam)^2``, RSS summed over columns; ``inf``
        where the denominator vanishes (e.g. lam = 0, which interpolates).

    Notes
    -----
    Each score builds the n x n smoother matrix (O(n^2) per grid point): fine for the
    point counts of coded computing. See Wahba [1]_, Ch. 4.

    References
    ----------
    .. [1] G. Wahba, "Spline Models for Observational Data", SIAM, 1990.

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> rng = np.random.default_rng(0)
    >>> x = np.linspace(-1, 1, 40)
    >>> lam, scores = gcc.gcv_lambda(x, np.sin(3 * x) + 0.1 * rng.normal(size=40))
    >>> scores.shape, bool(0 < lam < 1)
    ((61,), True)
    """
    owner = "gcv_lambda"
    x = check_points(x, "x", owner, low=None, high=None)
    n = x.shape[0]
    if n < 3:
        raise_invalid("x", owner, "a 1-D array of at least 3 strictly increasing points", x,
                      f"it has length {n}")
    y_arr = check_y(y, n, owner)
    if grid is None:
        grid = gcv_grid(x)
    else:
        grid = np.asarray(grid, dtype=np.float64).reshape(-1)
        if grid.size == 0 or not np.isfinite(grid).all() or (grid < 0).any():
            raise_invalid("grid", owner, "a non-empty 1-D array of finite values >= 0", grid)
    y2 = y_arr.reshape(n, -1)
    scores = np.empty(grid.shape[0])
    for j, lam in enumerate(grid):  # loop over candidate lams only, never over columns
        S = reinsch_smoother(x, n * lam, x)
        resid = y2 - S @ y2
        denom = (n - np.trace(S)) ** 2
        rss = float(np.sum(resid * resid))
        scores[j] = n * rss / denom if denom > 1e-12 * n * n else np.inf
    best = int(np.argmin(np.where(np.isfinite(scores), scores, np.inf)))
    return float(grid[best]), scores
