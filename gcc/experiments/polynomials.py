"""LCC against GCC on polynomials (App. D of [1]_, Fig. 5).

LCC recovers a polynomial f of degree d exactly iff ``N - S >= (K - 1) d + 1`` [2]_; below that
threshold :class:`gcc.LagrangeCode` with ``degree=(K - 1) d`` fits a polynomial of that degree
by least squares (App. D's adaptation), while GCC approximates at every S. The
``polynomial_lcc`` notebook runs :func:`polynomial_comparison` per (degree, K, N), summarises it
with :func:`polynomial_summary` (read by :mod:`gcc.experiments.claims` for the threshold) and
draws :func:`plot_polynomial`.

Imports the core (codes, straggler models, harness, summary) and the shared experiments
modules :mod:`~gcc.experiments.problems`, :mod:`~gcc.experiments.plotting`.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, NeurIPS 2024, arXiv:2406.00300.
.. [2] Q. Yu et al., "Lagrange coded computing", AISTATS 2019.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

import gcc
from gcc.codes import label, make_many
from gcc.harness import run_trials
from gcc.summary import summarize

from .plotting import band, finish, scheme_color
from .problems import Polynomial, child_seed, scalar_inputs

__all__ = ["polynomial_comparison", "polynomial_summary", "plot_polynomial"]


def polynomial_comparison(degree: int, n_inputs: int, n_workers: int, s_grid: Sequence[int], *,
                          trials: int = 20, seed: int = 0, points: str = "chebyshev"):
    """Loss against the number of stragglers for LCC and GCC on a fixed polynomial.

    Parameters
    ----------
    degree : int
        Degree of f (:class:`~gcc.experiments.problems.Polynomial` with seed `seed`).
    n_inputs, n_workers : int
        K and N. LCC decodes with a polynomial of degree ``(K - 1) * degree``: exact iff
        ``N - S >= (K - 1) deg + 1``, least squares of that degree below the threshold.
    s_grid : sequence of int
        Values ``S > N - 2`` are skipped.
    trials : int
        Random straggler sets per S (20 in App. D), identical for both codes.
    seed : int
        Seeds f, the data (``scalar_inputs(K, -1, 1)``) and the straggler draws
        (``child_seed(seed, degree, S)``).
    points : {"chebyshev", "equispaced"}

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, S, trial): ``scheme, trial, loss, function, degree, N, S, K, scale,
        lcc_exact`` (``scale``: ``mean_k f(x_k)^2``, the loss of the zero estimator;
        ``lcc_exact``: S is within LCC's threshold).
    """
    import pandas as pd

    f = Polynomial(degree, seed=seed)
    X = scalar_inputs(n_inputs, -1.0, 1.0, seed=seed)
    K, N = int(n_inputs), int(n_workers)
    # degree reaches LCC only (make_many passes each code the parameters it declares).
    codes = make_many(["gcc", "lcc"], K, N, points=points, degree=(K - 1) * int(degree))
    # The loss of the zero estimator, so that "exact" can be judged relative to f's size.
    scale = float(np.mean(np.asarray(f(X), dtype=float) ** 2))
    frames = []
    for S in s_grid:
        if N - S < 2:
            continue
        df = run_trials(codes, f, X, gcc.FixedCount(int(S)), trials=int(trials), seed=child_seed(seed, degree, S))
        frames.append(df[["scheme", "trial", "loss"]].assign(
            function=repr(f), degree=int(degree), N=N, S=int(S), K=K, scale=scale,
            lcc_exact=bool(N - S >= (K - 1) * degree + 1)))
    return pd.concat(frames, ignore_index=True)


def polynomial_summary(df, exact_rtol: float = 1e-20, level: float = 0.95):
    """Per (degree, scheme, S): mean loss with its interval, max over trials, exactness tolerance.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`polynomial_comparison` results (with its ``scale`` column).
    exact_rtol : float
        A set counts as recovered exactly when its loss is at most
        ``exact_rtol * scale`` (1e-20: a relative RMS error of 1e-10, above the
        float64 round-off of LCC's interpolation at these degrees, ~1e-12, and far
        below GCC's approximation error).
    level : float
        Confidence level of the interval.

    Returns
    -------
    pandas.DataFrame
        ``function, degree, scheme, N, K, S``, the :func:`gcc.summary.summarize` columns,
        ``max_loss, exact_tol``.
    """
    out = summarize(df, "loss", by=["function", "degree", "scheme", "N", "K", "S"], level=level)
    mx = df.groupby(["degree", "scheme", "S"])["loss"].max().rename("max_loss").reset_index()
    out = out.merge(mx, on=["degree", "scheme", "S"])
    scale = df.groupby("degree")["scale"].first()
    out["exact_tol"] = [exact_rtol * float(scale[d]) for d in out["degree"]]
    return out


def plot_polynomial(summary):
    """Loss against S for GCC and LCC, one panel per degree, with LCC's threshold marked.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`polynomial_summary` (the saved ``summary`` table).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    degrees = sorted(summary["degree"].unique())
    fig, axes = plt.subplots(1, len(degrees), figsize=(5 * len(degrees), 3.6), squeeze=False)
    for ax, degree in zip(axes[0], degrees):
        part = summary[summary["degree"] == degree]
        for code in ("gcc", "lcc"):
            g = part[part["scheme"] == code].sort_values("S")
            y = np.clip(g["mean"].to_numpy(float), 1e-32, None)
            ax.semilogy(g["S"], y, "o-", ms=3, color=scheme_color(code), label=label(code))
            band(ax, g["S"], g, scheme_color(code))
        N, K = int(part["N"].iloc[0]), int(part["K"].iloc[0])
        s_star = N - (K - 1) * int(degree) - 1
        if s_star >= 0:
            ax.axvline(s_star + 0.5, color="k", ls="--", lw=0.8, label=f"LCC threshold: S <= {s_star}")
        ax.set_title(f"deg f = {degree}, K = {K}, N = {N}")
        ax.set_xlabel("S (stragglers)")
        ax.set_ylabel("loss (95% CI)")
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
    return finish(fig)
