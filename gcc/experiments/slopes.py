"""The saved ``slopes`` tables of the rate notebooks: their columns and their display.

The worst-case, probabilistic and noisy notebooks each save a ``slopes`` table (fitted log-log
exponents, :func:`gcc.summary.slope_table`) with the columns :data:`RATE_SLOPE_COLUMNS`;
:mod:`gcc.experiments.claims` reads them back and compares them with the papers' claims.

Imports pandas (inside the functions) only.
"""
from __future__ import annotations

from typing import Sequence

__all__ = ["RATE_SLOPE_COLUMNS", "as_rate_slopes", "slope_view"]

#: columns of every saved ``slopes`` table, in this order (then any extra column)
RATE_SLOPE_COLUMNS = ["function", "scheme", "straggler", "rule", "p", "fixed", "variable", "slope", "ci_low",
                      "ci_high", "n_points", "x_lo", "x_hi"]


def as_rate_slopes(df):
    """A slope table completed to :data:`RATE_SLOPE_COLUMNS` (missing ones empty), in that order.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`gcc.summary.slope_table` with a ``fixed`` label column.

    Returns
    -------
    pandas.DataFrame
        The same rows; columns :data:`RATE_SLOPE_COLUMNS` first, extra columns after. The
        argument gains the missing columns.
    """
    for col in RATE_SLOPE_COLUMNS:
        if col not in df.columns:
            df[col] = ""
    return df[RATE_SLOPE_COLUMNS + [c for c in df.columns if c not in RATE_SLOPE_COLUMNS]]


def slope_view(slopes, index: Sequence[str], columns: str = "scheme"):
    """A slopes table as ``"slope [low, high]"`` strings, pivoted for display.

    Parameters
    ----------
    slopes : pandas.DataFrame
        A saved ``slopes`` table (:data:`RATE_SLOPE_COLUMNS`).
    index : sequence of str
        Row keys, e.g. ``["function", "straggler", "fixed"]``; ``fixed`` labels
        (``"S=10"``) sort by their number, not as text.
    columns : str
        Column key.

    Returns
    -------
    pandas.DataFrame
        One string cell per (index, column); ``"-"`` where no slope could be fitted.

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.experiments.slopes import slope_view
    >>> s = pd.DataFrame({"scheme": "gcc", "fixed": ["S=10", "S=2"], "slope": [-3.0, -4.0],
    ...                   "ci_low": [-3.5, -4.5], "ci_high": [-2.5, -3.5]})
    >>> list(slope_view(s, ["fixed"])["gcc"])
    ['-4.00 [-4.50, -3.50]', '-3.00 [-3.50, -2.50]']
    """
    text = [f"{s:.2f} [{lo:.2f}, {hi:.2f}]" if s == s else "-"
            for s, lo, hi in zip(slopes["slope"], slopes["ci_low"], slopes["ci_high"])]
    table = slopes.assign(slope_ci=text).pivot_table(index=list(index), columns=columns, values="slope_ci",
                                                     aggfunc="first")

    def key(level):
        if level.name == "fixed":
            return level.map(lambda v: (str(v).split("=")[0], float(str(v).split("=")[1]) if "=" in str(v) else 0.0))
        return level

    return table.sort_index(key=key)
