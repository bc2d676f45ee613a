"""Checks of assignment 05, a straggler-robust inference service (``05_inference_service``).

The references are latency quantiles and mean losses of every design (N, S) from
``gcc.harness.run_trials`` with the variant's delay models.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from gcc import SplineCode, harness, stragglers

from ..feedback import compare_arrays, compare_exact, compare_scalar
from ..variants import Variant, problem
from .common import answer_of, as_answer, carry_forward, finite_array, plain, task

__all__ = ["check_expected_wait", "check_latency_table", "check_loss_table", "check_design",
           "check_robustness"]

_A5 = "05_inference_service"


def _run(v: Variant, n: int, model):
    """``gcc.harness.run_trials`` of ``SplineCode(K, n)`` on the variant's data under a delay ``model``."""
    p = problem(v)
    return harness.run_trials({"gcc": SplineCode(v.n_inputs, n)}, p.f, p.X, model, trials=v.n_trials,
                              seed=p.delay_seed)


@functools.lru_cache(maxsize=64)  # a notebook calls several checks on one reference
def _service_tables(v: Variant) -> tuple[np.ndarray, np.ndarray]:
    """Latency quantile and mean loss of every design (N, S), from ``gcc.harness.run_trials``."""
    runs = [[_run(v, n, stragglers.ShiftedExponential(shift=v.shift, rate=v.mu, stragglers=s))
             for s in v.straggler_grid] for n in v.n_workers_grid]
    return (np.array([[float(np.quantile(df["time"], v.confidence)) for df in row] for row in runs]),
            np.array([[float(df["loss"].mean()) for df in row] for row in runs]))


def _service_design(v: Variant, tables: tuple | None = None):
    """The design rule on the reference tables (or on ``tables``, a student's ``(latency95, mean_loss)``)."""
    lat, loss = _service_tables(v) if tables is None else tables
    ok = (lat <= v.latency_budget) & (loss <= v.loss_target)
    for i, n in enumerate(v.n_workers_grid):  # fewest workers first (the cost), then the smallest loss
        if ok[i].any():
            return (int(n), int(v.straggler_grid[int(np.argmin(np.where(ok[i], loss[i], np.inf)))]))
    return None


@functools.lru_cache(maxsize=64)  # a notebook calls several checks on one reference
def _robust(v: Variant, design) -> bool:
    """Whether ``design`` (None: no design, so False) meets the latency budget with slow workers."""
    if design is None:
        return False
    n, s = design
    model = stragglers.SlowWorkers(slow=v.slow_workers, factor=v.slow_factor, shift=v.shift, rate=v.mu,
                                   stragglers=s)
    df = _run(v, n, model)
    return bool(np.quantile(df["time"], v.confidence) <= v.latency_budget)


@task(_A5, "1", "expected waiting time", "The i-th smallest of N i.i.d. Exp(mu) variables has mean (1/mu) "
      "(1/N + 1/(N-1) + ... + 1/(N-i+1)); add the shift. Waiting for N - S workers means i = N - S.")
def check_expected_wait(expected_wait: Callable, v: Variant):
    """Task 1: ``expected_wait(N, S)``, the mean time until the fastest ``N - S`` of ``N`` workers finish."""
    model = stragglers.ShiftedExponential(shift=v.shift, rate=v.mu)
    for n in v.n_workers_grid[:2]:
        for s in (0, v.straggler_grid[-1]):
            ans = answer_of(expected_wait, "expected_wait", n, s)
            problems, note = compare_scalar(ans, model.expected_time(n, n - s), rtol=1e-9,
                                            name=f"expected_wait({n}, {s})")
            if problems:
                return problems, note
    return problems, note


@task(_A5, "2a", "latency table", "For each (N, S): gcc.harness.run_trials({'gcc': gcc.SplineCode(K, N)}, f, "
      "X, gcc.ShiftedExponential(shift=shift, rate=mu, stragglers=S), trials=v.n_trials, seed=delay_seed); "
      "then np.quantile(df['time'], v.confidence).")
def check_latency_table(latency95: Any, v: Variant):
    """Task 2a: the ``confidence``-quantile of the waiting time of every design, shape (len N, len S grid)."""
    return compare_arrays(latency95, _service_tables(v)[0], name="latency95", rtol=1e-9,
                          axis_names=("N index", "S index"))


@task(_A5, "2b", "loss table", "The mean of the 'loss' column of the same simulations as for latency95.")
def check_loss_table(mean_loss: Any, v: Variant):
    """Task 2b: the mean loss of every design, shape (len N grid, len S grid)."""
    return compare_arrays(mean_loss, _service_tables(v)[1], name="mean_loss", rtol=1e-9,
                          axis_names=("N index", "S index"))


def _as_design(design: Any, v: Variant):
    """A student's design as a pair of grid values, None for None, or ``Ellipsis`` when it is neither."""
    if design is None:
        return None
    try:
        n, s = (int(x) for x in design)
    except (TypeError, ValueError):
        return Ellipsis
    return (n, s) if n in v.n_workers_grid and s in v.straggler_grid else Ellipsis


@task(_A5, "3", "service design", "Feasible: latency95 <= v.latency_budget and mean_loss <= v.loss_target. "
      "Among the feasible designs take the smallest N (workers cost money), then the smallest mean loss.")
def check_design(design: Any, v: Variant, latency95: Any = None, mean_loss: Any = None):
    """Task 3: the cheapest design (fewest workers, then smallest loss) meeting both targets, or None."""
    ref = _service_design(v)
    lat, loss = _service_tables(v)
    design = as_answer(design, lambda d: tuple(int(x) for x in d))

    def describe(ans, want):
        if ans is None:
            return ["At least one design meets both targets."]
        if not isinstance(ans, tuple) or len(ans) != 2:
            return ["It should be a pair (N, S) or None."]
        n, s = ans
        if n not in v.n_workers_grid or s not in v.straggler_grid:
            return ["It is not a design of the grids."]
        i, j = v.n_workers_grid.index(n), v.straggler_grid.index(s)
        out = (["It misses the latency budget."] if lat[i, j] > v.latency_budget else []) + \
            (["It misses the loss target."] if loss[i, j] > v.loss_target else [])
        if not out and want is not None:
            out.append("It meets both targets but uses more workers than needed." if n > want[0] else
                       "Another S with the same N meets both targets with a smaller loss.")
        return out

    if design is None and ref is not None:
        problems, note = ["`design` is None."] + describe(None, ref), ""
    elif design is None and ref is None:
        problems, note = [], "correct: no design meets both targets."
    else:
        problems, note = compare_exact(design, ref, name="design", describe=describe)
        if problems and ref is None:
            problems.append("No design of the grids meets both targets: the answer is None.")
    # the student's two tables as float arrays of the grids' shape, or None
    own_tables = tuple(finite_array(t, lat.shape) for t in (latency95, mean_loss))
    if not problems or latency95 is None or any(t is None for t in own_tables):
        own_tables = None
    own = None if own_tables is None else _service_design(v, own_tables)
    return carry_forward(
        problems, note, v, [(latency95, check_latency_table), (mean_loss, check_loss_table)],
        uses="your `latency95` and `mean_loss` from Task 2", consistent=None if own_tables is None else
        (lambda: ([], "") if _as_design(design, v) == own else
         (["`design` is not the expected answer."], "")))


class _NotGiven:
    """``check_robustness(..., design=None)`` is a student's design "none is feasible", not "not given"."""

    def __repr__(self) -> str:
        return "<not given>"


_NOT_GIVEN = _NotGiven()


@task(_A5, "4", "robustness to slow workers", "Rerun the selected design with "
      "gcc.SlowWorkers(slow=v.slow_workers, factor=v.slow_factor, shift=shift, rate=mu, stragglers=S) "
      "instead of ShiftedExponential (same trials and seed) and compare its latency quantile with the "
      "budget. With no feasible design, robust is False.")
def check_robustness(robust: Any, v: Variant, design: Any = _NOT_GIVEN):
    """Task 4: does the selected design still meet the latency budget with ``v.slow_workers`` slow workers?"""
    robust = plain(robust)
    problems, note = compare_exact(robust, _robust(v, _service_design(v)), name="robust",
                                   describe=lambda a, b: [] if isinstance(a, bool) else
                                   ["It should be True or False."])
    if design is _NOT_GIVEN:
        return problems, note
    own = _as_design(design, v) if isinstance(robust, bool) else Ellipsis
    # design=None is an answer ("no design is feasible"): passed in a tuple, not as "not given".
    given = [((design,), lambda d, v, **kw: check_design(d[0], v, **kw))]
    return carry_forward(problems, note, v, given,
                         uses="your `design` from Task 3", consistent=None if own is Ellipsis else
                         (lambda: compare_exact(robust, _robust(v, own), name="robust")))
