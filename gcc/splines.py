"""Natural cubic smoothing splines as linear operators (the GCC / LeTCC regression).

The fit minimises, in the paper's eq. (4) convention,

.. math:: \\frac{1}{n}\\sum_{i=1}^n (y_i - u(x_i))^2 + \\lambda \\int u''(t)^2\\,dt ,

whose minimiser over W^{2,2} is the natural cubic spline with knots at the x_i (linear beyond the
end knots). scipy's ``make_smoothing_spline(x, y, lam=n * lam)`` is the same fit for n >= 5 (with
cubic extrapolation); here any n >= 1 works. These are the checked entry points; the unchecked
kernels they share with the codes are in :mod:`gcc._reinsch`.
"""
from __future__ import annotations

from numbers import Real

import numpy as np

from ._reinsch import KNOT_GAP, green_silverman_alpha, reinsch_fit, reinsch_smoother, spline_eval, unit_scale
from .validation import (BOOL, LAM, AnyOf, ArrayLike, Interval, Options, Points, Rejected, as_array, check_finite,
                         invalid, validate)

__all__ = ["Knots", "KNOTS", "smoother_matrix", "smoothing_spline", "check_knots", "check_y", "check_x_eval"]


class Knots(Points):
    """Strictly increasing finite real points, consecutive ones at least ``gap`` (of their range) apart.

    Parameters
    ----------
    low, high, size, size_name, min_size
        As :class:`gcc.validation.Points`.
    gap : float
        Smallest spacing (closer knots leave 1/h^2 without the arithmetic's range).
    relative : bool
        Whether ``gap`` is relative to the points' range (False: the codes' points in [-1, 1]).

    Examples
    --------
    >>> from gcc.splines import Knots
    >>> from gcc.validation import validate
    >>> validate([0.0, 1e-300, 1.0], Knots(low=None, high=None), "x", "smoother_matrix")
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'x' parameter of smoother_matrix must be ... (x[1] = 1e-300 is near-coincident with x[0] = 0.0). ...
    """

    def __init__(self, low=-1.0, high=1.0, size=None, size_name=None, min_size=1, gap=KNOT_GAP,
                 relative=True, description=None):
        super().__init__(low, high, size, size_name, min_size, description)
        self.gap = validate(gap, Interval(Real, 0, None), "gap", "Knots")
        self.relative = validate(relative, BOOL, "relative", "Knots")

    def describe(self) -> str:
        scale = " (max - min)" if self.relative else ""
        return f"{super().describe()}, consecutive ones at least {self.gap:g}{scale} apart"

    def convert(self, value, name: str = "value"):
        arr = super().convert(value, name)
        if arr.shape[0] > 1:
            gap = self.gap * float(arr[-1] - arr[0]) if self.relative else self.gap
            bad = np.flatnonzero(np.diff(arr) < gap)
            if bad.size:
                i = int(bad[0])
                raise Rejected(f"{name}[{i + 1}] = {float(arr[i + 1])!r} is near-coincident with "
                               f"{name}[{i}] = {float(arr[i])!r}")
        return arr


#: the knots of the checked entry points: any scale, relative gap
KNOTS = Knots(low=None, high=None)


def check_knots(x, name: str, owner: str, min_size: int = 1) -> np.ndarray:
    """Knots as float64 (:class:`Knots`, any scale).

    Examples
    --------
    >>> from gcc.splines import check_knots
    >>> check_knots([0, 1, 3], "x", "f")
    array([0., 1., 3.])
    """
    return validate(x, KNOTS if min_size == 1 else Knots(low=None, high=None, min_size=min_size), name, owner)


def check_x_eval(x_eval, owner: str, name: str = "x_eval") -> np.ndarray:
    """Evaluation points: a finite real scalar or 1-D array, as float64.

    Examples
    --------
    >>> from gcc.splines import check_x_eval
    >>> check_x_eval(0.5, "f").shape, check_x_eval([0.1, 0.2], "f").shape
    ((), (2,))
    """
    constraint = "a real scalar or 1-D array of finite points"
    arr = validate(x_eval, ArrayLike(dtype=np.float64, finite=True, description=constraint), name, owner)
    if arr.ndim > 1:
        raise invalid(name, owner, constraint, x_eval, f"it has shape {arr.shape}")
    return arr


def check_y(y, n, owner):
    """Data ``y`` of shape (n, ...) as finite float64, or complex128 if complex.

    Examples
    --------
    >>> from gcc.splines import check_y
    >>> check_y([1, 2j], 2, "f").dtype, check_y([1, 2], 2, "f").dtype
    (dtype('complex128'), dtype('float64'))
    """
    try:
        raw = as_array(y, "y")
    except Rejected:
        raise invalid("y", owner, "a real or complex array", y) from None
    arr = validate(raw, ArrayLike(dtype=np.complex128 if raw.dtype.kind == "c" else np.float64,
                                  description="a real or complex array"), "y", owner)
    if arr.ndim == 0 or arr.shape[0] != n:
        raise invalid("y", owner, f"an array of shape (n, ...) with n = len(x) = {n}", y,
                      f"its shape is {arr.shape}")
    return check_finite(arr, "y", owner)


def as_real_columns(y2):
    """(n, m) data as (n, m) float64 or, complex, (n, 2m) float64 of interleaved parts (a view)."""
    return np.ascontiguousarray(y2).view(np.float64) if y2.dtype.kind == "c" else np.ascontiguousarray(y2)


def scaled_knots(x, lam, *evals):
    """Knots (and evaluation points) rescaled by the power of two of :func:`unit_scale`, and alpha."""
    e = unit_scale(x)
    alpha = green_silverman_alpha(x.shape[0], lam, e)
    if e == 0:
        return (x, alpha) + evals
    return (np.ldexp(x, -e), alpha) + tuple(np.ldexp(v, -e) for v in evals)


def smoother_matrix(x, lam, x_eval) -> np.ndarray:
    """Linear operator of the natural cubic smoothing spline: ``S @ y = smoothing_spline(x, y, lam, x_eval)``.

    Parameters
    ----------
    x : array_like, shape (n,)
        Strictly increasing finite real knots, n >= 1, at least 1e-12 of their range apart.
    lam : float
        Smoothing parameter ``>= 0`` of eq. (4) (scipy's ``lam`` is ``n * lam``); 0 interpolates,
        beyond ``n lam = 1e100`` the fit is the least-squares line.
    x_eval : float or array_like, shape (p,)
        Real evaluation points, anywhere on the real line (none: an empty (0, n) result).

    Returns
    -------
    S : ndarray, shape (p, n)
        ``S[j, i]`` is the weight of y_i at ``x_eval[j]`` (a scalar ``x_eval``: shape (1, n)).

    Notes
    -----
    Reinsch algorithm [1]_: with Q (n, n-2) and R (n-2, n-2) as in Green & Silverman, the
    fitted values are g = y - a Q gamma with (R + a Q^T Q) gamma = Q^T y and a = n * lam;
    gamma holds the second derivatives at the interior knots. One banded solve with p
    right-hand sides builds the matrix. n = 1 gives the constant, n = 2 the line.

    References
    ----------
    .. [1] P. J. Green, B. W. Silverman, "Nonparametric Regression and GLMs", Chapman & Hall, 1994, Sec. 2.3.
    .. [2] Moradi, Tahmasebi, Maddah-Ali, arXiv:2406.00300, eq. (4)-(5).

    Examples
    --------
    Interpolation (lam = 0) at the knots is the identity; every row sums to 1:

    >>> import numpy as np
    >>> import gcc
    >>> x = np.array([-1.0, -0.2, 0.5, 1.0])
    >>> np.allclose(gcc.smoother_matrix(x, 0.0, x), np.eye(4))
    True
    >>> S = gcc.smoother_matrix(x, 1e-2, np.linspace(-2, 2, 5))
    >>> S.shape, np.allclose(S.sum(axis=1), 1.0)
    ((5, 4), True)
    """
    owner = "smoother_matrix"
    x = check_knots(x, "x", owner)
    lam = validate(lam, LAM, "lam", owner)
    xe = check_x_eval(x_eval, owner)
    xs, alpha, es = scaled_knots(x, lam, xe.reshape(-1))
    return reinsch_smoother(xs, alpha, es)


def smoothing_spline(x, y, lam, x_eval) -> np.ndarray:
    """Fit a natural cubic smoothing spline to y along axis 0 and evaluate it.

    Parameters
    ----------
    x : array_like, shape (n,)
        Strictly increasing finite real knots, n >= 1, at least 1e-12 of their range apart.
    y : array_like, shape (n, ...)
        Finite real or complex data; every trailing column is smoothed with the same ``lam`` (no
        column: an empty result, as numpy's).
    lam : float or "gcv"
        Smoothing parameter ``>= 0`` as in :func:`smoother_matrix`, or ``"gcv"`` to choose it
        with :func:`gcc.gcv.gcv_lambda`.
    x_eval : float or array_like, shape (p,)
        Real evaluation points; linear extrapolation outside [min x, max x].

    Returns
    -------
    ndarray, shape (p, ...)
        Float64, or complex128 for complex y (a scalar ``x_eval``: shape y.shape[1:]).

    Notes
    -----
    One O(n m) Reinsch solve [1]_ (banded Cholesky with m = prod(y.shape[1:]) right-hand sides),
    then a vectorised evaluation at x_eval.

    References
    ----------
    .. [1] C. H. Reinsch, "Smoothing by spline functions", Numer. Math. 10, 1967.

    Examples
    --------
    Straight lines pass unchanged for every lam, and continue linearly outside the knots:

    >>> import numpy as np
    >>> import gcc
    >>> x = np.linspace(0.0, 1.0, 6)
    >>> np.round(gcc.smoothing_spline(x, 2 * x - 1, 0.1, [-1.0, 0.25, 2.0]), 12)
    array([-3. , -0.5,  3. ])
    >>> gcc.smoothing_spline(x, np.ones((6, 2, 3)), 0.0, 0.5).shape
    (2, 3)
    """
    owner = "smoothing_spline"
    x = check_knots(x, "x", owner)
    lam = validate(lam, AnyOf(LAM, Options(("gcv",))), "lam", owner)
    n = x.shape[0]
    y_arr = check_y(y, n, owner)
    xe = check_x_eval(x_eval, owner)
    if lam == "gcv":
        from .gcv import gcv_lambda  # gcc.gcv builds on this module

        lam, _ = gcv_lambda(x, y_arr)
    y2 = as_real_columns(y_arr.reshape(n, -1))
    xs, alpha, es = scaled_knots(x, lam, xe.reshape(-1))
    out = (np.repeat(y2[:1], es.shape[0], axis=0) if n == 1 else
           spline_eval(xs, *reinsch_fit(xs, y2, alpha), es))
    if y_arr.dtype.kind == "c":
        out = np.ascontiguousarray(out).view(np.complex128)
    return out.reshape(xe.shape + y_arr.shape[1:])
