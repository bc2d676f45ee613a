"""Checks of assignment 02, measuring a rate slope (``02_rate_slope``).

The references are worst-case losses over contiguous straggler blocks (``gcc.block_losses``) on
the variant's grid of worker counts, and their log-log slope (``gcc.loglog_slope``).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

import gcc

from ..feedback import call_student, compare_arrays, compare_exact, compare_scalar
from ..variants import Variant, problem
from .common import answer_of, carry_forward, finite_array, plain, task

__all__ = ["check_worst_case_loss", "check_loss_curve", "check_slope", "check_rate_verdict"]

_A2 = "02_rate_slope"
_CLASS = {"spline": "SplineCode", "berrut": "BerrutCode"}


def _worst_loss(v: Variant, code_name: str, n_workers: int) -> float:
    # "spline" and "berrut" are aliases of the registry's "gcc" and "bacc"
    code = gcc.codes.make(code_name, v.n_inputs, n_workers)
    p = problem(v)
    return float(np.max(gcc.block_losses(code, p.f, p.X, v.n_stragglers)))


def _reference_worst_losses(v: Variant, code_name: str) -> np.ndarray:
    return np.array([_worst_loss(v, code_name, n) for n in v.n_workers_grid])


def _slope_of(losses, v: Variant) -> float:
    return float(gcc.loglog_slope(np.asarray(v.n_workers_grid, dtype=float), losses).slope)


@task(_A2, "1", "worst-case loss", lambda a: (
    f"Slide a block of S = {a['v'].n_stragglers} consecutive stragglers over every start position 0 .. N - S "
    "(N - S + 1 blocks), decode from the other workers, compute loss (1) and keep the largest. A random "
    "straggler set is not the worst case."))
def check_worst_case_loss(worst_case_loss: Callable, v: Variant):
    """Task 1: ``worst_case_loss(code)`` is the largest loss over all contiguous straggler blocks.

    Called with ``gcc.SplineCode`` for the smallest and the largest ``N`` of the variant's grid.
    """
    # A search that skips block positions can find the worst block by luck at one size, rarely at both.
    for n in dict.fromkeys((v.n_workers_grid[0], v.n_workers_grid[-1])):
        ans = answer_of(worst_case_loss, "worst_case_loss", gcc.SplineCode(n_inputs=v.n_inputs, n_workers=n))
        problems, note = compare_scalar(ans, _worst_loss(v, "spline", n),
                                        name=f"worst_case_loss(SplineCode(K, {n}))", rtol=1e-6)
        if problems:
            break
    return problems, note


@task(_A2, {"spline": "2", "berrut": "4"}, {"spline": "loss curve, splines", "berrut": "loss curve, Berrut"},
      lambda a: ("One entry per N in v.n_workers_grid, in that order: "
                 f"worst_case_loss(gcc.{_CLASS[a['code']]}(K, N))."))
def check_loss_curve(losses: Any, v: Variant, code: str = "spline", worst_case_loss: Any = None):
    """Tasks 2 and 4: worst-case losses over ``v.n_workers_grid`` for ``code`` (``"spline"``/``"berrut"``)."""
    name = "losses" if code == "spline" else "losses_berrut"
    problems, note = compare_arrays(losses, _reference_worst_losses(v, code), name=name, rtol=1e-6,
                                    axis_names=("grid position",))

    def consistent():
        make_code = getattr(gcc, _CLASS[code])
        own, prob = call_student(lambda: np.array([worst_case_loss(make_code(v.n_inputs, n))
                                                   for n in v.n_workers_grid]), "worst_case_loss")
        return ([prob], "") if prob else compare_arrays(losses, own, name=name, rtol=1e-9)

    return carry_forward(problems, note, v, [(worst_case_loss, check_worst_case_loss)],
                         uses="your `worst_case_loss` from Task 1", consistent=consistent)


@task(_A2, {"spline": "3", "berrut": "4b"},
      {"spline": "log-log slope, spline", "berrut": "log-log slope, berrut"},
      "Fit a straight line to (log N, log loss) by least squares (np.polyfit with degree 1, or "
      "gcc.loglog_slope(grid, losses).slope); the slope is the first coefficient. Use natural or base-10 "
      "logs on both axes, not a mix.")
def check_slope(slope: Any, v: Variant, code: str = "spline", losses: Any = None):
    """Tasks 3 and 4: the least-squares slope of log(loss) against log(N)."""
    name = "slope" if code == "spline" else "slope_berrut"
    ref = _slope_of(_reference_worst_losses(v, code), v)
    problems, note = compare_scalar(slope, ref, name=name, rtol=1e-4)
    own = finite_array(losses, (len(v.n_workers_grid),)) if losses is not None and problems else None
    own = _slope_of(own, v) if own is not None and np.all(own > 0) else None
    return carry_forward(
        problems, note, v, [(losses, functools.partial(check_loss_curve, code=code))],
        uses=("your `losses` from Task 2" if code == "spline" else "your `losses_berrut` from Task 4"),
        consistent=None if own is None else (lambda: compare_scalar(slope, own, name=name, rtol=1e-4)))


@task(_A2, "5", "verdict against Theorem 4",
      "Decaying at least as fast as N^-3 means a slope of -3 or steeper (more negative).")
def check_rate_verdict(at_least_as_fast: Any, v: Variant, slope: Any = None):
    """Task 5: does the measured spline slope decay at least as fast as Theorem 4's ``N^-3``?"""
    at_least_as_fast = plain(at_least_as_fast)
    ref = bool(_slope_of(_reference_worst_losses(v, "spline"), v) <= -3.0)
    problems, note = compare_exact(at_least_as_fast, ref, name="at_least_as_fast")
    try:
        own = float(slope) if isinstance(at_least_as_fast, bool) and slope is not None else None
    except (TypeError, ValueError):
        own = None
    return carry_forward(
        problems, note, v, [(slope, check_slope)], uses="your `slope` from Task 3",
        consistent=None if own is None or not np.isfinite(own) else
        (lambda: compare_exact(at_least_as_fast, bool(own <= -3.0), name="at_least_as_fast")))
