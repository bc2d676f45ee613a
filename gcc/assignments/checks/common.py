"""What the checks of every assignment share: the variant guard, loss (1), a reference cache, the
common part of their docstrings and how a failed check shows in a notebook.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable

import numpy as np

import gcc
from gcc.validation import invalid

from ..feedback import AssignmentCheckError
from ..variants import Variant

__all__ = ["require_variant", "mse", "memo", "variant_key", "document_checks", "short_failures"]


def require_variant(v: Any, assignment: str, check: str) -> None:
    """Raise the standard ValueError unless ``v`` is the :class:`~gcc.assignments.Variant` of ``assignment``.

    Parameters
    ----------
    v : object
        What the student passed as the variant.
    assignment : str
        Id of the assignment the check belongs to, e.g. ``"01_berrut"``.
    check : str
        Name of the check, for the message.
    """
    if not isinstance(v, Variant) or v.assignment != assignment:
        got = v.assignment if isinstance(v, Variant) else type(v).__name__
        raise invalid("v", check, f"the Variant of {assignment!r} (gcc.assignments.variant({assignment!r}, seed))",
                      got)


def mse(estimate: np.ndarray, truth: np.ndarray) -> float:
    """End-to-end loss of eq. (1) for one received set (:func:`gcc.mse_loss`).

    Parameters
    ----------
    estimate, truth : ndarray, shape (K, ...)
    """
    return float(gcc.mse_loss(estimate, truth))


_MEMO: dict = {}


def memo(key: tuple, compute: Callable[[], Any]) -> Any:
    """Cache a reference per (what, variant): a notebook calls several checks on the same reference.

    Parameters
    ----------
    key : tuple
        What is computed and for which variant (see :func:`variant_key`).
    compute : callable
        ``compute() -> reference``, called once per key (the cache holds at most 65 entries).
    """
    if key not in _MEMO:
        if len(_MEMO) > 64:
            _MEMO.clear()
        _MEMO[key] = compute()
    return _MEMO[key]


def variant_key(v: Variant) -> str:
    """A string that identifies a variant (assignment, seed and sizes), for :func:`memo`."""
    return f"{v.assignment}|{v.seed}|{sorted(v.params.items())!r}"


_EXTRA_PARAMS = {
    "code": "code : {'spline', 'berrut'}\n        Which code's curve or slope is checked.",
    "trials": "trials : int\n        Monte Carlo trials of ``gcc.cpgc.simulate`` (the notebook uses the same number).",
}

_COMMON_DOC = """

    Parameters
    ----------
    {answers}
        The student's answer: a value, or the student's function for checks that call it on the
        variant's data. ``...``, ``None`` and a function that still raises ``NotImplementedError``
        give a "not answered yet" feedback.
    v : Variant
        The student's variant (``gcc.assignments.variant(<id>, seed, ...)``); the reference is
        recomputed with ``gcc`` from it.{extra}
    raise_on_fail : bool, default True
        Raise on failure (notebooks) or return the failed feedback (grading, tests).

    Returns
    -------
    Feedback
        The outcome; printing it shows a one-line confirmation or the feedback.

    Raises
    ------
    AssignmentCheckError
        When the answer is not correct yet and ``raise_on_fail``; its message says which value is
        wrong, by how much and gives a hint, without the reference values.
"""


def document_checks(namespace: dict, names: Iterable[str]) -> None:
    """Append the shared Parameters/Returns/Raises sections to the docstrings of the ``check_*`` functions.

    Parameters
    ----------
    namespace : dict
        The module's ``globals()``.
    names : iterable of str
        The module's ``__all__``; names that are not ``check_*`` functions are skipped, and so
        are docstrings that already have a Parameters section.
    """
    for name in names:
        func = namespace[name]
        if not name.startswith("check_") or not callable(func) or not func.__doc__ or "Parameters" in func.__doc__:
            continue
        params = list(inspect.signature(func).parameters)
        answers = params[:params.index("v")]
        extra = "".join("\n    " + _EXTRA_PARAMS[p] for p in params[params.index("v") + 1:]
                        if p in _EXTRA_PARAMS)
        func.__doc__ = func.__doc__.rstrip() + _COMMON_DOC.format(answers=", ".join(answers), extra=extra)


def short_failures(shell: Any = None) -> bool:
    """Show a failed check as its feedback alone, without a traceback through gcc's code.

    A notebook's setup cell calls it: a test cell whose check fails then shows
    ``AssignmentCheckError: <the feedback>`` (in the student's notebook and in nbgrader's
    feedback), still as an error, so the cell counts as failed. Other errors keep their tracebacks.

    Parameters
    ----------
    shell : IPython.core.interactiveshell.InteractiveShell, optional
        Default: the running IPython shell.

    Returns
    -------
    bool
        Whether a shell was found (outside IPython nothing changes).
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False

    def feedback_only(shell, etype, value, tb, tb_offset=None):
        # IPython leaves the display to a custom handler; _showtraceback is how ipykernel sends an
        # error (with this one-line traceback) to the notebook and into the execute reply.
        stb = [f"{etype.__name__}: {value}"]
        shell._showtraceback(etype, value, stb)
        return stb

    shell.set_custom_exc((AssignmentCheckError,), feedback_only)
    return True
