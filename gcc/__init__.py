"""gcc: the library behind the General Coded Computing (GCC / LeTCC) companion.

Every number shown in the book is computed here; notebooks only set parameters,
call these functions, plot and print tables.

``import gcc`` loads the core only (points, splines, codes, straggler models, the adversary,
metrics, the trial harness, summaries, tuning, validation and the CPGC core). The book's
experiments live in :mod:`gcc.experiments` (one module per topic), and the optional parts are
imported explicitly: :mod:`gcc.dnn` (torch/timm), :mod:`gcc.distributed` (Dask),
:mod:`gcc.assignments` (course checks), :mod:`gcc.reproduce` (the batch runner).
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
from .tuning import select_lambdas, default_lambda_grid  # noqa: E402
from . import codes, machine, summary  # noqa: E402,F401  (gcc.codes.make, gcc.machine.describe)
