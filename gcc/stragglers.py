"""Straggler models: which workers the master hears from, and when.

Every model has ``sample_many(rng, n_workers, trials)`` (boolean received masks ``(trials, N)``) and
``sample(rng, n_workers)`` (its first row as ascending indices); the delay models also give the time.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Learning-Theoretic
   Foundation for General Coded Computing: The Straggler Setting",
   arXiv:2608.28910, 2026.
.. [2] P. Moradi, M. A. Maddah-Ali, "General Coded Computing in a
   Probabilistic Straggler Regime", ISIT 2025, arXiv:2502.00645.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import Sequence

import numpy as np

from .adversary import SEARCHES, worst_case_stragglers
from .validation import (GENERATOR, AnyOf, InstanceOf, Interval, ListOf, NoneOr, Options, check_int, invalid, validate,
                         validate_params)

__all__ = ["FixedCount", "Bernoulli", "ContiguousBlock", "WorstCase", "ShiftedExponential", "SlowWorkers"]

_COUNT = Interval(Integral, 0, None)
_RATE = Interval(Real, 0, None, closed="neither", description="a float > 0")
_SHIFT = Interval(Real, 0, None, description="a float >= 0")


class StragglerModel:
    """The interface of every straggler model: ``sample`` is the first row of ``sample_many``.

    An :attr:`adaptive` model's methods also take the keywords ``code``, ``f`` and ``X``.
    """

    #: draws with fewer received workers than this are flagged by the harness
    min_survivors: int = 1
    #: whether the received set depends on the code, f and the data (the adversary), not on rng alone
    adaptive: bool = False
    #: the number of stragglers ``S`` (None: random, as for Bernoulli)
    stragglers: int | None = None

    def _checked(self, rng, n_workers, trials, owner=None, rng_needed=True, below_n=True):
        """Checked ``(rng, N, trials)`` of a sampling method (and ``S < N`` with ``below_n``)."""
        owner = owner or type(self).__name__
        rng = validate(rng, GENERATOR, "rng", owner) if rng_needed else rng
        n = check_int(n_workers, "n_workers", owner, minimum=1)
        trials = check_int(trials, "trials", owner, minimum=1)
        if self.min_survivors > n:    # every draw would be flagged: no loss to report
            raise invalid("min_survivors", owner, f"an int <= n_workers (= {n})", self.min_survivors)
        if below_n and self.stragglers is not None and self.stragglers >= n:
            raise invalid("stragglers", owner, f"an int < n_workers (= {n})", self.stragglers)
        return rng, n, trials

    def sample_many(self, rng: np.random.Generator, n_workers: int, trials: int) -> np.ndarray:
        """Boolean received masks of shape ``(trials, N)`` (``True`` = received)."""
        return self._masks(*self._checked(rng, n_workers, trials))

    def sample(self, rng: np.random.Generator, n_workers: int, **data) -> np.ndarray:
        """Ascending indices (|F|,) of the workers of one received set (``**data``: :attr:`adaptive`)."""
        return np.flatnonzero(self.sample_many(rng, n_workers, 1, **data)[0])


class FixedCount(StragglerModel):
    """``S`` stragglers chosen uniformly at random among the ``N`` workers (Figs. 3-4 of [1]_).

    Parameters
    ----------
    stragglers : int >= 0
        ``S < N`` (checked on use).

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> gcc.FixedCount(2).sample(np.random.default_rng(0), n_workers=6)
    array([0, 1, 4, 5])
    """

    @validate_params({"stragglers": _COUNT})
    def __init__(self, stragglers: int):
        self.stragglers = stragglers

    def __repr__(self) -> str:
        return f"FixedCount(stragglers={self.stragglers})"

    def _masks(self, rng, n, trials):
        """Exactly ``N - S`` True per row: the S smallest of N uniforms straggle."""
        order = np.argsort(rng.random((trials, n)), axis=1)
        mask = np.ones((trials, n), dtype=bool)
        np.put_along_axis(mask, order[:, : self.stragglers], False, axis=1)
        return mask


class Bernoulli(StragglerModel):
    """Each worker straggles independently with probability ``p`` [2]_.

    Parameters
    ----------
    p : float in [0, 1)
        Straggling probability.
    min_survivors : int >= 1, default 2
        Draws with fewer received workers are kept, flagged by the harness (never redrawn); at most
        ``n_workers`` (checked on use).

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> model = gcc.Bernoulli(0.3)
    >>> model.sample(np.random.default_rng(1), n_workers=8)
    array([0, 1, 3, 4, 5, 6, 7])
    """

    @validate_params({"p": Interval(Real, 0, 1, closed="left"), "min_survivors": Interval(Integral, 1, None)})
    def __init__(self, p: float, min_survivors: int = 2):
        self.p, self.min_survivors = p, min_survivors

    def __repr__(self) -> str:
        return f"Bernoulli(p={self.p:g}, min_survivors={self.min_survivors})"

    def _masks(self, rng, n, trials):
        """Each entry True w.p. ``1 - p``."""
        return rng.random((trials, n)) >= self.p


class ContiguousBlock(StragglerModel):
    """The ``S`` consecutive workers ``start, ..., start + S - 1`` straggle: the widest gap [1]_.

    Parameters
    ----------
    stragglers : int >= 0
        ``S``.
    start : int >= 0 or None, default None
        First straggler; ``None`` draws it uniformly among the ``N - S + 1`` positions per sample.

    Examples
    --------
    >>> import gcc
    >>> gcc.ContiguousBlock(2, start=1).sample(None, n_workers=5)
    array([0, 3, 4])
    """

    @validate_params({"stragglers": _COUNT, "start": NoneOr(_COUNT)})
    def __init__(self, stragglers: int, start: int | None = None):
        self.stragglers, self.start = stragglers, start

    def __repr__(self) -> str:
        return f"ContiguousBlock(stragglers={self.stragglers}, start={self.start})"

    def sample_many(self, rng, n_workers, trials):
        """Boolean received masks of shape ``(trials, N)`` with one block of False."""
        rng, n, trials = self._checked(rng, n_workers, trials, rng_needed=self.start is None)
        S = self.stragglers
        if self.start is None:
            starts = rng.integers(0, n - S + 1, size=trials)
        else:
            if self.start > n - S:
                raise invalid("start", "ContiguousBlock",
                              f"an int <= n_workers - stragglers (= {n - S})", self.start)
            starts = np.full(trials, self.start)
        idx = np.arange(n)
        return ~((idx >= starts[:, None]) & (idx < starts[:, None] + S))


class WorstCase(StragglerModel):
    """Adversarial stragglers: the set of ``S`` that maximises the loss (:meth:`resolve`).

    :func:`gcc.harness.run_trials` resolves it per scheme and trial, or once against ``against``.

    Parameters
    ----------
    stragglers : int >= 0
        ``S``.
    search : {"contiguous", "greedy", "exhaustive"}
        See :func:`gcc.adversary.worst_case_stragglers`.
    against : str or None
        Scheme whose worst case is shared by all schemes, or ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> model = gcc.WorstCase(2)
    >>> code = gcc.SplineCode(n_inputs=3, n_workers=10)
    >>> model.resolve(code, np.sin, np.array([-1.0, 0.2, 0.9]))
    array([0, 1, 2, 3, 6, 7, 8, 9])
    """

    adaptive = True

    @validate_params({"stragglers": _COUNT, "search": Options(SEARCHES),
                      "against": NoneOr(InstanceOf(str, "a scheme name (a key of codes)"))})
    def __init__(self, stragglers: int, search: str = "contiguous", against: str | None = None):
        self.stragglers, self.search, self.against = stragglers, search, against

    def __repr__(self) -> str:
        return (f"WorstCase(stragglers={self.stragglers}, search={self.search!r}, "
                f"against={self.against!r})")

    def resolve(self, code, f, X, *, outputs=None, return_loss: bool = False):
        """The worst received set (N - S,) for ``code``, ``f`` and ``X`` by this model's search.

        Arguments and return values as in :func:`gcc.adversary.worst_case_stragglers`.
        """
        return worst_case_stragglers(code, f, X, self.stragglers, self.search,
                                     outputs=outputs, return_loss=return_loss)

    def sample_many(self, rng, n_workers, trials, *, code=None, f=None, X=None):
        """The set of :meth:`resolve` as masks of shape ``(trials, N)``; ``code``, ``f`` and ``X`` are
        required (as in :meth:`resolve`), ``n_workers`` is ``code.n_workers`` and ``rng`` is not drawn from."""
        owner = "WorstCase.sample_many"
        _, n, trials = self._checked(rng, n_workers, trials, owner, rng is not None, below_n=False)
        for name, value in (("code", code), ("f", f), ("X", X)):
            if value is None:
                raise invalid(name, owner, "given: the adversary chooses its set from the code, f and "
                              "the data (code=, f=, X=; gcc.harness.run_trials resolves it per scheme)", value)
        if getattr(code, "n_workers", None) != n:
            raise invalid("n_workers", owner, f"code.n_workers (= {getattr(code, 'n_workers', None)})", n)
        mask = np.zeros((trials, n), dtype=bool)
        mask[:, self.resolve(code, f, X)] = True
        return mask


class DelayModel(StragglerModel):
    """Completion times per worker; the master waits for the fastest ``N - S``."""

    stragglers: int = 0

    def sample_times(self, rng: np.random.Generator, n_workers: int, trials: int) -> np.ndarray:
        """Completion times, shape ``(trials, N)``."""
        return self._times(*self._checked(rng, n_workers, trials, below_n=False))

    def sample_many_with_time(self, rng: np.random.Generator, n_workers: int,
                              n_wait: int, trials: int) -> tuple[np.ndarray, np.ndarray]:
        """Masks (trials, N) of the fastest ``n_wait`` workers and the waits (trials,)."""
        rng, n, trials = self._checked(rng, n_workers, trials, below_n=False)
        return self._with_time(rng, n, check_int(n_wait, "n_wait", type(self).__name__, 1, n), trials)

    def _with_time(self, rng, n, n_wait, trials):
        """:meth:`sample_many_with_time` of checked arguments."""
        times = self._times(rng, n, trials)
        order = np.argsort(times, axis=1, kind="stable")
        mask = np.zeros_like(times, dtype=bool)
        np.put_along_axis(mask, order[:, :n_wait], True, axis=1)
        waited = np.take_along_axis(times, order[:, n_wait - 1: n_wait], axis=1)[:, 0]
        return mask, waited

    def _masks(self, rng, n, trials):
        """The fastest ``N - S`` workers."""
        return self._with_time(rng, n, n - self.stragglers, trials)[0]


class ShiftedExponential(DelayModel):
    """Completion time of every worker ``shift + Exp(rate)``, i.i.d. (Lee et al., 2018).

    Parameters
    ----------
    shift : float >= 0
    rate : float > 0
    stragglers : int >= 0, default 0
        ``S`` used by ``sample`` / ``sample_many`` (they wait for ``N - S``).

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> model = gcc.ShiftedExponential(shift=1.0, rate=2.0)
    >>> mask, time = model.sample_many_with_time(np.random.default_rng(0), 5, n_wait=3, trials=1)
    >>> np.flatnonzero(mask[0]), round(float(time[0]), 4), round(model.expected_time(5, 3), 4)
    (array([2, 3, 4]), 1.2752, 1.3917)
    """

    @validate_params({"shift": _SHIFT, "rate": _RATE, "stragglers": _COUNT})
    def __init__(self, shift: float = 1.0, rate: float = 1.0, stragglers: int = 0):
        self.shift, self.rate, self.stragglers = shift, rate, stragglers

    def __repr__(self) -> str:
        return (f"ShiftedExponential(shift={self.shift:g}, rate={self.rate:g}, "
                f"stragglers={self.stragglers})")

    def _times(self, rng, n_workers, trials):
        """``shift + Exp(rate)``, shape ``(trials, N)``."""
        return self.shift + rng.exponential(1.0 / self.rate, size=(trials, n_workers))

    def expected_time(self, n_workers: int, n_wait: int) -> float:
        """Closed form ``E[T_(n_wait:N)] = shift + (H_N - H_{N - n_wait}) / rate``."""
        n = check_int(n_workers, "n_workers", "ShiftedExponential", minimum=1)
        n_wait = check_int(n_wait, "n_wait", "ShiftedExponential", 1, n)
        harmonic = sum(1.0 / i for i in range(n - n_wait + 1, n + 1))
        return self.shift + harmonic / self.rate


class SlowWorkers(DelayModel):
    """Workers take ``shift + Exp(rate)``; slow ones ``factor`` times that.

    Parameters
    ----------
    slow : int >= 0 or sequence of int
        Number of slow workers (drawn per trial), or their indices.
    factor : float >= 1, default 10.0
    shift : float >= 0, default 1.0
    rate : float > 0, default 1.0
    stragglers : int >= 0, default 0
        ``S`` used by ``sample`` / ``sample_many`` (they wait for ``N - S``).

    Examples
    --------
    >>> import numpy as np
    >>> import gcc
    >>> model = gcc.SlowWorkers([0, 1], factor=100.0)  # workers 0 and 1 are slow
    >>> np.flatnonzero(model.sample_many_with_time(np.random.default_rng(0), 6, n_wait=4, trials=1)[0])
    array([2, 3, 4, 5])
    """

    @validate_params({"slow": AnyOf(_COUNT, ListOf(_COUNT, min_len=0, distinct=True), description=(
                          "an int >= 0 or a sequence of distinct non-negative worker indices")),
                      "factor": Interval(Real, 1, None, description="a float >= 1"), "shift": _SHIFT,
                      "rate": _RATE, "stragglers": _COUNT})
    def __init__(self, slow: int | Sequence[int], factor: float = 10.0, shift: float = 1.0,
                 rate: float = 1.0, stragglers: int = 0):
        self.slow = int(slow) if isinstance(slow, Integral) else np.sort(np.array(slow, dtype=np.int64))
        self.factor, self.shift, self.rate, self.stragglers = factor, shift, rate, stragglers

    def __repr__(self) -> str:
        slow = self.slow if isinstance(self.slow, int) else self.slow.tolist()
        return (f"SlowWorkers(slow={slow}, factor={self.factor:g}, shift={self.shift:g}, "
                f"rate={self.rate:g}, stragglers={self.stragglers})")

    def _times(self, rng, n_workers, trials):
        """``shift + Exp(rate)``, ``factor`` times that for the slow workers, shape ``(trials, N)``."""
        times = self.shift + rng.exponential(1.0 / self.rate, size=(trials, n_workers))
        if isinstance(self.slow, int):
            if self.slow > n_workers:
                raise invalid("slow", "SlowWorkers", f"an int <= n_workers (= {n_workers})",
                              self.slow)
            slow_mask = ~FixedCount(self.slow)._masks(rng, n_workers, trials)   # slow: drawn as S of N
        else:
            if self.slow.size and self.slow.max() >= n_workers:
                raise invalid("slow", "SlowWorkers", f"indices < n_workers (= {n_workers})",
                              self.slow.tolist())
            slow_mask = np.zeros((trials, n_workers), dtype=bool)
            slow_mask[:, self.slow] = True
        return np.where(slow_mask, self.factor * times, times)
