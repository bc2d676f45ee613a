"""Metrics of coded computing: the paper's loss, its two "RMSE" readings, RelAcc, intervals.

``est`` holds the estimates ``f_hat(x_k)``, ``true`` the exact outputs ``f(x_k)``, ``k = 1..K`` (numpy
or torch, read as float64); a NaN or inf estimate gives a NaN or inf score, reported as it comes (a
diverging decoder's loss; :func:`gcc.summary.summarize` counts NaN losses in ``n_nan``).

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Coded Computing for
   Resilient Distributed Computing: A Learning-Theoretic Framework",
   NeurIPS 2024, arXiv:2406.00300, eq. (1) and Sec. 5.
.. [2] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Learning-Theoretic
   Foundation for General Coded Computing: The Straggler Setting",
   arXiv:2608.28910, 2026.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .backend import is_torch, to_numpy
from .validation import ArrayLike, Interval, check_labels, invalid, validate, validate_params

__all__ = ["mse_loss", "rmse_mean_of_norms", "rmse_root_mean_square", "accuracy", "relacc", "mean_ci",
           "loglog_slope", "ConfidenceInterval", "SlopeFit"]


_REAL = ArrayLike(dtype=np.float64, description="an array of real numbers")
_DATA = {False: ArrayLike(dtype=np.float64, description="an array of real or complex numbers"),
         True: ArrayLike(dtype=np.complex128, description="an array of real or complex numbers")}


_LEVEL = Interval(float, 0, 1, closed="neither")


def _is_complex(a: Any) -> bool:
    """Whether numpy reads ``a`` as complex (ragged lists: no, the constraint rejects them)."""
    try:
        return bool(np.iscomplexobj(a))
    except (TypeError, ValueError):
        return False


def _as_float(a: Any, name: str, owner: str, complex_ok: bool = False) -> np.ndarray:
    """``a`` as a float64 array (complex128 if complex and ``complex_ok``); nothing is cast with a loss."""
    if is_torch(a):
        a = to_numpy(a)
    if isinstance(a, np.ndarray) and (a.dtype == np.float64 or (complex_ok and a.dtype == np.complex128)):
        return a
    return validate(a, _DATA[_is_complex(a)] if complex_ok else _REAL, name, owner)


def _pair(est: Any, true: Any, owner: str):
    """Squared error norms (..., K) of ``est`` (..., K, *out) against ``true`` (K, *out) or same shape."""
    e = _as_float(est, "est", owner, complex_ok=True)
    t = _as_float(true, "true", owner, complex_ok=True)
    if e.ndim == 0:
        raise invalid("est", owner, "an array with a leading K axis", e.shape)
    if t.ndim == 0:
        raise invalid("true", owner, "an array with a leading K axis", t.shape)
    if t.ndim > e.ndim or t.shape != e.shape[e.ndim - t.ndim:]:
        raise invalid("true", owner, f"an array whose shape matches the trailing axes of "
                      f"est {e.shape}", f"array of shape {t.shape}")
    if t.shape[0] == 0:     # the mean over no points would be NaN
        raise invalid("true", owner, "an array with at least one point on its K axis (K >= 1)", t)
    # Axes of one output vector: those of ``true`` after its K axis.
    out_axes = tuple(range(e.ndim - t.ndim + 1, e.ndim))
    diff = e - t
    sq = diff.real ** 2 + diff.imag ** 2 if np.iscomplexobj(diff) else diff ** 2
    return sq.sum(axis=out_axes) if out_axes else sq


def mse_loss(est: Any, true: Any) -> np.ndarray | float:
    """The paper's end-to-end loss, eq. (1) [1]_, for one draw.

    .. math:: \\mathcal{L} = \\frac{1}{K}\\sum_{k=1}^{K}
              \\lVert \\hat f(x_k) - f(x_k) \\rVert_2^2

    Parameters
    ----------
    est : array, shape (..., K, *out)
        Estimates, real or complex; leading axes (e.g. trials) are kept.
    true : array, shape (K, *out) or (..., K, *out)
        Exact outputs ``f(x_k)``.

    Returns
    -------
    float or ndarray of shape (...)

    Examples
    --------
    Two estimates with errors of norm 2 and 5:

    >>> import numpy as np
    >>> from gcc.metrics import mse_loss
    >>> est, true = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.0], [0.0, 0.0]])
    >>> mse_loss(est, true)
    14.5
    >>> mse_loss(np.stack([est, true]), true).tolist()  # a leading trial axis
    [14.5, 0.0]
    >>> mse_loss(np.array([3 + 4j, 0]), np.zeros(2))     # complex errors: |3 + 4i|^2 / 2
    12.5
    """
    out = _pair(est, true, "mse_loss").mean(axis=-1)
    return float(out) if np.ndim(out) == 0 else out


def rmse_mean_of_norms(est: Any, true: Any) -> np.ndarray | float:
    """The paper's printed "RMSE" formula: the mean over k of the l2 errors [1]_ (Sec. 5).

    .. math:: \\frac{1}{K}\\sum_{k=1}^{K} \\lVert f(x_k) - \\hat f(x_k) \\rVert_2

    A mean of norms, not a root of a mean square (:func:`rmse_root_mean_square`); never larger.

    Parameters
    ----------
    est : array, shape (..., K, *out)
    true : array, shape (K, *out) or (..., K, *out)

    Returns
    -------
    float or ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.metrics import rmse_mean_of_norms
    >>> rmse_mean_of_norms(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.0], [0.0, 0.0]]))
    3.5
    """
    out = np.sqrt(_pair(est, true, "rmse_mean_of_norms")).mean(axis=-1)
    return float(out) if np.ndim(out) == 0 else out


def rmse_root_mean_square(est: Any, true: Any) -> np.ndarray | float:
    """Root of the loss (eq. 1): the literal "root mean square" reading of RMSE.

    .. math:: \\sqrt{\\frac{1}{K}\\sum_{k=1}^{K} \\lVert f(x_k) - \\hat f(x_k) \\rVert_2^2}

    Parameters
    ----------
    est : array, shape (..., K, *out)
    true : array, shape (K, *out) or (..., K, *out)

    Returns
    -------
    float or ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.metrics import rmse_root_mean_square
    >>> est, true = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.0], [0.0, 0.0]])
    >>> round(rmse_root_mean_square(est, true) ** 2, 12)  # the square root of the loss
    14.5
    """
    out = np.sqrt(_pair(est, true, "rmse_root_mean_square").mean(axis=-1))
    return float(out) if np.ndim(out) == 0 else out


def accuracy(scores: Any, labels: Any) -> np.ndarray | float:
    """Fraction of ``argmax`` predictions equal to the labels.

    Parameters
    ----------
    scores : array, shape (..., K, C)
        Real class scores (e.g. softmax outputs), one row per data point.
    labels : array of int, shape (K,)
        Class indices in ``[0, C)``.

    Returns
    -------
    float or ndarray of shape (...)
        NaN for a batch with a NaN score.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.metrics import accuracy
    >>> scores = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3]])
    >>> accuracy(scores, np.array([0, 1, 1, 0]))
    0.75
    >>> accuracy(np.full((4, 2), np.nan), np.array([0, 1, 1, 0]))
    nan
    """
    return _accuracy(scores, labels, "accuracy", "scores")


def _accuracy(scores: Any, labels: Any, owner: str, name: str) -> np.ndarray | float:
    """:func:`accuracy`, naming ``scores`` as ``name`` of ``owner`` in its messages."""
    s = _as_float(scores, name, owner)
    if s.ndim < 2 or 0 in s.shape[-2:]:
        raise invalid(name, owner, "an array of shape (..., K, C) with K, C >= 1", s.shape)
    lab = check_labels(labels, s.shape[-2], "labels", owner, n_classes=s.shape[-1])
    undefined = np.isnan(s).any(axis=(-2, -1))     # a NaN score has no argmax: no accuracy
    out = np.where(undefined, np.nan, (s.argmax(axis=-1) == lab).mean(axis=-1))
    return float(out) if np.ndim(out) == 0 else out


def relacc(est: Any, true_outputs: Any, labels: Any) -> np.ndarray | float:
    """Relative accuracy of the decoded classifier outputs (the paper's "RelAcc").

    ``acc(f_hat) / acc(f)``, the share of the base accuracy that survives coding (the paper's
    sentence [1]_ also reads as the inverse: the harness's ``relacc_literal``). A zero base
    accuracy or a NaN score gives ``nan``.

    Parameters
    ----------
    est : array, shape (..., K, C)
        Decoded outputs ``f_hat(x_k)``.
    true_outputs : array, shape (K, C) or (..., K, C)
        Base model outputs ``f(x_k)``.
    labels : array of int, shape (K,)

    Returns
    -------
    float or ndarray of shape (...)

    Examples
    --------
    The base model is right on 3 of 4 points, the decoded outputs on 2:

    >>> import numpy as np
    >>> from gcc.metrics import relacc
    >>> labels = np.array([0, 1, 1, 0])
    >>> base = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3]])
    >>> est = np.array([[0.4, 0.6], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3]])
    >>> round(relacc(est, base, labels), 4)
    0.6667
    """
    e, t = _as_float(est, "est", "relacc"), _as_float(true_outputs, "true_outputs", "relacc")
    acc_base = np.asarray(_accuracy(t, labels, "relacc", "true_outputs"), dtype=float)
    if e.shape[-2:] != t.shape[-2:]:     # labels are checked against true_outputs: est is the odd one
        raise invalid("est", "relacc", f"an array of shape (..., K, C) = (..., {', '.join(map(str, t.shape[-2:]))}) "
                      "as true_outputs", e, f"its shape is {e.shape}")
    acc_est = np.asarray(_accuracy(e, labels, "relacc", "est"), dtype=float)
    num, den = np.broadcast_arrays(acc_est, acc_base)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


class ConfidenceInterval(NamedTuple):
    """Mean with a two-sided t confidence interval."""

    mean: float
    low: float
    high: float
    half_width: float
    n: int


@validate_params({"level": _LEVEL})
def mean_ci(values: Any, level: float = 0.95) -> ConfidenceInterval:
    """Sample mean with a Student-t confidence interval.

    ``mean +/- t_{(1+level)/2, n-1} s / sqrt(n)`` (``ddof=1``), as the paper's 95% intervals [1]_.
    NaN values are left out; one value gives a NaN interval, a level near 1 a wide (up to infinite:
    the t quantile's) one.

    Parameters
    ----------
    values : array_like, shape (n,)
    level : float in (0, 1)

    Returns
    -------
    ConfidenceInterval
        ``(mean, low, high, half_width, n)``.

    Examples
    --------
    >>> from gcc.metrics import mean_ci
    >>> ci = mean_ci([1.0, 2.0, 3.0, 4.0])
    >>> ci.mean, round(ci.half_width, 4), ci.n
    (2.5, 2.0543, 4)
    >>> mean_ci([1.0, float("nan"), 3.0]).n  # NaN draws are left out
    2
    """
    from scipy import stats

    v = _as_float(values, "values", "mean_ci")
    if v.ndim > 1:
        raise invalid("values", "mean_ci", "an array of shape (n,)", v.shape)
    v = v.ravel()
    v = v[~np.isnan(v)]
    n = v.size
    if n == 0:
        raise invalid("values", "mean_ci", "an array with at least one non-NaN value",
                      "no values")
    if not np.all(np.isfinite(v)):
        raise invalid("values", "mean_ci", "finite (or NaN) values", "an infinite value")
    mean = float(v.mean())
    if n == 1:
        return ConfidenceInterval(mean, np.nan, np.nan, np.nan, 1)
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * v.std(ddof=1) / np.sqrt(n))
    return ConfidenceInterval(mean, mean - half, mean + half, half, n)


class SlopeFit(NamedTuple):
    """Least-squares line on log-log axes with a confidence interval for the slope."""

    slope: float
    intercept: float
    low: float
    high: float
    stderr: float
    rvalue: float
    n: int

    def predict(self, x: Any) -> np.ndarray:
        """The fitted power law ``exp(intercept) * x ** slope``."""
        return np.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope


@validate_params({"level": _LEVEL})
def loglog_slope(x: Any, y: Any, level: float = 0.95) -> SlopeFit:
    """Fit ``log y = intercept + slope * log x`` by least squares.

    The slope has a Student-t interval with ``n - 2`` degrees of freedom.

    Parameters
    ----------
    x, y : array_like, shape (n,), positive, n >= 3
    level : float in (0, 1)

    Returns
    -------
    SlopeFit
        ``(slope, intercept, low, high, stderr, rvalue, n)``; ``y ~ exp(intercept) * x ** slope``.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.metrics import loglog_slope
    >>> x = np.array([10.0, 20.0, 40.0, 80.0])
    >>> fit = loglog_slope(x, 3.0 * x ** -2.0)
    >>> round(fit.slope, 6), round(float(fit.predict(100.0)), 6)
    (-2.0, 0.0003)
    """
    from scipy import stats

    xa = _as_float(x, "x", "loglog_slope").ravel()
    ya = _as_float(y, "y", "loglog_slope").ravel()
    if xa.shape != ya.shape:
        raise invalid("y", "loglog_slope", f"an array of the same length as x ({xa.size})",
                      f"length {ya.size}")
    if xa.size < 3:
        raise invalid("x", "loglog_slope", "an array of at least 3 points", xa.size)
    for name, a in (("x", xa), ("y", ya)):
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise invalid(name, "loglog_slope", "finite and > 0 (log-log axes)",
                          a[~(np.isfinite(a) & (a > 0))][:3].tolist())
    if np.all(xa == xa[0]):
        raise invalid("x", "loglog_slope", "an array with at least two distinct values",
                      xa[:3].tolist())
    fit = stats.linregress(np.log(xa), np.log(ya))
    half = float(stats.t.ppf(0.5 + level / 2, xa.size - 2) * fit.stderr)
    return SlopeFit(float(fit.slope), float(fit.intercept), float(fit.slope) - half,
                    float(fit.slope) + half, float(fit.stderr), float(fit.rvalue), xa.size)
