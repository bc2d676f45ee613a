"""One registry of the coded-computing schemes: a lower-case key for each code.

The CPGC schemes have their own registry, :func:`gcc.cpgc.make_code`: a code here encodes K data
points for N workers, a CPGC code assigns gradient blocks to K workers (K is the number of workers
there), with no encoder or decoder. Their keys never overlap.
"""
from __future__ import annotations

import inspect
from typing import Iterable

from ..validation import invalid
from .base import Code
from .berrut import BerrutCode
from .bspline import BSplineCode
from .lagrange import LagrangeCode
from .spline import SplineCode

__all__ = ["SCHEMES", "ALIASES", "LABELS", "canonical", "make", "make_many", "label"]

#: scheme key -> code class, in the order the book compares them
SCHEMES: dict[str, type[Code]] = {
    "gcc": SplineCode,
    "bacc": BerrutCode,
    "bspline": BSplineCode,
    "lcc": LagrangeCode,
}

#: other accepted spellings (compared case-insensitively) -> scheme key
ALIASES: dict[str, str] = {
    "letcc": "gcc", "spline": "gcc", "splinecode": "gcc",
    "berrut": "bacc", "berrutcode": "bacc",
    "b-spline": "bspline", "bsplinecode": "bspline",
    "lagrange": "lcc", "lagrangecode": "lcc",
}

#: scheme key -> display name in figures and tables
LABELS: dict[str, str] = {"gcc": "GCC", "bacc": "BACC", "bspline": "B-spline", "lcc": "LCC"}


def canonical(name, owner: str = "canonical", argument: str = "name") -> str:
    """The scheme key of ``name`` (case-insensitive, aliases accepted).

    Parameters
    ----------
    name : str
        A key of :data:`SCHEMES` or :data:`ALIASES`, in any case.
    owner, argument : str
        Function and argument named in the error message.

    Returns
    -------
    str

    Examples
    --------
    >>> from gcc.codes import canonical
    >>> canonical("GCC"), canonical("Berrut"), canonical("B-spline")
    ('gcc', 'bacc', 'bspline')
    """
    if isinstance(name, str):
        key = name.strip().lower()
        key = ALIASES.get(key, key)
        if key in SCHEMES:
            return key
    raise invalid(argument, owner, f"one of {sorted(SCHEMES)} (or an alias: {sorted(ALIASES)})", name)


def label(name) -> str:
    """Display name of a scheme (``"gcc"`` -> ``"GCC"``)."""
    return LABELS[canonical(name, "label")]


def _accepted(cls) -> set[str]:
    """Constructor parameters of a code class besides K and N."""
    return {p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "n_inputs", "n_workers")}


def make(name, n_inputs, n_workers, **params) -> Code:
    """Build the code called ``name`` for K inputs and N workers.

    Parameters
    ----------
    name : str
        Scheme key or alias, any case.
    n_inputs, n_workers : int
        K and N.
    **params
        Constructor parameters of that code (one it does not take is an error).

    Returns
    -------
    Code

    See Also
    --------
    gcc.cpgc.make_code : the CPGC schemes (assignments of gradient blocks; K = workers there).

    Examples
    --------
    >>> import gcc
    >>> code = gcc.codes.make("GCC", 10, 40, lam_dec=1e-6)
    >>> type(code).__name__, code.n_inputs, code.n_workers, code.lam_dec
    ('SplineCode', 10, 40, 1e-06)
    """
    key = canonical(name, "make")
    cls = SCHEMES[key]
    unknown = sorted(set(params) - _accepted(cls))
    if unknown:
        raise invalid("params", "make", f"parameters of {cls.__name__} ({sorted(_accepted(cls))})", unknown[0])
    return cls(n_inputs, n_workers, **params)


def make_many(names: Iterable[str], n_inputs, n_workers, **params) -> dict[str, Code]:
    """``{key: code}`` for several schemes sharing one set of parameters.

    Each code receives the parameters its constructor declares (``lam_enc`` reaches GCC only); a
    parameter that no listed code declares is an error.

    Parameters
    ----------
    names : iterable of str
        Scheme keys or aliases; the result is keyed by the canonical keys, in this order.
    n_inputs, n_workers : int
    **params
        Shared constructor parameters.

    Returns
    -------
    dict of str -> Code

    Examples
    --------
    >>> import gcc
    >>> codes = gcc.codes.make_many(["GCC", "bacc"], 10, 40, lam_enc=1e-6)
    >>> list(codes), codes["gcc"].lam_enc
    (['gcc', 'bacc'], 1e-06)
    """
    listed = [names] if isinstance(names, str) else list(names) if hasattr(names, "__iter__") else []
    if not listed:
        raise invalid("names", "make_many", "a scheme name or a non-empty sequence of scheme names", names)
    keys = [canonical(n, "make_many", "names") for n in listed]
    if len(set(keys)) != len(keys):
        raise invalid("names", "make_many", "distinct schemes", listed)
    accepted = {k: _accepted(SCHEMES[k]) for k in keys}
    unused = sorted(set(params) - set().union(*accepted.values()))
    if unused:
        raise invalid("params", "make_many", "parameters of at least one listed code", unused[0])
    return {k: SCHEMES[k](n_inputs, n_workers, **{p: v for p, v in params.items() if p in accepted[k]})
            for k in keys}
