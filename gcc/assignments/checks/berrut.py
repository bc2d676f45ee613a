"""Checks of assignment 01, Berrut's rational interpolation as a code (``01_berrut``).

The references come from ``gcc.BerrutCode`` and ``gcc.SplineCode`` on the variant's data. The
encoder (Task 2) and the decoder (Task 3) call the student's ``berrut_basis`` of Task 1; their
checks run them with the library's basis in its place (:func:`.common.reference_helpers`).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import gcc
from gcc.codes.berrut import berrut_matrix

from ..feedback import call_student, compare_arrays, compare_exact, compare_scalar
from ..variants import Variant, problem
from .common import answer_of, plain, reference_helpers, task

__all__ = ["check_berrut_basis", "check_berrut_encoder", "check_berrut_decoder", "check_berrut_loss",
           "check_code_comparison"]

_A1 = "01_berrut"


def _berrut_setup(v: Variant):
    return gcc.BerrutCode(n_inputs=v.n_inputs, n_workers=v.n_workers), problem(v)


def _reference_basis(z, nodes):
    """The library's Berrut basis with the student's signature ``berrut_basis(z, nodes)``."""
    return berrut_matrix(np.asarray(nodes, dtype=float), np.atleast_1d(np.asarray(z, dtype=float)))


def _on_its_own(func: Callable, name: str, v: Variant, args: tuple,
                compare: Callable) -> tuple[list[str], str]:
    """Call a Task 2/3 function with the library's basis in place of the student's, and compare;
    say so when the student's own ``berrut_basis`` is wrong."""
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


@task(_A1, "1", "Berrut basis", "Basis j at z is ((-1)^j / (z - alpha_j)) divided by the sum over i of "
      "(-1)^i / (z - alpha_i); every row sums to one.")
def check_berrut_basis(berrut_basis: Callable, v: Variant):
    """Task 1: ``berrut_basis(z, nodes)`` returns the ``(len(z), len(nodes))`` matrix of Berrut's basis.

    Compared with the encoder matrix of ``gcc.BerrutCode`` (its encoder applied to unit vectors),
    then checked at ``z = nodes`` (where the basis must be the identity: interpolation).
    """
    code, _ = _berrut_setup(v)
    # The encoder is linear in the data, so encoding the K unit vectors gives its (N, K) matrix.
    ans = answer_of(berrut_basis, "berrut_basis", code.betas, code.alphas)
    problems, note = compare_arrays(ans, np.asarray(code.encode(np.eye(v.n_inputs))), rtol=1e-9,
                                    name="berrut_basis(betas, alphas)", axis_names=("worker", "data point"))
    if problems:
        return problems, note
    ans, prob = call_student(berrut_basis, "berrut_basis", code.alphas, code.alphas)
    problems, _ = ([prob], "") if prob else compare_arrays(
        ans, np.eye(v.n_inputs), name="berrut_basis(alphas, alphas)", rtol=1e-12,
        axis_names=("evaluation point", "data point"), diagnose=False)
    if not problems:
        return problems, note
    return (["At an evaluation point equal to a node the formula divides by zero; the basis must "
             "interpolate there (row = unit vector)."] + problems, "",
            "Handle z == alpha_k separately (e.g. with np.isclose), return the k-th unit vector.")


@task(_A1, "2", "Berrut encoder", "Worker n receives u_enc(beta_n) = sum_k basis_k(beta_n) x_k: one matrix "
      "product with your basis (shape (N, K)) and X (shape (K, dim)).")
def check_berrut_encoder(berrut_encode: Callable, v: Variant):
    """Task 2: ``berrut_encode(X, alphas, betas)`` returns the coded inputs, shape ``(N, dim)``.

    Run with the library's Berrut basis in place of the student's ``berrut_basis`` (Task 1), so
    that the encoder is graded on its own.
    """
    code, p = _berrut_setup(v)
    ref = np.asarray(code.encode(p.X))
    return _on_its_own(berrut_encode, "berrut_encode", v, (p.X, code.alphas, code.betas),
                       lambda ans: compare_arrays(ans, ref, name="berrut_encode(X, alphas, betas)", rtol=1e-9,
                                                  axis_names=("worker", "column")))


@task(_A1, "3", "Berrut decoder", "The decoder is Berrut's interpolant through the *received* points "
      "(beta_v, y_v), evaluated at the alphas. The signs (-1)^j alternate along the received points in "
      "ascending order, not by the original worker index.")
def check_berrut_decoder(berrut_decode: Callable, v: Variant):
    """Task 3: ``berrut_decode(Y, received, alphas, betas)`` estimates ``f(x_k)``, shape ``(K, dim)``.

    Tested on the variant's received set and on a second set with one worker missing in the middle
    (where alternating the signs by the original worker index goes wrong), with the library's
    Berrut basis in place of the student's ``berrut_basis`` (Task 1).
    """
    code, p = _berrut_setup(v)
    outputs = p.f(np.asarray(code.encode(p.X)))
    middle = v.n_workers // 2
    cases = [("your received set `received`", p.received),
             (f"the received set of all workers except worker {middle}",
              np.array([n for n in range(v.n_workers) if n != middle]))]
    for label, received in cases:
        Y = outputs[received]
        ref = np.asarray(code.decode(Y, received))
        problems, note = _on_its_own(
            berrut_decode, "berrut_decode", v, (Y, received, code.alphas, code.betas),
            lambda ans: compare_arrays(ans, ref, name="berrut_decode(Y, received, alphas, betas)", rtol=1e-9,
                                       axis_names=("data point", "column")))
        if problems:
            return [f"On {label}: {problems[0]}"] + problems[1:], note
    return problems, note


@task(_A1, "4", "end-to-end loss", "Loss (1) for one received set: the mean over the K data points of the "
      "squared Euclidean norm of (estimate - f(x_k)); sum over the columns, average over the rows.")
def check_berrut_loss(loss_berrut: Any, v: Variant):
    """Task 4: the end-to-end loss of ``gcc.BerrutCode`` on the variant's data and received set."""
    code, p = _berrut_setup(v)
    est = code.decode(p.f(np.asarray(code.encode(p.X)))[p.received], p.received)
    return compare_scalar(loss_berrut, float(gcc.mse_loss(est, p.f(p.X))), name="loss_berrut", rtol=1e-6)


@task(_A1, "5", "Berrut versus spline", "Compute the loss of gcc.SplineCode(K, N) on the same data and "
      "received set exactly as for Berrut, then compare the two numbers.")
def check_code_comparison(spline_is_better: Any, v: Variant):
    """Task 5: does ``gcc.SplineCode`` (lambda = 0) beat ``gcc.BerrutCode`` on this variant?"""
    code, p = _berrut_setup(v)
    losses = [float(gcc.mse_loss(c.decode(p.f(np.asarray(c.encode(p.X)))[p.received], p.received), p.f(p.X)))
              for c in (code, gcc.SplineCode(n_inputs=v.n_inputs, n_workers=v.n_workers))]
    spline_is_better = plain(spline_is_better)
    problems, note = compare_exact(spline_is_better, bool(losses[1] < losses[0]), name="spline_is_better")
    if problems and spline_is_better not in (None, Ellipsis) and not isinstance(spline_is_better, bool):
        problems = [f"`spline_is_better` should be True or False; got {type(spline_is_better).__name__}."]
    return problems, note
