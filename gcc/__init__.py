"""gcc: the library behind the General Coded Computing (GCC / LeTCC) companion.

``import gcc`` loads the core; the book's experiments are in :mod:`gcc.experiments`, and
:mod:`gcc.dnn` (torch), :mod:`gcc.distributed` (Dask), :mod:`gcc.assignments` and
:mod:`gcc.reproduce` (the batch runner) are imported explicitly.
"""
__version__ = "0.1.0"

from .points import chebyshev_points, equispaced_points  # noqa: E402
from .splines import smoother_matrix, smoothing_spline  # noqa: E402
from .gcv import gcv_lambda  # noqa: E402
from .codes import Code, SplineCode, BerrutCode, LagrangeCode, BSplineCode  # noqa: E402
from . import cpgc  # noqa: E402,F401  (coded partial gradient computation, issue 6)
from .stragglers import (FixedCount, Bernoulli, ContiguousBlock, WorstCase,  # noqa: E402
                         ShiftedExponential, SlowWorkers)
from .straggler_runs import longest_run, longest_straggler_run, expected_longest_run  # noqa: E402
from .adversary import worst_case_stragglers, block_losses  # noqa: E402
from .metrics import (mse_loss, rmse_mean_of_norms, rmse_root_mean_square, accuracy,  # noqa: E402
                      relacc, mean_ci, loglog_slope)
from .harness import run_trials, evaluate  # noqa: E402
from .summary import summarize, slope_table  # noqa: E402
from .tuning import select_lambdas, DEFAULT_LAMBDA_GRID  # noqa: E402
from . import codes, machine, summary  # noqa: E402,F401  (gcc.codes.make, gcc.machine.describe)
