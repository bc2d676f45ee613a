"""The book's tables: per-group means with intervals (:func:`summarize`) and log-log slopes."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .metrics import ConfidenceInterval, loglog_slope, mean_ci
from .validation import (COLUMNS, TEXT, AnyOf, ArrayLike, Callable as CallableC, Frame, Interval, NoneOr,
                         invalid, validate, validate_params)

__all__ = ["SUMMARY_COLUMNS", "SLOPE_COLUMNS", "summarize", "slope_table"]

#: columns :func:`summarize` adds to the grouping columns
SUMMARY_COLUMNS = ("mean", "std", "ci_low", "ci_high", "half_width", "n", "n_nan")
#: columns :func:`slope_table` adds to the grouping columns
SLOPE_COLUMNS = ("variable", "n_points", "x_lo", "x_hi", "slope", "ci_low", "ci_high")


#: a column of numbers to average or fit (complex values and strings have no mean here)
_REAL_COLUMN = ArrayLike(dtype=float)
_LEVEL = Interval(float, 0, 1, closed="neither")


def _as_list(names) -> list:
    """A column name or a sequence of them as a list."""
    return [names] if isinstance(names, str) else list(names)


def _check_columns(df, names, argument, owner, table="df", real=False):
    """Check that ``df`` has the columns ``names`` (of real numbers if ``real``)."""
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise invalid(argument, owner, f"columns of {table} ({list(df.columns)})", missing)
    for c in names if real else ():
        if getattr(df[c], "ndim", 1) != 1:
            raise invalid(argument, owner, "names of single columns", c, f"{c!r} is duplicated")
        values = df[c].to_numpy()
        if values.dtype.kind == "O":         # pandas' nullable dtypes: pd.NA is a NaN here
            try:
                values = df[c].to_numpy(dtype=float, na_value=np.nan)
            except (TypeError, ValueError):
                pass                         # strings, complex objects: rejected below
        if not _REAL_COLUMN.is_satisfied_by(values):
            raise invalid(argument, owner, f"the name of a column of real numbers in {table}", c,
                          f"it holds {values.dtype} values")


def _one(values: np.ndarray, level: float) -> dict:
    """The :data:`SUMMARY_COLUMNS` of one group's values."""
    used = values[~np.isnan(values)]
    ci = mean_ci(used, level=level) if used.size else ConfidenceInterval(np.nan, np.nan, np.nan, np.nan, 0)
    std = float(used.std(ddof=1)) if used.size > 1 else np.nan
    return {"mean": ci.mean, "std": std, "ci_low": ci.low, "ci_high": ci.high,
            "half_width": ci.half_width, "n": int(ci.n), "n_nan": int(values.size - used.size)}


@validate_params({"df": Frame(), "value": COLUMNS, "by": COLUMNS, "level": _LEVEL})
def summarize(df, value: str | Sequence[str] = "loss", by: Sequence[str] = ("scheme", "stragglers"),
              level: float = 0.95):
    """Mean and Student-t interval of ``value`` per group of a tidy table.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per measurement (e.g. the output of :func:`gcc.harness.run_trials`).
    value : str or sequence of str
        Column(s) to summarise; several give one row per group and value (a ``metric`` column).
    by : sequence of str
        Grouping columns (sorted groups).
    level : float in (0, 1)
        Confidence level of the interval (:func:`gcc.metrics.mean_ci`).

    Returns
    -------
    pandas.DataFrame
        ``by`` (then ``metric``) plus :data:`SUMMARY_COLUMNS`; ``n`` counts the values used,
        ``n_nan`` the NaN rows left out (a diverged decoder's NaN loss is counted, not hidden).

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.summary import summarize
    >>> df = pd.DataFrame({"scheme": ["gcc"] * 3 + ["bacc"] * 3, "loss": [1.0, 2.0, 3.0, 2.0, 4.0, 6.0]})
    >>> summarize(df, "loss", by=["scheme"])[["scheme", "mean", "n"]]
      scheme  mean  n
    0   bacc   4.0  3
    1    gcc   2.0  3
    """
    import pandas as pd

    owner = "summarize"
    values, by = _as_list(value), _as_list(by)
    if not values:
        raise invalid("value", owner, "a column name or a non-empty list of column names", value)
    _check_columns(df, values, "value", owner, real=True)
    _check_columns(df, by, "by", owner)
    if df.empty:   # an empty summary would pass for a run with nothing to report
        raise invalid("df", owner, "a table with at least one row", "an empty table")
    for v in values:     # else mean_ci's error, naming neither summarize nor the column
        if np.isinf(df[v].to_numpy(dtype=float, na_value=np.nan)).any():
            raise invalid("value", owner, "the name of a column of finite (or NaN) numbers", v,
                          "it holds an infinite value")
    rows = []
    groups = df.groupby(by, sort=True) if by else [((), df)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        labels = dict(zip(by, key))
        for v in values:
            stats = _one(group[v].to_numpy(dtype=float), float(level))
            rows.append({**labels, **({"metric": v} if len(values) > 1 else {}), **stats})
    columns = [*by, *(["metric"] if len(values) > 1 else []), *SUMMARY_COLUMNS]
    return pd.DataFrame(rows, columns=columns)


@validate_params({"summary": Frame(), "x": TEXT, "y": TEXT, "by": COLUMNS, "shift": Interval(float),
                  "y_floor": Interval(float), "level": _LEVEL,
                  "x_min": AnyOf(CallableC(), Interval(float), None,
                                 description="a finite real number, a callable or None")})
def slope_table(summary, x: str, by: Sequence[str], y: str = "mean", shift: float = 0.0,
                x_min: float | Callable[[dict], float] | None = None, y_floor: float = 0.0,
                level: float = 0.95):
    """Least-squares slope of ``log y`` against ``log(x + shift)`` per group, with interval.

    Parameters
    ----------
    summary : pandas.DataFrame
        One row per (group, x), e.g. the output of :func:`summarize`.
    x : str
        Column of the abscissa (``"N"`` or ``"S"``).
    by : sequence of str
        Grouping columns; one slope per group.
    y : str
        Column of the ordinate (``"mean"``).
    shift : float
        Added to x before the log (``1`` for ``log(S + 1)``).
    x_min : float, callable or None
        Keep only rows with ``x >= x_min``; a callable maps the group's labels (a dict) to it.
    y_floor : float
        Drop points with ``y <= y_floor`` (the round-off plateau of an exact decoder).
    level : float in (0, 1)

    Returns
    -------
    pandas.DataFrame
        ``by`` plus :data:`SLOPE_COLUMNS` (:func:`gcc.metrics.loglog_slope`); NaN slopes for
        groups of fewer than 3 usable points.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from gcc.summary import slope_table
    >>> n = np.array([16, 32, 64, 128])
    >>> s = pd.DataFrame({"scheme": "gcc", "N": n, "mean": 5.0 * n ** -3.0})
    >>> round(float(slope_table(s, "N", ["scheme"])["slope"][0]), 6)
    -3.0
    """
    import pandas as pd

    owner = "slope_table"
    by = _as_list(by)
    _check_columns(summary, [x], "x", owner, "summary", real=True)
    _check_columns(summary, [y], "y", owner, "summary", real=True)
    _check_columns(summary, by, "by", owner, "summary")
    rows = []
    for key, group in summary.groupby(by, sort=True) if by else [((), summary)]:
        key = key if isinstance(key, tuple) else (key,)
        labels = dict(zip(by, key))
        lo_x = x_min(labels) if callable(x_min) else x_min
        if callable(x_min):
            lo_x = validate(lo_x, NoneOr(Interval(float)), "x_min", owner)
        g = group if lo_x is None else group[group[x] >= lo_x]
        g = g[np.isfinite(g[y]) & (g[y] > y_floor)]
        if len(g) and (g[x].to_numpy(float) + shift <= 0).any():
            raise invalid("shift", owner, f"a shift with {x} + shift > 0 on every fitted row "
                          "(log axes)", shift, f"min({x}) = {g[x].min()!r} in group {labels}")
        row = {**labels, "variable": x if not shift else f"{x}+{shift:g}", "n_points": len(g),
               "x_lo": float(g[x].min()) if len(g) else np.nan,
               "x_hi": float(g[x].max()) if len(g) else np.nan}
        if len(g) >= 3:
            fit = loglog_slope(g[x].to_numpy(float) + shift, g[y].to_numpy(float), level=level)
            row.update(slope=float(fit.slope), ci_low=float(fit.low), ci_high=float(fit.high))
        else:
            row.update(slope=np.nan, ci_low=np.nan, ci_high=np.nan)
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *SLOPE_COLUMNS])
