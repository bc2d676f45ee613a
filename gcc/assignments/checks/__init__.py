"""The checks of the assignments: one ``check_*`` function per task, one module per assignment.

Each check recomputes the reference with ``gcc`` from the student's variant (the same seed and
sizes), compares, and returns a :class:`~gcc.assignments.feedback.Feedback` that says which value
is wrong, by how much (relative error) and what to look at, without printing the reference values.
On failure it raises :class:`~gcc.assignments.feedback.AssignmentCheckError` (an ``AssertionError``),
so an unfinished notebook stops there; pass ``raise_on_fail=False`` to get the feedback instead.

Checks that take a *function* call it on the variant's data and on extra cases (for example a point
that coincides with a node), which catches mistakes a single value would hide.

Modules: :mod:`.berrut` (01), :mod:`.rate_slope` (02), :mod:`.lambda_cv` (03),
:mod:`.cpgc_peeling` (04), :mod:`.inference_service` (05); :mod:`.common` holds what they share.
A notebook uses them all through this package: ``from gcc.assignments import checks``, then
``checks.check_berrut_basis(...)``; its setup cell calls ``checks.short_failures()`` so that a failed
check shows its feedback without a traceback.
"""
from . import berrut, cpgc_peeling, inference_service, lambda_cv, rate_slope
from .common import short_failures
from .berrut import (check_berrut_basis, check_berrut_decoder, check_berrut_encoder, check_berrut_loss,
                     check_code_comparison)
from .cpgc_peeling import (CPGC_DEGREES, check_arrival_order, check_decoded_blocks, check_faster_scheme,
                           check_message_values, check_peeling_history, check_stop_index)
from .inference_service import (check_design, check_expected_wait, check_latency_table, check_loss_table,
                                check_robustness)
from .lambda_cv import check_best_lambdas, check_cv_loss, check_cv_table, check_test_losses
from .rate_slope import check_loss_curve, check_rate_verdict, check_slope, check_worst_case_loss

__all__ = [
    # every notebook's setup cell: a failed check shows its feedback, not a traceback
    "short_failures",
    # 01 Berrut
    "check_berrut_basis", "check_berrut_encoder", "check_berrut_decoder", "check_berrut_loss",
    "check_code_comparison",
    # 02 rate slope
    "check_worst_case_loss", "check_loss_curve", "check_slope", "check_rate_verdict",
    # 03 lambda CV
    "check_cv_loss", "check_cv_table", "check_best_lambdas", "check_test_losses",
    # 04 CPGC peeling (CPGC_DEGREES: the RCSC degrees the notebook builds its code with)
    "CPGC_DEGREES", "check_arrival_order", "check_message_values", "check_peeling_history", "check_stop_index",
    "check_decoded_blocks", "check_faster_scheme",
    # 05 inference service
    "check_expected_wait", "check_latency_table", "check_loss_table", "check_design", "check_robustness",
]
