"""How far is the contiguous block from the true worst straggler set, for every code?

The rate sweeps take the worst of the ``N - S + 1`` contiguous blocks; :func:`adversary_comparison`
measures the exact worst over all ``C(N, S)`` sets at small N (``"exhaustive"``) and the greedy
local search beyond, :func:`adversary_ratios` and :func:`adversary_table` their ratios to the block.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

import gcc
from gcc.codes import canonical, label, make

from .extremal import EXTREMAL_FUNCTION, bump_for, line_inputs
from .problems import scalar_inputs, xsinx

__all__ = ["adversary_comparison", "adversary_ratios", "adversary_table", "extremal_problem", "adversary_problems",
           "quoted_values"]


def extremal_problem(code, n_stragglers: int):
    """``(f, X)`` of the extremal family for one code and S: the bump on line data (half-width 1.5 rooms)."""
    return bump_for(code, n_stragglers), line_inputs(code)


def adversary_problems(n_inputs: int, seed: int = 0) -> dict:
    """The problems of :func:`adversary_comparison`: ``x sin x`` on K uniform inputs, and the extremal bump.

    Returns
    -------
    dict
        ``{"x sin x": (xsinx, X), "bump (extremal)": extremal_problem}``, X uniform in [-3, 3], shape (K,).
    """
    return {"x sin x": (xsinx, scalar_inputs(n_inputs, -3.0, 3.0, seed=seed)), EXTREMAL_FUNCTION: extremal_problem}


def adversary_comparison(functions: Mapping[str, tuple | Callable], cells: Sequence[tuple[int, int]], *,
                         codes: Sequence[str] = ("gcc", "bacc", "bspline", "lcc"), n_inputs: int = 5,
                         max_sets: int = 5000):
    """The worst loss each adversary finds, per (function, code, N, S).

    Parameters
    ----------
    functions : mapping of str to (f, X) or callable
        A fixed problem ``(f, X)``, or ``problem(code, S) -> (f, X)`` (:func:`extremal_problem`).
    cells : sequence of (N, S)
        Cells with ``N - S < n_inputs`` are skipped.
    codes : sequence of str
        Scheme keys of :mod:`gcc.codes`.
    n_inputs : int
        K (small, so that small N still leaves redundancy).
    max_sets : int
        The ``"exhaustive"`` search runs only where ``C(N, S) <= max_sets``.

    Returns
    -------
    pandas.DataFrame
        One row per (function, scheme, N, S, search): ``function, scheme, N, S, K, search, loss``.
    """
    codes = [canonical(c, "adversary_comparison") for c in codes]
    K = int(n_inputs)
    rows = []
    for name, problem in functions.items():
        for N, S in cells:
            N, S = int(N), int(S)
            if N - S < K:
                continue
            for scheme in codes:
                code = make(scheme, K, N)
                f, X = problem(code, S) if callable(problem) else problem
                for search in ("contiguous", "greedy", "exhaustive"):
                    if search == "exhaustive" and math.comb(N, S) > max_sets:
                        continue
                    _, loss = gcc.worst_case_stragglers(code, f, X, S, search=search, return_loss=True,
                                                        max_sets=max_sets)
                    rows.append({"function": name, "scheme": scheme, "N": N, "S": S, "K": K, "search": search,
                                 "loss": float(loss)})
    return pd.DataFrame(rows)


def adversary_ratios(df):
    """One row per (function, scheme, N, S) of :func:`adversary_comparison`: each search's loss and ratios.

    Returns
    -------
    pandas.DataFrame
        ``function, scheme, N, S``, a loss column per search, ``greedy_ratio``, ``exhaustive_ratio``
        (over the contiguous loss; NaN where that search did not run), ``greedy_gap`` (exhaustive / greedy).
    """
    wide = df.pivot_table(index=["function", "scheme", "N", "S"], columns="search", values="loss",
                          aggfunc="first").reset_index()
    wide.columns.name = None
    for search in ("greedy", "exhaustive"):
        wide[f"{search}_ratio"] = wide[search] / wide["contiguous"] if search in wide.columns else np.nan
    both = {"greedy", "exhaustive"} <= set(wide.columns)
    wide["greedy_gap"] = wide["exhaustive"] / wide["greedy"] if both else np.nan
    return wide


def adversary_table(ratios):
    """Largest ratio to the contiguous block per (function, scheme) of :func:`adversary_ratios`, and where.

    Returns
    -------
    pandas.DataFrame
        ``function, scheme, exhaustive_max, exhaustive_at, greedy_max, greedy_at, greedy_gap_max,
        cells`` (``*_at``: ``"N=.., S=.."`` of the maximum).
    """
    rows = []
    for (function, scheme), g in ratios.groupby(["function", "scheme"]):
        row = {"function": function, "scheme": scheme, "cells": len(g)}
        for col in ("exhaustive", "greedy"):
            r = g[f"{col}_ratio"].dropna()
            best = g.loc[r.idxmax()] if len(r) else None
            row[f"{col}_max"] = np.nan if best is None else float(best[f"{col}_ratio"])
            row[f"{col}_at"] = "" if best is None else f"N={int(best['N'])}, S={int(best['S'])}"
        row["greedy_gap_max"] = float(g["greedy_gap"].max()) if g["greedy_gap"].notna().any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def quoted_values(table) -> list[dict]:
    """``<scheme>_exhaustive_max`` of :func:`adversary_table` (1: the block is the exact worst case)."""
    out = []
    for scheme, g in table.groupby("scheme", sort=False):
        ratios = g["exhaustive_max"].dropna()
        if len(ratios):
            out.append({"key": f"{scheme}_exhaustive_max", "number": float(ratios.max()), "fmt": ".2f",
                        "note": f"{label(scheme)}: largest worst loss over all sets / over contiguous blocks"})
    return out
