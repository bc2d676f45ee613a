"""Coded-computing schemes with one interface: ``encode(X)``, ``decode(Y, received)``.

``SplineCode`` (GCC / LeTCC), ``BerrutCode`` (BACC), ``LagrangeCode`` (LCC) and
``BSplineCode`` (B-spline decoding); all derive from :class:`gcc.codes.base.Code`.
"""
from .base import Code
from .berrut import BerrutCode
from .bspline import BSplineCode
from .lagrange import LagrangeCode
from .spline import SplineCode

__all__ = ["Code", "SplineCode", "BerrutCode", "LagrangeCode", "BSplineCode"]
