"""Checks of assignment 02, measuring a rate slope (``02_rate_slope``).

The references are worst-case losses over contiguous straggler blocks (``gcc.block_losses``) on
the variant's grid of worker counts, and their log-log slope (``gcc.loglog_slope``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import gcc
from gcc.validation import check_choice

from ..feedback import Feedback, call_student, compare_arrays, compare_exact, compare_scalar, finish, make
from ..variants import Variant, problem
from .common import document_checks, require_variant

__all__ = ["check_worst_case_loss", "check_loss_curve", "check_slope", "check_rate_verdict"]

_A2 = "02_rate_slope"


def _worst_loss(v: Variant, code_name: str, n_workers: int) -> float:
    p = problem(v)
    # "spline" and "berrut" are aliases of the registry's "gcc" and "bacc"
    code = gcc.codes.make(code_name, v.n_inputs, n_workers)
    return float(np.max(gcc.block_losses(code, p.f, p.X, v.n_stragglers)))


def _reference_worst_losses(v: Variant, code_name: str) -> np.ndarray:
    return np.array([_worst_loss(v, code_name, n) for n in v.n_workers_grid])


def check_worst_case_loss(worst_case_loss: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: ``worst_case_loss(code)`` is the largest loss over all contiguous straggler blocks.

    Called with ``gcc.SplineCode`` for the smallest ``N`` of the variant's grid.
    """
    require_variant(v, _A2, "check_worst_case_loss")
    n = v.n_workers_grid[0]
    ref = _worst_loss(v, "spline", n)
    ans, prob = call_student(worst_case_loss, "worst_case_loss",
                             gcc.SplineCode(n_inputs=v.n_inputs, n_workers=n))
    problems, note = ([prob], "") if prob else compare_scalar(
        ans, ref, name=f"worst_case_loss(SplineCode(K, {n}))", rtol=1e-6)
    hints = [f"Slide a block of S = {v.n_stragglers} consecutive stragglers over every start position "
             "0 .. N - S (N - S + 1 blocks), decode from the other workers, compute loss (1) and keep the "
             "largest. A random straggler set is not the worst case."]
    return finish(make(_A2, "1", "worst-case loss", problems, note, hints), raise_on_fail)


def check_loss_curve(losses: Any, v: Variant, code: str = "spline", raise_on_fail: bool = True) -> Feedback:
    """Tasks 2 and 4: worst-case losses over ``v.n_workers_grid`` for ``code`` (``"spline"``/``"berrut"``)."""
    require_variant(v, _A2, "check_loss_curve")
    check_choice(code, "code", "check_loss_curve", ("spline", "berrut"))
    ref = _reference_worst_losses(v, code)
    name = "losses" if code == "spline" else "losses_berrut"
    problems, note = compare_arrays(losses, ref, name=name, rtol=1e-6, axis_names=("grid position",))
    cls = "SplineCode" if code == "spline" else "BerrutCode"
    hints = [f"One entry per N in v.n_workers_grid, in that order: worst_case_loss(gcc.{cls}(K, N))."]
    task, title = ("2", "loss curve, splines") if code == "spline" else ("4", "loss curve, Berrut")
    return finish(make(_A2, task, title, problems, note, hints), raise_on_fail)


def check_slope(slope: Any, v: Variant, code: str = "spline", raise_on_fail: bool = True) -> Feedback:
    """Tasks 3 and 4: the least-squares slope of log(loss) against log(N)."""
    require_variant(v, _A2, "check_slope")
    check_choice(code, "code", "check_slope", ("spline", "berrut"))
    ref = float(gcc.loglog_slope(np.asarray(v.n_workers_grid, dtype=float),
                                 _reference_worst_losses(v, code)).slope)
    name = "slope" if code == "spline" else "slope_berrut"
    problems, note = compare_scalar(slope, ref, name=name, rtol=1e-4)
    hints = ["Fit a straight line to (log N, log loss) by least squares (np.polyfit with degree 1, or "
             "gcc.loglog_slope(grid, losses).slope); the slope is the first coefficient. Use natural or base-10 logs on "
             "both axes, not a mix."]
    task = "3" if code == "spline" else "4b"
    return finish(make(_A2, task, f"log-log slope, {code}", problems, note, hints), raise_on_fail)


def check_rate_verdict(at_least_as_fast: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 5: does the measured spline slope decay at least as fast as Theorem 4's ``N^-3``?"""
    require_variant(v, _A2, "check_rate_verdict")
    slope = float(gcc.loglog_slope(np.asarray(v.n_workers_grid, dtype=float),
                                 _reference_worst_losses(v, "spline")).slope)
    ref = bool(slope <= -3.0)
    if isinstance(at_least_as_fast, np.bool_):
        at_least_as_fast = bool(at_least_as_fast)
    problems, note = compare_exact(at_least_as_fast, ref, name="at_least_as_fast")
    hints = ["Decaying at least as fast as N^-3 means a slope of -3 or steeper (more negative)."]
    return finish(make(_A2, "5", "verdict against Theorem 4", problems, note, hints), raise_on_fail)


document_checks(globals(), __all__)
