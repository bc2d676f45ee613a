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
from .common import short_failures
from .berrut import (check_berrut_basis, check_berrut_decoder, check_berrut_encoder, check_berrut_loss,
                     check_code_comparison)
from .cpgc_peeling import (CPGC_DEGREES, check_arrival_order, check_decoded_blocks, check_faster_scheme,
                           check_message_values, check_peeling_history, check_stop_index)
from .inference_service import (check_design, check_expected_wait, check_latency_table, check_loss_table,
                                check_robustness)
from .lambda_cv import check_best_lambdas, check_cv_loss, check_cv_table, check_test_losses
from .rate_slope import check_loss_curve, check_rate_verdict, check_slope, check_worst_case_loss

__all__ = ["short_failures",
           "check_berrut_basis", "check_berrut_encoder", "check_berrut_decoder", "check_berrut_loss",
           "check_code_comparison",
           "check_worst_case_loss", "check_loss_curve", "check_slope", "check_rate_verdict",
           "check_cv_loss", "check_cv_table", "check_best_lambdas", "check_test_losses",
           "CPGC_DEGREES", "check_arrival_order", "check_message_values", "check_peeling_history",
           "check_stop_index", "check_decoded_blocks", "check_faster_scheme",
           "check_expected_wait", "check_latency_table", "check_loss_table", "check_design",
           "check_robustness"]
