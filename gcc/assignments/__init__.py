"""Course assignments built on the companion: an nbgrader course with per-student variants and feedback.

The course is ``assignments/``, run by nbgrader. This package adds the per-student variants
(:mod:`.variants`), the checks of the test cells (:mod:`.checks`, on :mod:`.feedback`), the
students' seeds and the autograde step (:mod:`.course`), the book's pages (:mod:`.build`), the
feedback page (:mod:`.feedback_page`) and the pending written answers (:mod:`.gradebook`).
"""
from .feedback import AssignmentCheckError, Feedback
from .variants import ASSIGNMENTS, Variant, problem, variant
from . import checks

__all__ = ["AssignmentCheckError", "Feedback", "ASSIGNMENTS", "Variant", "problem", "variant", "checks"]
