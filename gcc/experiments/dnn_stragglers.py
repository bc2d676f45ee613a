"""Deep networks under stragglers: RelAcc and loss against S (the paper's Figs. 3 and 4), and the
runners every DNN experiment shares.

The workers compute f = the softmax output of a trained classifier (:mod:`gcc.dnn`, set up by
:func:`gcc.experiments.dnn_models.prepare_models`) on their coded images. For each (model, regime,
S), :func:`run_sweeps` chooses GCC's lambdas on validation batches (the paper's protocol: its
App. E, Table 3, lists the optimum per S) and simulates the schemes on test batches
(:func:`gcc.harness.run_trials`: identical inputs and straggler sets for every scheme of a trial);
:func:`gcc.experiments.dnn_summary.run_tables` does the same for Table 1.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Coded Computing for Resilient Distributed
   Computing: A Learning-Theoretic Framework", NeurIPS 2024, arXiv:2406.00300, Sec. 5 and
   App. C-E.
.. [2] T. Jahani-Nezhad, M. A. Maddah-Ali, "Berrut Approximated Coded Computing: Straggler
   Resistance Beyond Polynomial Computing", IEEE TPAMI 45(1), 2022.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..codes import LABELS, canonical, make_many
from ..validation import SEED, Interval, ListOf, Options, invalid, validate, validate_params
from ..dnn._checks import (COLUMNS, GRID, LEVEL, PREPARED, REGIMES, SCHEMES, TEST_SPLITS, TEXT, TRIALS, Frame, Setting,
                           Splits)

__all__ = ["LAMBDA_GRID", "EXTEND", "require_interior", "COMPARED_SCHEMES", "HIGHER_IS_BETTER", "METRIC_LABELS",
           "LAMBDA_COLUMNS", "split_getter", "run_sweeps",
           "compare_schemes", "scheme_pair", "dataset_of", "plot_sweep", "lambda_pivot"]

#: Default (lambda_enc, lambda_dec) grid: 0 (interpolation) and 1e-12 .. 1e-6, one point per
#: decade (so "off by x10" is one grid step). On [-1, 1] with tens of points the eq. (4) penalty
#: already smooths visibly at 1e-8, so the grid of gcc.tuning (1e-8 .. 1) would only probe
#: over-smoothed codes here.
LAMBDA_GRID = (0.0, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6)

#: Grid steps (decades) the tuning may add beyond each edge of each grid
#: (:func:`gcc.tuning.select_lambdas`' ``extend``) until every choice is interior.
EXTEND = 6

#: The schemes the DNN experiments compare (keys of :data:`gcc.codes.SCHEMES`).
COMPARED_SCHEMES = ("gcc", "bacc", "bspline")

#: Metrics where larger is better (the rest are losses).
HIGHER_IS_BETTER = ("relacc", "accuracy")

#: Axis labels of the metrics of the harness tables.
METRIC_LABELS = {"relacc": "RelAcc", "loss": "loss (eq. 1)", "rmse_norms": "RMSE (mean of norms)",
                 "rmse_rms": "RMSE (root mean square)"}

#: Columns of a lambdas table (one row per tuned (model, regime, S)).
LAMBDA_COLUMNS = ["model", "dataset", "regime", "stragglers", "lam_enc", "lam_dec", "n_workers", "n_inputs",
                  "received", "tuned_at", "validation_loss", "lam_enc_edge", "lam_dec_edge", "grid_points",
                  "lam_enc_tol", "lam_dec_tol"]

#: Columns put first in the results tables.
_FRONT = ["model", "dataset", "regime", "scheme", "n_workers", "n_inputs", "stragglers", "trial", "loss", "relacc"]
_EDGES = ("lam_enc_edge", "lam_dec_edge", "grid_points", "lam_enc_tol", "lam_dec_tol")


def _batch_source(x, y, n_inputs: int) -> Callable:
    """A data source for :func:`gcc.harness.run_trials`, ``(rng, trial) -> (x_batch, y_batch)``: K distinct
    images per trial, drawn from the harness's per-trial generator (the same batch for every scheme and S)."""
    x, y = np.asarray(x), np.asarray(y, dtype=np.int64)

    def source(rng, trial):
        idx = rng.choice(len(x), size=n_inputs, replace=False)
        return x[idx], y[idx]

    return source


def _tune(f, splits: Splits, n_inputs: int, n_workers: int, stragglers: int, lam_grid, trials: int, seed: int,
          straggler_model=None):
    """GCC's lambdas by grid search on validation batches (:func:`gcc.tuning.select_lambdas`, the grid extended
    by up to :data:`EXTEND` steps beyond each edge), at S random stragglers or under ``straggler_model``."""
    from ..codes import make
    from ..stragglers import FixedCount
    from ..tuning import select_lambdas

    grid = LAMBDA_GRID if lam_grid is None else lam_grid
    return select_lambdas(lambda le, ld: make("gcc", n_inputs, n_workers, lam_enc=le, lam_dec=ld), f,
                          _batch_source(splits.x_val, splits.y_val, n_inputs),
                          straggler_model or FixedCount(int(stragglers)), lam_enc_grid=grid, lam_dec_grid=grid,
                          trials=trials, seed=seed, metric="loss", extend=EXTEND)


def _selection_columns(sel) -> dict:
    """The edge columns of a lambdas-table row of one selection, and its tolerant optima."""
    from ..tuning import tolerant_optimum

    return {"lam_enc_edge": sel.enc_edge, "lam_dec_edge": sel.dec_edge,
            "grid_points": len(sel.lam_enc_grid) * len(sel.lam_dec_grid),
            "lam_enc_tol": tolerant_optimum(sel.table, "enc"), "lam_dec_tol": tolerant_optimum(sel.table, "dec")}


@validate_params({"lambdas": Frame(("lam_enc_edge", "lam_dec_edge")), "name": TEXT})
def require_interior(lambdas, name: str = "lambdas") -> None:
    """Fail (the library's ValueError) when a tuned lambda of a lambdas table sits on an edge of its grid.

    The notebooks call it on every table of tuned lambdas, so that a batch whose grid search
    ended on an edge fails instead of reporting an optimum that may lie beyond the grid
    (:func:`gcc.tuning.require_interior`).
    """
    from ..tuning import require_interior as check

    check(lambdas.reset_index(drop=True), "require_interior", name)


def _run_config(f, splits: Splits, setting: Setting, trials: int, seed: int, lam_enc: float, lam_dec: float,
                schemes: Sequence[str], extra_columns: Mapping[str, Any]):
    """The schemes at one (N, K, S) (:func:`gcc.harness.run_trials`), with GCC's ``lam_enc``/``lam_dec``
    (NaN for the other schemes) and ``extra_columns``."""
    from ..harness import run_trials
    from ..stragglers import FixedCount

    # make_many rejects a parameter that no listed code takes: GCC's lambdas go with GCC only.
    lams = {"lam_enc": lam_enc, "lam_dec": lam_dec} if "gcc" in schemes else {}
    out = run_trials(make_many(schemes, setting.n_inputs, setting.n_workers, **lams), f,
                     _batch_source(splits.x_test, splits.y_test, setting.n_inputs), FixedCount(setting.stragglers),
                     trials=trials, seed=seed, extra_columns=dict(extra_columns))
    out["lam_enc"] = np.where(out["scheme"] == "gcc", lam_enc, np.nan)
    out["lam_dec"] = np.where(out["scheme"] == "gcc", lam_dec, np.nan)
    return out


@validate_params({"splits": TEST_SPLITS})
def split_getter(splits) -> Callable[[str], Any]:
    """``get(name)`` for ``x_val, y_val, x_test, y_test`` of an :class:`~gcc.dnn.data.ImageData` or a mapping.

    Parameters
    ----------
    splits : gcc.dnn.data.ImageData or mapping
        Holds at least ``x_test`` and ``y_test``.

    Returns
    -------
    callable ``get(name)``
    """
    return lambda key: getattr(splits, key)


def _lambdas_at(lambdas, model: str, setting: Setting):
    """The row of ``lambdas`` for (model, N, K, S), or None."""
    if lambdas is None:
        return None
    hit = lambdas[(lambdas["model"] == model) & (lambdas["n_workers"] == setting.n_workers)
                  & (lambdas["n_inputs"] == setting.n_inputs) & (lambdas["stragglers"] == setting.stragglers)]
    return None if hit.empty else hit.iloc[0]


def dataset_of(entry: Mapping, splits: Splits) -> str:
    """The ``dataset`` column of a prepared network: its ``info["dataset"]``, else its splits' name."""
    dataset = entry["info"].get("dataset")
    return dataset if dataset is not None else splits.name


def _middle(s_values: Sequence[int]) -> int:
    """The S at which ``tuning="single"`` tunes: the middle positive S of the sweep (0 if none)."""
    positive = [int(s) for s in s_values if s > 0] or [0]
    return positive[len(positive) // 2]


def _check_pool_sizes(splits: Splits, settings, arg: str, value, owner: str) -> None:
    """Every K within the validation and test pools."""
    for st in settings:
        for key in ("x_val", "x_test"):
            if st.n_inputs > len(getattr(splits, key)):
                raise invalid(arg, owner, f"settings with K <= the images in {key} ({len(getattr(splits, key))})",
                              value, f"K = {st.n_inputs}")


def _tuned_runs(f, model: str, splits: Splits, settings: Sequence[Setting], trials: int, seed: int, lam_grid,
                tune_trials: int, schemes, dataset: str, tune_at: Mapping[str, int] | None = None, lambdas=None,
                reuse: bool = False):
    """Per setting: GCC's lambdas (the row of ``lambdas``, else tuned on validation batches at the setting's S,
    or once per regime at ``tune_at[regime]``), then every scheme on test batches. Returns the results, the
    lambdas rows (with ``reused`` when ``reuse``) and the grid tables."""
    import pandas as pd

    frames, chosen, tables, selections = [], [], [], {}
    for st in settings:
        at = tune_at[st.regime] if tune_at is not None else st.stragglers
        row = _lambdas_at(lambdas, model, st)
        if row is None:
            key = (st.regime, st.n_workers, st.n_inputs, at)
            if key not in selections:
                sel = selections[key] = _tune(f, splits, st.n_inputs, st.n_workers, at, lam_grid, tune_trials,
                                              seed + 1000)
                table = sel.table.copy()
                for i, (column, value) in enumerate((("model", model), ("dataset", dataset), ("regime", st.regime),
                                                     ("stragglers", at))):
                    table.insert(i, column, value)
                table["n_workers"], table["n_inputs"] = st.n_workers, st.n_inputs
                tables.append(table)
            sel = selections[key]
            lam_enc, lam_dec, score, edges = sel.lam_enc, sel.lam_dec, sel.score, _selection_columns(sel)
        else:
            lam_enc, lam_dec, score = float(row["lam_enc"]), float(row["lam_dec"]), np.nan
            edges = {c: row[c] if c in row.index else np.nan for c in _EDGES}
        chosen.append({"model": model, "dataset": dataset, "regime": st.regime, "stragglers": st.stragglers,
                       "lam_enc": lam_enc, "lam_dec": lam_dec, "n_workers": st.n_workers, "n_inputs": st.n_inputs,
                       "received": st.received, "tuned_at": at, "validation_loss": score, **edges,
                       **({"reused": row is not None} if reuse else {})})
        frames.append(_run_config(f, splits, st, trials, seed, lam_enc, lam_dec, schemes,
                                  {"model": model, "dataset": dataset, "regime": st.regime}))
    results = pd.concat(frames, ignore_index=True)
    front = [c for c in _FRONT if c in results.columns]
    results = results[front + [c for c in results.columns if c not in front]]
    columns = LAMBDA_COLUMNS + (["reused"] if reuse else [])
    grid = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    return results, pd.DataFrame(chosen, columns=columns), grid


@validate_params({"prepared": PREPARED, "regimes": REGIMES, "trials": TRIALS, "seed": SEED, "lam_grid": GRID,
                  "tune_trials": TRIALS, "tuning": Options(("per_s", "single")), "schemes": SCHEMES})
def run_sweeps(prepared: Mapping[str, Mapping[str, Any]], regimes: Mapping[str, Sequence[int]],
               stragglers: Mapping[str, Sequence[int]], trials: int, seed: int, lam_grid=None,
               tune_trials: int = 10, tuning: str = "per_s", schemes: Sequence[str] = COMPARED_SCHEMES):
    """RelAcc and loss against the number of stragglers S for every prepared network (Figs. 3 and 4).

    For each network, regime (N, K) and S: choose GCC's lambdas by grid search on validation
    batches (:func:`gcc.tuning.select_lambdas`, the grid extended beyond an edge choice by up to
    :data:`EXTEND` decades), then simulate every scheme on test batches. Trial t has the same input batch for every S and scheme; at each (S, t) every scheme sees
    the same straggler set.

    Parameters
    ----------
    prepared : gcc.experiments.dnn_models.PreparedModels
        ``{name: {"f", "splits", "info"}}``.
    regimes : dict name -> (N, K)
        E.g. ``{"low": (100, 60), "high": (60, 20)}`` (low / high redundancy N/K).
    stragglers : dict name -> sequence of int
        The S values of each regime, in [0, N - 1]; those with N - S < 2 are dropped (a decoder
        needs two points).
    trials, seed : int
        Repetitions per S (the paper: 20) and the evaluation seed (tuning uses ``seed + 1000``).
    lam_grid : sequence of float, optional
        The starting grid of both lambdas (default :data:`LAMBDA_GRID`).
    tune_trials : int
        Held-out draws per grid point.
    tuning : {"per_s", "single"}
        ``"per_s"``: tune at every S (the paper's protocol); ``"single"``: tune once per regime at
        the middle positive S and use those lambdas for every S.
    schemes : sequence of str
        Scheme keys.

    Returns
    -------
    results : pandas.DataFrame
        Tidy rows (model, dataset, regime, scheme, n_workers, n_inputs, stragglers, trial, loss,
        relacc, rmse_norms, rmse_rms, relacc_literal, accuracy, accuracy_base, lam_enc, lam_dec, ...).
    lambdas : pandas.DataFrame
        One row per (model, regime, S): :data:`LAMBDA_COLUMNS` (``tuned_at`` = the S tuned at).
    grid : pandas.DataFrame
        Every grid point's held-out statistics (:func:`gcc.tuning.select_lambdas`' table) per
        tuning, with ``model``, ``dataset``, ``regime``, ``stragglers`` (the S tuned at),
        ``n_workers``, ``n_inputs``.
    """
    import pandas as pd

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
    tune_at = {r: _middle([st.stragglers for st in settings if st.regime == r]) for r in regimes} \
        if tuning == "single" else None
    splits = {name: Splits.of(p["splits"]) for name, p in prepared.items()}
    for name in prepared:
        _check_pool_sizes(splits[name], settings, "regimes", regimes, owner)
    outs = [_tuned_runs(p["f"], name, splits[name], settings, trials, seed, lam_grid, tune_trials, schemes,
                        dataset_of(p, splits[name]), tune_at) for name, p in prepared.items()]
    return tuple(pd.concat([o[i] for o in outs], ignore_index=True) for i in range(3))


@validate_params({"results": Frame(("scheme", "trial")), "metric": COLUMNS, "by": COLUMNS, "level": LEVEL})
def compare_schemes(results, metric: str = "loss", scheme: str = "gcc", baseline: str = "bacc",
                    by: Sequence[str] = ("model", "dataset", "regime", "n_workers", "n_inputs", "stragglers"),
                    level: float = 0.95):
    """Paired comparison of two schemes per group: is ``scheme``'s mean ``metric`` below the baseline's?

    Trials are paired (same inputs and straggler set), so the interval is that of the mean of
    the per-trial differences ``metric[scheme] - metric[baseline]`` (:func:`gcc.summary.summarize`).

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`run_sweeps` or :func:`gcc.experiments.dnn_summary.run_tables`.
    metric : str or sequence of str
        Column compared; several give one block of rows per metric.
    scheme, baseline : str
        Scheme keys (aliases accepted).
    by : sequence of str
        Grouping columns (those absent from ``results`` are skipped).
    level : float in (0, 1)
        Confidence level of the paired interval.

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, ``scheme``, ``baseline``, ``metric``, ``scheme_mean``, ``baseline_mean``,
        ``diff_mean``, ``diff_ci_low``, ``diff_ci_high``, ``n`` (paired trials),
        ``improvement_pct`` (positive = scheme better: 100 (baseline - scheme) / baseline for
        losses, 100 (scheme - baseline) / baseline for accuracies), ``below`` (scheme's mean <
        baseline's), ``better`` (below for losses, above for accuracies) and ``significant``
        (the paired interval excludes 0).

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
    import pandas as pd

    from ..summary import summarize

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
    wide = results.pivot_table(index=by + ["trial"], columns="scheme", values=metric).reset_index()
    wide["diff"] = wide[scheme] - wide[baseline]
    paired = summarize(wide, "diff", by=by, level=level)
    # np.nanmean, not pandas' mean: pandas sums in another order, which changes the last bits.
    means = [(float(np.nanmean(g[scheme].to_numpy(float))), float(np.nanmean(g[baseline].to_numpy(float))))
             for _, g in wide.groupby(by, sort=True)]
    higher = metric in HIGHER_IS_BETTER
    rows = [{**{c: ci[c] for c in by}, "scheme": scheme, "baseline": baseline, "metric": metric,
             "scheme_mean": am, "baseline_mean": bm, "diff_mean": ci["mean"],
             "diff_ci_low": ci["ci_low"], "diff_ci_high": ci["ci_high"], "n": int(ci["n"]),
             "improvement_pct": 100.0 * (am - bm if higher else bm - am) / bm if bm != 0 else np.nan,
             "below": bool(am < bm), "better": bool(am > bm) if higher else bool(am < bm),
             "significant": bool(ci["ci_high"] < 0 or ci["ci_low"] > 0)}
            for ci, (am, bm) in zip(paired.to_dict("records"), means)]
    return pd.DataFrame(rows)


def scheme_pair(table, scheme, baseline, owner: str, table_name: str = "results") -> tuple[str, str]:
    """Two different schemes (keys or aliases) of ``table["scheme"]``, as their canonical keys."""
    scheme, baseline = canonical(scheme, owner, "scheme"), canonical(baseline, owner, "baseline")
    present = set(table["scheme"])
    for arg, key in (("scheme", scheme), ("baseline", baseline)):
        if key not in present:
            raise invalid(arg, owner, f"a scheme of {table_name} ({', '.join(sorted(map(str, present)))})", key)
    if scheme == baseline:
        raise invalid("baseline", owner, f"a scheme other than scheme={scheme!r}", baseline)
    return scheme, baseline


@validate_params({"results": Frame(("regime", "model", "scheme", "stragglers", "n_workers", "n_inputs")),
                  "metrics": COLUMNS, "level": LEVEL, "logy": COLUMNS})
def plot_sweep(results, regime: str, metrics: Sequence[str] = ("relacc", "loss"), level: float = 0.95,
               logy: Sequence[str] = ("loss", "rmse_norms", "rmse_rms")):
    """Figure of ``metrics`` against S in one regime: rows = metrics, columns = models (Figs. 3-4).

    Lines are means over trials, bands the ``level`` t-intervals (:func:`gcc.summary.summarize`).

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`run_sweeps`.
    regime : str
        Which regime (``"low"``: the paper's Fig. 3, ``"high"``: Fig. 4).
    metrics : sequence of str
        Columns to plot, one row of panels each.
    level : float in (0, 1)
        Confidence level of the bands.
    logy : sequence of str
        Metrics drawn on a log axis.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..summary import summarize
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
        if metric in logy:
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
    import pandas as pd

    return pd.concat([lambdas.pivot_table(index=["model", "regime"], columns="stragglers", values=column)
                      .reset_index().assign(value=column) for column in values], ignore_index=True)
