"""Argument checks shared by the CPGC modules.

Messages follow the library convention (scikit-learn style)::

    The 'tolerance' parameter of simulate must be in [0, 1). Got 1.2 instead.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = ["invalid", "check_int", "check_positive", "check_tolerance", "check_degrees", "check_choice"]


def invalid(name: str, owner: str, constraint: str, value) -> ValueError:
    """Build the library's standard ValueError (the caller raises it)."""
    return ValueError(f"The {name!r} parameter of {owner} must be {constraint}. Got {value!r} instead.")


def check_int(value, name: str, owner: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not an integer in [minimum, maximum]."""
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if ok and minimum is not None and value < minimum:
        ok = False
    if ok and maximum is not None and value > maximum:
        ok = False
    if not ok:
        if minimum is not None and maximum is not None:
            constraint = f"an int in [{minimum}, {maximum}]"
        elif minimum is not None:
            constraint = f"an int >= {minimum}"
        else:
            constraint = "an int"
        raise invalid(name, owner, constraint, value)
    return int(value)


def check_positive(value, name: str, owner: str, allow_zero: bool = False) -> float:
    """Return ``value`` as a finite float > 0 (or >= 0 when ``allow_zero``)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    ok = ok and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise invalid(name, owner, "a finite real >= 0" if allow_zero else "a finite real > 0", value)
    return float(value)


def check_tolerance(value, owner: str, name: str = "tolerance") -> float:
    """The tolerance q (fraction of blocks the master may give up) must lie in [0, 1)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    if not ok or not 0 <= value < 1:
        raise invalid(name, owner, "in [0, 1)", value)
    return float(value)


def check_degrees(value, owner: str, name: str = "degrees") -> tuple[int, ...]:
    """A degree vector m = (1, m_2, ..., m_r): positive ints, starting at 1, non-decreasing."""
    try:
        seq = tuple(value)
    except TypeError:
        raise invalid(name, owner, "a non-empty sequence of ints", value) from None
    if not seq or not all(isinstance(m, numbers.Integral) and not isinstance(m, bool) for m in seq):
        raise invalid(name, owner, "a non-empty sequence of ints", value)
    if seq[0] != 1:
        raise invalid(name, owner, "a sequence that starts at 1 (the first task is uncoded)", value)
    if any(b < a for a, b in zip(seq, seq[1:])):
        raise invalid(name, owner, "non-decreasing", value)
    return tuple(int(m) for m in seq)


def check_choice(value, name: str, owner: str, choices) -> str:
    """``value`` must be one of ``choices`` (strings, compared case-insensitively)."""
    if isinstance(value, str) and value.lower() in choices:
        return value.lower()
    raise invalid(name, owner, "one of " + ", ".join(repr(c) for c in choices), value)
