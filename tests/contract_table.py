"""The contract test's table of malformed values: a few representative values per kind, not drawn inputs.

The helpers keep the names of ``hypothesis.strategies`` that the entries use (``sampled_from``,
``one_of``, ``integers``, ``floats``, ...) but return plain lists: every run tries the same values,
each entry point's argument at least one value per constraint (outside the bounds, the wrong
type, NaN, inf, complex, strings, None, ...).
"""
from __future__ import annotations

import itertools


class Values(list):
    """A list of values with ``filter`` and ``map``, as the entries chain them."""

    def filter(self, keep):
        return Values(v for v in self if keep(v))

    def map(self, fn):
        return Values(fn(v) for v in self)


def sampled_from(values):
    return Values(values)


def just(value):
    return Values([value])


def one_of(*parts):
    return Values(v for part in parts for v in part)


def integers(min_value=None, max_value=None):
    if min_value is not None and max_value is not None:
        return Values([min_value, max_value])
    if max_value is not None:      # 0 (or the bound when it is negative), far below: never a value that
        return Values([min(max_value, 0), max_value - 10 ** 6])    # another argument's relation rejects first
    if min_value is not None:
        return Values([min_value, min_value + 10 ** 6])
    return Values([0, -1, 10 ** 6])


def floats(min_value=None, max_value=None, allow_nan=True, allow_infinity=True):
    values = []
    if min_value is not None:
        values += [float(min_value), min_value + 0.5, min_value + 1e6]
    if max_value is not None:
        values += [float(max_value), max_value - 0.5, max_value - 1e6]
    if min_value is None and max_value is None:
        values += [0.5, -1.5, 1e300]
    values += [float("nan")] if allow_nan else []
    values += [float("inf"), -float("inf")] if allow_infinity else []
    return Values(values)


def tuples(*parts):
    return Values(itertools.product(*parts))


def text(max_size=6):
    return Values(["", "x", "AbC"][: 3 if max_size >= 3 else 2])


def booleans():
    return Values([True, False])
