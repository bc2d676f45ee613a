"""What the checks of every assignment share: the variant guard, loss (1), a reference cache, the
common part of their docstrings and how a failed check shows in a notebook.
"""
from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

import numpy as np

import gcc
from gcc.validation import invalid

from ..feedback import AssignmentCheckError
from ..variants import Variant

__all__ = ["require_variant", "mse", "memo", "variant_key", "document_checks", "short_failures",
           "reference_helpers", "carry_forward"]


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


@contextmanager
def reference_helpers(func: Any, **helpers: Callable) -> Iterator[dict]:
    """Grade a task on its own: while it runs, the student's earlier functions are the reference's.

    A student's function of a later task calls their functions of earlier tasks by name (Task 2's
    ``berrut_encode`` calls Task 1's ``berrut_basis``), so a bug in Task 1 would fail Task 2 as well.
    Inside this context, each name of ``helpers`` that the student's namespace (the function's
    globals, the notebook's) defines is bound to the reference implementation; on exit the student's
    own functions are restored, whatever happened.

    Parameters
    ----------
    func : object
        The student's function under test (anything else: nothing is swapped).
    **helpers : callable
        ``name=reference`` for the earlier tasks' functions.

    Yields
    ------
    dict
        ``{name: the student's own function}`` for the names swapped (empty when none was).
    """
    namespace = getattr(func, "__globals__", None)
    if not isinstance(namespace, dict):
        yield {}
        return
    own = {name: namespace[name] for name in helpers if callable(namespace.get(name))}
    try:
        namespace.update({name: helpers[name] for name in own})
        yield dict(own)
    finally:
        namespace.update(own)


def carry_forward(problems: list[str], note: str, *, uses: str, earlier_passed: bool,
                  consistent: Callable[[], tuple[list[str], str]] | None = None) -> tuple[list[str], str]:
    """Grade an answer that builds on an earlier task's answer on its own ("error carried forward").

    Parameters
    ----------
    problems, note : list of str, str
        The comparison of the answer with the reference (computed from the reference of the
        earlier task).
    uses : str
        What the answer builds on, e.g. ``"your `losses` from Task 2"``.
    earlier_passed : bool
        Whether that earlier answer is right.
    consistent : callable, optional
        ``consistent() -> (problems, note)``: the answer compared with what the student's (wrong)
        earlier answer implies. When it matches, the answer is right given the earlier one and the
        task scores in full.

    Returns
    -------
    problems, note : list of str, str
        Unchanged when the answer is right or the earlier answer is; no problem at all when the
        answer follows correctly from the earlier one; otherwise the comparison's problems after a
        first one that says the earlier task is not correct yet.
    """
    if not problems or earlier_passed:
        return problems, note
    cause = f"This task uses {uses}, which is not correct yet"
    if consistent is not None:
        again, _ = consistent()
        if not again:
            return [], (f"correct given {uses}, which is not correct yet (this task is graded on "
                        "its own: see that task's feedback).")
    # The comparison with the reference says what is wrong (a placeholder, a shape, ...); the first
    # line says that the earlier task is wrong too, and to fix it first.
    return [f"{cause}: fix that task first."] + problems, note


_EXTRA_PARAMS = {
    "code": "code : {'spline', 'berrut'}\n        Which code's curve or slope is checked.",
    "trials": "trials : int\n        Monte Carlo trials of ``gcc.cpgc.simulate`` (the notebook uses the same number).",
}
#: Arguments that pass the student's answer to an earlier task (see :func:`carry_forward`).
_EARLIER = ("worst_case_loss", "losses", "slope", "cv_loss", "cv_table", "best", "arrivals", "values", "history",
            "latency95", "mean_loss", "design")
_EXTRA_PARAMS.update({name: f"{name} : optional\n        The student's ``{name}`` of an earlier task (the test cell "
                            "passes it):\n        an answer that follows correctly from a wrong one scores in full, "
                            "and a failure\n        caused by it says so." for name in _EARLIER})

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
        # error (with this short traceback) to the notebook and into the execute reply. One entry
        # per line: "AssignmentCheckError: <headline>", then the wrapped problems and hints.
        stb = f"{etype.__name__}: {value}".split("\n")
        shell._showtraceback(etype, value, stb)
        return stb

    shell.set_custom_exc((AssignmentCheckError,), feedback_only)
    return True
