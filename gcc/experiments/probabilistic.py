"""Probabilistic stragglers: i.i.d. Bernoulli(p) over an N grid (ISIT 2025 [1]_).

The claimed rates are GCC ``E[R] = O(log^3_{1/p}(N) N^-3)`` and BACC
``O(log^4_{1/p}(N) N^-2)``. The ``probabilistic_rate`` notebook runs
:func:`probabilistic_sweep`, summarises it with :func:`probabilistic_summary` (means,
too-few-survivor counts, longest straggler runs and the normalised ratios), fits
:func:`probabilistic_slopes` (read by :mod:`gcc.experiments.claims`), reports
:func:`ratio_growth` and draws :func:`plot_probabilistic`.

Imports the core (codes, straggler models, harness, summary) and the shared experiments
modules :mod:`~gcc.experiments.problems`, :mod:`~gcc.experiments.references`,
:mod:`~gcc.experiments.slopes`, :mod:`~gcc.experiments.plotting`.

References
----------
.. [1] P. Moradi, M. A. Maddah-Ali, "General Coded Computing in a Probabilistic
   Straggler Regime", ISIT 2025, arXiv:2502.00645.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

import gcc
from gcc.codes import canonical, label, make_many
from gcc.harness import run_trials
from gcc.summary import slope_table, summarize

from .plotting import band, finish, scheme_color
from .problems import child_seed
from .references import anchor_constant, log_base, log_rate_reference
from .slopes import as_rate_slopes

__all__ = ["probabilistic_sweep", "probabilistic_summary", "probabilistic_slopes", "ratio_growth",
           "plot_probabilistic"]

#: (log power, N power) of each scheme's claimed rate ``log^a_{1/p}(N) / N^b``
CLAIMED_RATES = {"gcc": (3, 3), "bacc": (4, 2)}


def probabilistic_sweep(f, X, n_grid: Sequence[int], p_values: Sequence[float], *, draws: int = 200,
                        codes: Sequence[str] = ("gcc", "bacc"), seed: int = 0,
                        points: str = "chebyshev", function: str = "f", min_survivors: int | None = None):
    """Loss under i.i.d. Bernoulli(p) stragglers over an N grid (ISIT 2025 [1]_).

    Parameters
    ----------
    f : callable
        Vectorised ``(n, *in) -> (n, *out)``.
    X : ndarray, shape (K, *in)
        Data points, identical for every code and cell.
    n_grid : sequence of int
    p_values : sequence of float in (0, 1)
    draws : int
        Monte-Carlo draws of the received set per (N, p); every code sees the same draws.
    codes : sequence of str
        Scheme keys of :mod:`gcc.codes` (any case).
    seed : int
        Each cell uses ``child_seed(seed, N, round(1000 p))``.
    points : {"chebyshev", "equispaced"}
    function : str
        Label stored in the ``function`` column.
    min_survivors : int or None
        Draws with fewer received workers are counted (``too_few_survivors``) and get a NaN
        loss, never silently dropped or redrawn. Default: K (an interpolating
        decoder with fewer points than data cannot be in the theorems' regime).

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, N, p, draw): ``function, scheme, p, N, K, trial, loss,
        received, longest_run, too_few_survivors`` then the other columns of
        :func:`gcc.harness.run_trials`.
    """
    import pandas as pd

    K = len(X)
    min_survivors = K if min_survivors is None else int(min_survivors)
    frames = []
    for p in p_values:
        for N in n_grid:
            cell = make_many(codes, K, int(N), points=points)
            model = gcc.Bernoulli(float(p), min_survivors=min_survivors)
            cell_seed = child_seed(seed, N, round(1000 * p))
            df, received = run_trials(cell, f, X, model, trials=int(draws), seed=cell_seed, return_received=True)
            # Every scheme of a trial shares one received set: its longest straggler run.
            masks = np.zeros((int(draws), int(N)), dtype=bool)
            for t, sets in enumerate(received):
                masks[t, next(iter(sets.values()))] = True
            runs = np.asarray(gcc.longest_straggler_run(masks))
            df["longest_run"] = runs[df["trial"].to_numpy()]
            frames.append(df.assign(function=function, p=float(p), N=int(N), K=K))
    out = pd.concat(frames, ignore_index=True)
    cols = ["function", "scheme", "p", "N", "K", "trial", "loss", "received", "longest_run", "too_few_survivors"]
    return out[[c for c in cols if c in out.columns] + [c for c in out.columns if c not in cols]]


def probabilistic_summary(df, level: float = 0.95):
    """Per (scheme, p, N): E[loss] with its interval, draws, too-few counts, runs, normalised ratios.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`probabilistic_sweep` results.
    level : float
        Confidence level of the interval.

    Returns
    -------
    pandas.DataFrame
        ``function, scheme, p, N`` and the :func:`gcc.summary.summarize` columns of the loss
        over the draws with enough survivors (``n`` of them; ``n_nan`` the others), then ``draws``, ``too_few``,
        ``longest_run_mean``, ``longest_run_max``, ``longest_run_erdos_renyi``, ``log_N``,
        ``ratio_gcc_rate`` (``E N^3 / log^3``), ``ratio_bacc_rate`` (``E N^2 / log^4``) and
        ``ratio`` (the ratio of the scheme's own claimed rate).
    """
    keys = ["function", "scheme", "p", "N"]
    out = summarize(df, "loss", by=keys, level=level)  # NaN losses (too few survivors) left out
    counts = df.groupby(keys).agg(
        draws=("loss", "size"), too_few=("loss", lambda s: int((~np.isfinite(s)).sum())),
        longest_run_mean=("longest_run", "mean"), longest_run_max=("longest_run", "max")).reset_index()
    out = out.merge(counts, on=keys, how="right")
    out["longest_run_erdos_renyi"] = [gcc.expected_longest_run(n, p) for n, p in zip(out["N"], out["p"])]
    out["log_N"] = [float(log_base(n, p)) for n, p in zip(out["N"], out["p"])]
    out["ratio_gcc_rate"] = out["mean"] * out["N"].astype(float) ** 3 / out["log_N"] ** 3
    out["ratio_bacc_rate"] = out["mean"] * out["N"].astype(float) ** 2 / out["log_N"] ** 4
    out["ratio"] = np.where(out["scheme"] == "bacc", out["ratio_bacc_rate"], out["ratio_gcc_rate"])
    return out


def probabilistic_slopes(summary, y_floor: float = 1e-26):
    """Slopes in N of each scheme's normalised ratio (claimed bounded: slope <= 0), per p.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`probabilistic_summary`.
    y_floor : float
        Mean losses at or below this are round-off and left out of the raw loss slope.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`gcc.experiments.slopes.RATE_SLOPE_COLUMNS` (``variable = "N"``,
        ``fixed = "p=<p>"``) plus the raw ``loss_slope`` of E[loss] against N and its interval.
    """
    a = slope_table(summary, "N", ["function", "scheme", "p"], y="ratio", y_floor=0.0)
    raw = slope_table(summary, "N", ["function", "scheme", "p"], y="mean", y_floor=y_floor)
    a["loss_slope"] = raw["slope"].to_numpy()
    a["loss_slope_ci_low"] = raw["ci_low"].to_numpy()
    a["loss_slope_ci_high"] = raw["ci_high"].to_numpy()
    a["fixed"] = "p=" + a["p"].astype(str)
    a["straggler"] = "bernoulli"
    return as_rate_slopes(a)


def ratio_growth(summary, scheme: str = "gcc"):
    """The acceptance statistic of the probabilistic notebook, per (function, p).

    ``max(ratio over the upper half of the N grid) / ratio at the grid's middle``
    (the middle is the median grid point, the upper half the points above it).
    A value <= 2 means the normalised ratio does not grow.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`probabilistic_summary`.
    scheme : str
        Scheme key (any case).

    Returns
    -------
    pandas.DataFrame
        ``function, scheme, p, N_mid, ratio_mid, ratio_upper_max, growth``.
    """
    import pandas as pd

    scheme = canonical(scheme, "ratio_growth")
    rows = []
    for (function, p), g in summary[summary["scheme"] == scheme].groupby(["function", "p"]):
        g = g.sort_values("N")
        n_values = g["N"].to_numpy()
        mid = len(n_values) // 2
        ratio = g["ratio"].to_numpy(dtype=float)
        upper = ratio[mid + 1:] if mid + 1 < len(ratio) else ratio[mid:]
        rows.append({"function": function, "scheme": scheme, "p": p, "N_mid": int(n_values[mid]),
                     "ratio_mid": ratio[mid], "ratio_upper_max": float(np.nanmax(upper)),
                     "growth": float(np.nanmax(upper) / ratio[mid])})
    return pd.DataFrame(rows)


def plot_probabilistic(summary, function: str):
    """E[loss], the normalised ratio and the longest straggler run against N, one column per p.

    Row 1: E[loss] of each scheme with ``c log^3/N^3`` and ``c log^4/N^2``. Row 2: each scheme's
    normalised ratio. Row 3: the longest straggler run against ``log_{1/p} N`` with the
    Erdős–Rényi law.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`probabilistic_summary` (the saved ``summary`` table).
    function : str
        Value of its ``function`` column to draw.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    sub = summary[summary["function"] == function]
    p_values = sorted(sub["p"].unique())
    fig, axes = plt.subplots(3, len(p_values), figsize=(3.8 * len(p_values), 9.0), squeeze=False)
    for j, p in enumerate(p_values):
        part = sub[sub["p"] == p]
        schemes = sorted(part["scheme"].unique())
        ax = axes[0, j]
        for code in schemes:
            g = part[part["scheme"] == code].sort_values("N")
            ax.loglog(g["N"], g["mean"], "o-", ms=3, color=scheme_color(code), label=label(code))
            band(ax, g["N"], g, scheme_color(code))
        n = np.array(sorted(part["N"].unique()), dtype=float)
        for code, style in (("gcc", "--"), ("bacc", ":")):
            lp, npow = CLAIMED_RATES[code]
            g = part[part["scheme"] == code]
            if len(g):
                C = anchor_constant(g["mean"], log_rate_reference(g["N"], p, lp, npow))
                ax.loglog(n, log_rate_reference(n, p, lp, npow, C), "k" + style, lw=0.8,
                          label=f"c log^{lp}/N^{npow}")
        ax.set_title(f"p = {p:g}")
        ax.set_xlabel("N")
        ax.grid(True, alpha=0.3)
        ax = axes[1, j]
        for code in schemes:
            g = part[part["scheme"] == code].sort_values("N")
            text = "E[loss] N^2/log^4" if code == "bacc" else "E[loss] N^3/log^3"
            ax.loglog(g["N"], g["ratio"], "o-", ms=3, color=scheme_color(code), label=f"{label(code)}: {text}")
        ax.set_xlabel("N")
        ax.grid(True, alpha=0.3)
        ax = axes[2, j]
        g = part[part["scheme"] == part["scheme"].iloc[0]].sort_values("N")
        ax.plot(g["log_N"], g["longest_run_mean"], "o-", ms=3, label="mean longest run")
        ax.plot(g["log_N"], g["longest_run_max"], "s", ms=3, mfc="none", label="max over draws")
        ax.plot(g["log_N"], g["longest_run_erdos_renyi"], "k--", lw=0.8, label="log_{1/p}(N(1-p))")
        ax.set_xlabel("log_{1/p} N")
        ax.grid(True, alpha=0.3)
    axes[0, 0].set_ylabel("E[loss]")
    axes[1, 0].set_ylabel("normalised ratio")
    axes[2, 0].set_ylabel("longest straggler run")
    for row in range(3):
        axes[row, 0].legend(fontsize=7)
    fig.suptitle(f"{function}: Bernoulli(p) stragglers", fontsize=10)
    return finish(fig)
