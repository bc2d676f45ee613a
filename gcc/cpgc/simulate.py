"""Vectorised Monte Carlo of the completion time and communication load of one iteration.

Each trial draws the worker speeds ``Y_i = alpha + X_i`` and finds the first arrival after which
the master's recovery condition holds, for all trials at once (single-block rows by set union, then
the decoders of :mod:`gcc.cpgc.elimination`; threshold codes at the ``any_k``-th order statistic).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from ..metrics import mean_ci
from ..validation import (BOOL, SEED_OR_GENERATOR, ArrayLike, InstanceOf, Interval, NoneOr, entry, invalid,
                          validate, validate_params)
from .codes import DEGREES, SCHEME, SETTING, CPGCCode, make_code
from .delay import ALPHA, MU, worker_speeds
from .elimination import MAX_SPARSE_DEGREE, dense_recovery, sparse_recovery
from .master import TOLERANCE, required_blocks

__all__ = ["SimulationResult", "simulate", "completion"]

_COUNT = Interval(Integral, 1, None)


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Completion times and message counts of independent iterations (trials).

    Attributes
    ----------
    scheme : str
        Canonical scheme key (``"rcsc"``, ``"mds"``, ...).
    code : CPGCCode
        The code used (drawn once per call).
    tolerance, mu, alpha : float
    times : ndarray, shape (trials,)
        Completion time of each trial.
    messages : ndarray of int, shape (trials,)
        Messages that reached the master by the completion time (inclusive).
    recovered : ndarray of bool, shape (trials, n_blocks), or None
        Blocks recoverable at completion (with ``return_recovered=True``).
    params : dict
        Seed, degree vector and load, for provenance.
    """

    scheme: str
    code: CPGCCode
    tolerance: float
    mu: float
    alpha: float
    times: np.ndarray
    messages: np.ndarray
    recovered: np.ndarray | None = None
    params: dict = field(default_factory=dict)

    @property
    def trials(self) -> int:
        return int(self.times.size)

    @property
    def mean_time(self) -> float:
        return float(np.mean(self.times))

    @property
    def mean_messages(self) -> float:
        return float(np.mean(self.messages))

    @property
    def time_ci(self) -> tuple[float, float]:
        """95 % Student-t confidence interval of the mean completion time (:func:`gcc.metrics.mean_ci`)."""
        ci = mean_ci(self.times)
        return (ci.low, ci.high)

    def labels(self) -> dict:
        """What identifies the result in a table: scheme, setting and the parameters of the run."""
        return {"scheme": self.scheme, "setting": self.code.setting, "n_workers": self.code.n_workers,
                "load": self.code.load, "tolerance": self.tolerance, "mu": self.mu, "alpha": self.alpha,
                "trials": self.trials}

    def summary(self, level: float = 0.95):
        """Mean and interval of the time and the messages, in the summary vocabulary.

        Returns
        -------
        pandas.DataFrame
            Two rows, ``metric`` = ``"time"`` and ``"messages"``: :meth:`labels` plus the columns
            of :func:`gcc.summary.summarize` (``mean, std, ci_low, ci_high, half_width, n, n_nan``).

        Examples
        --------
        >>> import gcc
        >>> res = gcc.cpgc.simulate("mds", n_workers=40, trials=500, seed=0)
        >>> s = res.summary()
        >>> s[["scheme", "metric", "mean", "n"]].round(4)
          scheme    metric     mean    n
        0    mds      time   0.1531  500
        1    mds  messages  14.0000  500
        """
        import pandas as pd

        from ..summary import summarize

        table = pd.DataFrame({**self.labels(), "trial": np.arange(self.trials), "time": self.times,
                              "messages": self.messages})
        return summarize(table, ["time", "messages"], by=list(self.labels()), level=level)

    def __repr__(self) -> str:
        return (f"SimulationResult(scheme={self.scheme!r}, tolerance={self.tolerance}, trials={self.trials}, "
                f"mean_time={self.mean_time:.5f}, mean_messages={self.mean_messages:.3f})")


@validate_params({"code": InstanceOf(CPGCCode, "a gcc.cpgc.CPGCCode"), "tolerance": TOLERANCE,
                  "return_recovered": BOOL})
def completion(code: CPGCCode, speeds: np.ndarray, tolerance: float = 0.0, return_recovered: bool = False):
    """Completion time, message count and recovered blocks for given worker speeds.

    Parameters
    ----------
    code : CPGCCode
    speeds : array_like, shape (trials, n_workers)
        Time per task unit of each worker, ``alpha + X_i``: finite and > 0.
    tolerance : float
        q in [0, 1).
    return_recovered : bool

    Returns
    -------
    times : ndarray, shape (trials,)
        ``inf`` for a trial whose condition never holds.
    messages : ndarray of int, shape (trials,)
    recovered : ndarray of bool, shape (trials, n_blocks), or None

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.cpgc import completion, uncoded_cyclic_code
    >>> code = uncoded_cyclic_code(3, 2)             # worker i: W_i, then W_(i+1)
    >>> times, messages, rec = completion(code, np.array([[0.1, 0.2, 1.0]]), return_recovered=True)
    >>> times, messages, rec                         # W_2 arrives second from worker 1 at 2 * 0.2
    (array([0.4]), array([4]), array([[ True,  True,  True]]))
    """
    constraint = f"an array of shape (trials, {code.n_workers}) of finite times > 0"
    speeds = validate(speeds, ArrayLike(shape=(None, code.n_workers), dtype=float, finite=True,
                                        description=constraint), "speeds", "completion")
    if not len(speeds):
        raise invalid("speeds", "completion", f"an array of shape (trials >= 1, {code.n_workers})", speeds,
                      "it has no rows")
    if not (speeds > 0).all():
        i = tuple(int(j) for j in np.argwhere(~(speeds > 0))[0])
        raise invalid("speeds", "completion", constraint, speeds, f"speeds{list(i)} = {speeds[i]!r}")
    T, K = speeds.shape
    B = code.n_blocks
    msg_times = speeds[:, :, None] * code.message_units()          # (T, K, n_messages)
    if code.any_k is not None:
        if code.n_messages != 1:
            raise invalid("code", "completion", "a threshold code with one message per worker", code.name)
        times = np.partition(msg_times[:, :, 0], code.any_k - 1, axis=1)[:, code.any_k - 1]
        messages = (msg_times[:, :, 0] <= times[:, None]).sum(axis=1)
        rec = np.ones((T, B), dtype=bool) if return_recovered else None
        return times, messages, rec

    need = required_blocks(B, tolerance) if code.partial else B
    R = code.n_rows
    coef = code.coefficients.reshape(K * R, B)                    # row id = worker * R + j
    nnz = coef != 0
    deg = nnz.sum(axis=1)
    single_block = np.where(deg == 1, nnz.argmax(axis=1), -1)
    last_of_message = np.ones(R, dtype=bool)
    last_of_message[:-1] = code.row_messages[1:] != code.row_messages[:-1]
    last_of_message = np.tile(last_of_message, K)
    D = int(deg.max())
    cols = np.argsort(~nnz, axis=1, kind="stable")[:, :D]         # the nonzero columns first, in order
    used = np.take_along_axis(nnz, cols, axis=1)
    sup_idx = np.where(used, cols, B).astype(np.intp)              # padding: block B, value 0
    sup_val = np.where(used, np.take_along_axis(coef, cols, axis=1), 0.0)

    row_times = (speeds[:, :, None] * code.row_units).reshape(T, K * R)
    order = np.argsort(row_times, axis=1, kind="stable")           # stable: a message's rows stay together
    S = K * R
    done_step = np.full(T, -1)
    rec_out = np.zeros((T, B), dtype=bool) if return_recovered else None

    # Phase 1: union of single-block rows, until each trial's first multi-block row.
    known = np.zeros((T, B), dtype=bool)
    count = np.zeros(T, dtype=int)
    first_multi = np.full(T, S)
    live = np.arange(T)
    for s in range(S):
        if live.size == 0:
            break
        rid = order[live, s]
        blk = single_block[rid]
        multi = blk < 0
        if multi.any():
            first_multi[live[multi]] = s
        ok = ~multi
        lv, b = live[ok], blk[ok]
        new = ~known[lv, b]
        known[lv, b] = True
        count[lv] += new
        fin = (count[lv] >= need) & last_of_message[rid[ok]]
        done_step[lv[fin]] = s
        live = lv[~fin]

    if return_recovered:
        # Trials decided in phase 1 recovered exactly the union of their single-block rows.
        rec_out[done_step >= 0] = known[done_step >= 0]

    # Phase 2, from the first multi-block row on: an incremental decoder (gcc.cpgc.elimination).
    ids = np.flatnonzero((first_multi < S) & (done_step < 0))     # trials still undecided
    if ids.size:
        # Sorted by the step at which they enter, the started trials are always a prefix.
        ids = ids[np.argsort(first_multi[ids], kind="stable")]
        start = first_multi[ids]
        args = (sup_idx, sup_val, last_of_message, need, return_recovered)
        decode = sparse_recovery if D <= MAX_SPARSE_DEGREE else dense_recovery
        done, rec, over = decode(order, ids, start, known[ids], *args)
        if over.any():  # rows outgrew the sparse decoder: those trials again, densely
            done[over], rec_over, _ = dense_recovery(order, ids[over], start[over], known[ids[over]], *args)
            if return_recovered:
                rec[over] = rec_over
        done_step[ids] = done
        if return_recovered:
            rec_out[ids[done >= 0]] = rec[done >= 0]

    reached = done_step >= 0
    times = np.full(T, np.inf)
    times[reached] = row_times[np.flatnonzero(reached), order[reached, done_step[reached]]]
    messages = (msg_times <= times[:, None, None]).sum(axis=(1, 2))
    return times, messages, rec_out


@validate_params({"scheme": SCHEME, "n_workers": _COUNT, "tolerance": TOLERANCE, "trials": _COUNT,
                  "seed": Interval(Integral, 0, None), "mu": MU, "alpha": ALPHA, "degrees": DEGREES,
                  "load": NoneOr(_COUNT), "setting": NoneOr(SETTING),
                  "code": NoneOr(InstanceOf(CPGCCode, "a gcc.cpgc.CPGCCode")),
                  "code_seed": NoneOr(SEED_OR_GENERATOR), "return_recovered": BOOL})
def simulate(scheme="rcsc", n_workers: int = 40, tolerance: float = 0.0, trials: int = 2000, seed=0,
             mu: float = 10.0, alpha: float = 0.01, degrees=(1, 2, 3), load: int | None = None,
             setting: str | None = None, code: CPGCCode | None = None, code_seed=None,
             return_recovered: bool = False) -> SimulationResult:
    """Monte Carlo estimate of the mean completion time and communication load of one iteration.

    Parameters
    ----------
    scheme : str
        A key or alias of :data:`gcc.cpgc.SCHEMES`, in any case; ignored when ``code`` is given.
    n_workers : int
        K (default 40).
    tolerance : float
        q in [0, 1): stop once ``ceil(K (1 - q))`` blocks are recoverable (MDS and GC ignore it).
    trials : int
        Independent iterations simulated.
    seed : int
        Seeds the code construction (unless ``code_seed``) and the delays, independently.
    mu, alpha : float
        Delay model ``t_ij = j (alpha + X_i)``, ``X_i ~ Exp(mu)``; mu > 0, alpha >= 0.
    degrees, load, setting
        See :func:`gcc.cpgc.codes.make_code`.
    code : CPGCCode, optional
        Use this code instead of building one.
    code_seed : int, optional
        Seed of the code alone (default: derived from ``seed``); one code is drawn per call.
    return_recovered : bool
        Keep the recovered-block mask of every trial.

    Returns
    -------
    SimulationResult
        ``.mean_time``, ``.mean_messages``, ``.time_ci``, per-trial ``.times`` and ``.messages``.

    Examples
    --------
    >>> import gcc
    >>> res = gcc.cpgc.simulate("rcsc", n_workers=40, tolerance=0.0, trials=2000, seed=0)
    >>> round(res.mean_time, 4), round(res.mean_messages, 2)
    (0.1585, 64.29)
    >>> round(gcc.cpgc.simulate("rcsc", tolerance=0.3, trials=2000, seed=0).mean_time, 4)   # 70 % of the blocks
    0.075
    """
    K, q, n = n_workers, float(tolerance), trials
    degrees = tuple(map(int, degrees))
    code_ss, delay_ss = np.random.SeedSequence(int(seed)).spawn(2)
    if code is None:
        cseed = np.random.default_rng(code_ss) if code_seed is None else code_seed
        with entry("simulate"):
            code = make_code(scheme, K, degrees, load, setting, cseed)
    elif code.n_workers != K:
        raise invalid("n_workers", "simulate", f"equal to code.n_workers={code.n_workers}", K)
    speeds = worker_speeds(np.random.default_rng(delay_ss), n, K, mu, alpha)
    times, messages, rec = completion(code, speeds, q, return_recovered)
    return SimulationResult(code.name, code, q, mu, alpha, times, messages, rec,
                            {"seed": int(seed), "degrees": degrees, "load": code.load})
