"""The shifted-exponential delay model of coded partial gradient computation.

Worker i draws one X_i ~ Exp(mu) per iteration (i.i.d. over workers and iterations: non-persistent
stragglers) and finishes its j-th task unit at ``t_ij = j (alpha + X_i)``. Communication takes no
time; the number of messages is reported separately as the communication load.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..validation import GENERATOR, ArrayLike, InstanceOf, Interval, invalid, validate, validate_params
from .codes import CPGCCode

__all__ = ["MU", "ALPHA", "worker_speeds", "arrival_times", "prob_tasks_done"]

#: the rate mu of the exponential part of a delay
MU = Interval(Real, 0, None, closed="neither")
#: the deterministic shift alpha per task unit
ALPHA = Interval(Real, 0, None)
#: times: real numbers, never NaN (a complex time has no meaning)
_TIMES = ArrayLike(dtype=float, description="a real number or array of real numbers (not NaN)")


@validate_params({"rng": GENERATOR, "trials": Interval(Integral, 1, None),
                  "n_workers": Interval(Integral, 1, None), "mu": MU, "alpha": ALPHA})
def worker_speeds(rng: np.random.Generator, trials: int, n_workers: int, mu: float = 10.0,
                  alpha: float = 0.01) -> np.ndarray:
    """Time per task unit of every worker, ``Y = alpha + X`` with ``X ~ Exp(mu)`` (rate mu).

    Parameters
    ----------
    rng : numpy.random.Generator
    trials, n_workers : int >= 1
    mu : float
        Rate of the exponential part (mean 1 / mu), > 0.
    alpha : float
        Deterministic shift per task unit, >= 0.

    Returns
    -------
    ndarray, shape (trials, n_workers)

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.cpgc import worker_speeds
    >>> Y = worker_speeds(np.random.default_rng(0), trials=20000, n_workers=4, mu=10.0, alpha=0.01)
    >>> Y.shape, bool(Y.min() >= 0.01), round(float(Y.mean()), 2)      # mean alpha + 1 / mu
    ((20000, 4), True, 0.11)
    """
    return alpha + rng.exponential(1.0 / mu, size=(trials, n_workers))


@validate_params({"code": InstanceOf(CPGCCode, "a CPGCCode (gcc.cpgc.make_code(...))")})
def arrival_times(code, speeds: np.ndarray) -> np.ndarray:
    """Arrival time of every row: ``row_units[j] * speeds[:, i]``, shape (trials, n_workers, n_rows).

    Parameters
    ----------
    code : CPGCCode
    speeds : array_like, shape (trials, n_workers)
        Time per task unit of every worker (:func:`worker_speeds`): finite reals >= 0.

    Returns
    -------
    ndarray, shape (trials, n_workers, n_rows)

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.cpgc import arrival_times, uncoded_cyclic_code
    >>> arrival_times(uncoded_cyclic_code(2, 2), np.array([[0.1, 0.3]]))
    array([[[0.1, 0.2],
            [0.3, 0.6]]])
    """
    K = code.n_workers
    speeds = validate(speeds, ArrayLike(shape=(None, K), dtype=float, finite=True, description=(
        f"an array of shape (trials, {K})")), "speeds", "arrival_times")
    if not len(speeds):
        raise invalid("speeds", "arrival_times", f"an array of shape (trials >= 1, {K})", speeds, "it has no rows")
    if speeds.min() < 0:
        raise invalid("speeds", "arrival_times", "times per task unit >= 0", speeds)
    return speeds[..., :, None] * code.row_units


@validate_params({"t": _TIMES, "mu": MU, "alpha": ALPHA, "r": Interval(Integral, 1, None)})
def prob_tasks_done(s: int, t, mu: float = 10.0, alpha: float = 0.01, r: int = 3) -> np.ndarray:
    """Probability that a worker has finished exactly ``s`` of its ``r`` task units by time ``t``.

    Parameters
    ----------
    s : int in [0, r]
        Task units finished.
    t : float or array_like
        Time(s), real (not NaN; ``t <= 0`` means nothing is done yet).
    mu : float > 0
    alpha : float >= 0
    r : int >= 1
        Task units of a worker (its load).

    Returns
    -------
    ndarray, the shape of ``t``
        Probabilities in [0, 1].

    Notes
    -----
    With ``Y = alpha + X``, the count is ``min(r, floor(t / Y))``, so
    ``P(N >= s) = P(Y <= t / s) = 1 - exp(-mu (t / s - alpha))`` for ``t >= s alpha`` (0 before), and
    ``P(N = s) = P(N >= s) - P(N >= s + 1)`` for s < r; ``P(N = r) = P(N >= r)``. This is the
    paper's piecewise formula with its s = 0 and s = r end cases.

    Examples
    --------
    >>> from gcc.cpgc import prob_tasks_done
    >>> p = [float(prob_tasks_done(s, 0.2, mu=10.0, alpha=0.01, r=3)) for s in range(4)]
    >>> round(sum(p), 12), round(p[0], 4)         # a distribution over s; P(N = 0) = exp(-1.9)
    (1.0, 0.1496)
    """
    s = validate(s, Interval(Integral, 0, r, description="an int in [0, r]"), "s", "prob_tasks_done")
    t = np.asarray(t, dtype=float)
    if np.isnan(t).any():
        raise invalid("t", "prob_tasks_done", _TIMES, t)

    def at_least(k):
        if k <= 0:
            return np.ones_like(t)
        return np.where(t >= k * alpha, -np.expm1(-mu * np.maximum(t / k - alpha, 0.0)), 0.0)

    if s == r:
        return at_least(r)
    return at_least(s) - at_least(s + 1)
