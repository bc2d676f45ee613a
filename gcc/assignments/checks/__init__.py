"""The checks of the assignments: one ``check_*`` function per task, one module per assignment.

Each check recomputes the reference with ``gcc`` from the student's variant, compares, and returns
a :class:`~gcc.assignments.feedback.Feedback` that says which value is wrong, by how much and what
to look at, without printing the reference values; on failure it raises
:class:`~gcc.assignments.feedback.AssignmentCheckError` (``raise_on_fail=False``: return it).
Modules: :mod:`.berrut` (01), :mod:`.rate_slope` (02), :mod:`.lambda_cv` (03),
:mod:`.cpgc_peeling` (04), :mod:`.inference_service` (05); :mod:`.common` holds the grading pattern.
A notebook's setup cell calls ``checks.short_failures()`` (a failed check shows no traceback).
"""
from . import berrut, cpgc_peeling, inference_service, lambda_cv, rate_slope
from .berrut import *  # noqa: F401,F403 - each module's __all__: its checks
from .common import short_failures
from .cpgc_peeling import *  # noqa: F401,F403
from .inference_service import *  # noqa: F401,F403
from .lambda_cv import *  # noqa: F401,F403
from .rate_slope import *  # noqa: F401,F403

__all__ = ["short_failures", *berrut.__all__, *rate_slope.__all__, *lambda_cv.__all__, *cpgc_peeling.__all__,
           *inference_service.__all__]
