"""Deep networks under stragglers: RelAcc and loss against S (the paper's Figs. 3 and 4).

:func:`run_sweeps` tunes GCC's lambdas on validation batches per (model, regime, S) and runs the
schemes on test batches; :func:`compare_schemes` pairs two schemes per cell.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, NeurIPS 2024, arXiv:2406.00300, Sec. 5, App. C-E.
.. [2] T. Jahani-Nezhad, M. A. Maddah-Ali, "Berrut Approximated Coded Computing", IEEE TPAMI 45(1), 2022.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..codes import LABELS
from ..summary import summarize
from ..validation import SEED, Interval, ListOf, Options, invalid, validate, validate_params
from ..dnn._checks import COLUMNS, GRID, LEVEL, PREPARED, REGIMES, SCHEMES, TEXT, TRIALS, Frame, Setting, Splits
from .dnn_runs import (COMPARED_SCHEMES, EXTEND, LAMBDA_COLUMNS, LAMBDA_GRID, check_pool_sizes, dataset_of,
                       middle_stragglers, paired_differences, scheme_pair, tuned_runs)

__all__ = ["LAMBDA_GRID", "EXTEND", "COMPARED_SCHEMES", "LAMBDA_COLUMNS", "HIGHER_IS_BETTER", "METRIC_LABELS",
           "require_interior", "run_sweeps", "compare_schemes", "plot_sweep", "lambda_pivot"]

#: Metrics where larger is better (the rest are losses).
HIGHER_IS_BETTER = ("relacc", "accuracy")

#: Axis labels of the metrics of the harness tables.
METRIC_LABELS = {"relacc": "RelAcc", "loss": "loss (eq. 1)", "rmse_norms": "RMSE (mean of norms)",
                 "rmse_rms": "RMSE (root mean square)"}


@validate_params({"lambdas": Frame(("lam_enc_edge", "lam_dec_edge")), "name": TEXT})
def require_interior(lambdas, name: str = "lambdas") -> None:
    """Fail (the library's ValueError) when a tuned lambda of a lambdas table sits on an edge of its grid.

    The notebooks call it on every table of tuned lambdas, so that a batch whose grid search
    ended on an edge fails instead of reporting an optimum that may lie beyond the grid
    (:func:`gcc.tuning.require_interior`).
    """
    from ..tuning import require_interior as check

    check(lambdas.reset_index(drop=True), name)


@validate_params({"prepared": PREPARED, "regimes": REGIMES, "trials": TRIALS, "seed": SEED, "lam_grid": GRID,
                  "tune_trials": TRIALS, "tuning": Options(("per_s", "single")), "schemes": SCHEMES})
def run_sweeps(prepared: Mapping[str, Mapping[str, Any]], regimes: Mapping[str, Sequence[int]],
               stragglers: Mapping[str, Sequence[int]], trials: int, seed: int, lam_grid=None,
               tune_trials: int = 10, tuning: str = "per_s", schemes: Sequence[str] = COMPARED_SCHEMES):
    """RelAcc and loss against the number of stragglers S for every prepared network (Figs. 3 and 4).

    Trial t has the same input batch for every S and scheme, and at each (S, t) the same straggler set.

    Parameters
    ----------
    prepared : gcc.experiments.dnn_models.PreparedModels
    regimes : dict name -> (N, K)
        E.g. ``{"low": (100, 60), "high": (60, 20)}``.
    stragglers : dict name -> sequence of int
        The S values of each regime, in [0, N - 1]; those with N - S < 2 are dropped.
    trials, seed : int
        Repetitions per S and the evaluation seed (tuning uses ``seed + 1000``).
    lam_grid : sequence of float, optional
        The starting grid of both lambdas (default :data:`LAMBDA_GRID`).
    tune_trials : int
        Held-out draws per grid point.
    tuning : {"per_s", "single"}
        Tune at every S (the paper's protocol), or once per regime at the middle positive S.
    schemes : sequence of str
        Scheme keys.

    Returns
    -------
    results : pandas.DataFrame
        Tidy rows, one per (model, regime, scheme, S, trial).
    lambdas : pandas.DataFrame
        One row per (model, regime, S): :data:`LAMBDA_COLUMNS`.
    grid : pandas.DataFrame
        Every grid point's held-out statistics per tuning.
    """
    owner = "run_sweeps"
    if not isinstance(stragglers, Mapping) or set(stragglers) != set(regimes):
        raise invalid("stragglers", owner, f"a mapping regime ({', '.join(map(repr, regimes))}) -> numbers of "
                      "stragglers", stragglers)
    settings = []
    for regime, (n, k) in regimes.items():
        s_values = validate(stragglers[regime], ListOf(Interval(int, 0, n - 1)), "stragglers", owner)
        settings += [Setting(n, k, s, regime) for s in s_values if n - s >= 2]
        if not any(n - s >= 2 for s in s_values):
            raise invalid("stragglers", owner, "a mapping regime -> numbers of stragglers S with N - S >= 2",
                          dict(stragglers), f"no S of regime {regime!r} leaves two workers")
    tune_at = {r: middle_stragglers([st.stragglers for st in settings if st.regime == r]) for r in regimes} \
        if tuning == "single" else None
    splits = {name: Splits.of(p["splits"]) for name, p in prepared.items()}
    for name in prepared:
        check_pool_sizes(splits[name], settings, "regimes", regimes, owner)
    outs = [tuned_runs(p["f"], name, splits[name], settings, trials, seed, lam_grid, tune_trials, schemes,
                        dataset_of(p, splits[name]), tune_at) for name, p in prepared.items()]
    return tuple(pd.concat([o[i] for o in outs], ignore_index=True) for i in range(3))


@validate_params({"results": Frame(("scheme", "trial")), "metric": COLUMNS, "by": COLUMNS, "level": LEVEL})
def compare_schemes(results, metric: str = "loss", scheme: str = "gcc", baseline: str = "bacc",
                    by: Sequence[str] = ("model", "dataset", "regime", "n_workers", "n_inputs", "stragglers"),
                    level: float = 0.95):
    """Paired comparison of two schemes per group: the mean of the per-trial differences, with its interval.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`run_sweeps` or :func:`gcc.experiments.dnn_summary.run_tables`.
    metric : str or sequence of str
        Column(s) compared.
    scheme, baseline : str
        Scheme keys (aliases accepted).
    by : sequence of str
        Grouping columns (those absent from ``results`` are skipped).
    level : float in (0, 1)
        Confidence level of the paired interval.

    Returns
    -------
    pandas.DataFrame
        ``by``, ``metric``, means, ``diff_mean`` with its interval, ``improvement_pct``, ``better`` ...

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.experiments.dnn_stragglers import compare_schemes
    >>> df = pd.DataFrame({"stragglers": 1, "trial": [0, 1, 0, 1], "scheme": ["gcc", "gcc", "bacc", "bacc"],
    ...                    "loss": [1.0, 2.0, 2.0, 3.0]})
    >>> compare_schemes(df, by=["stragglers"])[["scheme", "baseline", "diff_mean", "better"]]
      scheme baseline  diff_mean  better
    0    gcc     bacc       -1.0    True
    """
    owner = "compare_schemes"
    metrics = [metric] if isinstance(metric, str) else metric    # a default is not converted
    if not metrics or [m for m in metrics if m not in results.columns]:
        raise invalid("metric", owner, f"columns of results ({', '.join(map(str, results.columns))})", metric)
    if len(metrics) > 1:
        return pd.concat([compare_schemes(results, m, scheme, baseline, by, level) for m in metrics],
                         ignore_index=True)
    metric = metrics[0]
    scheme, baseline = scheme_pair(results, scheme, baseline, owner)
    by = [c for c in by if c in results.columns]
    higher = metric in HIGHER_IS_BETTER
    rows = []
    for ci in paired_differences(results, "scheme", scheme, baseline, metric, by, level).to_dict("records"):
        am, bm = ci["a_mean"], ci["b_mean"]
        rows.append({**{c: ci[c] for c in by}, "scheme": scheme, "baseline": baseline, "metric": metric,
                     "scheme_mean": am, "baseline_mean": bm, "diff_mean": ci["mean"],
                     "diff_ci_low": ci["ci_low"], "diff_ci_high": ci["ci_high"], "n": int(ci["n"]),
                     "improvement_pct": 100.0 * (am - bm if higher else bm - am) / bm if bm != 0 else np.nan,
                     "below": bool(am < bm), "better": bool(am > bm) if higher else bool(am < bm),
                     "significant": bool(ci["ci_high"] < 0 or ci["ci_low"] > 0)})
    return pd.DataFrame(rows)


@validate_params({"results": Frame(("regime", "model", "scheme", "stragglers", "n_workers", "n_inputs")),
                  "metrics": COLUMNS, "level": LEVEL})
def plot_sweep(results, regime: str, metrics: Sequence[str] = ("relacc", "loss"), level: float = 0.95):
    """Figure of ``metrics`` against S in one regime: rows = metrics, columns = models (Figs. 3-4); losses on a log axis.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`run_sweeps`.
    regime : str
        Which regime (``"low"``: Fig. 3, ``"high"``: Fig. 4).
    metrics : sequence of str
        Columns to plot, one row of panels each.
    level : float in (0, 1)
        Confidence level of the bands.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .plotting import band, figure, finish, legend_outside, scheme_color, scheme_marker

    regimes = list(dict.fromkeys(results["regime"]))
    if regime not in regimes:
        raise invalid("regime", "plot_sweep", f"a regime of results ({', '.join(map(str, regimes))})", regime)
    if not metrics or [m for m in metrics if m not in results.columns]:
        raise invalid("metrics", "plot_sweep", f"columns of results ({', '.join(map(str, results.columns))})", metrics)
    sub = results[results["regime"] == regime]
    model_names = list(dict.fromkeys(sub["model"]))
    panels = [(metric, model) for metric in metrics for model in model_names]
    ncols = min(3, len(model_names))
    fig, axes = figure(len(panels), ncols=ncols, height=2.3 * -(-len(panels) // ncols) + 0.8)
    for ax, (metric, model) in zip(axes, panels):
        reg = sub[sub["model"] == model]
        n, k = int(reg["n_workers"].iloc[0]), int(reg["n_inputs"].iloc[0])
        summ = summarize(reg, value=metric, by=("scheme", "stragglers"), level=level)
        for scheme in dict.fromkeys(reg["scheme"]):
            sc = summ[summ["scheme"] == scheme]
            color = scheme_color(scheme)
            ax.plot(sc["stragglers"], sc["mean"], ls="-", marker=scheme_marker(scheme), ms=3, color=color,
                    label=LABELS.get(scheme, scheme))
            band(ax, sc["stragglers"], sc, color, alpha=0.2)
        if metric in ("loss", "rmse_norms", "rmse_rms"):
            ax.set_yscale("log")
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel(METRIC_LABELS.get(metric, metric))
        ax.set_title(f"{model}: N={n}, K={k}")
        ax.set_xlabel("stragglers S")
    legend_outside(fig, axes[:1])
    fig.suptitle(f"{regime} redundancy")
    return finish(fig)


def lambda_pivot(lambdas, values: Sequence[str] = ("lam_dec_tol", "lam_dec", "lam_enc_tol", "lam_enc")):
    """The tuned lambdas as a page shows them: one row per (model, regime, value), one column per S.

    ``lambdas`` is a lambdas table of :func:`run_sweeps` (columns ``model, regime, stragglers`` and ``values``).
    """
    return pd.concat([lambdas.pivot_table(index=["model", "regime"], columns="stragglers", values=column)
                      .reset_index().assign(value=column) for column in values], ignore_index=True)
