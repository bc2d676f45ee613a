"""Course assignments built on the companion: an nbgrader course with per-student variants and feedback.

The course is ``assignments/`` (``nbgrader_config.py`` and the nbgrader source notebooks
``source/<id>/<id>.ipynb``); nbgrader releases, collects, autogrades, writes feedback and keeps the
gradebook. This package adds what nbgrader does not do. A notebook's setup cell starts with::

    import gcc
    from gcc.assignments import variant, problem, checks
    v = variant("01_berrut", seed)      # seed: the notebook's first cell (the autograder sets the student's)
    p = problem(v)                      # the variant's data

and its autograded test cells call ``checks.check_*(answer, v)``. A check prints what is right, or
raises :class:`AssignmentCheckError` with which value is wrong, by how much and a hint, without
revealing the reference values; the test cell then scores zero.

- :mod:`.variants`: sizes and data drawn from a seed; :mod:`.feedback`: the comparison engine;
  :mod:`.checks`: one module of checks per assignment;
- :mod:`.course`: the students' seeds (:func:`~gcc.assignments.course.student_seed`) and the
  autograde step that grades each submission with its student's seed
  (:class:`~gcc.assignments.course.StudentSeed`), nbgrader runs;
- :mod:`.build`: the book's pages, the student versions of the nbgrader release;
- :mod:`.feedback_page`: the feedback HTML that ``generate_feedback`` writes (offline MathJax,
  wrapped lines, pending points); :mod:`.gradebook`: pending written answers, grading them from the
  shell and the export that marks pending points (these two import nbgrader).

Each task is graded on its own: checks of later tasks use the reference of the earlier ones
(:func:`~gcc.assignments.checks.common.reference_helpers`) or credit an answer that follows from the
student's earlier one (:func:`~gcc.assignments.checks.common.carry_forward`).

Command line::

    python -m gcc.assignments seeds ada bob     # the seed of each student id
    python -m gcc.assignments list --seed 17    # the sizes of that seed's variants
    python -m gcc.assignments sync-book         # book/generated/assignments from the nbgrader release
    python -m gcc.assignments pending           # written answers waiting for manual grading
    python -m gcc.assignments grade-written 01_berrut ada 2.5 --comment "..."
"""
from .feedback import AssignmentCheckError, Feedback
from .variants import ASSIGNMENTS, Variant, problem, variant
from . import checks

__all__ = ["AssignmentCheckError", "Feedback", "ASSIGNMENTS", "Variant", "problem", "variant", "checks"]
