"""Sensitivity of GCC to its smoothing parameters (lambda_enc, lambda_dec), and the optimum against S.

App. E of [1]_ reports a loss that changes little (about 3% RMSE) when a lambda moves by a
factor 10. The ``lambda_sensitivity`` notebook evaluates GCC over a (lambda_enc, lambda_dec)
grid (:func:`decade_grid`) for several S and noise levels with :func:`sensitivity_study`
(:func:`sensitivity_sweep`, then :func:`lambda_optimum`: the optimum per S and the loss increase
one grid step away), reads App. E's two statements off the optimum with :func:`optimum_spans`
and :func:`rmse_increase` (the claims table's verdicts, and :func:`quoted_values`), and draws
:func:`plot_lambda_sensitivity`.

Imports the core (codes, straggler models) and the shared experiments modules
:mod:`~gcc.experiments.problems`, :mod:`~gcc.experiments.plotting`.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, NeurIPS 2024, arXiv:2406.00300.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

import gcc
from gcc.codes import make

from .plotting import finish
from .problems import as_matrix, child_seed, exact_noisy_loss

__all__ = ["decade_grid", "sensitivity_sweep", "lambda_optimum", "sensitivity_study", "optimum_spans",
           "rmse_increase", "quoted_values", "plot_lambda_sensitivity"]


def decade_grid(exponents: Sequence[int]) -> np.ndarray:
    """The lambda grid of App. E's study: 0 and every decade ``10^low, ..., 10^high``.

    Examples
    --------
    >>> from gcc.experiments.lambda_sensitivity import decade_grid
    >>> decade_grid([-2, 0]).tolist()
    [0.0, 0.01, 0.1, 1.0]
    """
    low, high = exponents
    return np.concatenate([[0.0], np.logspace(low, high, high - low + 1)])


def sensitivity_sweep(f, X, n_workers: int, s_values: Sequence[int], lam_enc_grid: Sequence[float],
                      lam_dec_grid: Sequence[float], *, sigma: float = 0.0, trials: int = 10, seed: int = 0,
                      points: str = "chebyshev", function: str = "f"):
    """GCC loss over a (lambda_enc, lambda_dec) grid, for several S.

    Parameters
    ----------
    f : callable
        Vectorised ``(n, *in) -> (n, *out)``.
    X : ndarray, shape (K, *in)
    n_workers : int
    s_values : sequence of int
    lam_enc_grid, lam_dec_grid : sequences of float
    sigma : float
        Worker noise (averaged exactly, :func:`~gcc.experiments.problems.exact_noisy_loss`).
    trials : int
        Random straggler sets per S (``child_seed(seed, N, S)``), shared by every
        (lambda_enc, lambda_dec).
    seed : int
    points : {"chebyshev", "equispaced"}
    function : str
        Label stored in the ``function`` column.

    Returns
    -------
    pandas.DataFrame
        One row per (S, lambda_dec, trial, lambda_enc): ``function, N, S, K, sigma,
        lam_enc, lam_dec, trial, loss, bias2, variance``.

    Notes
    -----
    The decoder matrix depends on (lambda_dec, F) only and the worker outputs on
    lambda_enc only, so each is built once and combined.
    """
    import pandas as pd

    K, N = len(X), int(n_workers)
    true = as_matrix(f(X))
    outputs = {float(le): as_matrix(f(make("gcc", K, N, lam_enc=float(le), points=points).encode(X)))
               for le in lam_enc_grid}
    rows = []
    for S in s_values:
        masks = gcc.FixedCount(int(S)).sample_many(np.random.default_rng(child_seed(seed, N, S)), N, int(trials))
        for ld in lam_dec_grid:
            code = make("gcc", K, N, lam_dec=float(ld), points=points)
            for t, mask in enumerate(masks):
                received = np.flatnonzero(mask)
                D = np.asarray(code.decoder_matrix(received), dtype=float)
                for le, Y in outputs.items():
                    loss, b2, var = exact_noisy_loss(D, Y[received], true, sigma)
                    rows.append({"function": function, "N": N, "S": int(S), "K": K, "sigma": sigma,
                                 "lam_enc": le, "lam_dec": float(ld), "trial": t,
                                 "loss": loss, "bias2": b2, "variance": var})
    return pd.DataFrame(rows)


def lambda_optimum(sens):
    """Per S: the grid optimum and the loss increase when one lambda moves one grid step.

    Parameters
    ----------
    sens : pandas.DataFrame
        :func:`sensitivity_sweep` results (one sigma).

    Returns
    -------
    mean_table, best_table : pandas.DataFrame
        ``mean_table``: mean loss per (S, lam_enc, lam_dec). ``best_table``: per S
        the best pair, its loss, the loss at (0, 0), and ``worst_increase_x10``: the
        largest relative loss increase over the four grid neighbours of the optimum
        (one step of lam_enc or of lam_dec; on a grid of decades a step is a
        factor 10, and 0 neighbours the smallest positive value). App. E reports
        about 3% RMSE for a factor 10.
    """
    import pandas as pd

    mean_table = sens.groupby(["function", "N", "S", "sigma", "lam_enc", "lam_dec"], as_index=False)["loss"].mean()
    enc_values = np.sort(mean_table["lam_enc"].unique())
    dec_values = np.sort(mean_table["lam_dec"].unique())
    rows = []
    for S, g in mean_table.groupby("S"):
        best = g.loc[g["loss"].idxmin()]
        le, ld, loss = float(best["lam_enc"]), float(best["lam_dec"]), float(best["loss"])
        i, j = int(np.searchsorted(enc_values, le)), int(np.searchsorted(dec_values, ld))
        neighbours = [(enc_values[k], ld) for k in (i - 1, i + 1) if 0 <= k < len(enc_values)]
        neighbours += [(le, dec_values[k]) for k in (j - 1, j + 1) if 0 <= k < len(dec_values)]
        increases = []
        for le2, ld2 in neighbours:
            hit = g[(g["lam_enc"] == le2) & (g["lam_dec"] == ld2)]
            if len(hit):
                increases.append(float(hit["loss"].iloc[0]) / loss - 1.0)
        zero = g[(g["lam_enc"] == 0) & (g["lam_dec"] == 0)]
        rows.append({"S": int(S), "lam_enc": le, "lam_dec": ld, "loss": loss,
                     "loss_at_zero": float(zero["loss"].iloc[0]) if len(zero) else np.nan,
                     "worst_increase_x10": max(increases) if increases else np.nan})
    return mean_table, pd.DataFrame(rows)


def sensitivity_study(f, X, n_workers: int, s_values: Sequence[int], lam_grid: Sequence[float],
                      sigmas: Sequence[float], *, trials: int = 10, seed: int = 0, points: str = "chebyshev",
                      function: str = "f"):
    """:func:`sensitivity_sweep` over `lam_grid` for both lambdas at every noise level, then :func:`lambda_optimum`.

    Parameters
    ----------
    f, X, n_workers, s_values, trials, seed, points, function
        As in :func:`sensitivity_sweep`.
    lam_grid : sequence of float
        The grid of lambda_enc and of lambda_dec.
    sigmas : sequence of float
        Worker noise levels.

    Returns
    -------
    mean_table, best_table : pandas.DataFrame
        :func:`lambda_optimum`'s tables of every sigma (ascending), ``best_table`` with a
        ``sigma`` column.
    """
    import pandas as pd

    sens = pd.concat([sensitivity_sweep(f, X, n_workers, s_values, lam_grid, lam_grid, sigma=sigma, trials=trials,
                                        seed=seed, points=points, function=function) for sigma in sigmas],
                     ignore_index=True)
    means, bests = [], []
    for sigma, part in sens.groupby("sigma"):
        mean, best = lambda_optimum(part)
        means.append(mean)
        bests.append(best.assign(sigma=sigma))
    return pd.concat(means, ignore_index=True), pd.concat(bests, ignore_index=True)


def optimum_spans(best_table):
    """How far the grid-optimal lambdas move over S > 0: the span in decades, per sigma and lambda.

    A lambda of 0 counts as 1e-11 (the step below the grid's 1e-10), or as the decade below the
    smallest positive optimum of its column where that is lower.

    Parameters
    ----------
    best_table : pandas.DataFrame
        :func:`sensitivity_study`'s ``best_table``.

    Returns
    -------
    pandas.DataFrame
        ``sigma, param`` (``"lam_enc"`` or ``"lam_dec"``), ``span`` (decades), ``n`` (values of S).
    """
    import pandas as pd

    rows = []
    for sigma, g in best_table.groupby("sigma"):
        for param in ("lam_enc", "lam_dec"):
            lam = g[g["S"] > 0][param].to_numpy(float)
            positive = lam[lam > 0]
            floor = np.log10(positive.min()) - 1 if positive.size else -11.0
            steps = np.where(lam > 0, np.log10(np.where(lam > 0, lam, 1.0)), min(floor, -11.0))
            rows.append({"sigma": sigma, "param": param, "span": float(np.round(steps.max() - steps.min(), 6)),
                         "n": len(lam)})
    return pd.DataFrame(rows, columns=["sigma", "param", "span", "n"])


def rmse_increase(best_table):
    """The largest RMSE increase one decade from the optimum, in percent, per row of `best_table`.

    ``100 (sqrt(1 + worst_increase_x10) - 1)``: the loss is a squared error, App. E reports RMSE.

    Returns
    -------
    numpy.ndarray, shape (rows,)
    """
    return 100.0 * (np.sqrt(1.0 + best_table["worst_increase_x10"].to_numpy(float)) - 1.0)


def quoted_values(best_table) -> list[dict]:
    """App. E's two statements as measured, per noise level, as keyword arguments of ``RunContext.value``.

    ``span_<param>_sigma<i>`` (decades the optimal lambda moves over S, :func:`optimum_spans`) and
    ``rmse_x10_max_sigma<i>`` (the largest RMSE increase in percent one decade from the optimum,
    :func:`rmse_increase`), ``i`` the index of the noise level in ascending order.
    """
    out = []
    spans = optimum_spans(best_table)
    for i, (sigma, g) in enumerate(best_table.groupby("sigma")):
        for row in spans[spans["sigma"] == sigma].itertuples(index=False):
            out.append({"key": f"span_{row.param}_sigma{i}", "number": row.span, "digits": 3,
                        "note": f"sigma = {sigma:g}: span of the optimal {row.param} over S (decades)"})
        pct = rmse_increase(g)
        if np.isfinite(pct).any():
            out.append({"key": f"rmse_x10_max_sigma{i}", "number": float(np.nanmax(pct)), "unit": "%", "digits": 2,
                        "note": f"sigma = {sigma:g}: largest RMSE increase one decade from the optimum"})
    return out


def plot_lambda_sensitivity(mean_table, best_table, s_show: int, title: str | None = None):
    """Heat map of log10 loss over (lambda_enc, lambda_dec) at ``S = s_show``; optimal lambdas vs S.

    Parameters
    ----------
    mean_table, best_table : pandas.DataFrame
        :func:`lambda_optimum` of one sigma.
    s_show : int
        The S of the heat map.
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    part = mean_table[mean_table["S"] == s_show]
    grid = part.pivot(index="lam_enc", columns="lam_dec", values="loss")
    im = axes[0].imshow(np.log10(grid.to_numpy()), origin="lower", aspect="auto", cmap="viridis")
    axes[0].set_xticks(range(grid.shape[1]), [f"{v:.0e}" if v else "0" for v in grid.columns], rotation=60,
                       fontsize=7)
    axes[0].set_yticks(range(grid.shape[0]), [f"{v:.0e}" if v else "0" for v in grid.index], fontsize=7)
    axes[0].set_xlabel("lambda_dec")
    axes[0].set_ylabel("lambda_enc")
    axes[0].set_title(f"log10 loss, S = {s_show}")
    fig.colorbar(im, ax=axes[0])
    ax = axes[1]
    b = best_table.sort_values("S")
    ax.semilogy(b["S"], np.clip(b["lam_enc"], 1e-12, None), "o-", label="best lambda_enc (0 shown at 1e-12)")
    ax.semilogy(b["S"], np.clip(b["lam_dec"], 1e-12, None), "s-", label="best lambda_dec (0 shown at 1e-12)")
    ax.set_xlabel("S")
    ax.set_ylabel("optimal lambda (grid)")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10, y=1.02)
    return finish(fig)
