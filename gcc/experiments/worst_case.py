"""Worst-case and random stragglers over an (N, S) grid: the typical case of Thm 1 / Thm 4, O(S^3 N^-3).

The ``worst_case_rate`` notebook's sweeps, slopes and figures; :func:`hole_crossing` compares GCC's
and Berrut's decoders across the same worst hole.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

import gcc
from gcc.codes import canonical, label, make_many
from gcc.harness import run_trials
from gcc.summary import summarize
from gcc.validation import Options, validate

from .plotting import (REFERENCE, band, figure, finish, legend_outside, log_ticks, scheme_color, scheme_kw,
                       scheme_marker, scheme_shades)
from .problems import TanhNetwork, child_seed, scalar_inputs, xsinx
from .references import anchor_constant
from .slopes import as_rate_slopes, joint_fit, path_slopes, quoted_slopes, sweep_slopes

__all__ = ["typical_functions", "function_tag", "straggler_sweep", "typical_sweeps",
           "summarize_sweeps", "worst_case_slopes", "quoted_values", "hole_crossing", "hole_values", "plot_n_sweep",
           "plot_s_sweep"]

def typical_functions(n_inputs: int, x_low: float = -3.0, x_high: float = 3.0, net_d: int = 4, net_m: int = 3,
                      net_hidden: int = 16, seed: int = 0) -> dict:
    """The typical case's two smooth functions with their data, by label.

    ``x sin x`` on K uniform inputs in ``[x_low, x_high]`` and a
    :class:`~gcc.experiments.problems.TanhNetwork` ``R^net_d -> R^net_m`` of width `net_hidden` on
    standard normal inputs, all seeded by `seed`.
    """
    net = TanhNetwork(net_d, net_m, net_hidden, seed=seed)
    Z = np.random.default_rng(seed).normal(size=(int(n_inputs), int(net_d)))
    return {"x sin x": (xsinx, scalar_inputs(n_inputs, x_low, x_high, seed=seed)),
            f"tanh net R^{net_d}->R^{net_m} (h={net_hidden})": (net, Z)}


def function_tag(name: str) -> str:
    """A short file-name tag of a typical function's label: ``"x sin x"`` -> ``"xsinx"``, the net -> ``"tanh"``."""
    return "xsinx" if name == "x sin x" else name.split()[0]


def straggler_sweep(f, X, n_grid: Sequence[int], s_grid: Sequence[int], *,
                    codes: Sequence[str] = ("gcc", "bacc", "bspline"), adversary: str = "worst",
                    trials: int = 1, seed: int = 0, max_workers: Mapping[str, int] | None = None,
                    function: str = "f"):
    """End-to-end loss over an (N, S) grid, worst-case or random stragglers (Thm 1 / Thm 4).

    Parameters
    ----------
    f : callable
        Vectorised ``(n, *in) -> (n, *out)``.
    X : ndarray, shape (K, *in)
    n_grid, s_grid : sequences of int
        Cells with ``N - S < K`` are skipped.
    codes : sequence of str
        Scheme keys of :mod:`gcc.codes` (any case); GCC at lambda = 0.
    adversary : {"worst", "random"}
        Each code's own worst contiguous block (:func:`gcc.worst_case_stragglers`), or `trials`
        uniform S-sets per cell shared by the codes (``child_seed(seed, N, S)``).
    trials, seed : int
    max_workers : mapping of str to int, optional
        Run a code only for ``N <= max_workers[code]`` (default: every N).
    function : str
        The ``function`` column.

    Returns
    -------
    pandas.DataFrame
        ``function, scheme, straggler, N, S, K, trial, loss`` (worst case: and ``block_start``).
    """
    validate(adversary, Options(("worst", "random")), "adversary", "straggler_sweep")
    K = len(X)
    codes = [canonical(c, "straggler_sweep") for c in codes]
    limits = {canonical(k, "straggler_sweep"): v for k, v in (max_workers or {}).items()}
    frames = []
    for N in n_grid:
        names = [c for c in codes if N <= limits.get(c, np.inf)]
        for S in s_grid:
            if N - S < K:
                continue
            cell = make_many(names, K, int(N))
            if adversary == "worst":
                rows = []
                for name, code in cell.items():
                    received, loss = gcc.worst_case_stragglers(code, f, X, int(S), return_loss=True)
                    missing = np.setdiff1d(np.arange(N), received)
                    rows.append({"scheme": name, "trial": 0, "loss": float(loss),
                                 "block_start": int(missing[0]) if missing.size else -1})
                df = pd.DataFrame(rows)
            else:
                df = run_trials(cell, f, X, gcc.FixedCount(int(S)), trials=int(trials), seed=child_seed(seed, N, S))
                df = df[["scheme", "trial", "loss"]]
            frames.append(df.assign(function=function, straggler=adversary, N=int(N), S=int(S), K=K))
    cols = ["function", "scheme", "straggler", "N", "S", "K", "trial", "loss"]
    out = pd.concat(frames, ignore_index=True)
    return out[cols + [c for c in out.columns if c not in cols]]


def typical_sweeps(functions: Mapping[str, tuple], cells, **common):
    """:func:`straggler_sweep` over every cell of :func:`~gcc.experiments.extremal.sweep_cells`, per function.

    `functions` maps a label to ``(f, X)``; worst-case and random stragglers on the N and S sweeps, the
    worst case only on the joint sweeps; `common` goes to :func:`straggler_sweep`. Returns its rows with
    ``sweep`` and ``gamma``.
    """
    frames = []
    for name, (f, X) in functions.items():
        for adversary in ("worst", "random"):
            for cell in cells.itertuples(index=False):
                if cell.sweep == "joint" and adversary != "worst":
                    continue
                df = straggler_sweep(f, X, [int(cell.N)], [int(cell.S)], adversary=adversary, function=name,
                                     **common)
                frames.append(df.assign(sweep=cell.sweep, gamma=cell.gamma))
    return pd.concat(frames, ignore_index=True)


def summarize_sweeps(trials):
    """:func:`gcc.summary.summarize` of :func:`typical_sweeps` per (sweep, function, scheme, straggler, N, S).

    Returns
    -------
    pandas.DataFrame
        ``sweep, function, scheme, straggler, N, S``, the summary columns, and ``gamma`` (joint sweeps).
    """
    by = ["sweep", "function", "scheme", "straggler", "N", "S"]
    joint = trials["sweep"] == "joint"
    parts = [summarize(trials[~joint], "loss", by=by).assign(gamma=np.nan)]
    if joint.any():
        parts.append(summarize(trials[joint], "loss", by=by + ["gamma"]))
    return pd.concat(parts, ignore_index=True)


def worst_case_slopes(summary, fit_min_ratio: float = 4.0):
    """N-slopes at fixed S, (S+1)-slopes at fixed N, slopes along joint sweeps and the joint fit.

    Losses at or below 1e-26 are round-off, left out; S-slopes use only ``S + 1 <= N / 4``.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`summarize_sweeps`.
    fit_min_ratio : float
        Fits use only ``N >= fit_min_ratio * (S + 1)`` (the bounds are asymptotic).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`gcc.experiments.slopes.RATE_SLOPE_COLUMNS`; ``fixed`` is ``"S=<s>"``,
        ``"N=<n>"``, ``"gamma=<g>"`` or ``"joint fit"``.
    """
    keys, y_floor = ["function", "scheme", "straggler"], 1e-26
    frames = [sweep_slopes(summary, keys, x_min=lambda g: fit_min_ratio * (g["S"] + 1), y_floor=y_floor,
                           s_window=lambda d: (d["S"] + 1) <= 0.25 * d["N"])]
    asymptotic = lambda d: (d["N"] >= fit_min_ratio * (d["S"] + 1)) & (d["mean"] > y_floor)  # noqa: E731
    if "joint" in set(summary["sweep"]):
        frames.append(path_slopes(summary[summary["sweep"] == "joint"], keys, window=asymptotic, y_floor=y_floor))
        frames.append(joint_fit(summary, keys, window=asymptotic))
    return as_rate_slopes(pd.concat(frames, ignore_index=True))


def quoted_values(slopes) -> list[dict]:
    """The typical case's numbers the chapters quote, as keyword arguments of ``RunContext.value``.

    From :func:`worst_case_slopes`, worst case: ``<scheme>_<tag>_joint_n`` / ``_joint_s`` (GCC and BACC,
    joint fit, with ``_ci``).
    """
    out = []
    worst = slopes[slopes["straggler"] == "worst"]
    for function in dict.fromkeys(worst["function"]):
        tag = function_tag(function)
        for scheme in ("gcc", "bacc"):
            for variable, axis in (("N", "n"), ("S+1", "s")):
                out += quoted_slopes(worst, f"{scheme}_{tag}_joint_{axis}",
                                     f"{label(scheme)}, {function}, worst case: joint-fit exponent in {variable}",
                                     function=function, scheme=scheme, fixed="joint fit", variable=variable)
    return out


def hole_crossing(functions: Mapping[str, tuple], n_workers: int, s_grid: Sequence[int]):
    """How GCC's and Berrut's decoders bridge the same hole: natural spline against rational interpolation.

    For each function and S: GCC's worst contiguous block at N = `n_workers`, the values its
    received workers return (GCC's encoder), and both decoders of those *same* values.

    `functions` is :func:`typical_functions`; S values with ``N - S < K`` are skipped.

    Returns
    -------
    pandas.DataFrame
        One row per (function, S): ``function, N, S, hole_width`` (between the received workers
        around it, 0 at S = 0), ``hole_over_data`` (over the largest data spacing), ``at_end``,
        ``spline_loss``, ``berrut_loss``, ``berrut_over_spline``; at the spline's worst data point the
        squared errors ``spline_point``, ``berrut_point``, ``linear_point`` (the straight line through
        the two nearest received workers on its nearer side); ``bacc_worst`` (BACC's own worst case).
    """
    N = int(n_workers)
    rows = []
    for name, (f, X) in functions.items():
        K = len(X)
        truth = np.asarray(f(np.asarray(X)), dtype=float).reshape(K, -1)
        for S in s_grid:
            if N - int(S) < K:
                continue
            cell = make_many(["gcc", "bacc"], K, N)
            spline, berrut = cell["gcc"], cell["bacc"]
            received, spline_loss = gcc.worst_case_stragglers(spline, f, X, int(S), return_loss=True)
            _, bacc_worst = gcc.worst_case_stragglers(berrut, f, X, int(S), return_loss=True)
            values = np.asarray(f(spline.encode(X)), dtype=float)
            est_s = np.asarray(spline.decode(values[received], received), dtype=float).reshape(K, -1)
            est_b = np.asarray(berrut.decode(values[received], received), dtype=float).reshape(K, -1)
            err_s, err_b = np.sum((est_s - truth) ** 2, axis=1), np.sum((est_b - truth) ** 2, axis=1)
            betas, alphas = np.asarray(spline.betas, dtype=float), np.asarray(spline.alphas, dtype=float)
            missing = np.setdiff1d(np.arange(N), received)
            left = betas[missing[0] - 1] if missing.size and missing[0] > 0 else -1.0
            right = betas[missing[-1] + 1] if missing.size and missing[-1] < N - 1 else 1.0
            k = int(np.argmax(err_s))
            flat = values.reshape(N, -1)
            rec = np.asarray(received)
            side = rec[betas[rec] <= alphas[k]] if alphas[k] - left <= right - alphas[k] else rec[betas[rec] > alphas[k]]
            if side.size < 2:  # nothing on the nearer side: the other one
                side = np.setdiff1d(rec, side)
            near = side[np.argsort(np.abs(betas[side] - alphas[k]))[:2]]
            slope = (flat[near[0]] - flat[near[1]]) / (betas[near[0]] - betas[near[1]])
            line = flat[near[0]] + slope * (alphas[k] - betas[near[0]])
            width = float(right - left) if missing.size else 0.0
            rows.append({"function": name, "N": N, "S": int(S), "hole_width": width,
                         "hole_over_data": width / float(np.max(np.diff(np.sort(alphas)))),
                         "at_end": bool(left == -1.0 or right == 1.0) and bool(missing.size),
                         "spline_loss": float(spline_loss), "berrut_loss": float(np.mean(err_b)),
                         "berrut_over_spline": float(np.mean(err_b) / spline_loss) if spline_loss > 0 else np.nan,
                         "spline_point": float(err_s[k]), "berrut_point": float(err_b[k]),
                         "linear_point": float(np.sum((line - truth[k]) ** 2)), "bacc_worst": float(bacc_worst)})
    return pd.DataFrame(rows)


def hole_values(holes, s_quoted: Sequence[int]) -> list[dict]:
    """The numbers the pages quote from :func:`hole_crossing`, as keyword arguments of ``RunContext.value``.

    Per function tag: ``hole_<tag>_cross`` (the smallest S from which Berrut beats the spline at every
    larger S; NaN if never) and, at the first and last S of `s_quoted` (``hole_s_lo``, ``hole_s_hi``:
    keys that do not change with the profile), ``hole_<tag>_lo_<field>`` / ``_hi_<field>`` for the
    fields ``end, over_data, linear, spline_pt, spline, berrut, bacc``.
    """
    picks = {"lo": int(s_quoted[0]), "hi": int(s_quoted[-1])}
    out = [{"key": f"hole_s_{pos}", "number": S, "note": f"the {pos} S at which the pages quote the hole"}
           for pos, S in picks.items()]
    if len(holes):
        out.append({"key": "hole_n", "number": int(holes["N"].iloc[0]), "note": "N of the hole measurements"})
    fields = (("over_data", "hole_over_data", "width of GCC's worst hole over the largest data spacing"),
              ("linear", "linear_point", "squared error of the straight-line continuation"),
              ("spline_pt", "spline_point", "squared error of the spline, same data point"),
              ("spline", "spline_loss", "loss of the natural-spline decoder (GCC)"),
              ("berrut", "berrut_loss", "loss of Berrut's decoder, same received values"),
              ("bacc", "bacc_worst", "BACC's own worst-case loss"))
    for function, g in holes.groupby("function", sort=False):
        tag = function_tag(function)
        g = g.sort_values("S")
        tail = np.flatnonzero(~(g["berrut_loss"] < g["spline_loss"]).to_numpy())
        start = tail[-1] + 1 if tail.size else 0
        cross = float(g["S"].iloc[start]) if start < len(g) else np.nan
        out.append({"key": f"hole_{tag}_cross", "number": cross,
                    "note": f"{function}: smallest S from which Berrut's decoder beats the spline on GCC's worst hole"})
        for pos, S in picks.items():
            if not (g["S"] == S).any():
                continue
            r = g[g["S"] == S].iloc[0]
            out.append({"key": f"hole_{tag}_{pos}_end", "number": "at an end of Omega" if r["at_end"] else "interior",
                        "note": f"{function}, S={S}: where GCC's worst hole lies"})
            out += [{"key": f"hole_{tag}_{pos}_{key}", "number": float(r[col]),
                     "note": f"{function}, N={int(r['N'])}, S={S}: {what}"} for key, col, what in fields]
    return out


def plot_n_sweep(summary, function: str, codes: Sequence[str]):
    """Loss against N (log-log), a row per straggler model (worst, random), a panel per code, a line per S.

    The dashed ``C ((S+1)/N)^3`` has one C for all panels, the smallest above every GCC point.

    `summary` is :func:`summarize_sweeps` (the saved table), `function` the one drawn, `codes` one panel
    each (absent ones skipped).

    Returns
    -------
    matplotlib.figure.Figure
    """
    sub = summary[(summary["sweep"] == "N") & (summary["function"] == function)]
    present = set(sub["scheme"])
    codes = [c for c in (canonical(c, "plot_n_sweep") for c in codes) if c in present]
    gcc_rows = sub[sub["scheme"] == "gcc"]
    C = anchor_constant(gcc_rows["mean"], ((gcc_rows["S"].to_numpy(float) + 1) / gcc_rows["N"].to_numpy(float)) ** 3)
    s_values = sorted(sub["S"].unique())
    panels = [(straggler, code) for straggler in ("worst", "random") for code in codes]
    fig, axes = figure(len(panels), ncols=2 if len(codes) % 2 == 0 else min(3, len(codes)),
                       height=1.9 * -(-len(panels) // (2 if len(codes) % 2 == 0 else min(3, len(codes)))) + 0.7)
    for ax, (straggler, code) in zip(axes, panels):
        part = sub[(sub["straggler"] == straggler) & (sub["scheme"] == code)]
        shades = scheme_shades(code, len(s_values))
        for S, color in zip(s_values, shades):
            g = part[part["S"] == S].sort_values("N")
            if len(g):
                ax.loglog(g["N"], g["mean"], "-", marker=scheme_marker(code), ms=3, color=color, label=f"S={S}")
                band(ax, g["N"], g, color)
            n = np.array(sorted(sub[sub["S"] == S]["N"].unique()), dtype=float)
            ax.loglog(n, C * ((S + 1) / n) ** 3, color=color, ls="--", lw=0.8)
        # LCC's loss grows to ~1e21: it gets its own y axis, the others share one
        own = code == "lcc"
        ax.set_title(f"{label(code)}, {straggler}" + (" (own y scale)" if own else ""))
        log_ticks(ax, sub["N"].unique())
        ax.tick_params(axis="x", labelrotation=0)
    shared = sub[(sub["scheme"] != "lcc") & (sub["mean"] > 0)]["mean"]
    for ax, (straggler, code) in zip(axes, panels):
        if code != "lcc" and len(shared):
            ax.set_ylim(shared.min() / 10, shared.max() * 10)
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel("loss")
        if ax.get_subplotspec().is_last_row() or ax is axes[-1]:
            ax.set_xlabel("N (workers)")
    legend_outside(fig, axes[:1], ncol=len(s_values) + 1,
                   title="S (light to dark); dashed: C((S+1)/N)$^3$, one C for all panels")
    fig.suptitle(f"{function}: loss against N")
    return finish(fig)


def plot_s_sweep(summary, codes: Sequence[str]):
    """Loss against S + 1 at fixed N with ``C (S+1)^3`` through GCC; a panel per (function, straggler).

    `summary` is :func:`summarize_sweeps` (the saved table); `codes` one line each.

    Returns
    -------
    matplotlib.figure.Figure
    """
    sub = summary[summary["sweep"] == "S"]
    functions = list(dict.fromkeys(sub["function"]))
    stragglers = sorted(sub["straggler"].unique(), reverse=True)
    codes = [canonical(c, "plot_s_sweep") for c in codes]
    panels = [(function, straggler) for function in functions for straggler in stragglers]
    fig, axes = figure(len(panels), ncols=min(len(stragglers), 3))
    for ax, (function, straggler) in zip(axes, panels):
        part = sub[(sub["straggler"] == straggler) & (sub["function"] == function)]
        for code in codes:
            g = part[part["scheme"] == code].sort_values("S")
            if not len(g):
                continue
            x = g["S"].to_numpy(float) + 1
            ax.loglog(x, g["mean"], "-", ms=3, **scheme_kw(code), label=label(code))
            band(ax, x, g, scheme_color(code))
        g = part[part["scheme"] == "gcc"]
        if len(g):
            x = np.sort(g["S"].unique()).astype(float) + 1
            C = anchor_constant(g["mean"], (g["S"].to_numpy(float) + 1) ** 3)
            ax.loglog(x, C * x ** 3, **REFERENCE, label="C (S+1)$^3$ through GCC")
            log_ticks(ax, x)
        N = int(part["N"].iloc[0]) if len(part) else 0
        ax.set_title(f"{function.split(' R^')[0].split(' (')[0][:16]}: {straggler}, N={N}")
        ax.set_xlabel("S + 1")
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel("loss")
    legend_outside(fig, axes)
    return finish(fig)
