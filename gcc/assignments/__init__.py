"""Course assignments built on the companion: an nbgrader course with per-student variants and feedback.

The course is ``assignments/`` (nbgrader's ``nbgrader_config.py`` and source notebooks); nbgrader
releases, collects, autogrades, writes feedback and keeps the gradebook. This package adds the
per-student variants (:mod:`.variants`: ``v = variant("01_berrut", seed)``, ``p = problem(v)``), the
checks of the test cells (:mod:`.checks`, on the comparison engine :mod:`.feedback`: which value is
wrong, by how much and a hint, never the reference), the students' seeds and the autograde step
that grades with them (:mod:`.course`), the book's pages (:mod:`.build`), the offline feedback page
(:mod:`.feedback_page`) and the pending written answers (:mod:`.gradebook`). Command line:
``python -m gcc.assignments {seeds,list,sync-book,pending,grade-written}``.
"""
from .feedback import AssignmentCheckError, Feedback
from .variants import ASSIGNMENTS, Variant, problem, variant
from . import checks

__all__ = ["AssignmentCheckError", "Feedback", "ASSIGNMENTS", "Variant", "problem", "variant", "checks"]
