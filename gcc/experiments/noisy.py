"""Noisy workers: GCC with the theory's or a cross-validated lambda_dec (Thm 2 / Thm 4), O(S^{8/5} N^{-3/5}).

Every loss is averaged exactly over the worker noise (:func:`~gcc.experiments.problems.exact_noisy_loss`)
and by Monte Carlo over the straggler sets.
"""
from __future__ import annotations

import numbers
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

import gcc
from gcc.codes import make
from gcc.summary import summarize
from gcc.tuning import select_lambdas
from gcc.validation import Options, validate

from .plotting import REFERENCE, band, figure, finish, log_ticks
from .problems import as_matrix, child_seed, exact_noisy_loss
from .references import LAMBDA_0, anchor_constant, curvature_energy, theory_lambda_dec
from .slopes import as_rate_slopes, quoted_slopes, starts_with, sweep_slopes

__all__ = ["RULES", "POINTS", "CV_RTOL", "lambda_grid", "in_theorem_range", "check_interior",
           "noisy_sweep", "noisy_sweeps", "noisy_summary", "schedule_values", "pilot_marks", "lambda_table",
           "curve_summary", "calibrate_theory_constant", "noisy_slopes", "quoted_values", "plot_noisy"]

#: the ways :func:`noisy_sweep` sets lambda_dec
RULES = ("theory", "cv", "zero")

#: worker points: Theorem 2 bounds ``Delta_max / Delta_min``, which Chebyshev points break
POINTS = "equispaced"


def lambda_grid(exponents: Sequence[float], with_zero: bool = False) -> np.ndarray:
    """The grid of lambda_dec: ``logspace(low, high, count)`` from ``[low, high, count]``.

    `with_zero` prepends 0 (interpolation, for the bias-variance curve).
    """
    low, high, count = exponents
    grid = np.logspace(low, high, int(count))
    return np.concatenate([[0.0], grid]) if with_zero else grid


def in_theorem_range(lam_dec, n_workers, n_stragglers):
    """Whether lambda_dec lies in Theorem 2's range ``(N - S)^-4 <= lambda <= LAMBDA_0`` (a bool array)."""
    lam = np.asarray(lam_dec, dtype=float)
    floor = (np.asarray(n_workers, dtype=float) - np.asarray(n_stragglers, dtype=float)) ** -4.0
    # The theory schedule is clipped to the floor exactly; allow its round-off.
    return (lam >= floor * (1.0 - 1e-9)) & (lam <= LAMBDA_0)


#: the CV rule's tolerance: the largest lambda whose held-out loss is within this fraction of the minimum
CV_RTOL = 1e-3


def _cv_lambda_dec(f, X, N, S, sigma, lam_grid, seed, trials):
    """(lambda, grid low, grid high): the largest lambda within CV_RTOL of the held-out minimum (the grid
    extended by four points up to six times where the choice ends it)."""
    K = len(X)
    grid = np.sort(np.asarray(lam_grid, dtype=float))
    step = float(grid[1] / grid[0])
    for _ in range(7):
        sel = select_lambdas(lambda le, ld: gcc.SplineCode(K, int(N), lam_enc=le, lam_dec=ld, points=POINTS),
                             f, [X], gcc.FixedCount(int(S)), lam_enc_grid=[0.0], lam_dec_grid=list(grid),
                             trials=int(trials), seed=int(seed), noise_std=float(sigma))
        lams, mean = sel.table["lam_dec"].to_numpy(float), sel.table["mean"].to_numpy(float)
        chosen = float(lams[mean <= np.nanmin(mean) * (1.0 + CV_RTOL)].max())
        if chosen == grid[-1]:
            grid = np.concatenate([grid, grid[-1] * step ** np.arange(1, 5)])
        elif chosen == grid[0]:
            grid = np.concatenate([grid[0] / step ** np.arange(4, 0, -1), grid])
        else:
            break
    return chosen, float(grid[0]), float(grid[-1])


def check_interior(summary):
    """Raise RuntimeError, naming the cells, if a CV lambda_dec of :func:`noisy_summary` ends its grid.

    Returns the number of CV cells checked.
    """
    cv = summary[summary["rule"] == "cv"]
    edge = cv[(cv["lam_dec"] <= cv["lam_grid_low"]) | (cv["lam_dec"] >= cv["lam_grid_high"])]
    if len(edge):
        cells = ", ".join(f"(N={r.N}, S={r.S}, {r.straggler})" for r in edge.itertuples(index=False))
        raise RuntimeError(f"check_interior: the CV lambda_dec sits on an end of its grid at {cells}.")
    return int(len(cv))


def noisy_sweep(f, X, n_grid: Sequence[int], s_grid: Sequence[int], *, sigma: float = 0.1,
                rules: Sequence[str] = ("theory",), const: float = 1.0, trials: int = 20, seed: int = 0,
                lam_grid: Sequence[float] | None = None, cv_trials: int = 20,
                adversary: str = "random", function: str = "f"):
    """GCC loss with noisy workers over an (N, S) grid, lambda_dec by rule (Thm 2 / Thm 4).

    Parameters
    ----------
    f, X, n_grid, s_grid
        As in :func:`~gcc.experiments.worst_case.straggler_sweep` (cells with ``N - S < K`` skipped).
    sigma : float
        Worker noise standard deviation (averaged exactly).
    rules : sequence of {"theory", "cv", "zero"} or float
        The schedule :func:`~gcc.experiments.references.theory_lambda_dec` (constant `const`),
        cross-validation over `lam_grid` (default ``logspace(-10, 0, 21)``, `cv_trials` held-out draws
        per point), 0, or a given lambda_dec.
    const : float
    trials, seed : int
        Uniform straggler sets per cell (``child_seed(seed, N, S)``; CV ``child_seed(seed, N, S, 1)``).
    lam_grid : sequence of float, optional
    cv_trials : int
    adversary : {"random", "worst"}
        ``"worst"``: per (cell, rule) the worst contiguous block on the noiseless outputs.
    function : str
        The ``function`` column.

    Returns
    -------
    pandas.DataFrame
        One row per (rule, N, S, trial): ``function, scheme, rule, straggler, sigma, N, S, K, lam_dec,
        trial, loss, bias2, variance, clipped`` (the schedule clipped into Theorem 2's range),
        ``lam_grid_low, lam_grid_high`` (the CV rule's final grid).
    """
    owner = "noisy_sweep"
    validate(adversary, Options(("worst", "random")), "adversary", owner)
    for rule in rules:
        if not isinstance(rule, numbers.Real):
            validate(rule, Options(RULES), "rules", owner)
    K = len(X)
    lam_grid = np.logspace(-10, 0, 21) if lam_grid is None else np.asarray(lam_grid, dtype=float)
    true = as_matrix(f(X))
    rows = []
    for N in n_grid:
        base = make("gcc", K, int(N), points=POINTS)
        Y = as_matrix(f(base.encode(X)))
        energy = curvature_energy(f, X, base)
        for S in s_grid:
            if N - S < K:
                continue
            rng = np.random.default_rng(child_seed(seed, N, S))
            masks = gcc.FixedCount(int(S)).sample_many(rng, int(N), int(trials))
            for rule in rules:
                low = high = np.nan
                clipped = False
                if rule == "theory":
                    lam = theory_lambda_dec(N, S, sigma, energy=energy, const=const)
                    raw = theory_lambda_dec(N, S, sigma, energy=energy, const=const, clip=False)
                    clipped = bool(not in_theorem_range(raw, N, S))
                elif rule == "cv":
                    cv_seed = child_seed(seed, N, S, 1)
                    lam, low, high = _cv_lambda_dec(f, X, N, S, sigma, lam_grid, cv_seed, cv_trials)
                else:
                    lam = 0.0 if rule == "zero" else float(rule)
                code = make("gcc", K, int(N), lam_dec=lam, points=POINTS)
                if adversary == "worst":
                    sets = [gcc.worst_case_stragglers(code, f, X, int(S), search="contiguous")]
                else:
                    sets = [np.flatnonzero(mask) for mask in masks]
                for t, received in enumerate(sets):
                    D = np.asarray(code.decoder_matrix(received), dtype=float)
                    loss, b2, var = exact_noisy_loss(D, Y[received], true, sigma)
                    rows.append({"function": function, "scheme": "gcc", "rule": rule, "straggler": adversary,
                                 "sigma": sigma, "N": int(N), "S": int(S), "K": K, "lam_dec": lam, "trial": t,
                                 "loss": loss, "bias2": b2, "variance": var, "clipped": clipped,
                                 "lam_grid_low": low, "lam_grid_high": high})
    return pd.DataFrame(rows)


def noisy_sweeps(f, X, n_grid: Sequence[int], s_values: Sequence[int], s_sweep_workers: int, s_grid: Sequence[int],
                 *, adversaries: Sequence[str] = ("worst", "random"), **common):
    """:func:`noisy_sweep` rows of the N sweep (`n_grid` x `s_values`) and the S sweep, per adversary.

    The S sweep is `s_grid` at ``N = s_sweep_workers``; `common` goes to :func:`noisy_sweep`; the
    rows gain ``sweep`` (``"N"`` or ``"S"``).
    """
    frames = []
    for adversary in adversaries:
        frames.append(noisy_sweep(f, X, n_grid, s_values, adversary=adversary, **common).assign(sweep="N"))
        frames.append(noisy_sweep(f, X, [s_sweep_workers], s_grid, adversary=adversary, **common).assign(sweep="S"))
    return pd.concat(frames, ignore_index=True)


def pilot_marks(summary, n_workers: int, n_stragglers: int) -> dict:
    """``"<rule> (random F)" -> lambda_dec`` at the pilot cell (random stragglers), for :func:`plot_noisy`."""
    pilot = summary[(summary["N"] == n_workers) & (summary["S"] == n_stragglers) & (summary["straggler"] == "random")]
    return {f"{r} (random F)": float(pilot[pilot["rule"] == r]["lam_dec"].iloc[0])
            for r in ("theory", "cv") if r in set(pilot["rule"])}


def lambda_table(summary):
    """lambda_dec (3 digits) and range flag of every N-sweep cell: rows (straggler, S, N), columns rule."""
    part = summary[summary["sweep"] == "N"].assign(lam_dec=lambda d: d["lam_dec"].map("{:.3g}".format))
    return part.pivot_table(index=["straggler", "S", "N"], columns="rule", values=["lam_dec", "in_theorem_range"],
                            aggfunc="first")


def noisy_summary(trials):
    """:func:`gcc.summary.summarize` of :func:`noisy_sweep` per cell, with its lambda and range flag.

    Returns
    -------
    pandas.DataFrame
        ``sweep, function, scheme, rule, straggler, N, S``, the summary columns, ``lam_dec, clipped,
        lam_grid_low, lam_grid_high`` and ``in_theorem_range`` (:func:`in_theorem_range` and not clipped).
    """
    keys = ["sweep", "function", "scheme", "rule", "straggler", "N", "S"]
    summary = summarize(trials, "loss", by=keys)
    extra = ["lam_dec", "clipped", "lam_grid_low", "lam_grid_high"]
    summary = summary.merge(trials.groupby(keys, as_index=False)[extra].first(), on=keys)
    summary["clipped"] = summary["clipped"].astype(bool)
    summary["in_theorem_range"] = in_theorem_range(summary["lam_dec"], summary["N"], summary["S"]) & ~summary["clipped"]
    return summary


def curve_summary(curve):
    """Mean loss, bias squared and variance per lambda_dec of :func:`calibrate_theory_constant`'s curve."""
    return curve.groupby(["function", "N", "S", "sigma", "lam_dec"], as_index=False)[
        ["loss", "bias2", "variance"]].mean()


def calibrate_theory_constant(f, X, n_workers: int, n_stragglers: int, lam_grid: Sequence[float], *,
                              sigma: float, trials: int = 20, seed: int = 0, function: str = "f"):
    """The constant of the theory schedule that matches the best lambda at one pilot (N, S).

    Fixes the scale of :func:`~gcc.experiments.references.theory_lambda_dec` once, by the grid optimum
    over the positive lambdas of `lam_grid` of the bias-variance curve at ``(n_workers, n_stragglers)``
    (:func:`noisy_sweep` with those lambdas; the other arguments as there).

    Returns
    -------
    const : float
    curve : pandas.DataFrame
        :func:`noisy_sweep` rows, one per (lambda, trial); :func:`curve_summary` is the curve.
    """
    curve = noisy_sweep(f, X, [n_workers], [n_stragglers], sigma=sigma, rules=[float(v) for v in lam_grid],
                        trials=trials, seed=seed, function=function)
    mean = curve[curve["lam_dec"] > 0].groupby("lam_dec")["loss"].mean()
    lam_best = float(mean.idxmin())
    energy = curvature_energy(f, X, make("gcc", len(X), int(n_workers), points=POINTS))
    unit = theory_lambda_dec(n_workers, n_stragglers, sigma, energy=energy, const=1.0, clip=False)
    return lam_best / unit, curve


def noisy_slopes(summary):
    """N-slopes at fixed S and (S+1)-slopes at fixed N, per lambda rule, of :func:`noisy_sweep`.

    The theory and CV rules are fitted on the cells inside Theorem 2's range only, the ``zero``
    rule on all; S-slopes use only ``S + 1 <= N / 4``.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`gcc.experiments.slopes.RATE_SLOPE_COLUMNS`, ``excluded_cells`` (cells left out)
        and ``in_theorem_range`` (of every fitted cell).
    """
    keys = ["function", "scheme", "rule", "straggler"]
    used = summary[summary["in_theorem_range"].astype(bool) | (summary["rule"] == "zero")]
    window = lambda d: (d["S"] + 1) <= 0.25 * d["N"]  # noqa: E731
    out = sweep_slopes(used, keys, s_window=window, path_s=False)

    def cells(d):  # the fitted cells of each slope, labelled by its ``fixed``
        n, s = d[d["sweep"] == "N"], d[(d["sweep"] == "S") & window(d)]
        return pd.concat([n.assign(fixed="S=" + n["S"].astype(int).astype(str)),
                          s.assign(fixed="N=" + s["N"].astype(int).astype(str))])

    by, kept = keys + ["fixed"], cells(used)
    left = cells(summary).groupby(by).size().sub(kept.groupby(by).size(), fill_value=0)
    out = out.merge(left.rename("excluded_cells").reset_index(), on=by, how="left")
    out = out.merge(kept.groupby(by, as_index=False)["in_theorem_range"].all(), on=by)
    return as_rate_slopes(out)


def quoted_values(slopes, const: float) -> list[dict]:
    """The noisy numbers the chapters quote, as keyword arguments of ``RunContext.value``.

    ``theory_constant`` (`const`); from :func:`noisy_slopes` for the ``theory`` and ``cv`` rules:
    ``<rule>_n_slope_min`` / ``_max`` (N-slopes at fixed S) and ``<rule>_<straggler>_s_slope`` (with ``_ci``).
    """
    out = [{"key": "theory_constant", "number": float(const), "digits": 3,
            "note": "constant c of the theory schedule, fixed once at the pilot (N, S)"}]
    for rule in ("theory", "cv"):
        out += quoted_slopes(slopes, f"{rule}_n_slope", f"rule {rule}: N-slopes at fixed S", span=True, rule=rule,
                             variable="N", fixed=starts_with("S="))
        for straggler in ("worst", "random"):
            out += quoted_slopes(slopes, f"{rule}_{straggler}_s_slope", f"rule {rule}, {straggler} stragglers: "
                                 "slope in S+1 at fixed N", rule=rule, straggler=straggler, variable="S+1",
                                 fixed=starts_with("N="))
    return out


def schedule_values(summary) -> list[dict]:
    """How far the theory schedule is from cross-validation at S = 0, largest N (random stragglers).

    ``s0_loss_ratio``, ``s0_lambda_ratio`` (theory over CV); ``excluded_theory``, ``excluded_cv`` (N-sweep
    cells left out of the fits).
    """
    part = summary[(summary["sweep"] == "N") & (summary["S"] == 0) & (summary["straggler"] == "random")]
    out = []
    if {"theory", "cv"} <= set(part["rule"]):
        N = int(part["N"].max())
        cell = part[part["N"] == N].set_index("rule")
        t, c = cell.loc["theory"], cell.loc["cv"]
        out += [{"key": "s0_loss_ratio", "number": float(t["mean"] / c["mean"]),
                 "note": f"theory over CV loss, S = 0, N = {N}"},
                {"key": "s0_lambda_ratio", "number": float(t["lam_dec"] / c["lam_dec"]),
                 "note": f"theory over CV lambda_dec, S = 0, N = {N}"}]
    n_part = summary[summary["sweep"] == "N"]
    for rule in ("theory", "cv"):
        g = n_part[n_part["rule"] == rule]
        out.append({"key": f"excluded_{rule}", "number": int((~g["in_theorem_range"].astype(bool)).sum()),
                    "note": f"rule {rule}: N-sweep cells outside Theorem 2's range or clipped (not fitted)"})
    return out


def plot_noisy(summary, curve_summary, lam_marks: Mapping[str, float], title: str):
    """Loss against N and S + 1 per rule (with ``C (S+1)^{8/5} N^{-3/5}``) and the bias-variance curve.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`noisy_summary` of one straggler model.
    curve_summary : pandas.DataFrame
        :func:`curve_summary`.
    lam_marks : mapping of str to float
        Vertical marks on the curve (name -> lambda; :func:`pilot_marks`).
    title : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    # Every line is GCC: the rules are told apart by greys, markers and line styles.
    fig, axes = figure(3, ncols=2, height=6.0, wide_last=True)
    styles = {"theory": ("black", "o", "-"), "cv": ("0.45", "s", "--"), "zero": ("0.65", "^", ":")}
    ax = axes[0]
    nrows = summary[summary["sweep"] == "N"]
    s_max = nrows["S"].max()
    for (rule, S), g in nrows.groupby(["rule", "S"]):
        color, marker, ls = styles.get(rule, ("k", "o", "-"))
        g = g.sort_values("N")
        ax.loglog(g["N"], g["mean"], ls=ls, marker=marker, ms=3, color=color, lw=1.4 if S == s_max else 0.7,
                  label=rule if S == s_max else "_nolegend_")
    g = nrows[nrows["rule"] == "theory"]
    n = np.array(sorted(nrows["N"].unique()), dtype=float)
    C = anchor_constant(g["mean"], g["N"].to_numpy(float) ** -0.6 * (g["S"].to_numpy(float) + 1) ** 1.6)
    for S in sorted(g["S"].unique()):
        ax.loglog(n, C * n ** -0.6 * (S + 1) ** 1.6, color=REFERENCE["color"], ls="-.", lw=0.7)
    log_ticks(ax, n)
    ax.set_xlabel("N")
    ax.set_ylabel("loss (noise-averaged)")
    ax.set_title(f"against N, S = {', '.join(str(int(v)) for v in sorted(nrows['S'].unique()))} (thick: S = {s_max})")
    ax.legend(loc="lower left")
    ax = axes[1]
    srows = summary[summary["sweep"] == "S"]
    for rule, g in srows.groupby("rule"):
        color, marker, ls = styles.get(rule, ("k", "o", "-"))
        g = g.sort_values("S")
        ax.loglog(g["S"] + 1, g["mean"], ls=ls, marker=marker, ms=3, color=color, label=rule)
        band(ax, g["S"] + 1, g, color)
    g = srows[srows["rule"] == "theory"]
    if len(g):
        x = np.sort(g["S"].unique()).astype(float) + 1
        C = anchor_constant(g["mean"], (g["S"].to_numpy(float) + 1) ** 1.6)
        ax.loglog(x, C * x ** 1.6, color=REFERENCE["color"], ls="-.", lw=0.9, label="C (S+1)$^{8/5}$")
        ax.set_title(f"against S + 1, N = {int(g['N'].iloc[0])}")
        log_ticks(ax, x)
    ax.set_xlabel("S + 1")
    ax.legend(loc="lower right")
    ax = axes[2]
    c = curve_summary.sort_values("lam_dec")
    pos = c[c["lam_dec"] > 0]
    ax.loglog(pos["lam_dec"], pos["loss"], color="black", ls="-", label="loss")
    ax.loglog(pos["lam_dec"], pos["bias2"], color="0.4", ls="--", label="bias$^2$")
    ax.loglog(pos["lam_dec"], pos["variance"], color="0.55", ls=":", lw=1.8, label="variance")
    zero = c[c["lam_dec"] == 0]
    if len(zero):
        ax.axhline(float(zero["loss"].iloc[0]), color="0.7", lw=1, label="loss at lambda = 0")
    for (name, lam), ls in zip(lam_marks.items(), ("-.", (0, (5, 2, 1, 2, 1, 2)), (0, (1, 1)))):
        ax.axvline(lam, color="0.25", lw=0.9, ls=ls, label=f"{name}: {lam:.1e}")
    ax.set_xlabel("lambda_dec")
    ax.set_title(f"bias and variance against lambda_dec, N = {int(c['N'].iloc[0])}, S = {int(c['S'].iloc[0])}")
    ax.legend(ncol=2, loc="best")
    axes[0].text(0.98, 0.98, "dash-dot: C (S+1)$^{8/5}$ N$^{-3/5}$", transform=axes[0].transAxes,
                 ha="right", va="top", fontsize=9, color="0.3")
    fig.suptitle(title)
    return finish(fig)
