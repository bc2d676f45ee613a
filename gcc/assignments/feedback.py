"""Feedback objects and the comparison engine behind every assignment check.

A check compares a student's answer with the reference ``gcc`` computes from the same variant and
says which value is wrong, by how much and what to look at, never the reference itself: messages
hold relative errors (one significant digit, ``3e-02``: too coarse to recover a value), tolerances,
indices and shapes only.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from gcc.backend import to_numpy
from gcc.validation import NAME, ArrayLike, check_real, validate

__all__ = ["Feedback", "AssignmentCheckError", "compare_arrays", "compare_scalar", "compare_exact",
           "as_float_array", "call_student"]

#: Longest line of a failure message (``nbgrader validate`` cuts every line of an error at 83 characters).
_LINE_WIDTH = 76


def _wrapped(text: str, first: str, rest: str) -> list[str]:
    """``text`` as lines of at most ``_LINE_WIDTH`` characters (names and numbers kept whole)."""
    return textwrap.wrap(text, _LINE_WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


@dataclass
class Feedback:
    """The outcome of one check: task ``task`` (``"2"``) of ``assignment`` (``"01_berrut"``), what was
    checked (``title``), whether it ``passed``, what is wrong (``problems``), what to look at
    (``hints``; both empty on a pass) and a ``note`` shown on success (the relative error)."""

    assignment: str
    task: str
    title: str
    passed: bool
    problems: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def message(self) -> str:
        """The text shown to the student: one line on a pass, else the problems and hints, wrapped."""
        if self.passed:
            tail = f": {self.note}" if self.note else ""
            return f"\u2714 Assignment {self.assignment}, task {self.task} ({self.title}) passed{tail}"
        lines = [f"\u2718 Task {self.task} ({self.title}) is not correct yet."]
        for p in self.problems:
            lines += _wrapped(p, "  - ", "    ")
        for h in self.hints:
            lines += _wrapped(h, "  Hint: ", "    ")
        return "\n".join(lines)

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self.message

    __repr__ = __str__  # notebooks display the last expression with repr: show the message


class AssignmentCheckError(AssertionError):
    """Raised by a check whose answer is not correct yet (an ``AssertionError``: an unfinished notebook
    stops at its first failing check); the message is the feedback's, ``.feedback`` the :class:`Feedback`."""

    def __init__(self, feedback: Feedback):
        super().__init__(feedback.message)
        self.feedback = feedback


def _rel(x: float) -> str:
    """One significant digit: enough to say how far off an answer is, too coarse to recover a value."""
    return f"{x:.0e}"


def _placeholder(answer: Any, name: str) -> str | None:
    """What is wrong with an answer that is still a starter placeholder (``...``, ``None``), else None."""
    if answer is Ellipsis:
        return f"`{name}` is still the placeholder `...`: replace it with your computation."
    if answer is None:
        return (f"`{name}` is None: your code does not return a value yet "
                "(a function whose body is `...` returns None).")
    return None


def as_float_array(answer: Any, name: str) -> tuple[np.ndarray | None, str | None]:
    """``(array, None)``: the answer as a float64 array (torch tensors moved to the host), or
    ``(None, problem)``: why it cannot be compared (a placeholder, complex, not numbers), named ``name``."""
    problem = _placeholder(answer, name)
    if problem:
        return None, problem
    try:
        raw = np.asarray(to_numpy(answer))               # torch tensors: compared on the host
        if raw.dtype.kind == "c":
            # never compared by its real part alone (numpy would drop the imaginary part)
            return None, (f"`{name}` holds complex numbers; the task asks for real values "
                          "(did a square root or a division go complex?).")
        if raw.dtype.kind in "USV":
            raise ValueError
        arr = raw.astype(float)
    except (TypeError, ValueError):
        return None, (f"`{name}` should be an array of numbers; got an object of type "
                      f"{type(answer).__name__} that numpy cannot convert to floats.")
    return arr, None


def _index_text(idx: tuple[int, ...], axis_names: Sequence[str] | None) -> str:
    if not idx:
        return "the value"
    if axis_names and len(axis_names) == len(idx):
        return ", ".join(f"{n} {i}" for n, i in zip(axis_names, idx))
    return "entry [" + ", ".join(str(i) for i in idx) + "]"


def compare_arrays(answer: Any, reference: np.ndarray, *, name: str, rtol: float = 1e-8,
                   atol: float = 0.0, axis_names: Sequence[str] | None = None,
                   diagnose: bool = True) -> tuple[list[str], str]:
    """Compare an array answer with its reference (which is never printed).

    Parameters
    ----------
    answer : array_like or placeholder
        The student's value.
    reference : ndarray
        The value computed by ``gcc``.
    name : str
        How the value is called in the notebook.
    rtol, atol : float
        Allowed error: ``atol + rtol * max|reference|`` (scale-aware near zero entries).
    axis_names : sequence of str, optional
        Names of the axes, so that messages say "worker 3, column 1".
    diagnose : bool
        Look for the usual slips (sign, constant factor, transposition, row order, a few wrong rows).

    Returns
    -------
    problems : list of str
        Empty when the answer matches.
    note : str
        The achieved relative error (for the success message).
    """
    rtol = check_real(rtol, "rtol", "compare_arrays", minimum=0)
    atol = check_real(atol, "atol", "compare_arrays", minimum=0)
    validate(name, NAME, "name", "compare_arrays")
    ref = validate(to_numpy(reference) if hasattr(reference, "detach") else reference,
                   ArrayLike(dtype=float, finite=True), "reference", "compare_arrays")
    arr, problem = as_float_array(answer, name)
    if problem:
        return [problem], ""
    if arr.shape != ref.shape:
        if arr.size == ref.size and arr.ndim >= 1:
            extra = " (same number of entries: check how you reshape or stack the results)"
        else:
            extra = ""
        return [f"`{name}` has shape {arr.shape}; the task asks for shape {ref.shape}{extra}."], ""
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))
        where = _index_text(tuple(int(i) for i in bad[0]), axis_names)
        return [f"`{name}` contains {len(bad)} NaN or infinite value(s), the first at {where}. "
                "Division by zero? (e.g. an evaluation point equal to a node)"], ""
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    err = np.abs(arr - ref)
    allowed = atol + rtol * scale
    denom = scale if scale > 0 else 1.0
    rel_overall = float(np.linalg.norm(arr - ref) / max(np.linalg.norm(ref), 1e-300)) \
        if np.linalg.norm(ref) > 0 else float(np.linalg.norm(arr))
    if ref.size == 0 or float(np.max(err)) <= allowed:
        return [], f"relative error {_rel(rel_overall)} (allowed {_rel(rtol)})."
    worst = np.unravel_index(int(np.argmax(err)), err.shape)
    problems = [
        f"`{name}` differs from the reference: overall relative error {_rel(rel_overall)} "
        f"(allowed {_rel(rtol)}); the largest deviation is at "
        f"{_index_text(tuple(int(i) for i in worst), axis_names)}, off by {_rel(float(err[worst]) / denom)} "
        "relative to the largest reference entry."
    ]
    if diagnose:
        problems += _diagnose(arr, ref, allowed, name, axis_names)
    return problems, ""


def _diagnose(arr: np.ndarray, ref: np.ndarray, allowed: float, name: str,
              axis_names: Sequence[str] | None) -> list[str]:
    """Recognise the usual slips, in words that do not reveal the reference."""
    found = []
    scale = max(float(np.max(np.abs(ref))), 1e-300)
    tol = max(allowed, 1e-6 * scale)
    if np.max(np.abs(arr + ref)) <= tol:
        return [f"`{name}` has the right magnitude but the opposite sign everywhere."]
    ra, rr = arr.ravel(), ref.ravel()
    denom = float(rr @ rr)
    if denom > 0:
        c = float(ra @ rr) / denom
        if abs(c - 1) > 1e-3 and c != 0 and np.max(np.abs(ra - c * rr)) <= tol * max(1.0, abs(c)):
            found.append(f"`{name}` is a constant multiple of the reference (factor about {c:.2g}): "
                         "look for a missing or extra normalisation.")
            return found
    if arr.ndim == 2 and arr.shape[0] == arr.shape[1] and np.max(np.abs(arr.T - ref)) <= tol:
        return [f"`{name}` is the transpose of what the task asks for."]
    if arr.ndim >= 1 and arr.shape[0] > 1:
        row_err = np.max(np.abs(arr - ref).reshape(arr.shape[0], -1), axis=1)
        bad_rows = np.flatnonzero(row_err > tol)
        lead = axis_names[0] if axis_names else "row"
        if np.allclose(np.sort(arr, axis=0), np.sort(ref, axis=0), atol=tol, rtol=0):
            found.append(f"`{name}` has the right entries in the wrong order along its first axis: "
                         "are the points sorted ascending, and are the rows in the order of the task?")
        elif 0 < len(bad_rows) < arr.shape[0]:
            shown = ", ".join(str(int(i)) for i in bad_rows[:6]) + (" ..." if len(bad_rows) > 6 else "")
            found.append(f"{len(bad_rows)} of {arr.shape[0]} {lead}s are wrong ({lead} {shown}); "
                         "the others match.")
    return found


def compare_scalar(answer: Any, reference: float, *, name: str, rtol: float = 1e-8,
                   atol: float = 0.0) -> tuple[list[str], str]:
    """Compare a scalar answer with its reference (relative error, direction, never the value)."""
    rtol = check_real(rtol, "rtol", "compare_scalar", minimum=0)
    atol = check_real(atol, "atol", "compare_scalar", minimum=0)
    validate(name, NAME, "name", "compare_scalar")
    ref = float(validate(to_numpy(reference) if hasattr(reference, "detach") else reference,
                         ArrayLike(dtype=float, finite=True, description="a finite real number"), "reference",
                         "compare_scalar"))
    problem = _placeholder(answer, name)
    if problem:
        return [problem], ""
    try:
        if hasattr(answer, "item"):
            answer = answer.item()
        value = float(answer)
    except (TypeError, ValueError):
        return [f"`{name}` should be a single number; got an object of type {type(answer).__name__}."], ""
    if not np.isfinite(value):
        return [f"`{name}` is NaN or infinite."], ""
    err = abs(value - ref)
    rel = err / abs(ref) if ref != 0 else err
    if err <= atol + rtol * abs(ref):
        return [], f"relative error {_rel(rel)} (allowed {_rel(rtol)})."
    direction = "too large" if value > ref else "too small"
    problems = [f"`{name}` is {direction}: relative error {_rel(rel)} (allowed {_rel(rtol)})."]
    if ref != 0 and abs(value + ref) <= atol + rtol * abs(ref):
        problems.append(f"`{name}` has the opposite sign.")
    return problems, ""


def compare_exact(answer: Any, reference: Any, *, name: str,
                  describe: Callable[[Any, Any], list[str]] | None = None) -> tuple[list[str], str]:
    """Compare a discrete answer (an index, a boolean, a set, a choice) for equality.

    ``describe(answer, reference)`` may add specific hints; it must not print the reference.
    """
    problem = _placeholder(answer, name)
    if problem:
        return [problem], ""
    if answer == reference:
        return [], "correct."
    problems = [f"`{name}` is not the expected answer."]
    if describe is not None:
        problems += describe(answer, reference)
    return problems, ""


def call_student(func: Any, name: str, *args, **kwargs) -> tuple[Any, str | None]:
    """``(func(*args, **kwargs), None)``, or ``(None, problem)``: a placeholder or a crash in words."""
    problem = _placeholder(func, name)
    if problem:
        return None, problem
    if not callable(func):
        return None, f"`{name}` should be a function; got an object of type {type(func).__name__}."
    try:
        return func(*args, **kwargs), None
    except NotImplementedError:
        return None, f"`{name}` still raises NotImplementedError: write its body."
    except Exception as exc:  # the student's bug: report it as feedback, not as a traceback
        return None, (f"calling `{name}` raised {type(exc).__name__}: {exc} "
                      "(call it yourself in a cell to see the traceback)")
