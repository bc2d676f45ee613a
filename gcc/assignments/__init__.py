"""Course assignments built on the companion: variants, checks with feedback, and build tools.

A student notebook starts with::

    import gcc
    from gcc.assignments import variant, problem, checks
    v = variant("01_berrut", seed)      # seed is the notebook's papermill parameter
    p = problem(v)                      # the variant's data

and calls ``checks.check_*(answer, v)`` after each task. A check prints what is right, or raises
:class:`AssignmentCheckError` with which value is wrong, by how much and a hint, without revealing
the reference values.

Command line (student pages, per-student variants, instructor build)::

    python -m gcc.assignments sync-book
    python -m gcc.assignments make-variant --seed 17
    python -m gcc.assignments build-instructor [--html]
"""
from .feedback import AssignmentCheckError, Feedback
from .variants import ASSIGNMENTS, Variant, problem, variant
from . import checks

__all__ = ["AssignmentCheckError", "Feedback", "ASSIGNMENTS", "Variant", "problem", "variant", "checks"]
