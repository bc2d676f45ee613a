"""gcc: the library behind the General Coded Computing (GCC / LeTCC) companion.

Every number shown in the book is computed here; notebooks only set parameters,
call these functions, plot and print tables.
"""
__version__ = "0.1.0"

from .points import chebyshev_points, equispaced_points  # noqa: E402
from .splines import smoother_matrix, smoothing_spline, gcv_lambda  # noqa: E402
from .codes import Code, SplineCode, BerrutCode, LagrangeCode, BSplineCode  # noqa: E402
from . import cpgc  # noqa: E402,F401  (coded partial gradient computation, issue 6)
