"""Coded-computing schemes with one interface, ``encode(X)`` and ``decode(Y, received)``.

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
