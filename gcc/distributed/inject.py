"""Straggler and fault injection acted out inside the Dask workers.

The master draws, with an explicit seed, what each task of a request will suffer (a :class:`TaskFault`)
and ships it with the task; the worker acts it out. Injected sleeps are interruptible: once the master
has decoded it stops the stragglers, as a real system would.
"""
from __future__ import annotations

import dataclasses
import time
from numbers import Integral, Real
from typing import Any, Sequence

import numpy as np

from gcc.validation import (BOOL, GENERATOR, Interval, ListOf, NoneOr, Satisfies, check_int, check_real, invalid,
                            validate)

__all__ = ["TaskFault", "Injection", "sample_delays", "interruptible_sleep"]


@dataclasses.dataclass(frozen=True)
class TaskFault:
    """What one task suffers on its worker, as :meth:`Injection.plan` draws it.

    Attributes
    ----------
    base_s : float
        Emulated compute time in seconds, added to the real compute of ``f``.
    slowdown : float
        Factor >= 1 applied to ``base_s`` + the measured compute time.
    delay_s : float
        Extra delay in seconds.
    die : bool
        The worker process exits (``os._exit``) ``die_after_s`` seconds into the task.
    die_after_s : float
        See ``die``.
    interruptible : bool
        Injected sleeping stops as soon as the master cancels the task.
    """

    base_s: float = 0.0
    slowdown: float = 1.0
    delay_s: float = 0.0
    die: bool = False
    die_after_s: float = 0.0
    interruptible: bool = False

    def __post_init__(self):
        for name, constraint in _FAULT_FIELDS.items():
            object.__setattr__(self, name, validate(getattr(self, name), constraint, name, "TaskFault"))

    def injected_s(self, compute_s: float) -> float:
        """Seconds to sleep after a compute of ``compute_s`` seconds."""
        return self.slowdown * (self.base_s + compute_s) - compute_s + self.delay_s


def sample_delays(model: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` per-task delays in seconds (shape (n,), >= 0) from a delay model.

    ``model``: one of :mod:`gcc.stragglers`' delay models (``sample_times(rng, n, trials)``), or a
    callable ``(rng, n) -> array of n seconds``.
    """
    n = check_int(n, "n", "sample_delays", minimum=0)
    rng = validate(rng, GENERATOR, "rng", "sample_delays")
    model = validate(model, _DELAY, "delay", "Injection")
    times = np.asarray(model.sample_times(rng, n, 1)[0] if hasattr(model, "sample_times") else model(rng, n))
    if (times.dtype.kind not in "biuf" or times.shape != (n,) or not np.all(np.isfinite(times))
            or np.any(times < 0)):
        raise invalid("delay", "Injection", f"a delay model that gives {n} finite delays >= 0", model,
                      f"it gave {times!r}"[:200])
    return times.astype(float)


_DELAY = Satisfies(lambda d: hasattr(d, "sample_times") or callable(d),
                   "a gcc.stragglers delay model or a callable (rng, n) -> seconds")
_POSITIONS = ListOf(Interval(Integral, 0, None), min_len=0, distinct=True, as_tuple=True,
                    description="a sequence of distinct worker positions (ints >= 0)")
_SECONDS = Interval(Real, 0, None)
#: the constraints of :class:`Injection`'s fields
_FIELDS = {"base_s": _SECONDS, "delay": NoneOr(_DELAY), "delay_scale": _SECONDS, "slow_workers": _POSITIONS,
           "n_random_slow": Interval(Integral, 0, None), "slowdown": Interval(Real, 1, None),
           "sleep_prob": Interval(Real, 0, 1), "sleep_s": _SECONDS, "kill": _POSITIONS, "kill_after_s": _SECONDS,
           "interruptible": BOOL}
#: the constraints of :class:`TaskFault`'s fields
_FAULT_FIELDS = {"base_s": _SECONDS, "slowdown": Interval(Real, 1, None), "delay_s": _SECONDS, "die": BOOL,
                 "die_after_s": _SECONDS, "interruptible": BOOL}


@dataclasses.dataclass(frozen=True)
class Injection:
    """A straggler / fault scenario for the tasks of one request.

    Parameters
    ----------
    base_s : float
        Emulated compute seconds per task (see :class:`TaskFault`).
    delay : object, optional
        Per-task delay model (see :func:`sample_delays`), in seconds.
    delay_scale : float
        Multiplies the model's delays (a model in "task units" becomes seconds).
    slow_workers : sequence of int
        Worker positions (task indices) slowed on every request: persistent stragglers.
    n_random_slow : int
        Number of worker positions, drawn uniformly per request, that are slowed.
    slowdown : float
        Slow-down factor of slowed workers (e.g. 10 for "slowed 10x").
    sleep_prob, sleep_s : float
        The authors' rule: each task sleeps ``sleep_s`` seconds with probability ``sleep_prob``
        (they used 6 ms with probability 0.2 on EC2).
    kill : sequence of int
        Worker positions whose process dies mid-task (once per request that includes them).
    kill_after_s : float
        How far into the task the process dies.
    interruptible : bool
        Stop injected sleeps once the master has decoded.
    """

    base_s: float = 0.0
    delay: Any = None
    delay_scale: float = 1.0
    slow_workers: Sequence[int] = ()
    n_random_slow: int = 0
    slowdown: float = 10.0
    sleep_prob: float = 0.0
    sleep_s: float = 0.006
    kill: Sequence[int] = ()
    kill_after_s: float = 0.0
    interruptible: bool = True

    def __post_init__(self):
        for name, constraint in _FIELDS.items():
            object.__setattr__(self, name, validate(getattr(self, name), constraint, name, "Injection"))

    def plan(self, n_tasks: int, rng: np.random.Generator) -> list[TaskFault]:
        """The :class:`TaskFault` of each of the ``n_tasks`` tasks of one request (task i on worker i)."""
        n_tasks = check_int(n_tasks, "n_tasks", "Injection.plan", minimum=1)
        rng = validate(rng, GENERATOR, "rng", "Injection.plan")
        check_int(self.n_random_slow, "n_random_slow", "Injection", 0, n_tasks)
        for name in ("slow_workers", "kill"):
            if any(i >= n_tasks for i in getattr(self, name)):
                raise invalid(name, "Injection", f"worker positions in [0, {n_tasks})",
                              list(getattr(self, name)))
        slow = np.zeros(n_tasks, dtype=bool)
        slow[list(self.slow_workers)] = True
        if self.n_random_slow:
            slow[rng.choice(n_tasks, size=self.n_random_slow, replace=False)] = True
        delay = np.zeros(n_tasks)
        if self.delay is not None:
            delay += self.delay_scale * sample_delays(self.delay, n_tasks, rng)
        if self.sleep_prob > 0:
            delay += self.sleep_s * (rng.random(n_tasks) < self.sleep_prob)
        die = np.zeros(n_tasks, dtype=bool)
        die[list(self.kill)] = True
        return [TaskFault(base_s=self.base_s, slowdown=self.slowdown if slow[i] else 1.0,
                          delay_s=float(delay[i]), die=bool(die[i]), die_after_s=self.kill_after_s,
                          interruptible=self.interruptible) for i in range(n_tasks)]

    def expected_task_s(self, n_tasks: int, rng: np.random.Generator) -> np.ndarray:
        """Simulated busy seconds of each task, shape (n_tasks,) (``inf``: the worker dies): the plan, no Dask."""
        return np.array([np.inf if f.die else f.injected_s(0.0) for f in self.plan(n_tasks, rng)])


#: granularity of interruptible sleeps: short against the delays injected (tens of ms and up)
_POLL_S = 0.004


def interruptible_sleep(seconds: float, interruptible: bool = True) -> tuple[float, bool]:
    """Sleep ``seconds`` inside a Dask task, or less if the task is cancelled meanwhile.

    Cancellation is read from the worker's state of the running task (it leaves ``"executing"`` once
    the scheduler frees it), polled every few ms. Outside a Dask worker (or with
    ``interruptible=False``) it is a plain sleep; nothing happens for ``seconds = 0``.

    Returns
    -------
    slept : float
        Seconds actually slept.
    interrupted : bool
        Whether the sleep ended because the task was cancelled.
    """
    seconds = check_real(seconds, "seconds", "interruptible_sleep", minimum=0.0)
    interruptible = validate(interruptible, BOOL, "interruptible", "interruptible_sleep")
    if seconds == 0:
        return 0.0, False
    t0 = time.perf_counter()
    end = t0 + seconds
    state = key = None
    if interruptible:
        try:
            from distributed import get_worker

            worker = get_worker()
            key, state = worker.get_current_task(), worker.state
        except (ImportError, ValueError):  # not inside a Dask worker
            state = None
    while (left := end - time.perf_counter()) > 0:
        if state is not None:
            ts = state.tasks.get(key)
            if ts is None or ts.state != "executing":
                return time.perf_counter() - t0, True
        time.sleep(min(left, _POLL_S) if state is not None else left)
    return time.perf_counter() - t0, False
