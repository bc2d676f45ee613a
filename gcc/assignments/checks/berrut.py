"""Checks of assignment 01, Berrut's rational interpolation as a code (``01_berrut``).

The references come from ``gcc.BerrutCode`` and ``gcc.SplineCode`` on the variant's data.
Each task is graded on its own: the encoder (Task 2) and the decoder (Task 3) call the student's
``berrut_basis`` of Task 1, so their checks run them with the library's basis in its place
(:func:`~gcc.assignments.checks.common.reference_helpers`); a bug in Task 1 costs Task 1's points only,
and the feedback of Tasks 2 and 3 says when the student's own basis would have made them fail.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import gcc
from gcc.codes.berrut import berrut_matrix

from ..feedback import Feedback, call_student, compare_arrays, compare_exact, compare_scalar, finish, make
from ..variants import Variant, problem
from .common import document_checks, mse, reference_helpers, require_variant

__all__ = ["check_berrut_basis", "check_berrut_encoder", "check_berrut_decoder", "check_berrut_loss",
           "check_code_comparison"]

_A1 = "01_berrut"


def _berrut_setup(v: Variant):
    code = gcc.BerrutCode(n_inputs=v.n_inputs, n_workers=v.n_workers)
    return code, problem(v)


def _reference_basis(z, nodes):
    """The library's Berrut basis with the student's signature ``berrut_basis(z, nodes)``."""
    return berrut_matrix(np.asarray(nodes, dtype=float), np.atleast_1d(np.asarray(z, dtype=float)))


def _on_its_own(func: Callable, name: str, v: Variant, args: tuple, compare: Callable) -> tuple[list[str], str]:
    """Call a Task 2/3 function with the library's basis in place of the student's, and compare.

    When the student's own ``berrut_basis`` is wrong, the feedback says so: on a pass, that the
    task was graded with the library's basis (with theirs it would be off); on a failure, that the
    error is in ``name`` itself.
    """
    with reference_helpers(func, berrut_basis=_reference_basis) as own:
        ans, prob = call_student(func, name, *args)
    problems, note = ([prob], "") if prob else compare(ans)
    own_basis = own.get("berrut_basis")
    if own_basis is None or check_berrut_basis(own_basis, v, raise_on_fail=False).passed:
        return problems, note
    if problems:
        problems.append(f"(Graded with the library's Berrut basis in place of your `berrut_basis`, "
                        f"which is not correct yet: this error is in `{name}` itself.)")
    else:
        note += (f" Graded on its own, with the library's Berrut basis: your `berrut_basis` (Task 1) "
                 f"is not correct yet, and `{name}` calling it gives wrong values until you fix it.")
    return problems, note


def check_berrut_basis(berrut_basis: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 1: ``berrut_basis(z, nodes)`` returns the ``(len(z), len(nodes))`` matrix of Berrut's basis.

    Compared with the encoder matrix of ``gcc.BerrutCode`` (its encoder applied to unit vectors),
    then checked at ``z = nodes`` (where the basis must be the identity: interpolation).
    """
    require_variant(v, _A1, "check_berrut_basis")
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
    """Task 2: ``berrut_encode(X, alphas, betas)`` returns the coded inputs, shape ``(N, dim)``.

    Run with the library's Berrut basis in place of the student's ``berrut_basis`` (Task 1), so
    that the encoder is graded on its own.
    """
    require_variant(v, _A1, "check_berrut_encoder")
    code, p = _berrut_setup(v)
    ref = np.asarray(code.encode(p.X))
    problems, note = _on_its_own(berrut_encode, "berrut_encode", v, (p.X, code.alphas, code.betas),
                                 lambda ans: compare_arrays(ans, ref, name="berrut_encode(X, alphas, betas)",
                                                            rtol=1e-9, axis_names=("worker", "column")))
    hints = ["Worker n receives u_enc(beta_n) = sum_k basis_k(beta_n) x_k: one matrix product "
             "with your basis (shape (N, K)) and X (shape (K, dim))."]
    return finish(make(_A1, "2", "Berrut encoder", problems, note, hints), raise_on_fail)


def check_berrut_decoder(berrut_decode: Callable, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 3: ``berrut_decode(Y, received, alphas, betas)`` estimates ``f(x_k)``, shape ``(K, dim)``.

    Tested on the variant's received set and on a second set with one worker missing in the middle
    (where alternating the signs by the original worker index goes wrong), with the library's
    Berrut basis in place of the student's ``berrut_basis`` (Task 1).
    """
    require_variant(v, _A1, "check_berrut_decoder")
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
        problems, note = _on_its_own(
            berrut_decode, "berrut_decode", v, (Y, received, code.alphas, code.betas),
            lambda ans: compare_arrays(ans, ref, name="berrut_decode(Y, received, alphas, betas)", rtol=1e-9,
                                       axis_names=("data point", "column")))
        if problems:
            problems[0] = f"On {label}: {problems[0]}"
            break
    hints = ["The decoder is Berrut's interpolant through the *received* points (beta_v, y_v), "
             "evaluated at the alphas. The signs (-1)^j alternate along the received points in "
             "ascending order, not by the original worker index."]
    return finish(make(_A1, "3", "Berrut decoder", problems, note, hints), raise_on_fail)


def check_berrut_loss(loss_berrut: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 4: the end-to-end loss of ``gcc.BerrutCode`` on the variant's data and received set."""
    require_variant(v, _A1, "check_berrut_loss")
    code, p = _berrut_setup(v)
    est = code.decode(p.f(np.asarray(code.encode(p.X)))[p.received], p.received)
    ref = mse(est, p.f(p.X))
    problems, note = compare_scalar(loss_berrut, ref, name="loss_berrut", rtol=1e-6)
    hints = ["Loss (1) for one received set: the mean over the K data points of the squared Euclidean "
             "norm of (estimate - f(x_k)); sum over the columns, average over the rows."]
    return finish(make(_A1, "4", "end-to-end loss", problems, note, hints), raise_on_fail)


def check_code_comparison(spline_is_better: Any, v: Variant, raise_on_fail: bool = True) -> Feedback:
    """Task 5: does ``gcc.SplineCode`` (lambda = 0) beat ``gcc.BerrutCode`` on this variant?"""
    require_variant(v, _A1, "check_code_comparison")
    code, p = _berrut_setup(v)
    spline = gcc.SplineCode(n_inputs=v.n_inputs, n_workers=v.n_workers)
    truth = p.f(p.X)
    losses = []
    for c in (code, spline):
        est = c.decode(p.f(np.asarray(c.encode(p.X)))[p.received], p.received)
        losses.append(mse(est, truth))
    ref = bool(losses[1] < losses[0])
    if isinstance(spline_is_better, np.bool_):
        spline_is_better = bool(spline_is_better)
    problems, note = compare_exact(spline_is_better, ref, name="spline_is_better")
    if problems and spline_is_better not in (None, Ellipsis) and not isinstance(spline_is_better, bool):
        problems = [f"`spline_is_better` should be True or False; got {type(spline_is_better).__name__}."]
    hints = ["Compute the loss of gcc.SplineCode(K, N) on the same data and received set exactly as for "
             "Berrut, then compare the two numbers."]
    return finish(make(_A1, "5", "Berrut versus spline", problems, note, hints), raise_on_fail)


document_checks(globals(), __all__)
