"""Probabilistic stragglers: i.i.d. Bernoulli(p) over an N grid (ISIT 2025 [1]_).

Claimed: GCC ``E[R] = O(log^3_{1/p}(N) N^-3)``, BACC ``O(log^4_{1/p}(N) N^-2)`` (the ISIT abstract's
"respectively" swaps them: both readings are measured), on ``x sin x`` and on the extremal bump.

References
----------
.. [1] P. Moradi, M. A. Maddah-Ali, "General Coded Computing in a Probabilistic
   Straggler Regime", ISIT 2025, arXiv:2502.00645.
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from scipy import stats

import gcc
from gcc.codes import canonical, label, make_many
from gcc.harness import run_trials
from gcc.summary import slope_table, summarize

from .extremal import EXTREMAL_FUNCTION, Bump, check_line, line_inputs
from .plotting import REFERENCE, band, figure, finish, log_ticks, scheme_color, scheme_kw, scheme_marker
from .problems import as_matrix, child_seed
from .references import anchor_constant, log_base
from .slopes import as_rate_slopes, quoted_slopes, slope_view

__all__ = ["CLAIMED_RATES", "RATIO_COLUMNS", "SUMMARY_VIEW", "probabilistic_sweep", "extremal_draw_losses",
           "probabilistic_summary", "probabilistic_slopes", "ratio_growth", "slope_overview", "quoted_values",
           "plot_probabilistic"]

#: (log power, N power) of each scheme's claimed rate ``log^a_{1/p}(N) / N^b`` (ISIT, as read by
#: the 2608 abstract; the "respectively" of the ISIT abstract swaps them)
CLAIMED_RATES = {"gcc": (3, 3), "bacc": (4, 2)}

#: summary column of ``E[loss] N^b / log^a_{1/p} N`` for each (a, b) of the two readings
RATIO_COLUMNS = {(3, 3): "ratio_gcc_rate", (4, 2): "ratio_bacc_rate"}

#: the columns of :func:`probabilistic_summary` that the notebook's page shows
SUMMARY_VIEW = ["function", "scheme", "p", "N", "draws", "too_few", "mean", "ci_low", "ci_high", "ratio_gcc_rate",
                "ratio_bacc_rate", "longest_run_mean", "longest_run_erdos_renyi"]

#: half-widths, in units of the room a draw leaves around the data point, of the extremal bumps
DRAW_WIDTHS = (1.0, 1.5, 2.0, 3.0)


def extremal_draw_losses(code, received, widths: Sequence[float] = DRAW_WIDTHS):
    """Normalised loss ``R / ||g''||^2`` of the worst extremal bump for each received set.

    The bump goes on the data point farthest from every received worker, half-width ``width``
    times that distance; the worst width is kept (the function is chosen after the stragglers).

    `received` holds one received set per draw (None or fewer than 2 workers: NaN). Returns
    ``(normalised, raw)``, arrays of shape (draws,): the normalised loss and the loss at the worst width.
    """
    X = line_inputs(code)
    check_line(code)
    alphas = np.asarray(code.alphas, dtype=float)
    betas = np.asarray(code.betas, dtype=float)
    U = as_matrix(code.encode(X))[:, 0]  # u_enc(beta_n)
    out = np.full((2, len(received)), np.nan)
    for t, rec in enumerate(received):
        if rec is None or len(rec) < 2:
            continue
        rec = np.asarray(rec)
        # per data point: distance to the nearest received worker (the ends of Omega count)
        nodes = np.concatenate([[-1.0], betas[rec], [1.0]])
        j = np.searchsorted(nodes, alphas)
        room = np.minimum(alphas - nodes[np.maximum(j - 1, 0)], nodes[np.minimum(j, nodes.size - 1)] - alphas)
        k = int(np.argmax(np.where(room >= room.max() * (1 - 1e-9), 1.0 / (1.0 + np.abs(alphas)), 0.0)))
        if room[k] <= 0.0:
            continue
        D = np.asarray(code.decoder_matrix(rec), dtype=float)
        for width in widths:
            bump = Bump(float(X[k]), float(width) * float(room[k]))
            loss = float(np.mean((D @ bump(U[rec]) - bump(X)) ** 2))
            if not loss / bump.energy <= out[0, t]:
                out[:, t] = loss / bump.energy, loss
    return out[0], out[1]


def probabilistic_sweep(f, X, n_grid: Sequence[int], p_values: Sequence[float], *, draws: int = 200,
                        codes: Sequence[str] = ("gcc", "bacc"), seed: int = 0,
                        function: str = "f", extremal: bool = False):
    """Loss under i.i.d. Bernoulli(p) stragglers over an N grid (ISIT 2025 [1]_).

    Parameters
    ----------
    f, X
        As in :func:`~gcc.experiments.worst_case.straggler_sweep`.
    n_grid : sequence of int
    p_values : sequence of float in (0, 1)
    draws : int
        Draws of the received set per (N, p), shared by the codes.
    codes : sequence of str
        Scheme keys of :mod:`gcc.codes` (any case).
    seed : int
        Each cell uses ``child_seed(seed, N, round(1000 p))``.
    function : str
        Label stored in the ``function`` column.
    extremal : bool
        Also rows ``function = "bump (extremal)"`` on the same draws, whose ``loss`` is the
        normalised one (``quantity = "normalised"``, the raw loss in ``raw_loss``).

    Returns
    -------
    pandas.DataFrame
        One row per (function, scheme, N, p, draw): ``function, scheme, p, N, K, trial, loss,
        received, longest_run, too_few_survivors, quantity``, then :func:`gcc.harness.run_trials`' columns.
    """
    K = len(X)
    min_survivors = K  # fewer received workers than data: counted, with a NaN loss
    frames = []
    for p in p_values:
        for N in n_grid:
            cell = make_many(codes, K, int(N))
            model = gcc.Bernoulli(float(p), min_survivors=min_survivors)
            cell_seed = child_seed(seed, N, round(1000 * p))
            with warnings.catch_warnings():
                # run_trials warns about draws with too few survivors; they are counted in the table instead.
                warnings.filterwarnings("ignore", message=".*drew fewer than", category=RuntimeWarning)
                df, received = run_trials(cell, f, X, model, trials=int(draws), seed=cell_seed,
                                          return_received=True)
            # Every scheme of a trial shares one received set: its longest straggler run.
            masks = np.zeros((int(draws), int(N)), dtype=bool)
            for t, sets in enumerate(received):
                masks[t, next(iter(sets.values()))] = True
            runs = np.asarray(gcc.longest_straggler_run(masks))
            df["longest_run"] = runs[df["trial"].to_numpy()]
            frames.append(df.assign(function=function, p=float(p), N=int(N), K=K, quantity="loss"))
            if extremal:
                frames.append(_extremal_rows(cell, received, runs, min_survivors).assign(p=float(p), N=int(N), K=K))
    out = pd.concat(frames, ignore_index=True)
    cols = ["function", "scheme", "p", "N", "K", "trial", "loss", "received", "longest_run", "too_few_survivors",
            "quantity"]
    return out[[c for c in cols if c in out.columns] + [c for c in out.columns if c not in cols]]


def _extremal_rows(cell, received, runs, min_survivors):
    """The extremal family's rows of one (N, p) cell, on the draws of the typical function."""
    frames = []
    for scheme, code in cell.items():
        sets = [r[scheme] if len(r[scheme]) >= min_survivors else None for r in received]
        normalised, raw = extremal_draw_losses(code, sets)
        frames.append(pd.DataFrame({"function": EXTREMAL_FUNCTION, "scheme": scheme, "trial": np.arange(len(sets)),
                                    "loss": normalised, "raw_loss": raw,
                                    "received": [len(r[scheme]) for r in received], "longest_run": runs,
                                    "too_few_survivors": [s is None for s in sets], "quantity": "normalised"}))
    return pd.concat(frames, ignore_index=True)


def probabilistic_summary(df):
    """Per (scheme, p, N): E[loss] with its interval, draws, too-few counts, runs, normalised ratios.

    From :func:`probabilistic_sweep`'s `df`: ``function, scheme, p, N``, :func:`gcc.summary.summarize` of
    the finite losses, ``draws, too_few, longest_run_mean, longest_run_max, longest_run_erdos_renyi,
    log_N``, ``ratio_gcc_rate`` (``E N^3 / log^3``), ``ratio_bacc_rate`` (``E N^2 / log^4``), ``ratio``.
    """
    keys = ["function", "scheme", "p", "N"]
    out = summarize(df, "loss", by=keys)  # NaN losses (too few survivors) left out
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


def probabilistic_slopes(summary):
    """Slopes in N of both readings' normalised ratios and of E[loss]; the longest run's law.

    From :func:`probabilistic_summary`; mean losses at or below 1e-26 (round-off) are left out of the loss slope.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`gcc.experiments.slopes.RATE_SLOPE_COLUMNS` (``fixed = "p=<p>"``), per (function,
        scheme, p) the quantities ``"ratio_log3_n3"``, ``"ratio_log4_n2"`` and ``"loss"``; per (function,
        p) a ``"longest_run"`` row: the linear slope of the mean run against ``log_{1/p} N`` (law: 1).
    """
    keys = ["function", "scheme", "p"]
    frames = []
    for quantity, y, floor in (("ratio_log3_n3", "ratio_gcc_rate", 0.0), ("ratio_log4_n2", "ratio_bacc_rate", 0.0),
                               ("loss", "mean", 1e-26)):
        part = slope_table(summary, "N", keys, y=y, y_floor=floor)
        frames.append(part.assign(quantity=quantity))
    runs = []
    for (function, p), g in summary.groupby(["function", "p"]):
        g = g[g["scheme"] == g["scheme"].iloc[0]].sort_values("N")  # every scheme shares the draws
        fit = stats.linregress(g["log_N"].to_numpy(float), g["longest_run_mean"].to_numpy(float))
        half = float(stats.t.ppf(0.975, len(g) - 2)) * float(fit.stderr)  # 95% interval
        runs.append({"function": function, "scheme": "", "p": p, "variable": "log_{1/p} N",
                     "slope": float(fit.slope), "ci_low": float(fit.slope) - half, "ci_high": float(fit.slope) + half,
                     "n_points": len(g), "x_lo": float(g["log_N"].min()), "x_hi": float(g["log_N"].max()),
                     "quantity": "longest_run"})
    a = pd.concat(frames + [pd.DataFrame(runs)], ignore_index=True)
    a["fixed"] = "p=" + a["p"].astype(str)
    a["straggler"] = "bernoulli"
    return as_rate_slopes(a)


def ratio_growth(summary, scheme: str = "gcc"):
    """Per (function, p): the largest ratio above the N grid's median point over the ratio there.

    `summary` is :func:`probabilistic_summary`, `scheme` a scheme key (any case).

    Returns
    -------
    pandas.DataFrame
        ``function, scheme, p, N_mid, ratio_mid, ratio_upper_max, growth``.
    """
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


def slope_overview(slopes):
    """:func:`~gcc.experiments.slopes.slope_view` of :func:`probabilistic_slopes`; the runs in ``"all"``."""
    scheme = slopes["scheme"].where(slopes["scheme"].notna() & (slopes["scheme"] != ""), "all")
    return slope_view(slopes.assign(scheme=scheme), ["function", "quantity", "fixed"])


def quoted_values(summary, slopes) -> list[dict]:
    """The probabilistic numbers the chapters quote, as keyword arguments of ``RunContext.value``.

    Ranges over p (``_min``, ``_max``) of ``<scheme>_<tag>_loss_slope``, ``..._ratio3_slope`` and
    ``..._ratio4_slope`` (tag ``xsinx`` or ``extremal``) and of ``erdos_renyi_slope``; ``too_few_draws``
    of ``total_draws``. From :func:`probabilistic_summary` and :func:`probabilistic_slopes`.
    """
    out = []
    for function, tag in (("x sin x", "xsinx"), (EXTREMAL_FUNCTION, "extremal")):
        for scheme in ("gcc", "bacc"):
            for quantity, name, what in (("loss", "loss_slope", "E[loss]"),
                                         ("ratio_log3_n3", "ratio3_slope", "E N^3/log^3"),
                                         ("ratio_log4_n2", "ratio4_slope", "E N^2/log^4")):
                out += quoted_slopes(slopes, f"{scheme}_{tag}_{name}", f"{label(scheme)}, {function}: N-slope of "
                                     f"{what} over p", span=True, function=function, scheme=scheme, quantity=quantity)
    out += quoted_slopes(slopes, "erdos_renyi_slope", "slope of the mean longest run against log_{1/p} N over p",
                         span=True, function="x sin x", quantity="longest_run")
    first = summary[(summary["function"] == "x sin x") & (summary["scheme"] == summary["scheme"].iloc[0])]
    out += [{"key": "too_few_draws", "number": int(first["too_few"].sum()),
             "note": "draws with fewer than K received workers (reported, not in the means)"},
            {"key": "total_draws", "number": int(first["draws"].sum()), "note": "draws of received sets in all"}]
    return out


def plot_probabilistic(summary, function: str, runs: bool = True):
    """E[loss] with both claimed rates, both normalised ratios and the longest run against N; a column per p.

    `summary` is :func:`probabilistic_summary`, `function` the one drawn; `runs` draws the longest runs.

    Returns
    -------
    matplotlib.figure.Figure
    """
    sub = summary[summary["function"] == function]
    p_values = sorted(sub["p"].unique())
    n_rows = 3 if runs else 2
    ncols = min(len(p_values), 3)
    fig, flat = figure(n_rows * len(p_values), ncols=ncols, height=2.3 * n_rows * -(-len(p_values) // ncols) + 0.9)
    axes = np.asarray(flat).reshape(n_rows, len(p_values))
    schemes = sorted(sub["scheme"].unique())
    for j, p in enumerate(p_values):
        part = sub[sub["p"] == p]
        ax = axes[0, j]
        for code in schemes:
            g = part[part["scheme"] == code].sort_values("N")
            ax.loglog(g["N"], g["mean"], "-", ms=3, **scheme_kw(code))
            band(ax, g["N"], g, scheme_color(code))
        n = np.array(sorted(part["N"].unique()), dtype=float)
        for code, style in (("gcc", "--"), ("bacc", ":")):
            lp, npow = CLAIMED_RATES[code]
            g = part[part["scheme"] == code]
            if len(g):  # the claimed rate C log^lp_{1/p}(N) / N^npow, C through the highest point
                C = anchor_constant(g["mean"], log_base(g["N"], p) ** lp / g["N"].to_numpy(float) ** npow)
                ax.loglog(n, C * log_base(n, p) ** lp / n ** npow, color="k", ls=style, lw=0.8)
        ax.set_title(f"p = {p:g}")
        log_ticks(ax, n)
        ax = axes[1, j]
        for code in schemes:
            g = part[part["scheme"] == code].sort_values("N")
            for (lp, npow), col in RATIO_COLUMNS.items():
                own = CLAIMED_RATES.get(code) == (lp, npow)
                ax.loglog(g["N"], g[col], "-" if own else ":", ms=3, color=scheme_color(code),
                          marker=scheme_marker(code), mfc=None if own else "none", alpha=1.0 if own else 0.7)
        ax.set_title(f"p = {p:g}: ratios")
        log_ticks(ax, n)
        ax.set_xlabel("N")
        if not runs:
            continue
        ax = axes[2, j]
        g = part[part["scheme"] == part["scheme"].iloc[0]].sort_values("N")
        ax.plot(g["log_N"], g["longest_run_mean"], "-", color="black", marker="o", ms=3)
        ax.plot(g["log_N"], g["longest_run_max"], "s", color="0.45", ms=3, mfc="none")
        ax.plot(g["log_N"], g["longest_run_erdos_renyi"], **REFERENCE)
        ax.set_title(f"p = {p:g}: longest run")
        ax.set_xlabel("log$_{1/p}$ N")
    axes[0, 0].set_ylabel("E[loss]" if function != EXTREMAL_FUNCTION else "E[R / ||g''||$^2$]")
    axes[1, 0].set_ylabel("normalised ratio")
    # One legend for the figure: colour and marker name the scheme, line styles the references.
    handles = [Line2D([], [], **scheme_kw(c), label=label(c)) for c in schemes]
    for code, style in (("gcc", "--"), ("bacc", ":")):
        lp, npow = CLAIMED_RATES[code]
        handles.append(Line2D([], [], color="k", ls=style, lw=0.8, label=f"c log$^{lp}$N / N$^{npow}$"))
    handles.append(Line2D([], [], color="0.3", ls="-", label="ratio: the scheme's claimed rate"))
    handles.append(Line2D([], [], color="0.3", ls=":", label="ratio: the other reading"))
    if runs:
        axes[2, 0].set_ylabel("longest run")
        handles += [Line2D([], [], color="black", marker="o", ms=3, label="mean longest run"),
                    Line2D([], [], color="0.45", marker="s", ls="none", mfc="none", ms=3, label="max over draws"),
                    Line2D([], [], **REFERENCE, label="log$_{1/p}$(N(1-p)) (Erdős–Rényi)")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3)
    fig.suptitle(f"{function}: Bernoulli(p) stragglers")
    return finish(fig)
