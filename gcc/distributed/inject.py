"""Straggler and fault injection applied inside the Dask workers.

A local cluster has no natural stragglers worth the name, so the delays of the
paper's models are *injected*: the master draws, with an explicit seed, what
each task of a request will suffer (a :class:`TaskFault`), ships it with the
task, and the worker acts it out -- it sleeps, runs slowed down, or its process
dies. Drawing at the master keeps a run reproducible from its seed while the
waiting itself happens for real, inside the worker, where the scheduler, the
network stack and the decoder all see it.

Supported injections (combine freely):

* a per-task delay from one of :mod:`gcc.stragglers`' delay models (e.g. the
  shifted exponential), or any callable ``(rng, n) -> (n,) seconds``;
* persistent slow workers (the same worker positions slowed ``slowdown`` times on
  every request) or ``n_random_slow`` workers drawn uniformly per request;
* the authors' EC2 rule: each worker sleeps ``sleep_s`` with probability ``sleep_prob``;
* a worker process that dies mid-task (``os._exit`` inside the task).

Injected sleeps are *interruptible*: once the master has decoded it cancels
the stragglers' tasks and they stop sleeping, as a real system would abort
their work. Without that, a cancelled straggler keeps its worker busy and
delays the next request pinned to it.
"""
from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable, Sequence

import numpy as np

from gcc.validation import (BOOL, Callable as CallableC, InstanceOf, NoneOr, check_int, check_real,
                            check_rng, invalid, validate)

#: a duration in seconds that may be zero: a finite real >= 0
_SECONDS0 = "a finite real number >= 0"


def _check_positions(value: Any, name: str, owner: str) -> tuple:
    """Distinct worker positions (ints >= 0) as a tuple; the upper bound is checked per request."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise invalid(name, owner, "a sequence of distinct worker positions (ints >= 0)", value)
    positions = tuple(value)
    for i in positions:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or i < 0:
            raise invalid(name, owner, "a sequence of distinct worker positions (ints >= 0)", value,
                          f"{i!r} is not a position")
    if len(set(positions)) != len(positions):
        raise invalid(name, owner, "a sequence of distinct worker positions (ints >= 0)", value,
                      "a position is repeated")
    return tuple(int(i) for i in positions)

__all__ = ["TaskFault", "Injection", "act_out", "sample_delays", "interruptible_sleep"]


@dataclasses.dataclass(frozen=True)
class TaskFault:
    """What one task suffers on its worker (drawn at the master, acted out in the worker).

    Attributes
    ----------
    base_s : float
        Emulated compute time in seconds, added to the real compute of ``f``
        (toy functions take microseconds; a DNN batch takes tens of ms).
    slowdown : float
        Factor >= 1 applied to ``base_s`` + the measured compute time.
    delay_s : float
        Extra delay in seconds (from a delay model or the sleep-with-probability rule).
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
        owner = "TaskFault"
        for name in ("base_s", "delay_s", "die_after_s"):
            object.__setattr__(self, name, check_real(getattr(self, name), name, owner, minimum=0,
                                                      constraint=_SECONDS0))
        object.__setattr__(self, "slowdown", check_real(self.slowdown, "slowdown", owner, minimum=1))
        for name in ("die", "interruptible"):
            object.__setattr__(self, name, bool(validate(getattr(self, name), BOOL, name, owner)))

    @classmethod
    def _drawn(cls, **values) -> "TaskFault":
        """A fault of :meth:`Injection.plan`, whose values the validated Injection already fixed: no re-check."""
        fault = object.__new__(cls)
        for name, value in values.items():
            object.__setattr__(fault, name, value)
        return fault

    def injected_s(self, compute_s: float) -> float:
        """Seconds to sleep after a compute of ``compute_s`` seconds."""
        return self.slowdown * (self.base_s + compute_s) - compute_s + self.delay_s


def sample_delays(model: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` per-task delays in seconds from a delay model.

    Parameters
    ----------
    model : object or callable
        One of :mod:`gcc.stragglers`' delay models (``ShiftedExponential``,
        ``SlowWorkers``: anything with ``sample_times(rng, n, trials)``), or a callable
        ``(rng, n) -> array of n seconds``.
    n : int
        Number of tasks.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (n,)
        Non-negative delays.
    """
    n = check_int(n, "n", "sample_delays", minimum=0)
    rng = check_rng(rng, "rng", "sample_delays")
    if hasattr(model, "sample_times"):
        # gcc.stragglers delay models: sample_times(rng, n_workers, trials) -> (trials, N).
        times = np.asarray(model.sample_times(rng, n, 1))[0]
    elif callable(model):
        times = model(rng, n)
    else:
        raise invalid("delay", "Injection", "a gcc.stragglers delay model or a callable (rng, n) -> seconds", model)
    try:
        times = np.asarray(times)
        if times.dtype.kind not in "biuf":          # complex or strings: no delay, no cast
            raise TypeError
        times = times.astype(float).reshape(-1)
    except (TypeError, ValueError):
        raise invalid("delay", "Injection", f"a delay model that gives {n} finite delays >= 0", model,
                      f"it gave {times!r}"[:200]) from None
    if times.shape != (n,) or not np.all(np.isfinite(times)) or np.any(times < 0):
        raise invalid("delay", "Injection", f"a delay model that gives {n} finite delays >= 0", model,
                      f"it gave {times!r}")
    return times


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
        The authors' rule: each task sleeps ``sleep_s`` seconds with probability
        ``sleep_prob`` (they used 6 ms with probability 0.2 on EC2).
    kill : sequence of int
        Worker positions whose process dies mid-task (once per request that includes them).
    kill_after_s : float
        How far into the task the process dies.
    interruptible : bool
        Stop injected sleeps once the master has decoded (see module notes).
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
        owner = "Injection"
        for name in ("base_s", "delay_scale", "sleep_s", "kill_after_s"):
            object.__setattr__(self, name, check_real(getattr(self, name), name, owner, minimum=0))
        object.__setattr__(self, "slowdown", check_real(self.slowdown, "slowdown", owner, minimum=1))
        object.__setattr__(self, "sleep_prob", check_real(self.sleep_prob, "sleep_prob", owner, 0, 1))
        object.__setattr__(self, "n_random_slow", check_int(self.n_random_slow, "n_random_slow", owner,
                                                            minimum=0))
        for name in ("slow_workers", "kill"):
            object.__setattr__(self, name, _check_positions(getattr(self, name), name, owner))
        if self.delay is not None and not hasattr(self.delay, "sample_times") and not callable(self.delay):
            raise invalid("delay", owner, "a gcc.stragglers delay model or a callable (rng, n) -> seconds",
                          self.delay)
        object.__setattr__(self, "interruptible", bool(validate(self.interruptible, BOOL, "interruptible",
                                                                owner)))

    def _validate(self, n_tasks: int) -> None:
        owner = "Injection"
        check_int(self.n_random_slow, "n_random_slow", owner, 0, n_tasks)
        for name in ("slow_workers", "kill"):
            positions = list(getattr(self, name))
            for i in positions:
                if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= i < n_tasks:
                    raise invalid(name, owner, f"worker positions in [0, {n_tasks})", positions)

    def plan(self, n_tasks: int, rng: np.random.Generator) -> list[TaskFault]:
        """Draw the faults of the ``n_tasks`` tasks of one request.

        Parameters
        ----------
        n_tasks : int
            Number of tasks (= workers used by the request); task i runs on worker position i.
        rng : numpy.random.Generator
            Source of every random choice, so a seed fixes the whole scenario.

        Returns
        -------
        list of TaskFault, length n_tasks
        """
        n_tasks = check_int(n_tasks, "n_tasks", "Injection.plan", minimum=1)
        rng = check_rng(rng, "rng", "Injection.plan")
        self._validate(n_tasks)
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
        # Nested call, no re-validation: every value comes from this validated Injection or from
        # the non-negative draws above (thousands of faults per run; a checked one costs ~0.1 ms).
        return [
            TaskFault._drawn(base_s=float(self.base_s), slowdown=float(self.slowdown) if slow[i] else 1.0,
                      delay_s=float(delay[i]), die=bool(die[i]), die_after_s=float(self.kill_after_s),
                      interruptible=bool(self.interruptible))
            for i in range(n_tasks)
        ]

    def expected_task_s(self, n_tasks: int, rng: np.random.Generator, compute_s: float = 0.0) -> np.ndarray:
        """Simulated busy time of each task of one request (no Dask involved).

        Used to set measured completion times against simulated ones: the same
        plan, with the waits added up instead of slept.

        Returns
        -------
        numpy.ndarray, shape (n_tasks,)
            Seconds each task would take; ``inf`` for a task whose worker dies.
        """
        compute_s = check_real(compute_s, "compute_s", "Injection.expected_task_s", minimum=0)
        faults = self.plan(n_tasks, rng)
        return np.array([np.inf if f.die else compute_s + max(f.injected_s(compute_s), 0.0) for f in faults])


def interruptible_sleep(seconds: float, interruptible: bool = True) -> tuple[float, bool]:
    """Sleep ``seconds`` inside a Dask task, or less if the task is cancelled meanwhile.

    Cancellation is read from the worker's own state for the running task
    (it leaves ``"executing"`` once the scheduler tells the worker to free it),
    so waiting costs no message to the scheduler: polling every few ms is all.
    Outside a Dask worker (or with ``interruptible=False``) it is a plain sleep.

    Parameters
    ----------
    seconds : float
        How long to sleep, finite (an infinite sleep would hang the worker); nothing happens
        for ``seconds <= 0``.
    interruptible : bool
        Stop as soon as the running task is cancelled.

    Returns
    -------
    slept : float
        Seconds actually slept.
    interrupted : bool
        Whether the sleep ended because the task was cancelled.
    """
    seconds = check_real(seconds, "seconds", "interruptible_sleep")
    interruptible = validate(interruptible, BOOL, "interruptible", "interruptible_sleep")
    if seconds <= 0:
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


# Granularity of interruptible sleeps: short against the delays injected (tens
# of ms and up), long enough that a sleeping worker costs no measurable CPU.
_POLL_S = 0.004


def act_out(fault: TaskFault | None, compute: Callable[[], Any]) -> tuple[Any, dict]:
    """Run ``compute`` inside a worker under ``fault``; returns (output, timing).

    Parameters
    ----------
    fault : TaskFault or None
    compute : callable
        The worker's real computation, e.g. ``lambda: f(x)``.

    Returns
    -------
    output : any
        What ``compute`` returned.
    timing : dict
        ``compute_s`` (real compute), ``injected_s`` (planned extra), ``slept_s``
        (actually slept), ``interrupted`` and ``busy_s`` (the whole task).
    """
    validate(fault, NoneOr(InstanceOf(TaskFault, "a TaskFault")), "fault", "act_out")
    validate(compute, CallableC(), "compute", "act_out")
    t0 = time.perf_counter()
    if fault is not None and fault.die:
        time.sleep(fault.die_after_s)
        # A crash, not an exception: the process vanishes without replying, as a
        # machine that loses power would. The Nanny restarts it under a new address.
        os._exit(17)
    output = compute()
    compute_s = time.perf_counter() - t0
    injected = fault.injected_s(compute_s) if fault is not None else 0.0
    slept, interrupted = interruptible_sleep(injected, fault is not None and fault.interruptible)
    return output, {
        "compute_s": compute_s,
        "injected_s": max(injected, 0.0),
        "slept_s": slept,
        "interrupted": interrupted,
        "busy_s": time.perf_counter() - t0,
    }
