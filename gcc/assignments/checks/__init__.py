"""The checks of the assignments: one ``check_*`` function per task, one module per assignment.

Each check recomputes the reference from the student's variant and returns a
:class:`~gcc.assignments.feedback.Feedback` (raising on failure) that never prints the reference;
:mod:`.common` holds the grading pattern.
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
