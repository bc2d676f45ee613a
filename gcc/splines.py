"""Natural cubic smoothing splines as linear operators (the GCC / LeTCC regression).

The fit minimises, in the paper's eq. (4) convention,

.. math:: \\frac{1}{n}\\sum_{i=1}^n (y_i - u(x_i))^2 + \\lambda \\int u''(t)^2\\,dt ,

whose minimiser over W^{2,2} is the natural cubic spline with knots at the x_i. It is
computed with the Reinsch algorithm in O(n) (one banded Cholesky solve shared by every
output column). ``lam = 0`` gives natural cubic spline interpolation. Outside
[min x, max x] the spline continues linearly (it is *natural*), unlike scipy's ``BSpline``
which extends its end cubic pieces.

The scipy equivalent is ``scipy.interpolate.make_smoothing_spline(x, y, lam=n * lam)``
(which needs n >= 5 and extrapolates cubically); this module works for any n >= 1.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dpbsv, dptsv

from .validation import check_finite, check_lam, check_points, raise_invalid, check_int

__all__ = ["smoother_matrix", "smoothing_spline", "gcv_lambda", "gcv_grid"]


# --------------------------------------------------------------------------------------
# Reinsch algorithm (Green & Silverman 1994, Sec. 2.3)
# --------------------------------------------------------------------------------------
def _qt_apply(h, y):
    """Q^T y for y of shape (n, m): second divided differences, shape (n-2, m)."""
    inv = 1.0 / h
    return (inv[:-1, None] * y[:-2] - (inv[:-1] + inv[1:])[:, None] * y[1:-1]
            + inv[1:, None] * y[2:])


def _q_apply(h, gamma):
    """Q gamma for gamma of shape (n-2, m): shape (n, m)."""
    inv = 1.0 / h
    n = h.shape[0] + 1
    out = np.zeros((n, gamma.shape[1]))
    out[:-2] += inv[:-1, None] * gamma
    out[1:-1] -= (inv[:-1] + inv[1:])[:, None] * gamma
    out[2:] += inv[1:, None] * gamma
    return out


def _solve_reinsch(h, alpha, rhs):
    """Solve (R + alpha Q^T Q) gamma = rhs, rhs of shape (n-2, m); banded Cholesky.

    R is tridiagonal (h_{i-1}+h_i)/3 on the diagonal and h_i/6 off it; Q^T Q is
    pentadiagonal. alpha = 0 uses the tridiagonal solver (natural spline interpolation).
    """
    m = h.shape[0] - 1  # number of interior knots, n - 2
    diag = (h[:-1] + h[1:]) / 3.0
    off = h[1:-1] / 6.0
    if m == 1:  # one interior knot: a scalar equation (LAPACK rejects the empty band)
        inv = 1.0 / h
        q = np.array([inv[0], -(inv[0] + inv[1]), inv[1]])
        return rhs / (diag[0] + alpha * float(q @ q))
    if alpha == 0.0:
        _, _, gamma, info = dptsv(diag, off, rhs, overwrite_b=1)
    else:
        inv = 1.0 / h
        a = inv[:-1]                   # Q[j, j]
        b = -(inv[:-1] + inv[1:])      # Q[j+1, j]
        c = inv[1:]                    # Q[j+2, j]
        ab = np.zeros((3, m))
        ab[2] = diag + alpha * (a * a + b * b + c * c)
        ab[1, 1:] = off + alpha * (b[:-1] * a[1:] + c[:-1] * b[1:])
        ab[0, 2:] = alpha * (c[:-2] * a[2:])
        _, gamma, info = dpbsv(ab, rhs, lower=0, overwrite_b=1)
    if info != 0:  # pragma: no cover - the matrix is SPD for distinct x
        raise np.linalg.LinAlgError(f"banded Cholesky solve failed (info={info})")
    return gamma


def _eval_coefficients(x, h, x_eval):
    """Interval index and the 4 weights of (g_i, g_{i+1}, M_i, M_{i+1}) at each x_eval.

    Inside [x_0, x_{n-1}] the natural cubic spline with values g and second derivatives M
    is ``A g_i + B g_{i+1} + ((A^3-A) M_i + (B^3-B) M_{i+1}) h_i^2/6``,
    A = (x_{i+1}-t)/h_i, B = 1-A. Outside, it is the tangent line at the end knot, whose
    slope is (g_1-g_0)/h_0 - h_0 M_1/6 on the left and
    (g_{n-1}-g_{n-2})/h + h M_{n-2}/6 on the right; both are written with the same four
    neighbours so that one gather evaluates every point.
    """
    n = x.shape[0]
    idx = np.clip(np.searchsorted(x, x_eval, side="right") - 1, 0, n - 2)
    hi = h[idx]
    A = (x[idx + 1] - x_eval) / hi
    B = 1.0 - A
    cg0, cg1 = A, B
    cm0 = (A * A * A - A) * hi * hi / 6.0
    cm1 = (B * B * B - B) * hi * hi / 6.0
    left = x_eval < x[0]
    if left.any():
        t = x_eval[left] - x[0]
        h0 = h[0]
        cg0[left] = 1.0 - t / h0
        cg1[left] = t / h0
        cm0[left] = 0.0
        cm1[left] = -t * h0 / 6.0
    right = x_eval > x[-1]
    if right.any():
        t = x_eval[right] - x[-1]
        hn = h[-1]
        cg0[right] = -t / hn
        cg1[right] = 1.0 + t / hn
        cm0[right] = t * hn / 6.0
        cm1[right] = 0.0
    return idx, cg0, cg1, cm0, cm1


def _fit_eval(x, alpha, y, x_eval):
    """Fit the natural smoothing spline to y (n, m) and evaluate at x_eval: (p, m).

    ``alpha`` is the Green-Silverman smoothing parameter (penalty of sum-of-squares form).
    No validation: callers pass float64, strictly increasing x and finite y.
    """
    n = x.shape[0]
    p = x_eval.shape[0]
    if n == 1:
        return np.broadcast_to(y[0], (p, y.shape[1])).copy()
    h = np.diff(x)
    if n == 2:
        g, M = y, None
    else:
        gamma = _solve_reinsch(h, alpha, _qt_apply(h, y))
        g = y - alpha * _q_apply(h, gamma) if alpha != 0.0 else y
        M = np.zeros((n, y.shape[1]))
        M[1:-1] = gamma
    idx, cg0, cg1, cm0, cm1 = _eval_coefficients(x, h, x_eval)
    out = cg0[:, None] * g[idx] + cg1[:, None] * g[idx + 1]
    if M is not None:
        out += cm0[:, None] * M[idx] + cm1[:, None] * M[idx + 1]
    return out


def _smoother(x, alpha, x_eval):
    """Unchecked smoother matrix, shape (len(x_eval), len(x)); see :func:`smoother_matrix`.

    Used by the codes' operator builders on already validated points. With W_g and W_M the
    (sparse) evaluation weights of the values g and of the second derivatives M, and
    A = R + alpha Q^T Q,

        S = W_g (I - alpha Q A^-1 Q^T) + W_M' A^-1 Q^T
          = W_g + (W_M' - alpha W_g Q) A^-1 Q^T,

    so S^T = W_g^T + Q A^-1 (W_M'^T - alpha Q^T W_g^T): one banded solve with
    len(x_eval) right-hand sides (not len(x)), and only banded products around it.
    """
    n = x.shape[0]
    p = x_eval.shape[0]
    if n == 1:
        return np.ones((p, 1))
    h = np.diff(x)
    idx, cg0, cg1, cm0, cm1 = _eval_coefficients(x, h, x_eval)
    cols = np.arange(p)
    WgT = np.zeros((n, p))
    WgT[idx, cols] = cg0
    WgT[idx + 1, cols] = cg1
    if n == 2:
        return WgT.T.copy()
    WmT = np.zeros((n, p))
    WmT[idx, cols] = cm0
    WmT[idx + 1, cols] = cm1
    rhs = WmT[1:-1]                               # second derivatives vanish at the ends
    if alpha != 0.0:
        rhs = rhs - alpha * _qt_apply(h, WgT)
    Z = _solve_reinsch(h, alpha, np.asfortranarray(rhs))   # (n-2, p)
    # S^T = W_g^T + Q Z, with Q's three bands added in place
    inv = 1.0 / h
    WgT[:-2] += inv[:-1, None] * Z
    WgT[1:-1] -= (inv[:-1] + inv[1:])[:, None] * Z
    WgT[2:] += inv[1:, None] * Z
    return np.ascontiguousarray(WgT.T)


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------
def _check_x(x, owner, name="x"):
    return check_points(x, name, owner, low=None, high=None)


def _check_x_eval(x_eval, owner):
    try:
        arr = np.asarray(x_eval, dtype=np.float64)
    except (TypeError, ValueError):
        raise_invalid("x_eval", owner, "a real scalar or 1-D array of finite points", x_eval)
    if arr.ndim > 1:
        raise_invalid("x_eval", owner, "a real scalar or 1-D array of finite points", x_eval,
                      f"it has shape {arr.shape}")
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr.reshape(-1)))[0])
        raise_invalid("x_eval", owner, "a real scalar or 1-D array of finite points", x_eval,
                      f"x_eval[{bad}] = {float(arr.reshape(-1)[bad])!r}")
    return arr


def smoother_matrix(x, lam, x_eval) -> np.ndarray:
    """Linear operator of the natural cubic smoothing spline.

    ``smoother_matrix(x, lam, x_eval) @ y`` equals ``smoothing_spline(x, y, lam, x_eval)``
    for every y.

    Parameters
    ----------
    x : array_like, shape (n,)
        Strictly increasing, finite knots; any n >= 1.
    lam : float
        Smoothing parameter, ``>= 0``, in the paper's eq. (4) convention
        ``(1/n) sum (y_i - u(x_i))^2 + lam * int u''^2`` (scipy's ``lam`` is ``n * lam``).
        ``lam = 0`` interpolates.
    x_eval : float or array_like, shape (p,)
        Evaluation points, anywhere on the real line.

    Returns
    -------
    S : ndarray, shape (p, n)
        ``S[j, i]`` is the weight of y_i in the fitted spline at ``x_eval[j]``. A scalar
        ``x_eval`` gives shape (1, n).

    Notes
    -----
    Reinsch algorithm [1]_: with h_i = x_{i+1} - x_i, Q (n, n-2) and R (n-2, n-2) as in
    Green & Silverman, the fitted values are g = y - a Q gamma with
    (R + a Q^T Q) gamma = Q^T y and a = n * lam; gamma holds the spline's second
    derivatives at the interior knots. Here y is the identity, so one banded Cholesky
    solve with n right-hand sides builds the whole matrix (O(n^2) work, no dense inverse).
    Outside [x_0, x_{n-1}] the spline is linear with the end slopes (natural boundary
    conditions). Small n: n = 1 gives the constant, n = 2 the straight line through both
    points (for every lam), n = 3, 4 the usual natural spline.

    References
    ----------
    .. [1] P. J. Green and B. W. Silverman, "Nonparametric Regression and Generalized
       Linear Models", Chapman & Hall, 1994, Sec. 2.3.
    .. [2] G. Wahba, "Spline Models for Observational Data", SIAM, 1990.
    .. [3] Moradi, Tahmasebi, Maddah-Ali, arXiv:2406.00300, eq. (4)-(5).
    """
    owner = "smoother_matrix"
    x = _check_x(x, owner)
    lam = check_lam(lam, "lam", owner)
    xe = _check_x_eval(x_eval, owner)
    return _smoother(x, x.shape[0] * lam, xe.reshape(-1))


def smoothing_spline(x, y, lam, x_eval) -> np.ndarray:
    """Fit a natural cubic smoothing spline to y along axis 0 and evaluate it.

    Parameters
    ----------
    x : array_like, shape (n,)
        Strictly increasing, finite knots; any n >= 1.
    y : array_like, shape (n, ...)
        Data; every trailing column is smoothed with the same ``lam`` in one banded solve.
    lam : float or "gcv"
        Smoothing parameter ``>= 0`` in the paper's eq. (4) convention (scipy's
        ``lam = n * lam``), or ``"gcv"`` to choose it with :func:`gcv_lambda` (one lam
        shared by all columns).
    x_eval : float or array_like, shape (p,)
        Evaluation points; linear extrapolation outside [min x, max x].

    Returns
    -------
    ndarray, shape (p, ...)
        The fitted spline at ``x_eval`` (float64). A scalar ``x_eval`` gives shape y.shape[1:].

    Notes
    -----
    One O(n m) Reinsch solve for all m = prod(y.shape[1:]) columns (banded Cholesky with
    m right-hand sides), then a vectorised gather-evaluation at x_eval; no Python loop over
    columns or points. See :func:`smoother_matrix` for the algorithm.

    References
    ----------
    .. [1] P. J. Green and B. W. Silverman, "Nonparametric Regression and Generalized
       Linear Models", Chapman & Hall, 1994.
    .. [2] C. H. Reinsch, "Smoothing by spline functions", Numer. Math. 10, 1967.
    """
    owner = "smoothing_spline"
    x = _check_x(x, owner)
    lam = check_lam(lam, "lam", owner, allow_gcv=True)
    y_arr = _as_float_array(y, "y", owner)
    n = x.shape[0]
    if y_arr.ndim == 0 or y_arr.shape[0] != n:
        raise_invalid("y", owner, f"an array of shape (n, ...) with n = len(x) = {n}", y,
                      f"its shape is {y_arr.shape}")
    check_finite(y_arr, "y", owner)
    xe = _check_x_eval(x_eval, owner)
    if lam == "gcv":
        lam, _ = gcv_lambda(x, y_arr)
    trailing = y_arr.shape[1:]
    out = _fit_eval(x, n * lam, np.ascontiguousarray(y_arr.reshape(n, -1)), xe.reshape(-1))
    if xe.ndim == 0:
        return out.reshape(trailing)
    return out.reshape((xe.shape[0],) + trailing)


def _as_float_array(y, name, owner):
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise_invalid(name, owner, "a real array", y)
    return arr


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
        ``logspace(log10(low), log10(high), num) * r**3``.

    Notes
    -----
    Rescaling x by c multiplies ``int u''^2`` by c^-3, so ``lam / r^3`` is invariant: the
    same relative smoothness is selected whatever the units of x.
    """
    owner = "gcv_grid"
    x = _check_x(x, owner)
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
    Each score builds the n x n smoother matrix (O(n^2) per grid point), which is fine for
    the point counts of coded computing (n <= a few thousand).

    References
    ----------
    .. [1] P. Craven and G. Wahba, "Smoothing noisy data with spline functions", Numer.
       Math. 31, 1979.
    .. [2] G. Wahba, "Spline Models for Observational Data", SIAM, 1990, Ch. 4.
    """
    owner = "gcv_lambda"
    x = _check_x(x, owner)
    n = x.shape[0]
    if n < 3:
        raise_invalid("x", owner, "a 1-D array of at least 3 strictly increasing points", x,
                      f"it has length {n}")
    y_arr = _as_float_array(y, "y", owner)
    if y_arr.ndim == 0 or y_arr.shape[0] != n:
        raise_invalid("y", owner, f"an array of shape (n, ...) with n = len(x) = {n}", y,
                      f"its shape is {y_arr.shape}")
    check_finite(y_arr, "y", owner)
    if grid is None:
        grid = gcv_grid(x)
    else:
        grid = np.asarray(grid, dtype=np.float64).reshape(-1)
        if grid.size == 0 or not np.isfinite(grid).all() or (grid < 0).any():
            raise_invalid("grid", owner, "a non-empty 1-D array of finite values >= 0", grid)
    y2 = y_arr.reshape(n, -1)
    scores = np.empty(grid.shape[0])
    for j, lam in enumerate(grid):  # loop over candidate lams only, never over columns
        S = _smoother(x, n * lam, x)
        resid = y2 - S @ y2
        denom = (n - np.trace(S)) ** 2
        rss = float(np.sum(resid * resid))
        scores[j] = n * rss / denom if denom > 1e-12 * n * n else np.inf
    best = int(np.argmin(np.where(np.isfinite(scores), scores, np.inf)))
    return float(grid[best]), scores
