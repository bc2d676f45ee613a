"""The contract test's table of malformed values: fixed lists of representative values, not drawn inputs.

The helpers keep the names of ``hypothesis.strategies`` the entries use (``sampled_from``,
``one_of``, ``just``) but return plain lists: every run tries the same values.
"""
from __future__ import annotations


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
