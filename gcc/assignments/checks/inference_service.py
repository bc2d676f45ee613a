"""Checks of assignment 05, a straggler-robust inference service (``05_inference_service``).

The references are latency quantiles and mean losses of every design (N, S) from
``gcc.harness.run_trials`` with the variant's delay models.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gcc import SplineCode, harness, stragglers
from gcc.stragglers import ShiftedExponential

from ..feedback import Feedback, call_student, compare_arrays, compare_exact, compare_scalar, finish, make
from ..variants import Variant, problem
from .common import carry_forward, document_checks, memo, require_variant, variant_key

__all__ = ["check_expected_wait", "check_latency_table", "check_loss_table", "check_design", "check_robustness"]

_A5 = "05_inference_service"


def _service_tables(v: Variant) -> tuple[np.ndarray, np.ndarray]:
    """Latency quantile and mean loss of every design (N, S), from ``gcc.harness.run_trials``."""
    def compute():
        p = problem(v)
        lat = np.empty((len(v.n_workers_grid), len(v.straggler_grid)))
        loss = np.empty_like(lat)
        for i, n in enumerate(v.n_workers_grid):
            code = SplineCode(v.n_inputs, n)
            for j, s in enumerate(v.straggler_grid):
                model = stragglers.ShiftedExponential(shift=v.shift, rate=v.mu, stragglers=s)
                df = harness.run_trials({"gcc": code}, p.f, p.X, model, trials=v.n_trials, seed=p.delay_seed)
                lat[i, j] = float(np.quantile(df["time"], v.confidence))
                loss[i, j] = float(df["loss"].mean())
        return lat, loss
    return memo(("service", variant_key(v)), compute)


def _service_design(v: Variant, tables: tuple | None = None):
    """The design rule on the reference tables (or on ``tables``, a student's ``(latency95, mean_loss)``)."""
    lat, loss = _service_tables(v) if tables is None else tables
    ok = (lat <= v.latency_budget) & (loss <= v.loss_target)
    for i, n in enumerate(v.n_workers_grid):  # fewest workers first (the cost), then the smallest loss
        if ok[i].any():
            j = int(np.argmin(np.where(ok[i], loss[i], np.inf)))
            return (int(n), int(v.straggler_grid[j]))
    return None


def _robust_reference(v: Variant, design) -> bool:
    if design is None:
        return False

    def compute():
        p = problem(v)
        n, s = design
        model = stragglers.SlowWorkers(slow=v.slow_workers, factor=v.slow_factor, shift=v.shift, rate=v.mu,
                                       stragglers=s)
        df = harness.run_trials({"gcc": SplineCode(v.n_inputs, n)}, p.f, p.X, model, trials=v.n_trials,
                                seed=p.delay_seed)
        return bool(np.quantile(df["time"], v.confidence) <= v.latency_budget)
    return memo(("robust", variant_key(v), tuple(design)), compute)


def check_expected_wait(expected_wait: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: ``expected_wait(N, S)``, the mean time until the fastest ``N - S`` of ``N`` workers finish."""
    require_variant(v, _A5, "check_expected_wait")
    model = ShiftedExponential(shift=v.shift, rate=v.mu)
    problems, note = [], ""
    for n in v.n_workers_grid[:2]:
        for s in (0, v.straggler_grid[-1]):
            ans, prob = call_student(expected_wait, "expected_wait", n, s)
            problems, note = ([prob], "") if prob else compare_scalar(
                ans, model.expected_time(n, n - s), name=f"expected_wait({n}, {s})", rtol=1e-9)
            if problems:
                break
        if problems:
            break
    hints = ["The i-th smallest of N i.i.d. Exp(mu) variables has mean (1/mu) (1/N + 1/(N-1) + ... + "
             "1/(N-i+1)); add the shift. Waiting for N - S workers means i = N - S."]
    return finish(make(_A5, "1", "expected waiting time", problems, note, hints), raise_on_fail)


def check_latency_table(latency95: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 2a: the ``confidence``-quantile of the waiting time of every design, shape (len N grid, len S grid)."""
    require_variant(v, _A5, "check_latency_table")
    lat, _ = _service_tables(v)
    problems, note = compare_arrays(latency95, lat, name="latency95", rtol=1e-9,
                                    axis_names=("N index", "S index"))
    hints = ["For each (N, S): gcc.harness.run_trials({'gcc': gcc.SplineCode(K, N)}, f, X, "
             "gcc.ShiftedExponential(shift=shift, rate=mu, stragglers=S), trials=v.n_trials, seed=delay_seed); "
             "then np.quantile(df['time'], v.confidence)."]
    return finish(make(_A5, "2a", "latency table", problems, note, hints), raise_on_fail)


def check_loss_table(mean_loss: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 2b: the mean loss of every design, shape (len N grid, len S grid)."""
    require_variant(v, _A5, "check_loss_table")
    _, loss = _service_tables(v)
    problems, note = compare_arrays(mean_loss, loss, name="mean_loss", rtol=1e-9,
                                    axis_names=("N index", "S index"))
    hints = ["The mean of the 'loss' column of the same simulations as for latency95."]
    return finish(make(_A5, "2b", "loss table", problems, note, hints), raise_on_fail)


def _own_tables(latency95: Any, mean_loss: Any, v: Variant) -> tuple | None:
    """A student's two tables as float arrays of the grids' shape, or None."""
    shape = (len(v.n_workers_grid), len(v.straggler_grid))
    try:
        tables = tuple(np.asarray(t, dtype=float) for t in (latency95, mean_loss))
    except (TypeError, ValueError):
        return None
    return tables if all(t.shape == shape and np.all(np.isfinite(t)) for t in tables) else None


def _as_design(design: Any, v: Variant):
    """A student's design as a pair of grid values, None for None, or ``Ellipsis`` when it is neither."""
    if design is None:
        return None
    try:
        n, s = (int(x) for x in design)
    except (TypeError, ValueError):
        return Ellipsis
    return (n, s) if n in v.n_workers_grid and s in v.straggler_grid else Ellipsis


def check_design(design: Any, v: Variant, latency95: Any = None, mean_loss: Any = None,
                 raise_on_fail: bool = True) -> Feedback:
    """Task 3: the cheapest design (fewest workers, then smallest loss) meeting both targets, or None.

    ``latency95`` and ``mean_loss``, the student's tables of Task 2, make the grade independent of
    them: the design rule applied correctly to wrong tables scores in full.
    """
    require_variant(v, _A5, "check_design")
    ref = _service_design(v)
    lat, loss = _service_tables(v)
    if design is not Ellipsis and design is not None:
        try:
            design = tuple(int(x) for x in design)
        except (TypeError, ValueError):
            design = f"<{type(design).__name__}>"

    def describe(ans, want):
        if ans is None:
            return ["At least one design meets both targets."]
        if not isinstance(ans, tuple) or len(ans) != 2:
            return ["It should be a pair (N, S) or None."]
        n, s = ans
        if n not in v.n_workers_grid or s not in v.straggler_grid:
            return ["It is not a design of the grids."]
        i, j = v.n_workers_grid.index(n), v.straggler_grid.index(s)
        out = []
        if lat[i, j] > v.latency_budget:
            out.append("It misses the latency budget.")
        if loss[i, j] > v.loss_target:
            out.append("It misses the loss target.")
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
    if problems and latency95 is not None and mean_loss is not None:
        own_tables = _own_tables(latency95, mean_loss, v)
        own = None if own_tables is None else _service_design(v, own_tables)
        passed = (check_latency_table(latency95, v, raise_on_fail=False).passed
                  and check_loss_table(mean_loss, v, raise_on_fail=False).passed)
        problems, note = carry_forward(
            problems, note, uses="your `latency95` and `mean_loss` from Task 2", earlier_passed=passed,
            consistent=None if own_tables is None else
            (lambda: ([], "") if _as_design(design, v) == own else (["`design` is not the expected answer."], "")))
    hints = ["Feasible: latency95 <= v.latency_budget and mean_loss <= v.loss_target. Among the feasible "
             "designs take the smallest N (workers cost money), then the smallest mean loss."]
    return finish(make(_A5, "3", "service design", problems, note, hints), raise_on_fail)


#: ``check_robustness(..., design=None)`` is a student's design "none is feasible", not "not given".
class _NotGiven:
    def __repr__(self) -> str:
        return "<not given>"


_NOT_GIVEN = _NotGiven()


def check_robustness(robust: Any, v: Variant, design: Any = _NOT_GIVEN, raise_on_fail: bool = True) -> Feedback:
    """Task 4: does the selected design still meet the latency budget with ``v.slow_workers`` slow workers?

    ``design``, the student's design of Task 3, makes the grade independent of it: the right
    answer for a wrong design scores in full.
    """
    require_variant(v, _A5, "check_robustness")
    ref = _robust_reference(v, _service_design(v))
    if isinstance(robust, np.bool_):
        robust = bool(robust)
    problems, note = compare_exact(robust, ref, name="robust",
                                   describe=lambda a, b: [] if isinstance(a, bool) else
                                   ["It should be True or False."])
    if problems and design is not _NOT_GIVEN:
        own = _as_design(design, v) if isinstance(robust, bool) else Ellipsis
        problems, note = carry_forward(
            problems, note, uses="your `design` from Task 3",
            earlier_passed=check_design(design, v, raise_on_fail=False).passed,
            consistent=None if own is Ellipsis else
            (lambda: compare_exact(robust, _robust_reference(v, own), name="robust")))
    hints = ["Rerun the selected design with gcc.SlowWorkers(slow=v.slow_workers, factor=v.slow_factor, "
             "shift=shift, rate=mu, stragglers=S) instead of ShiftedExponential (same trials and seed) and "
             "compare its latency quantile with the budget. With no feasible design, robust is False."]
    return finish(make(_A5, "4", "robustness to slow workers", problems, note, hints), raise_on_fail)


document_checks(globals(), __all__)
