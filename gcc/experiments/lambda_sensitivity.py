"""Sensitivity of GCC to its smoothing parameters (lambda_enc, lambda_dec), and the optimum against S.

App. E of [1]_ reports a loss that changes little (about 3% RMSE) when a lambda moves by a
factor 10. The ``lambda_sensitivity`` notebook evaluates GCC over a (lambda_enc, lambda_dec)
grid for several S with :func:`sensitivity_sweep`, finds the optimum per S and the loss
increase one grid step away with :func:`lambda_optimum`, and draws
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

__all__ = ["sensitivity_sweep", "lambda_optimum", "plot_lambda_sensitivity"]


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


def plot_lambda_sensitivity(mean_table, best_table, s_show: int):
    """Heat map of log10 loss over (lambda_enc, lambda_dec) at ``S = s_show``; optimal lambdas vs S.

    Parameters
    ----------
    mean_table, best_table : pandas.DataFrame
        :func:`lambda_optimum` of one sigma.
    s_show : int
        The S of the heat map.

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
    return finish(fig)
