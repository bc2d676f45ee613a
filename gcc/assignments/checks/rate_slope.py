"""Checks of assignment 02, measuring a rate slope (``02_rate_slope``).

The references are worst-case losses over contiguous straggler blocks (``gcc.block_losses``) on
the variant's grid of worker counts, and their log-log slope (``gcc.loglog_slope``).

Each task is graded on its own: a check that is given the student's earlier answer it builds on
(``worst_case_loss=`` for the loss curves, ``losses=`` for a slope, ``slope=`` for the verdict) gives
full points to an answer that follows correctly from a wrong earlier answer, and otherwise says
when the earlier task is the cause (:func:`~gcc.assignments.checks.common.carry_forward`).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import gcc
from gcc.validation import check_choice

from ..feedback import Feedback, call_student, compare_arrays, compare_exact, compare_scalar, finish, make
from ..variants import Variant, problem
from .common import carry_forward, document_checks, require_variant

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

    Called with ``gcc.SplineCode`` for the smallest and the largest ``N`` of the variant's grid.
    """
    require_variant(v, _A2, "check_worst_case_loss")
    problems, note = [], ""
    # The smallest and the largest N of the grid: a search that skips block positions can find the
    # worst block by luck at one size, rarely at both.
    for n in dict.fromkeys((v.n_workers_grid[0], v.n_workers_grid[-1])):
        ref = _worst_loss(v, "spline", n)
        ans, prob = call_student(worst_case_loss, "worst_case_loss",
                                 gcc.SplineCode(n_inputs=v.n_inputs, n_workers=n))
        problems, note = ([prob], "") if prob else compare_scalar(
            ans, ref, name=f"worst_case_loss(SplineCode(K, {n}))", rtol=1e-6)
        if problems:
            break
    hints = [f"Slide a block of S = {v.n_stragglers} consecutive stragglers over every start position "
             "0 .. N - S (N - S + 1 blocks), decode from the other workers, compute loss (1) and keep the "
             "largest. A random straggler set is not the worst case."]
    return finish(make(_A2, "1", "worst-case loss", problems, note, hints), raise_on_fail)


def _fit(losses: Any, v: Variant) -> float | None:
    """The log-log slope of a student's losses over the grid, or None when they have none."""
    try:
        arr = np.asarray(losses, dtype=float)
    except (TypeError, ValueError):
        return None
    if arr.shape != (len(v.n_workers_grid),) or not np.all(np.isfinite(arr) & (arr > 0)):
        return None
    return float(gcc.loglog_slope(np.asarray(v.n_workers_grid, dtype=float), arr).slope)


def check_loss_curve(losses: Any, v: Variant, code: str = "spline", worst_case_loss: Any = None,
                     raise_on_fail: bool = True) -> Feedback:
    """Tasks 2 and 4: worst-case losses over ``v.n_workers_grid`` for ``code`` (``"spline"``/``"berrut"``).

    ``worst_case_loss``, the student's function of Task 1, makes the grade independent of Task 1:
    losses that are exactly that function over the grid score in full even when it is wrong.
    """
    require_variant(v, _A2, "check_loss_curve")
    check_choice(code, "code", "check_loss_curve", ("spline", "berrut"))
    ref = _reference_worst_losses(v, code)
    name = "losses" if code == "spline" else "losses_berrut"
    problems, note = compare_arrays(losses, ref, name=name, rtol=1e-6, axis_names=("grid position",))
    cls = "SplineCode" if code == "spline" else "BerrutCode"
    if worst_case_loss is not None and problems:
        make_code = gcc.SplineCode if code == "spline" else gcc.BerrutCode

        def consistent():
            own, prob = call_student(lambda: np.array([worst_case_loss(make_code(v.n_inputs, n))
                                                       for n in v.n_workers_grid]), "worst_case_loss")
            return ([prob], "") if prob else compare_arrays(losses, own, name=name, rtol=1e-9)

        problems, note = carry_forward(
            problems, note, uses="your `worst_case_loss` from Task 1",
            earlier_passed=check_worst_case_loss(worst_case_loss, v, raise_on_fail=False).passed,
            consistent=consistent)
    hints = [f"One entry per N in v.n_workers_grid, in that order: worst_case_loss(gcc.{cls}(K, N))."]
    task, title = ("2", "loss curve, splines") if code == "spline" else ("4", "loss curve, Berrut")
    return finish(make(_A2, task, title, problems, note, hints), raise_on_fail)


def check_slope(slope: Any, v: Variant, code: str = "spline", losses: Any = None,
                raise_on_fail: bool = True) -> Feedback:
    """Tasks 3 and 4: the least-squares slope of log(loss) against log(N).

    ``losses``, the student's loss curve (Task 2, or Task 4's for Berrut), makes the grade
    independent of it: the slope of a wrong curve, fitted correctly, scores in full.
    """
    require_variant(v, _A2, "check_slope")
    check_choice(code, "code", "check_slope", ("spline", "berrut"))
    ref = float(gcc.loglog_slope(np.asarray(v.n_workers_grid, dtype=float),
                                 _reference_worst_losses(v, code)).slope)
    name = "slope" if code == "spline" else "slope_berrut"
    problems, note = compare_scalar(slope, ref, name=name, rtol=1e-4)
    curve = "losses" if code == "spline" else "losses_berrut"
    own = _fit(losses, v) if losses is not None and problems else None
    if losses is not None and problems:
        problems, note = carry_forward(
            problems, note, uses=f"your `{curve}` from Task {2 if code == 'spline' else 4}",
            earlier_passed=check_loss_curve(losses, v, code, raise_on_fail=False).passed,
            consistent=None if own is None else (lambda: compare_scalar(slope, own, name=name, rtol=1e-4)))
    hints = ["Fit a straight line to (log N, log loss) by least squares (np.polyfit with degree 1, or "
             "gcc.loglog_slope(grid, losses).slope); the slope is the first coefficient. Use natural or base-10 logs on "
             "both axes, not a mix."]
    task = "3" if code == "spline" else "4b"
    return finish(make(_A2, task, f"log-log slope, {code}", problems, note, hints), raise_on_fail)


def check_rate_verdict(at_least_as_fast: Any, v: Variant, slope: Any = None, raise_on_fail: bool = True) -> Feedback:
    """Task 5: does the measured spline slope decay at least as fast as Theorem 4's ``N^-3``?

    ``slope``, the student's slope of Task 3, makes the grade independent of it: the right
    verdict for a wrong slope scores in full.
    """
    require_variant(v, _A2, "check_rate_verdict")
    ref_slope = float(gcc.loglog_slope(np.asarray(v.n_workers_grid, dtype=float),
                                       _reference_worst_losses(v, "spline")).slope)
    ref = bool(ref_slope <= -3.0)
    if isinstance(at_least_as_fast, np.bool_):
        at_least_as_fast = bool(at_least_as_fast)
    problems, note = compare_exact(at_least_as_fast, ref, name="at_least_as_fast")
    if slope is not None and problems:
        try:
            own = float(slope) if isinstance(at_least_as_fast, bool) else None
        except (TypeError, ValueError):
            own = None
        problems, note = carry_forward(
            problems, note, uses="your `slope` from Task 3",
            earlier_passed=check_slope(slope, v, raise_on_fail=False).passed,
            consistent=None if own is None or not np.isfinite(own) else
            (lambda: compare_exact(at_least_as_fast, bool(own <= -3.0), name="at_least_as_fast")))
    hints = ["Decaying at least as fast as N^-3 means a slope of -3 or steeper (more negative)."]
    return finish(make(_A2, "5", "verdict against Theorem 4", problems, note, hints), raise_on_fail)


document_checks(globals(), __all__)
