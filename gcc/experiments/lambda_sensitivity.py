"""Sensitivity of GCC to its smoothing parameters (lambda_enc, lambda_dec), the optimum against S (App. E).

"The optimal lambda" is the *largest* grid value whose loss, minimised over the other lambda, is within
:data:`TOLERANCE` of the grid minimum (the plain arg-min wanders over flat plateaus); lambda = 0 is
the boundary of the domain, not an edge of the grid.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

import gcc
from gcc.codes import make

from gcc.validation import Options, validate

from .plotting import figure, finish
from .problems import as_matrix, child_seed, exact_noisy_loss

__all__ = ["TOLERANCE", "decade_grid", "sensitivity_sweep", "lambda_optimum", "sensitivity_study", "check_interior",
           "optimum_spans", "plateau_table", "rmse_increase", "quoted_values", "plot_lambda_sensitivity"]

#: relative loss above the grid minimum within which a lambda counts as optimal (0.1%)
TOLERANCE = 1e-3


def decade_grid(exponents: Sequence[int]) -> np.ndarray:
    """The lambda grid of App. E's study: 0 and every decade ``10^low, ..., 10^high``."""
    low, high = exponents
    return np.concatenate([[0.0], np.logspace(low, high, high - low + 1)])


def sensitivity_sweep(f, X, n_workers: int, s_values: Sequence[int], lam_grid: Sequence[float], *,
                      sigma: float = 0.0, trials: int = 10, seed: int = 0, function: str = "f"):
    """GCC loss over `lam_grid` for both lambdas, for several S, noise `sigma` averaged exactly.

    `f` is vectorised ``(n, *in) -> (n, *out)``, `X` of shape (K, *in); `trials` random straggler sets
    per S (``child_seed(seed, N, S)``) are shared by the grid; `function` labels the rows.

    Returns
    -------
    pandas.DataFrame
        One row per (S, lambda_dec, trial, lambda_enc): ``function, N, S, K, sigma, lam_enc, lam_dec,
        trial, loss, bias2, variance``.
    """
    K, N = len(X), int(n_workers)
    true = as_matrix(f(X))
    outputs = {float(le): as_matrix(f(make("gcc", K, N, lam_enc=float(le)).encode(X)))
               for le in lam_grid}
    rows = []
    for S in s_values:
        masks = gcc.FixedCount(int(S)).sample_many(np.random.default_rng(child_seed(seed, N, S)), N, int(trials))
        for ld in lam_grid:
            code = make("gcc", K, N, lam_dec=float(ld))
            for t, mask in enumerate(masks):
                received = np.flatnonzero(mask)
                D = np.asarray(code.decoder_matrix(received), dtype=float)
                for le, Y in outputs.items():
                    loss, b2, var = exact_noisy_loss(D, Y[received], true, sigma)
                    rows.append({"function": function, "N": N, "S": int(S), "K": K, "sigma": sigma,
                                 "lam_enc": le, "lam_dec": float(ld), "trial": t,
                                 "loss": loss, "bias2": b2, "variance": var})
    return pd.DataFrame(rows)


def _profile(g, param: str):
    """The loss minimised over the other lambda, per value of `param` (ascending)."""
    return g.groupby(param)["loss"].min().sort_index()


def _optimal(profile, loss: float) -> float:
    """The largest lambda of `profile` whose loss is within ``(1 + TOLERANCE)`` of `loss`."""
    return float(profile.index[profile.to_numpy() <= loss * (1.0 + TOLERANCE)].max())


def lambda_optimum(sens):
    """Per S: the grid optimum, the optimal lambdas within :data:`TOLERANCE`, and the loss one grid step away.

    `sens` is :func:`sensitivity_sweep` of one sigma.

    Returns
    -------
    mean_table, best_table : pandas.DataFrame
        ``mean_table``: mean loss per (S, lam_enc, lam_dec). ``best_table``, per S: the arg-min
        ``lam_enc, lam_dec``, its ``loss``, ``loss_at_zero``, ``worst_increase_x10`` (the largest
        relative increase over the four grid neighbours of the arg-min), ``opt_lam_enc, opt_lam_dec``
        (the optimal lambdas within :data:`TOLERANCE`) and ``edge`` (those four columns on an edge of the
        grid, ``""`` when none).
    """
    mean_table = sens.groupby(["function", "N", "S", "sigma", "lam_enc", "lam_dec"], as_index=False)["loss"].mean()
    enc_values = np.sort(mean_table["lam_enc"].unique())
    dec_values = np.sort(mean_table["lam_dec"].unique())
    # a grid's edges: its top, and its bottom unless that is 0 (the domain's boundary)
    edges = {name: {g[-1]} | ({g[0]} if g[0] > 0 else set()) for name, g in (("lam_enc", enc_values),
                                                                              ("lam_dec", dec_values))}
    rows = []
    for S, g in mean_table.groupby("S"):
        best = g.loc[g["loss"].idxmin()]
        le, ld, loss = float(best["lam_enc"]), float(best["lam_dec"]), float(best["loss"])
        grid = g.pivot_table(index="lam_enc", columns="lam_dec", values="loss")
        grid = grid.reindex(index=enc_values, columns=dec_values)
        i, j = int(np.searchsorted(enc_values, le)), int(np.searchsorted(dec_values, ld))
        near = [grid.iloc[k, j] for k in (i - 1, i + 1) if 0 <= k < len(enc_values)]
        near += [grid.iloc[i, k] for k in (j - 1, j + 1) if 0 <= k < len(dec_values)]
        increases = [float(v) / loss - 1.0 for v in near if v == v]  # a missing neighbour is NaN
        zero = grid.loc[0.0, 0.0] if 0.0 in grid.index and 0.0 in grid.columns else np.nan
        row = {"S": int(S), "lam_enc": le, "lam_dec": ld, "loss": loss, "loss_at_zero": float(zero),
               "worst_increase_x10": max(increases) if increases else np.nan}
        for param in ("lam_enc", "lam_dec"):
            row[f"opt_{param}"] = _optimal(_profile(g, param), loss)
        row["edge"] = ",".join(col for col in ("lam_enc", "lam_dec", "opt_lam_enc", "opt_lam_dec")
                               if row[col] in edges[col.removeprefix("opt_")])
        rows.append(row)
    return mean_table, pd.DataFrame(rows)


def check_interior(best_table) -> None:
    """Raise ValueError, naming (sigma, S) and columns, if a chosen lambda of `best_table` is on a grid edge.

    `best_table` is :func:`lambda_optimum`'s or :func:`sensitivity_study`'s; a choice of 0 is no edge.
    """
    edge = best_table["edge"].map(lambda e: e if isinstance(e, str) else "")   # read back from CSV: NaN
    if (edge != "").any():
        where = "; ".join(f"sigma={r.get('sigma', '-')}, S={r['S']}: {e}"
                          for (_, r), e in zip(best_table[edge != ""].iterrows(), edge[edge != ""]))
        raise ValueError(f"check_interior: a chosen lambda sits on an edge of the grid ({where}); extend the grid "
                         "(the notebook's lam_exponents)")


def sensitivity_study(f, X, n_workers: int, s_values: Sequence[int], lam_grid: Sequence[float],
                      sigmas: Sequence[float], *, trials: int = 10, seed: int = 0, function: str = "f"):
    """:func:`sensitivity_sweep` over `lam_grid` for both lambdas at every noise level, then :func:`lambda_optimum`.

    `lam_grid` is the grid of both lambdas, `sigmas` the noise levels; the rest as in
    :func:`sensitivity_sweep`.

    Returns
    -------
    mean_table, best_table : pandas.DataFrame
        :func:`lambda_optimum`'s tables of every sigma (ascending), ``best_table`` with ``sigma``.
    """
    sens = pd.concat([sensitivity_sweep(f, X, n_workers, s_values, lam_grid, sigma=sigma, trials=trials,
                                        seed=seed, function=function) for sigma in sigmas],
                     ignore_index=True)
    means, bests = [], []
    for sigma, part in sens.groupby("sigma"):
        mean, best = lambda_optimum(part)
        means.append(mean)
        bests.append(best.assign(sigma=sigma))
    return pd.concat(means, ignore_index=True), pd.concat(bests, ignore_index=True)


def optimum_spans(best_table, chosen: str = "tolerance"):
    """How far the optimal lambdas move over S > 0: the span in decades, per sigma and lambda.

    A lambda of 0 counts as 1e-11, or as the decade below the smallest positive optimum if lower.

    `best_table` is :func:`sensitivity_study`'s; `chosen` is ``"tolerance"`` (the book's optimum,
    ``opt_lam_*`` where present) or ``"argmin"`` (``lam_*``).

    Returns
    -------
    pandas.DataFrame
        ``sigma, param`` (``"lam_enc"`` or ``"lam_dec"``), ``span`` (decades), ``n`` (values of S),
        ``low``, ``high`` (the smallest and largest optimum over S > 0).
    """
    validate(chosen, Options(("tolerance", "argmin")), "chosen", "optimum_spans")
    rows = []
    for sigma, g in best_table.groupby("sigma"):
        for param in ("lam_enc", "lam_dec"):
            col = f"opt_{param}" if chosen == "tolerance" and f"opt_{param}" in g else param
            lam = g[g["S"] > 0][col].to_numpy(float)
            positive = lam[lam > 0]
            floor = np.log10(positive.min()) - 1 if positive.size else -11.0
            steps = np.where(lam > 0, np.log10(np.where(lam > 0, lam, 1.0)), min(floor, -11.0))
            rows.append({"sigma": sigma, "param": param, "span": float(np.round(steps.max() - steps.min(), 6)),
                         "n": len(lam), "low": float(lam.min()), "high": float(lam.max())})
    return pd.DataFrame(rows, columns=["sigma", "param", "span", "n", "low", "high"])


def plateau_table(mean_table, s_values: Sequence[int]):
    """How flat the loss is around each optimum: what lambda = 0 would cost, per (sigma, S, lambda).

    `mean_table` is :func:`sensitivity_study`'s; `s_values` the S to report.

    Returns
    -------
    pandas.DataFrame
        ``sigma, S, param, argmin``, ``optimal`` (within :data:`TOLERANCE`), ``loss_min``, ``loss_at_0``
        (minimised over the other lambda) and ``cost_of_0_pct`` = ``100 (loss_at_0 / loss_min - 1)``.
    """
    rows = []
    for (sigma, S), g in mean_table[mean_table["S"].isin(list(s_values))].groupby(["sigma", "S"]):
        loss_min = float(g["loss"].min())
        for param in ("lam_enc", "lam_dec"):
            profile = _profile(g, param)
            zero = float(profile.loc[0.0]) if 0.0 in profile.index else np.nan
            rows.append({"sigma": sigma, "S": int(S), "param": param, "argmin": float(profile.idxmin()),
                         "optimal": _optimal(profile, loss_min),
                         "loss_min": loss_min, "loss_at_0": zero, "cost_of_0_pct": 100.0 * (zero / loss_min - 1.0)})
    return pd.DataFrame(rows, columns=["sigma", "S", "param", "argmin", "optimal", "loss_min", "loss_at_0",
                                       "cost_of_0_pct"])


def rmse_increase(best_table):
    """``100 (sqrt(1 + worst_increase_x10) - 1)``: the largest RMSE rise one decade from the optimum, per row.

    Returns
    -------
    numpy.ndarray, shape (rows,)
    """
    return 100.0 * (np.sqrt(1.0 + best_table["worst_increase_x10"].to_numpy(float)) - 1.0)


def quoted_values(best_table, mean_table, s_show: int) -> list[dict]:
    """App. E's two statements as measured, per noise level, as keyword arguments of ``RunContext.value``.

    ``tolerance_pct``; per noise level ``i`` (ascending): ``span_<param>_sigma<i>``,
    ``span_argmin_<param>_sigma<i>`` (:func:`optimum_spans`) and ``rmse_x10_max_sigma<i>``
    (:func:`rmse_increase`); :func:`plateau_table`'s cost of lambda = 0 at ``S = s_show`` and at the
    largest S (``<param>_show|smax_sigma<i>_cost_of_0_pct``, ``s_show``, ``s_smax``). The tables
    the page shows hold the rest.
    """
    out = [{"key": "tolerance_pct", "number": 100 * TOLERANCE, "unit": "%", "digits": 2,
            "note": "a lambda is optimal when its loss is within this of the grid minimum"}]
    spans = optimum_spans(best_table)
    argmin = optimum_spans(best_table, chosen="argmin")
    sigmas = sorted(best_table["sigma"].unique())
    for i, (sigma, g) in enumerate(best_table.groupby("sigma")):
        for row, row0 in zip(spans[spans["sigma"] == sigma].itertuples(index=False),
                             argmin[argmin["sigma"] == sigma].itertuples(index=False)):
            out.append({"key": f"span_{row.param}_sigma{i}", "number": row.span, "digits": 3,
                        "note": f"sigma = {sigma:g}: span of the optimal {row.param} over S > 0 (decades)"})
            out.append({"key": f"span_argmin_{row.param}_sigma{i}", "number": row0.span, "digits": 3,
                        "note": f"sigma = {sigma:g}: span of the arg-min {row.param} over S > 0 (decades)"})
        pct = rmse_increase(g)
        if np.isfinite(pct).any():
            out.append({"key": f"rmse_x10_max_sigma{i}", "number": float(np.nanmax(pct)), "unit": "%", "digits": 2,
                        "note": f"sigma = {sigma:g}: largest RMSE increase one decade from the optimum"})
    for label, S in (("show", int(s_show)), ("smax", int(mean_table["S"].max()))):
        out.append({"key": f"s_{label}", "number": S, "note": f"the S of the {label} plateau numbers"})
        for r in plateau_table(mean_table, [S]).itertuples(index=False):
            if np.isfinite(r.cost_of_0_pct):
                out.append({"key": f"{r.param}_{label}_sigma{sigmas.index(r.sigma)}_cost_of_0_pct",
                            "number": r.cost_of_0_pct, "unit": "%", "digits": 2, "note": f"sigma = {r.sigma:g}, "
                            f"S = {r.S}, {r.param}: loss at this lambda = 0 above the minimum"})
    return out


def plot_lambda_sensitivity(mean_table, best_table, s_show: int, title: str):
    """Heat map of log10 loss over both lambdas at ``S = s_show``; optimal (filled) and arg-min lambdas vs S.

    `mean_table`, `best_table`: :func:`lambda_optimum` of one sigma.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = figure(2, height=3.6)
    part = mean_table[mean_table["S"] == s_show]
    grid = part.pivot(index="lam_enc", columns="lam_dec", values="loss")
    im = axes[0].imshow(np.log10(grid.to_numpy()), origin="lower", aspect="auto", cmap="viridis")

    def ticks(values):  # every other grid value labelled: 9 pt labels stay apart
        step = max(1, -(-len(values) // 6))
        return list(range(0, len(values), step)), [f"{v:.0e}" if v else "0" for v in list(values)[::step]]

    axes[0].set_xticks(*ticks(grid.columns), rotation=45)
    axes[0].set_yticks(*ticks(grid.index))
    axes[0].grid(False)
    axes[0].set_xlabel("lambda_dec")
    axes[0].set_ylabel("lambda_enc")
    axes[0].set_title(f"log10 loss, S = {s_show}")
    fig.colorbar(im, ax=axes[0])
    ax = axes[1]
    b = best_table.sort_values("S")
    # both lambdas belong to GCC: black and grey tell them apart (colour means scheme in this book)
    for param, marker, color in (("lam_enc", "o", "black"), ("lam_dec", "s", "0.5")):
        ax.semilogy(b["S"], np.clip(b[f"opt_{param}"], 1e-12, None), marker + "-", color=color,
                    label=f"optimal {param}")
        ax.semilogy(b["S"], np.clip(b[param], 1e-12, None), marker, color=color, mfc="white", alpha=0.8,
                    label=f"arg-min {param}")
    ax.set_xlabel("S")
    ax.set_ylabel("lambda (0 drawn at 1e-12)")
    ax.set_title(f"optimal: largest within {100 * TOLERANCE:g}% of min")
    ax.legend(loc="best")
    fig.suptitle(title)
    return finish(fig)
