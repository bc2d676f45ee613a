"""The extremal page's report: both families side by side, the lower-bound check, quoted values, figures.

Turns the tables of :mod:`~gcc.experiments.extremal` into what the page and the claims table show;
:func:`counting_notes` marks the rows the claims table shows but does not count.
"""
from __future__ import annotations

import numpy as np

from gcc.codes import label
from gcc.validation import Options, validate

from .extremal import DECODER_TEST_FUNCTION, FAMILIES, LOWER_BOUND_FUNCTION
from .plotting import REFERENCE, figure, finish, log_ticks, scheme_color, scheme_marker, scheme_shades
from .references import anchor_constant
from .slopes import quoted_slopes, slope_text, slope_view, starts_with

__all__ = ["NORMS", "lower_bound_check", "family_view", "norm_comparison", "counting_notes",
           "quoted_values", "plot_extremal"]

#: the two normalisations, ``quantity`` -> the norm it divides by
NORMS = {"normalised": "||(f o u_enc)''||^2 (Thm 1)", "normalised_sup": "(||g'||inf + ||g''||inf)^2 (BACC)"}

#: why BACC's S + 1 exponent on the lower-bound family is not evidence that BACC attains its bound
LOWER_BOUND_NOTE = ("the normalisation's, not BACC's: on the lower-bound family every decoder has the same loss, "
                    "and (||g'||inf + ||g''||inf)^2 ~ w^-4 alone makes the S+1 exponent about 4 (GCC in the "
                    "same norm: {gcc}); a tight here is tight only through the normalisation.")
#: why BACC read in Theorem 1's norm is shown but not counted
L2_NOTE = "BACC's bound is stated in (||g'||inf + ||g''||inf)^2; this row reads it in Theorem 1's norm, beside it."


def lower_bound_check(sweep):
    """That the lower-bound family is one: no received worker sees it, and every loss is the closed form.

    Parameters
    ----------
    sweep : pandas.DataFrame
        :func:`gcc.experiments.extremal.extremal_sweep`; its ``seen`` and ``|zero_ratio - 1|`` must be <= 1e-12.

    Returns
    -------
    pandas.DataFrame
        Per (``function``, ``scheme``): ``rows, seen_max, zero_ratio_min, zero_ratio_max``.

    Raises
    ------
    RuntimeError
        If a lower-bound row was seen or its loss is not the closed form.
    """
    table = sweep.groupby(["function", "scheme"]).agg(
        rows=("seen", "size"), seen_max=("seen", "max"), zero_ratio_min=("zero_ratio", "min"),
        zero_ratio_max=("zero_ratio", "max")).reset_index()
    lb, tol = table[table["function"] == LOWER_BOUND_FUNCTION], 1e-12
    bad = lb[(lb["seen_max"] > tol) | ((lb["zero_ratio_min"] - 1).abs() > tol) | ((lb["zero_ratio_max"] - 1).abs() > tol)]
    if len(bad):
        raise RuntimeError(f"lower_bound_check: the lower-bound family is not one for {bad['scheme'].tolist()}: "
                           f"seen up to {float(bad['seen_max'].max()):.3g}, loss ratios "
                           f"{float(bad['zero_ratio_min'].min()):.6g}-{float(bad['zero_ratio_max'].max()):.6g}.")
    return table


def family_view(slopes, quantity: str = "normalised"):
    """The two families' exponents side by side: one row per (variable, fixed), one column per (scheme, family).

    Parameters
    ----------
    slopes : pandas.DataFrame
        :func:`gcc.experiments.extremal.extremal_slopes`.
    quantity : {"normalised", "normalised_sup"}

    Returns
    -------
    pandas.DataFrame
        ``"slope [low, high]"`` strings; columns ``"GCC, lower bound"``, ``"GCC, decoder test"``, ...
    """
    validate(quantity, Options(tuple(NORMS)), "quantity", "family_view")
    sub = slopes[(slopes["quantity"] == quantity) & slopes["function"].isin(list(FAMILIES))]
    names = {LOWER_BOUND_FUNCTION: "lower bound", DECODER_TEST_FUNCTION: "decoder test"}
    sub = sub.assign(column=[f"{label(s)}, {names[f]}" for s, f in zip(sub["scheme"], sub["function"])])
    view = slope_view(sub, ["variable", "fixed"], columns="column")
    order = [f"{label(s)}, {names[f]}" for s in ("gcc", "bacc") for f in FAMILIES]
    return view[[c for c in order if c in view.columns] + [c for c in view.columns if c not in order]]


def norm_comparison(slopes):
    """The S + 1 exponents of both schemes in both norms, for both families (at fixed N and jointly).

    Returns
    -------
    pandas.DataFrame
        ``family, scheme, fixed`` and one ``"slope [low, high]"`` column per norm of :data:`NORMS`.
    """
    sub = slopes[(slopes["variable"] == "S+1") & slopes["function"].isin(list(FAMILIES))]
    sub = sub.assign(slope_ci=slope_text(sub), scheme=[label(s) for s in sub["scheme"]])
    table = sub.pivot_table(index=["function", "scheme", "fixed"], columns="quantity", values="slope_ci",
                            aggfunc="first").reset_index().rename(columns={"function": "family", **NORMS})
    table.columns.name = None
    return table


def counting_notes(slopes):
    """A copy of `slopes` with ``not_counted``: why the claims table shows a row but does not count it.

    Empty where a row counts; :data:`L2_NOTE` on BACC's S + 1 rows in Theorem 1's norm and
    :data:`LOWER_BOUND_NOTE` (with GCC's exponent) on those in its own norm on the lower-bound family.
    """
    out = slopes.copy()
    notes = []
    for _, row in out.iterrows():
        note = ""
        if row["scheme"] == "bacc" and row["variable"] == "S+1":
            if row["quantity"] == "normalised":
                note = L2_NOTE
            elif row["function"] == LOWER_BOUND_FUNCTION:
                twin = out[(out["scheme"] == "gcc") & (out["variable"] == "S+1") & (out["fixed"] == row["fixed"])
                           & (out["quantity"] == row["quantity"]) & (out["function"] == row["function"])]
                measured = len(twin) and np.isfinite(twin["slope"].iloc[0])
                gcc = slope_text(twin)[0] if measured else "not measured"
                note = LOWER_BOUND_NOTE.format(gcc=gcc)
        notes.append(note)
    out["not_counted"] = notes
    return out


def quoted_values(slopes) -> list[dict]:
    """The extremal exponents the chapters quote, as keyword arguments of ``RunContext.value``.

    From :func:`gcc.experiments.extremal.extremal_slopes`, lower-bound family: ``gcc_joint_n/_s``,
    ``bacc_joint_n/_s`` (Theorem 1's norm), ``bacc_sup_joint_n/_s`` (BACC's), each with ``_ci``;
    ``bacc[_sup]_s_slope`` (fixed N). The decoder test: the same keys prefixed ``dec_``.
    """
    out = []
    for function, prefix in ((LOWER_BOUND_FUNCTION, ""), (DECODER_TEST_FUNCTION, "dec_")):
        fam = slopes[slopes["function"] == function]
        name = "lower-bound family" if not prefix else "decoder test"
        for key, scheme, quantity in (("gcc", "gcc", "normalised"), ("bacc", "bacc", "normalised"),
                                      ("bacc_sup", "bacc", "normalised_sup")):
            for variable, axis in (("N", "n"), ("S+1", "s")):
                out += quoted_slopes(fam, f"{prefix}{key}_joint_{axis}", f"{label(scheme)}, {name}, "
                                     f"{NORMS[quantity]}: joint-fit exponent in {variable}", scheme=scheme,
                                     quantity=quantity, fixed="joint fit", variable=variable)
        for quantity, tag in (("normalised", ""), ("normalised_sup", "_sup")):
            rows = fam[(fam["scheme"] == "bacc") & (fam["quantity"] == quantity)]
            out += quoted_slopes(rows, f"{prefix}bacc{tag}_s_slope", f"BACC, {name}, "
                                 f"{NORMS[quantity]}: slope in S+1 at fixed N", variable="S+1",
                                 fixed=starts_with("N="))
    return out


def plot_extremal(summary, quantity: str = "normalised", function: str = LOWER_BOUND_FUNCTION, power: float = 3.0):
    """One family: normalised loss against N (fixed S), against S + 1 (fixed N), and against (S + 1)/N.

    ``C ((S+1)/N)^power`` with one C (the smallest above GCC's cells with S >= 1); the dotted line
    of slope ``power + 1`` is what a loose bound would show.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`extremal_summary` (the saved ``summary`` table).
    quantity : {"normalised", "normalised_sup"}
    function : str
        The family (:data:`~gcc.experiments.extremal.FAMILIES`).
    power : float

    Returns
    -------
    matplotlib.figure.Figure
    """
    validate(function, Options(tuple(FAMILIES)), "function", "plot_extremal")
    sub = summary[(summary["quantity"] == quantity) & (summary["function"] == function)]
    # Two panels above the headline one (every cell against (S+1)/N), which spans the page's width.
    fig, axes = figure(3, ncols=2, height=5.6, wide_last=True)
    # One constant for every panel, the smallest that bounds GCC's cells with a hole (S >= 1).
    anchor = sub[(sub["scheme"] == "gcc") & (sub["S"] >= 1)] if (sub["scheme"] == "gcc").any() else sub
    ref = anchor_constant(anchor["mean"], ((anchor["S"] + 1) / anchor["N"]).to_numpy(float) ** power)
    nrows = sub[sub["sweep"] == "N"]
    s_values = sorted(nrows["S"].unique())
    for scheme in sorted(sub["scheme"].unique()):
        color, marker = scheme_color(scheme), scheme_marker(scheme)
        for S, shade in zip(s_values, scheme_shades(scheme, len(s_values))):  # lighter lines: smaller S
            g = nrows[(nrows["scheme"] == scheme) & (nrows["S"] == S)].sort_values("N")
            axes[0].loglog(g["N"], g["mean"], "-", marker=marker, ms=3, color=shade)
        g = sub[(sub["sweep"] == "S") & (sub["scheme"] == scheme)].sort_values("S")
        axes[1].loglog(g["S"] + 1, g["mean"], "-", marker=marker, ms=3, color=color)
        g = sub[sub["scheme"] == scheme]
        axes[2].loglog((g["S"] + 1) / g["N"], g["mean"], marker, ms=3.5, mfc="none", color=color, ls="none",
                       label=label(scheme))
    n = np.array(sorted(nrows["N"].unique()), dtype=float)
    for S in s_values:
        axes[0].loglog(n, ref * ((S + 1) / n) ** power, **dict(REFERENCE, lw=0.6))
    if len(n):
        log_ticks(axes[0], n)
    g = sub[sub["sweep"] == "S"]
    if len(g):
        N = float(g["N"].iloc[0])
        x = np.sort(g["S"].unique()).astype(float) + 1
        axes[1].loglog(x, ref * (x / N) ** power, **REFERENCE)
        axes[1].set_title(f"at fixed N = {int(N)}")
        log_ticks(axes[1], x)
    x = np.geomspace(((sub["S"] + 1) / sub["N"]).min(), ((sub["S"] + 1) / sub["N"]).max(), 50)
    axes[2].loglog(x, ref * x ** power, **REFERENCE, label=f"C x$^{power:g}$ (Theorem 1)")
    axes[2].loglog(x, ref * x[-1] ** -1 * x ** (power + 1), color="k", ls=":", lw=0.9,
                   label=f"slope {power + 1:g} (a loose bound)")
    axes[0].set_title(f"at fixed S = {', '.join(str(int(s)) for s in s_values)} (light to dark)")
    axes[2].set_title(f"{function}: every cell, against x = (S+1)/N")
    for ax, xl in zip(axes, ("N", "S + 1", "x = (S + 1) / N")):
        ax.set_xlabel(xl)
    axes[2].legend(loc="upper left", ncol=2)
    ylabel = {"normalised": "R / ||(f o u_enc)''||$^2$",
              "normalised_sup": "R / (||g'||$_\\infty$ + ||g''||$_\\infty$)$^2$"}.get(quantity, quantity)
    axes[0].set_ylabel(ylabel)
    axes[2].set_ylabel(ylabel)
    return finish(fig)
