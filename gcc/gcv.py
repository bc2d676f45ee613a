"""Choosing the smoothing parameter by generalised cross-validation (Craven & Wahba 1979).

``gcc.smoothing_spline(..., lam="gcv")`` uses :func:`gcv_lambda`.
"""
from __future__ import annotations

import numpy as np

from ._reinsch import reinsch_fit, reinsch_smoother, smoother_band
from .splines import as_real_columns, scaled_knots, check_knots, check_y
from .validation import ArrayLike, invalid, validate

__all__ = ["GCV_GRID", "gcv_lambda"]

#: up to this many knots the scores use the n x n smoother (the seeded numbers' arithmetic)
DENSE_MAX_POINTS = 2048

#: the default grid of :func:`gcv_lambda`, scale-free: ``lam / r**3`` for knots of range r (the same
#: smoothness in any units)
GCV_GRID = np.logspace(-10.0, 2.0, 61)
_GRID = ArrayLike(ndim=1, dtype=np.float64, finite=True,
                  description="a non-empty 1-D array of finite reals >= 0")


def gcv_lambda(x, y, grid=None):
    """Choose lam by generalised cross-validation (Craven & Wahba 1979).

    Parameters
    ----------
    x : array_like, shape (n,)
        Strictly increasing real knots (:class:`gcc.splines.Knots`), n >= 3.
    y : array_like, shape (n, ...)
        Finite real or complex data; all columns share one lam (scores summed over columns).
    grid : array_like, shape (g,), optional
        Candidate lam values (eq. (4) convention, >= 0). Default ``GCV_GRID * r**3``, r = max x - min x.

    Returns
    -------
    lam : float
        The grid value minimising the GCV score.
    scores : ndarray, shape (g,)
        ``V(lam) = n * RSS(lam) / (n - tr S_lam)^2``; ``inf`` where the denominator vanishes
        (lam = 0 interpolates) or, beyond 2048 knots, the Reinsch matrix is not positive definite.

    Notes
    -----
    Beyond 2048 knots the trace comes from the smoother's diagonal by selected inversion
    (:func:`gcc._reinsch.smoother_band`) in O(n) memory. See Wahba [1]_, Ch. 4.

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
    x = check_knots(x, "x", owner, min_size=3)
    n = x.shape[0]
    y_arr = check_y(y, n, owner)
    if grid is None:
        grid = GCV_GRID * float(x[-1] - x[0]) ** 3
    else:
        grid = validate(grid, _GRID, "grid", owner)
        if grid.size == 0 or (grid < 0).any():
            raise invalid("grid", owner, _GRID, grid, "it is empty" if grid.size == 0 else
                          f"grid[{int(np.flatnonzero(grid < 0)[0])}] is negative")
    y2 = as_real_columns(y_arr.reshape(n, -1))   # |r|^2 = re^2 + im^2: the parts as columns
    scores = np.empty(grid.shape[0])
    for j, lam in enumerate(grid):  # loop over candidate lams only, never over columns
        xs, alpha = scaled_knots(x, float(lam))
        if n <= DENSE_MAX_POINTS:
            S = reinsch_smoother(xs, alpha, xs)
            resid, trace = y2 - S @ y2, np.trace(S)
        elif alpha == 0.0:            # interpolation: S = I, the score is infinite
            resid, trace = np.zeros_like(y2), float(n)
        else:
            try:
                trace = smoother_band(xs, alpha, 1)[:, 0].sum()
            except np.linalg.LinAlgError:     # not positive definite to rounding: not scored
                scores[j] = np.inf
                continue
            resid = y2 - reinsch_fit(xs, np.ascontiguousarray(y2), alpha)[0]
        denom = (n - trace) ** 2
        rss = float(np.sum(resid * resid))
        scores[j] = n * rss / denom if denom > 1e-12 * n * n else np.inf
    if not np.isfinite(scores).any():
        raise invalid("grid", owner, "a grid with at least one lam whose GCV score is defined (a lam > 0 "
                      "that does not interpolate: n - tr S_lam > 0)", grid, "every score is infinite")
    return float(grid[int(np.argmin(scores))]), scores
