"""The saved ``slopes`` tables of the rate notebooks: their columns, fits and display.

Every rate notebook saves a ``slopes`` table with the columns :data:`RATE_SLOPE_COLUMNS`, read back
by :mod:`gcc.experiments.claims`. :func:`sweep_slopes` fits the N and S sweeps, :func:`joint_fit`
both exponents of ``C (S+1)^b N^a`` at once, :func:`path_slopes` the joint sweeps ``S = c N^gamma``;
:func:`quoted_slopes` turns slopes into the values a chapter quotes.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from gcc.display import format_value
from gcc.summary import slope_table

__all__ = ["RATE_SLOPE_COLUMNS", "as_rate_slopes", "slope_text", "starts_with", "sweep_slopes", "slope_view",
           "joint_fit", "path_slopes", "select_rows", "quoted_slopes"]

#: columns of every saved ``slopes`` table, in this order (then any extra column). ``quantity``
#: names the fitted ordinate (``"loss"``, or a normalised loss); ``path_s_slope`` is the slope of
#: ``log(S + 1)`` against ``log N`` on the fitted points (0 at fixed S, NaN at fixed N).
RATE_SLOPE_COLUMNS = ["function", "scheme", "straggler", "rule", "p", "fixed", "variable", "slope", "ci_low",
                      "ci_high", "n_points", "x_lo", "x_hi", "quantity", "path_s_slope"]


def as_rate_slopes(df):
    """A slope table completed to :data:`RATE_SLOPE_COLUMNS` (missing ones empty), those columns first.

    `df` (:func:`gcc.summary.slope_table` rows with ``fixed``) gains the missing columns.
    """
    for col in RATE_SLOPE_COLUMNS:
        if col not in df.columns:
            df[col] = {"quantity": "loss", "path_s_slope": np.nan}.get(col, "")
    return df[RATE_SLOPE_COLUMNS + [c for c in df.columns if c not in RATE_SLOPE_COLUMNS]]


def slope_text(slopes) -> list[str]:
    """Each row's ``"slope [low, high]"`` (two decimals), ``"-"`` where no slope was fitted."""
    return [f"{s:.2f} [{lo:.2f}, {hi:.2f}]" if s == s else "-"
            for s, lo, hi in zip(slopes["slope"], slopes["ci_low"], slopes["ci_high"])]


def starts_with(prefix: str) -> Callable:
    """A :func:`select_rows` filter: the values whose text starts with `prefix` (``"S="``: fixed S)."""
    return lambda col: col.astype(str).str.startswith(prefix)


def sweep_slopes(summary, keys: Sequence[str], *, s_window: Callable, x_min: Callable | None = None,
                 y_floor: float = 0.0, path_s: bool = True):
    """N-slopes at fixed S on the ``sweep == "N"`` rows and (S+1)-slopes at fixed N on the ``"S"`` rows.

    `summary` has one row per cell (``sweep``, `keys`, ``N``, ``S``, ``mean``); `x_min` is
    :func:`gcc.summary.slope_table`'s for the N-slopes, ``s_window(frame) -> mask`` selects the S-sweep
    rows, `y_floor` drops round-off, `path_s` fills ``path_s_slope`` (0 at fixed S, NaN at fixed N).
    Returns :func:`gcc.summary.slope_table` rows with ``fixed`` (``"S=<s>"`` or ``"N=<n>"``).
    """
    keys = list(keys)
    s_rows = summary[summary["sweep"] == "S"]
    s_rows = s_rows[np.asarray(s_window(s_rows), dtype=bool)]
    a = slope_table(summary[summary["sweep"] == "N"], "N", keys + ["S"], x_min=x_min, y_floor=y_floor)
    b = slope_table(s_rows, "S", keys + ["N"], shift=1.0, y_floor=y_floor)
    a["fixed"] = "S=" + a.pop("S").astype(int).astype(str)
    b["fixed"] = "N=" + b.pop("N").astype(int).astype(str)
    if path_s:
        a["path_s_slope"], b["path_s_slope"] = 0.0, np.nan
    return pd.concat([a, b], ignore_index=True)


def slope_view(slopes, index: Sequence[str], columns: str = "scheme"):
    """A slopes table as ``"slope [low, high]"`` strings, pivoted for display.

    Rows `index` (``fixed`` labels such as ``"S=10"`` sort by their number), columns `columns`;
    ``"-"`` where no slope could be fitted.
    """
    table = slopes.assign(slope_ci=slope_text(slopes)).pivot_table(index=list(index), columns=columns,
                                                                   values="slope_ci", aggfunc="first")

    def key(level):
        if level.name == "fixed":
            return level.map(lambda v: (str(v).split("=")[0], float(str(v).split("=")[1]) if "=" in str(v) else 0.0))
        return level

    return table.sort_index(key=key)


def joint_fit(summary, by: Sequence[str], window: Callable | None = None):
    """Both exponents of ``mean = C (S + 1)^b N^a`` by least squares over every cell of a group.

    ``log mean = log C + a log N + b log(S + 1)``, 95% Student-t intervals (``n - 3`` degrees of
    freedom); N and S must vary independently (the N, S and joint sweeps together).

    Parameters
    ----------
    summary : pandas.DataFrame
        One row per cell with columns ``N``, ``S``, ``mean`` and `by` (one fit per group).
    by : sequence of str
    window : callable or None
        ``window(frame) -> boolean mask`` of the cells to use.

    Returns
    -------
    pandas.DataFrame
        Two rows per group: `by`, ``fixed = "joint fit"``, ``variable`` (``"N"``, ``"S+1"``), ``slope,
        ci_low, ci_high, n_points, x_lo, x_hi``; NaN with fewer than 5 cells or collinear N and S.
    """
    by = list(by)
    rows = []
    for key, g in summary.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        labels = dict(zip(by, key))
        if window is not None:
            g = g[np.asarray(window(g), dtype=bool)]
        g = g[np.isfinite(g["mean"]) & (g["mean"] > 0)]
        A = np.column_stack([np.ones(len(g)), np.log(g["N"].to_numpy(float)),
                             np.log(g["S"].to_numpy(float) + 1.0)])
        fit = {"N": (np.nan,) * 3, "S+1": (np.nan,) * 3}
        if len(g) >= 5 and np.linalg.matrix_rank(A) == 3:
            coef, *_ = np.linalg.lstsq(A, np.log(g["mean"].to_numpy(float)), rcond=None)
            resid = np.log(g["mean"].to_numpy(float)) - A @ coef
            dof = len(g) - 3
            cov = np.linalg.inv(A.T @ A) * float(resid @ resid) / dof
            t = float(stats.t.ppf(0.975, dof))
            for i, name in ((1, "N"), (2, "S+1")):
                half = t * float(np.sqrt(max(cov[i, i], 0.0)))
                fit[name] = (float(coef[i]), float(coef[i]) - half, float(coef[i]) + half)
        for name, col in (("N", "N"), ("S+1", "S")):
            x = g[col].to_numpy(float) + (1.0 if col == "S" else 0.0)
            slope, lo, hi = fit[name]
            rows.append({**labels, "fixed": "joint fit", "variable": name, "slope": slope, "ci_low": lo,
                         "ci_high": hi, "n_points": len(g), "x_lo": float(x.min()) if len(x) else np.nan,
                         "x_hi": float(x.max()) if len(x) else np.nan})
    return pd.DataFrame(rows)


def path_slopes(summary, by: Sequence[str], window: Callable | None = None, y_floor: float = 0.0):
    """Slope in N along each joint sweep ``S = c N^gamma``, and the slope of ``log(S+1)`` there.

    `summary` holds the joint-sweep cells (``gamma``, ``N``, ``S``, ``mean``, `by`); `window` and
    `y_floor` as in :func:`joint_fit` and :func:`sweep_slopes`. Returns `by`, ``fixed = "gamma=<g>"``,
    the :func:`gcc.summary.slope_table` columns and ``path_s_slope``.
    """
    sub = summary if window is None else summary[np.asarray(window(summary), dtype=bool)]
    sub = sub[np.isfinite(sub["mean"]) & (sub["mean"] > y_floor)].assign(s_plus_1=lambda d: d["S"] + 1.0)
    keys = list(by) + ["gamma"]
    out = slope_table(sub, "N", keys)
    out["path_s_slope"] = slope_table(sub, "N", keys, y="s_plus_1")["slope"].to_numpy()
    out["fixed"] = ["gamma=" + f"{g:.3g}" for g in out.pop("gamma")]
    return out


def select_rows(df, filters: Mapping[str, Any]):
    """The rows of `df` that pass every filter; a filter on a column `df` lacks is ignored.

    `filters` maps a column to a value (equality), a list of values (membership) or a callable
    ``series -> boolean mask``; the index is kept.
    """
    mask = np.ones(len(df), dtype=bool)
    for key, value in filters.items():
        if key not in df.columns:
            continue
        if callable(value):
            mask &= np.asarray(value(df[key]), dtype=bool)
        else:
            values = list(value) if isinstance(value, (list, tuple, set)) else [value]
            mask &= df[key].isin(values).to_numpy()
    return df[mask]


def quoted_slopes(slopes, key: str, note: str, *, span: bool = False, **filters) -> list[dict]:
    """The values a chapter quotes from a slopes table, as keyword arguments of ``RunContext.value``.

    Parameters
    ----------
    slopes : pandas.DataFrame
        A saved ``slopes`` table.
    key, note : str
        Value key and what the slope is.
    span : bool
        False: the filters select one row (ValueError if more), quoted as ``key`` and ``key_ci``
        (its 95% interval as text). True: the range of the selected slopes, ``key_min``, ``key_max``.
    **filters
        Column filters of :func:`select_rows`.

    Returns
    -------
    list of dict
        ``{"key", "number", "note", "fmt"}`` each (two decimals); NaN slopes and missing rows are left out.
    """
    rows, fmt = select_rows(slopes, filters), ".2f"
    finite = rows[np.isfinite(rows["slope"].to_numpy(float))]
    if span:
        if not len(finite):
            return []
        values = finite["slope"].to_numpy(float)
        return [{"key": f"{key}_min", "number": float(values.min()), "note": f"{note} (smallest)", "fmt": fmt},
                {"key": f"{key}_max", "number": float(values.max()), "note": f"{note} (largest)", "fmt": fmt}]
    if len(rows) > 1:
        raise ValueError(f"quoted_slopes({key!r}): the filters {sorted(filters)} select {len(rows)} rows, not 1.")
    if not len(finite):
        return []
    row = finite.iloc[0]
    out = [{"key": key, "number": float(row["slope"]), "note": note, "fmt": fmt}]
    if np.isfinite(row["ci_low"]) and np.isfinite(row["ci_high"]):
        low, high = (format_value(float(row[c]), fmt=fmt) for c in ("ci_low", "ci_high"))
        out.append({"key": f"{key}_ci", "number": f"[{low}, {high}]", "note": f"95% interval: {note}"})
    return out
