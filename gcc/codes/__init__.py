"""Coded-computing schemes with one interface: ``encode(X)``, ``decode(Y, received)``.

``SplineCode`` (GCC / LeTCC), ``BerrutCode`` (BACC), ``LagrangeCode`` (LCC) and
``BSplineCode`` (B-spline decoding); all derive from :class:`gcc.codes.base.Code`.
:func:`make` builds any of them by its lower-case name (:mod:`gcc.codes.registry`).
"""
from .base import Code
from .berrut import BerrutCode
from .bspline import BSplineCode
from .lagrange import LagrangeCode
from .spline import SplineCode
from .registry import ALIASES, LABELS, SCHEMES, canonical, label, make, make_many

__all__ = ["Code", "SplineCode", "BerrutCode", "LagrangeCode", "BSplineCode",
           "SCHEMES", "ALIASES", "LABELS", "canonical", "label", "make", "make_many"]
