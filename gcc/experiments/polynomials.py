"""LCC against GCC on polynomials (App. D of [1]_, Fig. 5).

LCC recovers a polynomial f of degree d exactly iff ``N - S >= (K - 1) d + 1`` [2]_; below,
:class:`gcc.LagrangeCode` with ``degree=(K - 1) d`` fits by least squares (App. D's adaptation).

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, NeurIPS 2024, arXiv:2406.00300.
.. [2] Q. Yu et al., "Lagrange coded computing", AISTATS 2019.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

import gcc
from gcc.codes import label, make_many
from gcc.harness import run_trials
from gcc.summary import summarize

from .plotting import REFERENCE, figure, legend_outside, scheme_kw, band, finish, scheme_color
from .problems import Polynomial, child_seed, scalar_inputs
from .verdicts import verdict as threshold_verdict

__all__ = ["EXACT_RTOL", "polynomial_comparisons", "polynomial_summary", "exact_recovery",
           "exactness_view", "quoted_values", "plot_polynomial"]

#: A set is recovered exactly when its loss is at most ``EXACT_RTOL`` times the mean of f(x_k)^2 (a
#: relative RMS error of 1e-11): above LCC's round-off within its threshold (3e-12 at deg f = 15),
#: below its worst error one straggler past it (1.1e-10; default profile, 2026-12-01).
EXACT_RTOL = 1e-22


def polynomial_comparisons(configs: Sequence[Mapping], *, trials: int = 20, seed: int = 0):
    """Loss against the number of stragglers for LCC and GCC on fixed polynomials, one per configuration.

    Parameters
    ----------
    configs : sequence of mapping
        ``degree`` (of f: :class:`~gcc.experiments.problems.Polynomial` with seed `seed`), ``n_inputs``
        and ``n_workers`` (K and N; LCC decodes with a polynomial of degree ``(K - 1) * degree``) and
        ``s_grid`` (values ``S > N - 2`` are skipped).
    trials : int
        Random straggler sets per S, identical for both codes.
    seed : int
        Seeds f, the data (``scalar_inputs(K, -1, 1)``) and the draws (``child_seed(seed, degree, S)``).

    Returns
    -------
    pandas.DataFrame
        One row per (configuration, scheme, S, trial), in order: ``scheme, trial, loss, function, degree, N, S,
        K, scale`` (``mean_k f(x_k)^2``), ``lcc_exact`` (S within LCC's threshold).
    """
    frames = []
    for c in configs:
        degree, K, N = int(c["degree"]), int(c["n_inputs"]), int(c["n_workers"])
        f = Polynomial(degree, seed=seed)
        X = scalar_inputs(K, -1.0, 1.0, seed=seed)
        codes = make_many(["gcc", "lcc"], K, N, degree=(K - 1) * degree)
        scale = float(np.mean(np.asarray(f(X), dtype=float) ** 2))
        for S in c["s_grid"]:
            if N - S < 2:
                continue
            df = run_trials(codes, f, X, gcc.FixedCount(int(S)), trials=int(trials), seed=child_seed(seed, degree, S))
            frames.append(df[["scheme", "trial", "loss"]].assign(
                function=repr(f), degree=degree, N=N, S=int(S), K=K, scale=scale,
                lcc_exact=bool(N - S >= (K - 1) * degree + 1)))
    return pd.concat(frames, ignore_index=True)


def polynomial_summary(df):
    """Per (degree, scheme, S): mean loss with its interval, max over trials, exactness tolerance.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`polynomial_comparisons` results (with its ``scale`` column).

    Returns
    -------
    pandas.DataFrame
        ``function, degree, scheme, N, K, S``, the :func:`gcc.summary.summarize` columns,
        ``max_loss, exact_tol`` (a set is exact when its loss is at most :data:`EXACT_RTOL` ``* scale``).
    """
    out = summarize(df, "loss", by=["function", "degree", "scheme", "N", "K", "S"])
    mx = df.groupby(["degree", "scheme", "S"])["loss"].max().rename("max_loss").reset_index()
    out = out.merge(mx, on=["degree", "scheme", "S"])
    scale = df.groupby("degree")["scale"].first()
    out["exact_tol"] = [EXACT_RTOL * float(scale[d]) for d in out["degree"]]
    return out


def exact_recovery(summary):
    """Per degree: the largest S up to which every LCC trial is exact, beside LCC's threshold.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`polynomial_summary` (the saved ``summary`` table).

    Returns
    -------
    pandas.DataFrame
        ``degree, function, N, K, threshold`` (``N - (K-1) deg f - 1``), ``exact_up_to`` (the largest S
        up to which every S of the grid is exact; -1 if S = 0 is not), ``s_max``, ``cells``, ``jump``
        (largest loss at the first S past the threshold over that at the last S within it) and
        ``verdict`` (:func:`gcc.experiments.verdicts.verdict`, ``sense="lower"``, ``delta=0``).
    """
    rows = []
    for degree, g in summary[summary["scheme"] == "lcc"].groupby("degree"):
        N, K = int(g["N"].iloc[0]), int(g["K"].iloc[0])
        threshold = N - (K - 1) * int(degree) - 1
        within, past = g[g["S"] <= threshold], g[g["S"] > threshold]
        jump = np.nan
        if len(within) and len(past):
            inside = float(within.loc[within["S"].idxmax(), "max_loss"])
            outside = float(past.loc[past["S"].idxmin(), "max_loss"])
            jump = outside / inside if inside > 0 else np.nan
        by_s = g.sort_values("S")
        ok = (by_s["max_loss"] <= by_s["exact_tol"]).to_numpy()
        n = len(ok) if ok.all() else int(np.argmin(ok))  # exact at the first n values of S
        exact_up_to = int(by_s["S"].iloc[n - 1]) if n else -1
        rows.append({"degree": int(degree), "function": str(g["function"].iloc[0]), "N": N, "K": K,
                     "threshold": threshold, "exact_up_to": exact_up_to,
                     "s_max": int(g["S"].max()), "cells": len(g), "jump": jump,
                     "verdict": threshold_verdict(threshold, exact_up_to, exact_up_to, sense="lower", delta=0.0)})
    return pd.DataFrame(rows, columns=["degree", "function", "N", "K", "threshold", "exact_up_to", "s_max", "cells",
                                       "jump", "verdict"])


def exactness_view(summary):
    """Mean loss and exactness (every trial's loss <= ``exact_tol``) per (degree, N, K, S) and scheme, for the page."""
    view = summary.assign(exact=summary["max_loss"] <= summary["exact_tol"])
    return view.pivot_table(index=["degree", "N", "K", "S"], columns="scheme", values=["mean", "exact"],
                            aggfunc="first")


def quoted_values(summary) -> list[dict]:
    """``deg<d>_threshold``, ``_exact_up_to``, ``_verdict``, ``_jump`` (:func:`exact_recovery`)."""
    out = []
    for row in exact_recovery(summary).itertuples(index=False):
        where = f"deg f = {row.degree}, K = {row.K}, N = {row.N}"
        out += [{"key": f"deg{row.degree}_threshold", "number": int(row.threshold),
                 "note": f"{where}: largest S within LCC's threshold"},
                {"key": f"deg{row.degree}_exact_up_to", "number": int(row.exact_up_to),
                 "note": f"{where}: largest S with exact recovery by LCC"},
                {"key": f"deg{row.degree}_verdict", "number": row.verdict,
                 "note": f"{where}: exact range against the threshold"}]
        if np.isfinite(row.jump):
            out.append({"key": f"deg{row.degree}_jump", "number": float(row.jump), "digits": 2,
                        "note": f"{where}: largest loss one tested S past the threshold over the largest within it"})
    return out


def plot_polynomial(summary):
    """Loss against S for GCC and LCC, a panel per degree, LCC's threshold marked.

    Returns
    -------
    matplotlib.figure.Figure
    """
    degrees = sorted(summary["degree"].unique())
    fig, axes = figure(len(degrees))
    for ax, degree in zip(axes, degrees):
        part = summary[summary["degree"] == degree]
        for code in ("gcc", "lcc"):
            g = part[part["scheme"] == code].sort_values("S")
            y = np.clip(g["mean"].to_numpy(float), 1e-32, None)
            ax.semilogy(g["S"], y, "-", ms=3, **scheme_kw(code), label=label(code))
            band(ax, g["S"], g, scheme_color(code))
        N, K = int(part["N"].iloc[0]), int(part["K"].iloc[0])
        s_star = N - (K - 1) * int(degree) - 1
        if s_star >= 0:
            ax.axvline(s_star + 0.5, **REFERENCE, label="LCC's threshold")
            ax.text(s_star + 0.5, 0.97, f" S <= {s_star}", transform=ax.get_xaxis_transform(), va="top",
                    fontsize=9, color=REFERENCE["color"])
        ax.set_title(f"deg f = {degree}, K = {K}, N = {N}")
        ax.set_xlabel("S (stragglers)")
        if ax is axes[0]:
            ax.set_ylabel("loss (95% CI)")
    legend_outside(fig, axes[:1])
    return finish(fig)
