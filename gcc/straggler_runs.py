"""Received masks and straggler runs: the gaps a received set leaves among the workers.

A received set is ascending worker indices or a boolean mask ``(N,)`` (``True`` = received).

References
----------
.. [1] P. Erdős, A. Rényi, "On a new law of large numbers", J. Analyse Math.
   23 (1970) 103-111 (longest run of heads).
"""
from __future__ import annotations

import numpy as np

from .validation import ArrayLike, check_int, check_real, invalid, validate

__all__ = ["MASK", "longest_run", "longest_straggler_run", "expected_longest_run"]


#: a received mask: booleans (or 0/1), never NaN read as True
MASK = ArrayLike(dtype=bool, description="a boolean array (True/False or 0/1)")


def longest_run(mask: np.ndarray, axis: int = -1) -> np.ndarray | int:
    """Length of the longest run of consecutive ``True`` values along ``axis``.

    Parameters
    ----------
    mask : array_like of bool, shape (..., N)
        Booleans or 0/1.
    axis : int

    Returns
    -------
    int or ndarray of int, shape ``mask.shape`` without ``axis``.

    Examples
    --------
    >>> import gcc
    >>> gcc.longest_run([True, True, False, True]), gcc.longest_run([[1, 1, 0], [0, 1, 0]])
    (2, array([2, 1]))
    """
    return _longest_run(mask, axis, "longest_run", "mask", invert=False)


def _longest_run(mask, axis, owner: str, name: str, invert: bool):
    """Longest run of True (of False with ``invert``) of ``mask`` along ``axis``."""
    m = validate(mask, MASK, name, owner)
    if m.ndim == 0:
        raise invalid(name, owner, "a boolean array with at least one axis", mask)
    d = m.ndim
    axis = check_int(axis, "axis", owner, -d, d - 1,
                     constraint=f"an int in [-{d}, {d - 1}] (an axis of the {d}-D mask)")
    m = np.moveaxis(m, axis, -1)
    if invert:
        m = ~m
    if m.shape[-1] == 0:
        out = np.zeros(m.shape[:-1], dtype=np.int64)
        return int(out) if out.ndim == 0 else out
    count = np.cumsum(m, axis=-1, dtype=np.int64)
    # subtracting the count at the last False restarts the count after every break
    last_break = np.maximum.accumulate(np.where(m, 0, count), axis=-1)
    out = (count - last_break).max(axis=-1)
    return int(out) if out.ndim == 0 else out


def longest_straggler_run(received_mask: np.ndarray, axis: int = -1) -> np.ndarray | int:
    """Longest run of consecutive stragglers (``False`` entries) of a received mask.

    Parameters
    ----------
    received_mask : array_like of bool, shape (..., N)
        ``True`` = the worker returned (the output of ``sample_many``); booleans or 0/1.
    axis : int

    Returns
    -------
    int or ndarray of int
        It controls the widest gap ``Delta_max^F`` under i.i.d. stragglers.

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> gcc.longest_straggler_run(np.array([True, False, False, True, False]))
    2
    """
    return _longest_run(received_mask, axis, "longest_straggler_run", "received_mask", invert=True)


def expected_longest_run(n_workers: float | np.ndarray, p: float) -> np.ndarray | float:
    """Erdős–Rényi approximation of the longest straggler run.

    For ``N`` i.i.d. Bernoulli(``p``) stragglers the longest run is about ``log_{1/p}(N (1 - p))``
    [1]_, [2]_.

    Parameters
    ----------
    n_workers : float or ndarray
        ``N``, finite, with ``N (1 - p) >= 1`` (an asymptotic law for many workers).
    p : float in (0, 1)
        Straggling probability.

    Returns
    -------
    float or ndarray
        ``log(N (1 - p)) / log(1 / p)``, ``>= 0``.

    References
    ----------
    .. [2] Schilling, "The longest run of heads", College Math. J. 21 (1990) 196-207.

    Examples
    --------
    >>> import gcc
    >>> round(gcc.expected_longest_run(1000, 0.1), 3)
    2.954
    """
    owner = "expected_longest_run"
    p = check_real(p, "p", owner, 0, 1, include_min=False, include_max=False)
    n = validate(n_workers, ArrayLike(dtype=float, finite=True, description="a finite real number or array"),
                 "n_workers", owner)
    if n.size and n.min() * (1 - p) < 1:
        raise invalid("n_workers", owner, f"at least 1 / (1 - p) = {1 / (1 - p):.6g} (the "
                      "approximation needs N (1 - p) >= 1)", n_workers)
    out = np.log(n * (1 - p)) / np.log(1 / p)
    return float(out) if out.ndim == 0 else out
