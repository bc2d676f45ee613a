"""Received masks and straggler runs: the gaps a received set leaves among the workers.

A received set is ascending worker indices or a boolean mask ``(N,)`` (``True`` = received).

References
----------
.. [1] P. Erdős, A. Rényi, "On a new law of large numbers", J. Analyse Math.
   23 (1970) 103-111 (longest run of heads).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .validation import ArrayLike, check_int, check_real, invalid, validate

__all__ = ["MASK", "INDICES", "longest_run", "longest_straggler_run", "expected_longest_run",
           "mask_to_received", "received_to_mask"]


#: a received mask: booleans (or 0/1), never NaN read as True
MASK = ArrayLike(dtype=bool, description="a boolean array (True/False or 0/1)")
#: worker indices: ints (1.7 is no worker), one axis
INDICES = ArrayLike(ndim=1, dtype=np.int64, description="a 1-D sequence of int worker indices")


def mask_to_received(mask: np.ndarray) -> np.ndarray | list[np.ndarray]:
    """Ascending indices of the received workers of a mask.

    Parameters
    ----------
    mask : ndarray of bool, shape (N,) or (trials, N)
        ``True`` where the worker returned.

    Returns
    -------
    ndarray of int, shape (|F|,), or a list of them (one per trial)

    Examples
    --------
    >>> from gcc.straggler_runs import mask_to_received
    >>> mask_to_received([True, False, True])
    array([0, 2])
    """
    m = validate(mask, MASK, "mask", "mask_to_received")
    if m.ndim not in (1, 2):
        raise invalid("mask", "mask_to_received", "a 1-D or 2-D boolean array", mask,
                      f"it has shape {m.shape}")
    return np.flatnonzero(m) if m.ndim == 1 else [np.flatnonzero(row) for row in m]


def received_to_mask(received: Sequence[int], n_workers: int) -> np.ndarray:
    """Boolean mask of shape ``(n_workers,)``, ``True`` at the received indices.

    Parameters
    ----------
    received : sequence of int, shape (|F|,)
        Distinct worker indices in ``[0, n_workers)``, in any order (may be empty).
    n_workers : int >= 1

    Returns
    -------
    ndarray of bool, shape (n_workers,)

    Examples
    --------
    >>> from gcc.straggler_runs import received_to_mask
    >>> received_to_mask([0, 2], 4)
    array([ True, False,  True, False])
    """
    owner = "received_to_mask"
    n_workers = check_int(n_workers, "n_workers", owner, minimum=1)
    idx = validate(received, INDICES, "received", owner)
    requirement = f"distinct worker indices in [0, {n_workers - 1}]"
    if idx.size and (idx.min() < 0 or idx.max() >= n_workers):
        k = int(np.flatnonzero((idx < 0) | (idx >= n_workers))[0])
        raise invalid("received", owner, requirement, received, f"received[{k}] = {int(idx[k])}")
    if np.unique(idx).size != idx.size:
        raise invalid("received", owner, requirement, received, "an index is repeated")
    mask = np.zeros(n_workers, dtype=bool)
    mask[idx] = True
    return mask


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
