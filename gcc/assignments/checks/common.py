"""What the checks of every assignment share: the grading pattern (:func:`task`), loss (1), a
reference cache, grading a task on its own, and how a failed check shows in a notebook.
"""
from __future__ import annotations

import functools
import inspect
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from gcc.validation import Options, invalid, validate

from ..feedback import AssignmentCheckError, Feedback, call_student
from ..variants import Variant

__all__ = ["task", "answer_of", "plain", "finite_array", "as_answer", "short_failures",
           "reference_helpers", "carry_forward"]


class _Unanswered(Exception):
    """A student's function that is a placeholder or raised: the text is the task's problem."""


def answer_of(func: Any, name: str, *args) -> Any:
    """The student's ``func(*args)``; a placeholder or a crash ends the check with its feedback text."""
    result, problem = call_student(func, name, *args)
    if problem:
        raise _Unanswered(problem)
    return result


def plain(answer: Any) -> Any:
    """A numpy scalar (``np.bool_``, ``np.int64``) as the Python value it holds; anything else as is."""
    return answer.item() if isinstance(answer, np.generic) else answer


def finite_array(answer: Any, shape: tuple) -> np.ndarray | None:
    """A student's answer as a finite float array of ``shape``, else None (for error carried forward)."""
    try:
        arr = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr if arr.shape == tuple(shape) and np.all(np.isfinite(arr)) else None


def as_answer(answer: Any, convert: Callable) -> Any:
    """``convert(answer)`` for comparison; a placeholder as is, an unconvertible answer as ``"<type>"``."""
    if answer is Ellipsis or answer is None:
        return answer
    try:
        return convert(answer)
    except (TypeError, ValueError):
        return f"<{type(answer).__name__}>"


_LATER = {"code": "{'spline', 'berrut'}: which code's curve or slope is checked.",
          "trials": "Monte Carlo trials of ``gcc.cpgc.simulate`` (as in the notebook)."}

_EARLIER = "The student's answer of an earlier task: an answer that follows from it scores in full."

_COMMON_DOC = """

    Parameters
    ----------
    {answers}
        The student's answer: a value, or the student's function the check calls on the variant's data.
    v : Variant
        The student's variant (``variant(<id>, seed)``); the reference is recomputed from it.{extra}
    raise_on_fail : bool, default True
        Raise :class:`AssignmentCheckError` on failure (notebooks), or return the failed feedback.

    Returns
    -------
    Feedback
        A one-line confirmation, or which value is wrong, by how much and a hint (never the reference).
"""


def task(assignment: str, number, title, hint) -> Callable:
    """Make a task's comparison a check: the variant guard, the feedback, raising on failure, the docs.

    Parameters
    ----------
    assignment : str
        The assignment the check's ``v`` must be a variant of.
    number, title : str or dict
        The task's number and title; a dict ``{code: ...}`` for a check of both codes.
    hint : str or callable
        Shown on failure; ``hint(arguments)`` of the check's bound arguments.

    Returns
    -------
    callable
        A decorator of ``compare(answer..., v, ...) -> (problems, note[, hint])``: the check
        ``(answer..., v, ..., raise_on_fail=True) -> Feedback``; a student's function that fails
        in :func:`answer_of` fails the task with that problem.
    """
    def decorate(compare: Callable) -> Callable:
        signature = inspect.signature(compare)
        name = compare.__name__

        @functools.wraps(compare)
        def check(*args, raise_on_fail: bool = True, **kwargs) -> Feedback:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = bound.arguments
            v = arguments["v"]
            if not isinstance(v, Variant) or v.assignment != assignment:
                raise invalid("v", name, f"the Variant of {assignment!r} "
                              f"(gcc.assignments.variant({assignment!r}, seed))",
                              v.assignment if isinstance(v, Variant) else type(v).__name__)
            if isinstance(number, dict):
                validate(arguments["code"], Options(tuple(number)), "code", name)
            try:
                problems, note, *shown = compare(*bound.args, **bound.kwargs)
            except _Unanswered as exc:
                problems, note, shown = [str(exc)], "", []
            text = shown[0] if shown else hint(arguments) if callable(hint) else hint
            pick = (lambda x: x[arguments["code"]] if isinstance(x, dict) else x)
            feedback = Feedback(assignment, pick(number), pick(title), not problems, list(problems),
                                [] if not problems else [text], note)
            if problems and raise_on_fail:
                raise AssignmentCheckError(feedback)
            return feedback

        params = list(signature.parameters)
        answers = params[:params.index("v")]
        later = params[params.index("v") + 1:]
        extra = "".join(f"\n    {p} : optional\n        " + _LATER.get(p, _EARLIER) for p in later)
        check.__doc__ = compare.__doc__.rstrip() + _COMMON_DOC.format(answers=", ".join(answers), extra=extra)
        flag = inspect.Parameter("raise_on_fail", inspect.Parameter.KEYWORD_ONLY, default=True,
                                 annotation=bool)
        check.__signature__ = signature.replace(parameters=[*signature.parameters.values(), flag],
                                                return_annotation=Feedback)
        return check
    return decorate


@contextmanager
def reference_helpers(func: Any, **helpers: Callable) -> Iterator[dict]:
    """Grade a task on its own: while it runs, the student's earlier functions are the reference's.

    Each ``name=reference`` of ``helpers`` that the namespace of ``func`` (the notebook's globals)
    defines is bound to the reference; on exit the student's own functions are restored, whatever
    happened. Yields ``{name: the student's own function}`` of the names swapped.
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


def carry_forward(problems: list[str], note: str, v: Variant, given: list, *, uses: str,
                  consistent: Callable[[], tuple[list[str], str]] | None = None) -> tuple[list[str], str]:
    """Grade an answer that builds on earlier tasks' answers on its own ("error carried forward").

    ``problems, note`` compare the answer with the reference; ``given`` holds ``(answer, check)``
    of each earlier task (an answer None: not given). When an earlier answer is wrong, an answer
    that ``consistent()`` (its comparison with what the wrong earlier answers imply) finds right
    scores in full; otherwise the first problem says that the earlier task (``uses``) is not
    correct yet. Returns the new ``(problems, note)``.
    """
    if (not problems or any(answer is None for answer, _ in given)
            or all(check(answer, v, raise_on_fail=False).passed for answer, check in given)):
        return problems, note
    if consistent is not None and not consistent()[0]:
        return [], (f"correct given {uses}, which is not correct yet (this task is graded on "
                    "its own: see that task's feedback).")
    return [f"This task uses {uses}, which is not correct yet: fix that task first."] + problems, note


def short_failures(shell: Any = None) -> bool:
    """Show a failed check as ``AssignmentCheckError: <the feedback>`` alone, still an error (the
    cell counts as failed) but with no traceback through gcc's code; other errors keep theirs.

    ``shell`` defaults to the running IPython shell; returns whether there is one.
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
        # ipykernel sends an error through _showtraceback: one entry per line of the feedback.
        stb = f"{etype.__name__}: {value}".split("\n")
        shell._showtraceback(etype, value, stb)
        return stb

    shell.set_custom_exc((AssignmentCheckError,), feedback_only)
    return True
