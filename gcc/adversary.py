"""The adversary: the straggler set that maximises the loss (eq. 1) of a code for given ``f`` and ``X``.

Theorem 1 (arXiv:2608.28910) bounds the loss of *every* received set with ``|F| >= N - S``;
:class:`gcc.stragglers.WorstCase` is the straggler model that asks for this search.
"""
from __future__ import annotations

import itertools
import math
import warnings
from numbers import Integral
from typing import Any

import numpy as np

from .backend import to_numpy
from .codes.base import Code, block_received
from .validation import BOOL, HasAttributes, Interval, Options, invalid, validate_params

__all__ = ["SEARCHES", "block_losses", "worst_case_stragglers"]

#: the searches of :func:`worst_case_stragglers`
SEARCHES = ("contiguous", "greedy", "exhaustive")

_CODE = HasAttributes(("n_workers", "encode", "decode"), callables=("encode", "decode"),
                     description="a code (with n_workers, encode() and decode())")
_ARGS = {"code": _CODE, "stragglers": Interval(Integral, 0, None), "fast": BOOL}
_MAX_ROUNDS = 50        # swap rounds of the greedy search


def _worker_outputs(code, f, X, stragglers, outputs, owner):
    """``(f(x_k), f(encode(X)))`` as checked float64 (or complex128) arrays (K, m), (N, m)."""
    N = code.n_workers
    if stragglers >= N:
        raise invalid("stragglers", owner, f"an int < n_workers (= {N})", stragglers)
    if outputs is not None and (not isinstance(outputs, (tuple, list)) or len(outputs) != 2):
        raise invalid("outputs", owner, "a pair (f(X), f(code.encode(X))) or None", outputs)
    if outputs is None and not callable(f):
        raise invalid("f", owner, "a callable (vectorised over the leading axis)", f)
    name, subject = ("f", f) if outputs is None else ("outputs", "outputs")
    pairs = (("f(X)", lambda: f(X)), ("f(code.encode(X))", lambda: f(code.encode(X)))) if outputs is None \
        else (("outputs[0]", lambda: outputs[0]), ("outputs[1]", lambda: outputs[1]))
    arrays = []
    for (what, get), n in zip(pairs, (getattr(code, "n_inputs", None), N)):
        arr = to_numpy(get())
        if getattr(arr, "dtype", np.dtype(object)).kind not in "biufc" or arr.ndim == 0 or (
                n is not None and arr.shape[0] != n):
            got = f"shape {arr.shape} and dtype {arr.dtype}" if hasattr(arr, "dtype") else type(arr).__name__
            raise invalid(name, owner, "a callable or outputs giving numeric arrays of shape "
                          f"({'n' if n is None else n}, ...)", subject, f"{what} has {got}")
        dtype = np.complex128 if arr.dtype.kind == "c" else np.float64    # complex data stay complex
        arrays.append(arr.reshape(arr.shape[0], -1).astype(dtype, copy=False))
    true, coded = arrays
    if coded.shape[1] != true.shape[1]:
        raise invalid(name, owner, "outputs of one size for the inputs and the coded inputs", subject,
                      f"{true.shape[1]} values per input, {coded.shape[1]} per coded input")
    return true, coded


def _sq(diff: np.ndarray) -> np.ndarray:
    """``|diff|^2`` (the same bits as ``diff ** 2`` for real data)."""
    return diff.real ** 2 + diff.imag ** 2 if np.iscomplexobj(diff) else diff ** 2


def _release_decoders(code) -> None:
    """Drop the code's cached decoders (a search visits each received set once), not its encoder."""
    clear = getattr(code, "clear_cache", None)
    if callable(clear):
        clear(encoder=False) if isinstance(code, Code) else clear()


def _set_loss(code, Y_all: np.ndarray, true: np.ndarray, received: np.ndarray) -> float:
    """Loss (eq. 1) of one received set."""
    est = to_numpy(code.decode(Y_all[received], received)).reshape(true.shape)
    return float(np.mean(np.sum(_sq(est - true), axis=1)))


def _batched_estimates(code, Y_all, true, S):
    """``code.block_estimates``, checked against ``code.decode`` on three blocks, or None."""
    method = getattr(code, "block_estimates", None)
    est = method(Y_all, S) if callable(method) else None
    if est is None:
        return None
    N = Y_all.shape[0]
    est = est.reshape(N - S + 1, *true.shape)
    scale = max(1.0, float(np.abs(Y_all).max()))
    for s in sorted({0, (N - S) // 2, N - S}):
        received = block_received(N, S, s)
        ref = to_numpy(code.decode(Y_all[received], received)).reshape(true.shape)
        # Loose tolerance: with a large lam_dec the Reinsch form itself is only accurate
        # to ~1e-7 (two correct implementations differ that much).
        if not np.allclose(est[s], ref, rtol=1e-6, atol=1e-6 * scale):
            warnings.warn(f"block_losses: the batched decoder of {type(code).__name__} "
                          f"disagrees with code.decode (max difference "
                          f"{np.abs(est[s] - ref).max():.3g}); falling back to one decode "
                          "per block.", RuntimeWarning, stacklevel=3)
            return None
    return est


@validate_params(_ARGS)
def block_losses(code, f, X, stragglers: int, *, fast: bool = True,
                 outputs: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Loss (eq. 1) of every contiguous straggler block ``[s, s + S)``.

    Parameters
    ----------
    code : coded-computing scheme
        With ``n_workers``, ``encode`` and ``decode`` (and ``block_estimates``, used when ``fast``).
    f : callable
        Vectorised over the leading axis: ``(n, *in) -> (n, *out)``.
    X : array (K, *in)
        Data points.
    stragglers : int, 0 <= S < N
    fast : bool, default True
        Decode all blocks at once with ``code.block_estimates`` (checked against ``code.decode``
        on three blocks; on a mismatch, one decode per block and a ``RuntimeWarning``).
    outputs : (true, coded), optional
        Precomputed ``f(X)`` (K, m) and ``f(encode(X))`` (N, m).

    Returns
    -------
    ndarray of float, shape (N - S + 1,)
        Entry ``s`` is the loss when workers ``s .. s+S-1`` straggle.

    Examples
    --------
    The batched decoders give the losses of the block-by-block loop:

    >>> import numpy as np
    >>> import gcc
    >>> code = gcc.SplineCode(n_inputs=4, n_workers=12)
    >>> X = np.linspace(-2.0, 2.5, 4)
    >>> losses = gcc.block_losses(code, np.sin, X, 3)
    >>> losses.shape
    (10,)
    >>> np.allclose(losses, gcc.block_losses(code, np.sin, X, 3, fast=False))
    True
    """
    true, Y_all = _worker_outputs(code, f, X, stragglers, outputs, "block_losses")
    return _block_losses(code, true, Y_all, stragglers, fast)


def _block_losses(code, true, Y_all, S, fast):
    """:func:`block_losses` of checked outputs."""
    N = Y_all.shape[0]
    est = _batched_estimates(code, Y_all, true, S) if fast else None
    if est is not None:
        return np.mean(np.sum(_sq(est - true[None]), axis=2), axis=1)
    return np.array([_set_loss(code, Y_all, true, block_received(N, S, s))
                     for s in range(N - S + 1)])


@validate_params({"code": _CODE, "stragglers": _ARGS["stragglers"], "search": Options(SEARCHES),
                  "return_loss": BOOL, "max_sets": Interval(Integral, 1, None)})
def worst_case_stragglers(code, f, X, stragglers: int, search: str = "contiguous", *,
                          return_loss: bool = False, max_sets: int = 200_000,
                          outputs: tuple[Any, Any] | None = None):
    """The received set that maximises the loss (eq. 1) for ``code``, ``f`` and ``X``.

    The adversary knows the batch ``X`` and the workers are noiseless, as in Theorem 1.

    Parameters
    ----------
    code, f, X, stragglers, outputs
        As in :func:`block_losses` (numpy or torch).
    search : {"contiguous", "greedy", "exhaustive"}
        The exact maximum over the ``N - S + 1`` contiguous blocks (ties to the first), a local
        search over general sets (Notes), or all ``C(N, S)`` sets (at most ``max_sets``).
    return_loss : bool, default False
        Also return the loss of the returned set.
    max_sets : int
        Limit on ``C(N, S)`` for the exhaustive search.

    Returns
    -------
    received : ndarray of int, shape (N - S,)
        Ascending indices of the non-stragglers.
    loss : float
        Only with ``return_loss=True``.

    Notes
    -----
    The greedy search starts from the better of greedy insertion (add the straggler that raises
    the loss most, S times) and the worst block, then makes the best swap of a straggler with a
    received worker while one raises the loss (at most 50 rounds): ``contiguous <= greedy <= exhaustive``.

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> code = gcc.BerrutCode(n_inputs=4, n_workers=9)
    >>> X = np.linspace(-2.0, 2.5, 4)
    >>> f = lambda x: x * np.sin(x)
    >>> received, loss = gcc.worst_case_stragglers(code, f, X, 2, return_loss=True)
    >>> received.size
    7
    >>> _, greedy = gcc.worst_case_stragglers(code, f, X, 2, "greedy", return_loss=True)
    >>> _, best = gcc.worst_case_stragglers(code, f, X, 2, "exhaustive", return_loss=True)
    >>> bool(loss <= greedy <= best)
    True
    """
    owner = "worst_case_stragglers"
    N, S = code.n_workers, stragglers
    true, Y_all = _worker_outputs(code, f, X, S, outputs, owner)

    if search == "exhaustive":
        n_sets = math.comb(N, S)
        if n_sets > max_sets:
            raise invalid("stragglers", f"{owner} (search='exhaustive')",
                          f"small enough that C(N, S) <= max_sets (= {max_sets}); "
                          f"C({N}, {S}) = {n_sets}", S)
        best, best_loss = None, -np.inf
        everyone = np.arange(N)
        for i, out in enumerate(itertools.combinations(range(N), S)):
            received = np.delete(everyone, out)
            loss = _set_loss(code, Y_all, true, received)
            if loss > best_loss:
                best, best_loss = received, loss
            if i % 1024 == 1023:
                _release_decoders(code)
        _release_decoders(code)
        return (best, best_loss) if return_loss else best

    losses = _block_losses(code, true, Y_all, S, True)
    start = int(np.argmax(losses))
    best, best_loss = block_received(N, S, start), float(losses[start])
    if search == "contiguous" or S == 0:
        return (best, best_loss) if return_loss else best

    # Greedy insertion.
    out: list[int] = []
    for _ in range(S):
        cand_loss, cand = -np.inf, None
        for j in range(N):
            if j in out:
                continue
            received = np.setdiff1d(np.arange(N), out + [j])
            loss = _set_loss(code, Y_all, true, received)
            if loss > cand_loss:
                cand_loss, cand = loss, j
        out.append(cand)
        _release_decoders(code)
    if cand_loss > best_loss:
        best, best_loss = np.setdiff1d(np.arange(N), out), cand_loss

    # Best-improvement swaps.
    for _ in range(_MAX_ROUNDS):
        stragglers_now = np.setdiff1d(np.arange(N), best)
        move_loss, move = best_loss, None
        for i in stragglers_now:
            for j in best:
                received = np.sort(np.concatenate([best[best != j], [i]]))
                loss = _set_loss(code, Y_all, true, received)
                if loss > move_loss:
                    move_loss, move = loss, received
        _release_decoders(code)
        if move is None:
            break
        best, best_loss = move, move_loss
    return (best, best_loss) if return_loss else best
