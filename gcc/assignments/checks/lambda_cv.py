"""Checks of assignment 03, tuning the smoothing parameters by cross-validation (``03_lambda_cv``).

The references come from ``gcc.tuning.select_lambdas`` on the tuning draws and
``gcc.harness.run_trials`` on the test draws of the variant.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from gcc import SplineCode, harness, stragglers, tuning

from ..feedback import call_student, compare_arrays, compare_exact, compare_scalar
from ..variants import Variant, problem
from .common import answer_of, as_answer, carry_forward, finite_array, task

__all__ = ["check_cv_loss", "check_cv_table", "check_best_lambdas", "check_test_losses"]

_A3 = "03_lambda_cv"


@functools.lru_cache(maxsize=64)  # a notebook calls several checks on one reference
def _cv_selection(v: Variant):
    """``gcc.tuning.select_lambdas`` on the variant's tuning draws."""
    p = problem(v)
    return tuning.select_lambdas(
        lambda le, ld: SplineCode(v.n_inputs, v.n_workers, lam_enc=le, lam_dec=ld), p.f,
        p.draw_batch, stragglers.FixedCount(v.n_stragglers), lam_enc_grid=v.lam_enc_grid,
        lam_dec_grid=v.lam_dec_grid, trials=v.n_trials, seed=p.tune_seed, noise_std=v.noise_std)


def _cv_table(v: Variant) -> np.ndarray:
    table = _cv_selection(v).table.set_index(["lam_enc", "lam_dec"])["mean"]
    return np.array([[float(table.loc[(float(le), float(ld))]) for ld in v.lam_dec_grid]
                     for le in v.lam_enc_grid])


@functools.lru_cache(maxsize=64)  # a notebook calls several checks on one reference
def _test_loss(v: Variant, lam_enc: float, lam_dec: float) -> float:
    p = problem(v)
    df = harness.run_trials({"gcc": SplineCode(v.n_inputs, v.n_workers, lam_enc=lam_enc, lam_dec=lam_dec)},
                            p.f, p.draw_batch, stragglers.FixedCount(v.n_stragglers), trials=v.n_trials,
                            seed=p.test_seed, noise_std=v.noise_std)
    return float(df["loss"].mean())


@task(_A3, "1", "cross-validation loss",
      "Use gcc.harness.run_trials({'gcc': gcc.SplineCode(K, N, lam_enc=..., lam_dec=...)}, f, "
      "draw_batch, gcc.FixedCount(S), trials=v.n_trials, seed=tune_seed, noise_std=sigma) and average "
      "the 'loss' column. Every grid point must see the same draws: the same seed each time.")
def check_cv_loss(cv_loss: Callable, v: Variant):
    """Task 1: ``cv_loss(lam_enc, lam_dec)`` is the mean loss on the tuning draws."""
    table = _cv_table(v)
    # Two grid points: lambda = 0 (interpolation) and one with smoothing in both places.
    for i, j in ((0, 0), (len(v.lam_enc_grid) - 2, len(v.lam_dec_grid) - 2)):
        le, ld = v.lam_enc_grid[i], v.lam_dec_grid[j]
        problems, note = compare_scalar(answer_of(cv_loss, "cv_loss", le, ld), table[i, j],
                                        name=f"cv_loss({le:g}, {ld:g})", rtol=1e-6)
        if problems:
            break
    return problems, note


@task(_A3, "2", "cross-validation table",
      "Row i is lam_enc_grid[i], column j is lam_dec_grid[j]: cv_table[i, j] = cv_loss(le, ld).")
def check_cv_table(cv_table: Any, v: Variant, cv_loss: Any = None):
    """Task 2: the table of CV losses, rows ``lam_enc_grid``, columns ``lam_dec_grid``."""
    problems, note = compare_arrays(cv_table, _cv_table(v), name="cv_table", rtol=1e-6,
                                    axis_names=("lam_enc index", "lam_dec index"))

    def consistent():
        own, prob = call_student(lambda: np.array([[cv_loss(le, ld) for ld in v.lam_dec_grid]
                                                   for le in v.lam_enc_grid], dtype=float), "cv_loss")
        return ([prob], "") if prob else compare_arrays(cv_table, own, name="cv_table", rtol=1e-9)

    return carry_forward(problems, note, v, [(cv_loss, check_cv_loss)], uses="your `cv_loss` from Task 1",
                         consistent=consistent)


@task(_A3, "3", "selected lambdas", "np.unravel_index(np.argmin(cv_table), cv_table.shape) gives the row and "
      "column; gcc.tuning.select_lambdas does the same search in one call.")
def check_best_lambdas(best: Any, v: Variant, cv_table: Any = None):
    """Task 3: the pair ``(lam_enc, lam_dec)`` with the smallest CV loss (``gcc.tuning.select_lambdas``)."""
    sel = _cv_selection(v)
    best = as_answer(best, lambda b: tuple(float(x) for x in b))
    table = _cv_table(v)

    def describe(ans, want):
        if not isinstance(ans, tuple) or len(ans) != 2:
            return ["It should be a pair (lam_enc, lam_dec)."]
        if ans[0] not in v.lam_enc_grid or ans[1] not in v.lam_dec_grid:
            return ["It is not a point of the grids."]
        excess = table[v.lam_enc_grid.index(ans[0]), v.lam_dec_grid.index(ans[1])] / sel.score - 1
        return [f"Its CV loss is {excess:.1%} above the smallest in the table "
                "(ties go to the smaller lam_enc, then the smaller lam_dec)."]

    problems, note = compare_exact(best, (sel.lam_enc, sel.lam_dec), name="best", describe=describe)
    arr = finite_array(cv_table, table.shape) if cv_table is not None and problems else None
    own = None
    if arr is not None:  # the grid pair at the minimum of the student's own table
        i, j = np.unravel_index(int(np.argmin(arr)), arr.shape)
        own = float(v.lam_enc_grid[i]), float(v.lam_dec_grid[j])
    return carry_forward(problems, note, v, [(cv_table, check_cv_table)], uses="your `cv_table` from Task 2",
                         consistent=None if own is None else (lambda: compare_exact(best, own, name="best")))


@task(_A3, "4", "test losses", "Same call as cv_loss but with seed=test_seed: the test draws were never used "
      "for choosing the lambdas, so they measure the loss honestly.")
def check_test_losses(test_loss_tuned: Any, test_loss_untuned: Any, v: Variant, best: Any = None):
    """Task 4: the loss on the *test* draws (seed ``test_seed``) with the selected lambdas and with 0, 0."""
    sel = _cv_selection(v)
    problems, note = compare_scalar(test_loss_tuned, _test_loss(v, sel.lam_enc, sel.lam_dec),
                                    name="test_loss_tuned", rtol=1e-6)
    own = as_answer(best, lambda b: tuple(float(x) for x in b)) if best is not None and problems else None
    if not (isinstance(own, tuple) and len(own) == 2 and own[0] in v.lam_enc_grid and own[1] in v.lam_dec_grid):
        own = None  # not a pair of grid values
    problems, note = carry_forward(
        problems, note, v, [(best, check_best_lambdas)], uses="your `best` from Task 3",
        consistent=None if own is None else
        (lambda: compare_scalar(test_loss_tuned, _test_loss(v, *own), name="test_loss_tuned", rtol=1e-6)))
    if problems:
        return problems, note
    return compare_scalar(test_loss_untuned, _test_loss(v, 0.0, 0.0), name="test_loss_untuned", rtol=1e-6)
