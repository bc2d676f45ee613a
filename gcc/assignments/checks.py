"""The checks of the assignments: one ``check_*`` function per task.

Each check recomputes the reference with ``gcc`` from the student's variant (the same seed and
sizes), compares, and returns a :class:`~gcc.assignments.feedback.Feedback` that says which value
is wrong, by how much (relative error) and what to look at, without printing the reference values.
On failure it raises :class:`~gcc.assignments.feedback.AssignmentCheckError` (an ``AssertionError``),
so an unfinished notebook stops there; pass ``raise_on_fail=False`` to get the feedback instead.

Checks that take a *function* call it on the variant's data and on extra cases (for example a point
that coincides with a node), which catches mistakes a single value would hide.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .feedback import (Feedback, call_student, compare_arrays, compare_exact, compare_scalar, finish,
                       make)
from .variants import Variant, problem

__all__ = [
    # 01 Berrut
    "check_berrut_basis", "check_berrut_encoder", "check_berrut_decoder", "check_berrut_loss",
    "check_code_comparison",
    # 02 rate slope
    "check_worst_case_loss", "check_loss_curve", "check_slope", "check_rate_verdict",
]


def _require(v: Any, assignment: str, check: str) -> None:
    if not isinstance(v, Variant) or v.assignment != assignment:
        got = v.assignment if isinstance(v, Variant) else type(v).__name__
        raise ValueError(f"The 'v' parameter of {check} must be the Variant of {assignment!r} "
                         f"(gcc.assignments.variant({assignment!r}, seed)). Got {got!r} instead.")


def _gcc():
    # Imported on use: ``import gcc.assignments`` stays light, and the codes may land after this module.
    import gcc

    return gcc


def _mse(estimate: np.ndarray, truth: np.ndarray) -> float:
    """End-to-end loss of eq. (1) for one received set, from ``gcc.metrics``."""
    return float(_gcc().mse_loss(estimate, truth))


# =========================================================================== 01 Berrut
_A1 = "01_berrut"


def _berrut_setup(v: Variant):
    g = _gcc()
    code = g.BerrutCode(n_inputs=v.n_inputs, n_workers=v.n_workers)
    return code, problem(v)


def check_berrut_basis(berrut_basis: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: ``berrut_basis(z, nodes)`` returns the ``(len(z), len(nodes))`` matrix of Berrut's basis.

    Compared with the encoder matrix of ``gcc.BerrutCode`` (its encoder applied to unit vectors),
    then checked at ``z = nodes`` (where the basis must be the identity: interpolation).
    """
    _require(v, _A1, "check_berrut_basis")
    code, _ = _berrut_setup(v)
    # The encoder is linear in the data, so encoding the K unit vectors gives its (N, K) matrix.
    ref = np.asarray(code.encode(np.eye(v.n_inputs)))
    ans, prob = call_student(berrut_basis, "berrut_basis", code.betas, code.alphas)
    problems, note = ([prob], "") if prob else compare_arrays(
        ans, ref, name="berrut_basis(betas, alphas)", rtol=1e-9, axis_names=("worker", "data point"))
    hints = ["Basis j at z is ((-1)^j / (z - alpha_j)) divided by the sum over i of (-1)^i / (z - alpha_i); "
             "every row sums to one."]
    if not problems:
        ans, prob = call_student(berrut_basis, "berrut_basis", code.alphas, code.alphas)
        problems, _ = ([prob], "") if prob else compare_arrays(
            ans, np.eye(v.n_inputs), name="berrut_basis(alphas, alphas)", rtol=1e-12,
            axis_names=("evaluation point", "data point"), diagnose=False)
        if problems:
            problems.insert(0, "At an evaluation point equal to a node the formula divides by zero; "
                               "the basis must interpolate there (row = unit vector).")
            hints = ["Handle z == alpha_k separately (e.g. with np.isclose), return the k-th unit vector."]
    return finish(make(_A1, "1", "Berrut basis", problems, note, hints), raise_on_fail)


def check_berrut_encoder(berrut_encode: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 2: ``berrut_encode(X, alphas, betas)`` returns the coded inputs, shape ``(N, dim)``."""
    _require(v, _A1, "check_berrut_encoder")
    code, p = _berrut_setup(v)
    ref = np.asarray(code.encode(p.X))
    ans, prob = call_student(berrut_encode, "berrut_encode", p.X, code.alphas, code.betas)
    problems, note = ([prob], "") if prob else compare_arrays(
        ans, ref, name="berrut_encode(X, alphas, betas)", rtol=1e-9, axis_names=("worker", "column"))
    hints = ["Worker n receives u_enc(beta_n) = sum_k basis_k(beta_n) x_k: one matrix product "
             "with your basis (shape (N, K)) and X (shape (K, dim))."]
    return finish(make(_A1, "2", "Berrut encoder", problems, note, hints), raise_on_fail)


def check_berrut_decoder(berrut_decode: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 3: ``berrut_decode(Y, received, alphas, betas)`` estimates ``f(x_k)``, shape ``(K, dim)``.

    Tested on the variant's received set and on a second set with one worker missing in the middle
    (where alternating the signs by the original worker index goes wrong).
    """
    _require(v, _A1, "check_berrut_decoder")
    code, p = _berrut_setup(v)
    outputs = p.f(np.asarray(code.encode(p.X)))
    middle = v.n_workers // 2
    cases = [("your received set `received`", p.received),
             (f"the received set of all workers except worker {middle}",
              np.array([n for n in range(v.n_workers) if n != middle]))]
    problems, note = [], ""
    for label, received in cases:
        Y = outputs[received]
        ref = np.asarray(code.decode(Y, received))
        ans, prob = call_student(berrut_decode, "berrut_decode", Y, received, code.alphas, code.betas)
        problems, note = ([prob], "") if prob else compare_arrays(
            ans, ref, name="berrut_decode(Y, received, alphas, betas)", rtol=1e-9,
            axis_names=("data point", "column"))
        if problems:
            problems.insert(0, f"On {label}:")
            break
    hints = ["The decoder is Berrut's interpolant through the *received* points (beta_v, y_v), "
             "evaluated at the alphas. The signs (-1)^j alternate along the received points in "
             "ascending order, not by the original worker index."]
    return finish(make(_A1, "3", "Berrut decoder", problems, note, hints), raise_on_fail)


def check_berrut_loss(loss_berrut: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 4: the end-to-end loss of ``gcc.BerrutCode`` on the variant's data and received set."""
    _require(v, _A1, "check_berrut_loss")
    code, p = _berrut_setup(v)
    est = code.decode(p.f(np.asarray(code.encode(p.X)))[p.received], p.received)
    ref = _mse(est, p.f(p.X))
    problems, note = compare_scalar(loss_berrut, ref, name="loss_berrut", rtol=1e-6)
    hints = ["Loss (1) for one received set: the mean over the K data points of the squared Euclidean "
             "norm of (estimate - f(x_k)); sum over the columns, average over the rows."]
    return finish(make(_A1, "4", "end-to-end loss", problems, note, hints), raise_on_fail)


def check_code_comparison(spline_is_better: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 5: does ``gcc.SplineCode`` (lambda = 0) beat ``gcc.BerrutCode`` on this variant?"""
    _require(v, _A1, "check_code_comparison")
    g = _gcc()
    code, p = _berrut_setup(v)
    spline = g.SplineCode(n_inputs=v.n_inputs, n_workers=v.n_workers)
    truth = p.f(p.X)
    losses = []
    for c in (code, spline):
        est = c.decode(p.f(np.asarray(c.encode(p.X)))[p.received], p.received)
        losses.append(_mse(est, truth))
    ref = bool(losses[1] < losses[0])
    if isinstance(spline_is_better, np.bool_):
        spline_is_better = bool(spline_is_better)
    problems, note = compare_exact(spline_is_better, ref, name="spline_is_better")
    if problems and not isinstance(spline_is_better, bool):
        problems = [f"`spline_is_better` should be True or False; got {type(spline_is_better).__name__}."]
    hints = ["Compute the loss of gcc.SplineCode(K, N) on the same data and received set exactly as for "
             "Berrut, then compare the two numbers."]
    return finish(make(_A1, "5", "Berrut versus spline", problems, note, hints), raise_on_fail)


# =========================================================================== 02 rate slope
_A2 = "02_rate_slope"


def _worst_loss(v: Variant, code_name: str, n_workers: int) -> float:
    g = _gcc()
    p = problem(v)
    cls = {"spline": g.SplineCode, "berrut": g.BerrutCode}[code_name]
    code = cls(n_inputs=v.n_inputs, n_workers=n_workers)
    return float(np.max(g.stragglers.block_losses(code, p.f, p.X, v.n_stragglers)))


def _reference_worst_losses(v: Variant, code_name: str) -> np.ndarray:
    return np.array([_worst_loss(v, code_name, n) for n in v.n_workers_grid])


def check_worst_case_loss(worst_case_loss: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: ``worst_case_loss(code)`` is the largest loss over all contiguous straggler blocks.

    Called with ``gcc.SplineCode`` for the smallest ``N`` of the variant's grid.
    """
    _require(v, _A2, "check_worst_case_loss")
    g = _gcc()
    n = v.n_workers_grid[0]
    ref = _worst_loss(v, "spline", n)
    ans, prob = call_student(worst_case_loss, "worst_case_loss",
                             g.SplineCode(n_inputs=v.n_inputs, n_workers=n))
    problems, note = ([prob], "") if prob else compare_scalar(
        ans, ref, name=f"worst_case_loss(SplineCode(K, {n}))", rtol=1e-6)
    hints = [f"Slide a block of S = {v.n_stragglers} consecutive stragglers over every start position "
             "0 .. N - S (N - S + 1 blocks), decode from the other workers, compute loss (1) and keep the "
             "largest. A random straggler set is not the worst case."]
    return finish(make(_A2, "1", "worst-case loss", problems, note, hints), raise_on_fail)


def check_loss_curve(losses: Any, v: Variant, code: str = "spline", raise_on_fail: bool = True) -> Feedback:
    """Tasks 2 and 4: worst-case losses over ``v.n_workers_grid`` for ``code`` (``"spline"``/``"berrut"``)."""
    _require(v, _A2, "check_loss_curve")
    if code not in ("spline", "berrut"):
        raise ValueError(f"The 'code' parameter of check_loss_curve must be 'spline' or 'berrut'. "
                         f"Got {code!r} instead.")
    ref = _reference_worst_losses(v, code)
    name = "losses" if code == "spline" else "losses_berrut"
    problems, note = compare_arrays(losses, ref, name=name, rtol=1e-6, axis_names=("grid position",))
    cls = "SplineCode" if code == "spline" else "BerrutCode"
    hints = [f"One entry per N in v.n_workers_grid, in that order: worst_case_loss(gcc.{cls}(K, N))."]
    task, title = ("2", "loss curve, splines") if code == "spline" else ("4", "loss curve, Berrut")
    return finish(make(_A2, task, title, problems, note, hints), raise_on_fail)


def check_slope(slope: Any, v: Variant, code: str = "spline", raise_on_fail: bool = True) -> Feedback:
    """Tasks 3 and 4: the least-squares slope of log(loss) against log(N)."""
    _require(v, _A2, "check_slope")
    g = _gcc()
    ref = float(g.loglog_slope(np.asarray(v.n_workers_grid, dtype=float), _reference_worst_losses(v, code)))
    name = "slope" if code == "spline" else "slope_berrut"
    problems, note = compare_scalar(slope, ref, name=name, rtol=1e-4)
    hints = ["Fit a straight line to (log N, log loss) by least squares (np.polyfit with degree 1, or "
             "gcc.loglog_slope); the slope is its first coefficient. Use natural or base-10 logs on "
             "both axes, not a mix."]
    task = "3" if code == "spline" else "4b"
    return finish(make(_A2, task, f"log-log slope, {code}", problems, note, hints), raise_on_fail)


def check_rate_verdict(at_least_as_fast: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 5: does the measured spline slope decay at least as fast as Theorem 4's ``N^-3``?"""
    _require(v, _A2, "check_rate_verdict")
    g = _gcc()
    slope = float(g.loglog_slope(np.asarray(v.n_workers_grid, dtype=float),
                                 _reference_worst_losses(v, "spline")))
    ref = bool(slope <= -3.0)
    if isinstance(at_least_as_fast, np.bool_):
        at_least_as_fast = bool(at_least_as_fast)
    problems, note = compare_exact(at_least_as_fast, ref, name="at_least_as_fast")
    hints = ["Decaying at least as fast as N^-3 means a slope of -3 or steeper (more negative)."]
    return finish(make(_A2, "5", "verdict against Theorem 4", problems, note, hints), raise_on_fail)
