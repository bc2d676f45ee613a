"""GCC against BACC on deep networks at several (N, K, |F|): the paper's Table 1.

:func:`run_tables` runs the configurations; :func:`summary_table` gives the statistics and
:func:`improvement_intervals` GCC's improvement over BACC with paired bootstrap intervals.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, NeurIPS 2024, arXiv:2406.00300, Sec. 5.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Sequence

import numpy as np
import pandas as pd

from ..summary import summarize
from ..validation import SEED, Interval, NoneOr, Rejected, invalid, validate, validate_params
from ..dnn._checks import COLUMNS, GRID, LEVEL, PREPARED, SCHEMES, TRIALS, As, Frame, Setting, Splits
from .dnn_models import family_of
from .dnn_runs import COMPARED_SCHEMES, check_pool_sizes, dataset_of, tuned_runs
from .dnn_stragglers import METRIC_LABELS
from .verdicts import band_verdict

__all__ = ["PAPER_IMPROVEMENT", "CONFIG_SOURCES", "TABLE_METRICS", "CONFIG_COLUMNS", "CONFIGS",
           "run_tables", "summary_table", "wide_summary", "improvement_intervals", "quoted_values",
           "plot_improvement"]

#: The columns that identify one Table-1 configuration.
CONFIG_COLUMNS = ("model", "dataset", "n_workers", "n_inputs", "received")

#: The paper's average improvement of LeTCC over BACC (NeurIPS 2024, Sec. 5), in percent.
PAPER_IMPROVEMENT = {
    "lenet5": {"paper_model": "LeNet5 / MNIST", "rmse": 15.0, "relacc": 2.0},
    "repvgg": {"paper_model": "RepVGG / CIFAR-10", "rmse": 17.0, "relacc": 5.0},
    "vit": {"paper_model": "ViT-B/16 / ImageNet-1K", "rmse": 9.0, "relacc": 4.0},
}

#: Where each family's (N, K) comes from.
CONFIG_SOURCES = {"lenet5": "paper (App. E)", "repvgg": "paper (App. E)", "vit": "companion (LeNet's; none given)"}

#: The metrics of Table 1, in display order (those present in the results are used).
TABLE_METRICS = ("loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal")


def _configs(value) -> list:
    if isinstance(value, (str, bytes, Mapping)) or np.ndim(value) not in (1, 2) or len(value) == 0:
        raise Rejected()
    return [Setting.of(triple, received=True) for triple in value]


#: Table-1 configurations: (N, K, |F|) triples, as Settings
CONFIGS = As(_configs, "a non-empty sequence of (N, K, |F|) triples of ints with 1 <= K <= N and 1 <= |F| <= N")
#: a lambdas table to reuse
LAMBDAS = NoneOr(Frame(("model", "n_workers", "n_inputs", "stragglers", "lam_enc", "lam_dec")))


@validate_params({"prepared": PREPARED, "trials": TRIALS, "seed": SEED, "lam_grid": GRID,
                  "tune_trials": TRIALS, "schemes": SCHEMES, "lambdas": LAMBDAS})
def run_tables(prepared, configs, trials: int, seed: int, lam_grid=None,
               tune_trials: int = 10, schemes: Sequence[str] = COMPARED_SCHEMES, lambdas=None):
    """Simulations at several (N, K, |F|) for every prepared network (the paper's Table 1).

    Each configuration gets its own cross-validated lambdas, or those of ``lambdas`` when it holds them.

    Parameters
    ----------
    prepared : gcc.experiments.dnn_models.PreparedModels
    configs : sequence of (N, K, |F|), or mapping network family -> such a sequence
        The configurations of every network, or of each family (:func:`~.dnn_models.family_of`).
    trials, seed, lam_grid, tune_trials, schemes
        As in :func:`gcc.experiments.dnn_stragglers.run_sweeps`.
    lambdas : pandas.DataFrame, optional
        A lambdas table (:data:`~gcc.experiments.dnn_runs.LAMBDA_COLUMNS`) to reuse.

    Returns
    -------
    results : pandas.DataFrame
        Tidy rows as ``run_sweeps``', with ``regime`` = ``"N=..,K=.."``.
    lambdas : pandas.DataFrame
        The lambdas per configuration, with ``reused``.
    """
    owner = "run_tables"
    per_model, splits = {}, {}
    for name, p in prepared.items():   # all checked before anything runs
        mine = configs
        if isinstance(configs, Mapping):
            family = family_of(name)
            if family not in configs:
                raise invalid("configs", owner, "a sequence of (N, K, |F|) or a mapping network family -> such "
                              "a sequence with every prepared family", dict(configs), f"no entry for {family!r}")
            mine = configs[family]
        per_model[name], splits[name] = validate(mine, CONFIGS, "configs", owner), Splits.of(p["splits"])
        check_pool_sizes(splits[name], per_model[name], "configs", configs, owner)
    outs = [tuned_runs(p["f"], name, splits[name], per_model[name], trials, seed, lam_grid, tune_trials, schemes,
                        dataset_of(p, splits[name]), lambdas=lambdas, reuse=True) for name, p in prepared.items()]
    return (pd.concat([o[0] for o in outs], ignore_index=True),
            pd.concat([o[1] for o in outs], ignore_index=True))


@validate_params({"results": Frame(), "by": COLUMNS, "level": LEVEL})
def summary_table(results, by: Sequence[str] = CONFIG_COLUMNS + ("scheme",),
                  level: float = 0.95):
    """Table-1 statistics: mean and interval of loss, both RMSE readings and RelAcc per configuration.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`run_tables`.
    by : sequence of str
        Grouping columns.
    level : float in (0, 1)
        Confidence level.

    Returns
    -------
    pandas.DataFrame
        Long table of :func:`gcc.summary.summarize`, with ``metric``; NaN trials count in ``n_nan``.
    """
    metrics = [m for m in TABLE_METRICS if m in results.columns]
    if not metrics:
        raise invalid("results", "summary_table", f"a table with at least one of the columns {', '.join(TABLE_METRICS)}",
                      results, f"its columns are {list(results.columns)}")
    table = summarize(results, metrics, by=by, level=level)
    if len(metrics) == 1:  # summarize names the metric only when there are several
        table.insert(len(by), "metric", metrics[0])
    return table


_STATISTICS = ("mean", "std", "ci_low", "ci_high", "half_width", "n", "n_nan")


@validate_params({"summary": Frame(("metric",) + _STATISTICS), "metrics": NoneOr(COLUMNS)})
def wide_summary(summary, metrics: Sequence[str] | None = None):
    """The Table-1-like display of a :func:`summary_table`: one row per configuration and scheme.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`summary_table`.
    metrics : sequence of str, optional
        Metrics shown, in this order; default all, in :data:`TABLE_METRICS` order.

    Returns
    -------
    pandas.DataFrame
        The configuration columns, then ``<metric>`` (the mean) and ``<metric> ±`` (the half-width).
    """
    index = [c for c in summary.columns if c not in ("metric",) + _STATISTICS]
    present = set(summary["metric"])
    if metrics is None:
        metrics = [m for m in TABLE_METRICS if m in present] + sorted(present - set(TABLE_METRICS))
    elif [m for m in metrics if m not in present]:
        raise invalid("metrics", "wide_summary", f"metrics of the summary ({', '.join(sorted(map(str, present)))})",
                      metrics)
    wide = summary.pivot(index=index, columns="metric", values=["mean", "half_width"])
    out = wide.index.to_frame(index=False)
    for m in metrics:
        out[m] = wide[("mean", m)].to_numpy()
        out[f"{m} ±"] = wide[("half_width", m)].to_numpy()
    return out


def _bootstrap_pct(a: np.ndarray, b: np.ndarray, higher: bool, idx: np.ndarray) -> np.ndarray:
    """100 (b - a) / b of the means (``100 (a - b) / b`` when higher is better), per resample row of ``idx``."""
    am, bm = np.nanmean(a[idx], axis=1), np.nanmean(b[idx], axis=1)
    return 100.0 * ((am - bm) if higher else (bm - am)) / bm


@validate_params({"results": Frame(("scheme", "trial")), "by": COLUMNS, "metrics": COLUMNS, "level": LEVEL,
                  "n_boot": Interval(int, 100, None), "seed": SEED})
def improvement_intervals(results, metrics: Sequence[str] = ("rmse_norms", "rmse_rms", "relacc"),
                          by: Sequence[str] = CONFIG_COLUMNS, n_boot: int = 4000, level: float = 0.95, seed: int = 0):
    """GCC's improvement over BACC per configuration with a paired bootstrap interval, and the average's.

    The average resamples each configuration's trials independently; it reproduces the paper when its
    interval covers :data:`PAPER_IMPROVEMENT`, and a configuration is decided when its interval excludes 0.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`run_tables`.
    metrics : sequence of str
        Columns compared (losses improve downwards, ``relacc``/``accuracy`` upwards).
    by : sequence of str
        The configuration columns, including ``model``.
    n_boot : int
        Bootstrap resamples.
    level : float in (0, 1)
        Confidence level.
    seed : int
        Seed of the resamples.

    Returns
    -------
    pandas.DataFrame
        ``by``, ``metric``, ``improvement_pct``, ``ci_low``, ``ci_high``, ``paper_pct``, ``verdict`` ...

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.experiments.dnn_summary import improvement_intervals
    >>> df = pd.DataFrame({"model": "lenet5", "n_workers": 10, "trial": [0, 1, 2, 0, 1, 2],
    ...                    "scheme": ["gcc"] * 3 + ["bacc"] * 3, "rmse_norms": [0.8, 0.9, 0.85, 1.0, 1.0, 1.0]})
    >>> out = improvement_intervals(df, ["rmse_norms"], by=["model", "n_workers"], n_boot=200)
    >>> out[["n_workers", "improvement_pct", "verdict"]].round(1).values.tolist()
    [[10, 15.0, 'GCC better'], ['mean', 15.0, "reproduces the paper's figure"]]
    """
    owner = "improvement_intervals"
    scheme, baseline = "gcc", "bacc"
    if not {scheme, baseline} <= set(results["scheme"]):
        raise invalid("results", owner, "rows of run_tables() with the schemes gcc and bacc", results)
    by = list(by)
    columns = ", ".join(map(str, results.columns))
    if "model" not in by or [c for c in by if c not in results.columns]:
        raise invalid("by", owner, f"columns of results that include 'model' ({columns})", by)
    if not metrics or [m for m in metrics if m not in results.columns]:
        raise invalid("metrics", owner, f"a non-empty list of columns of results ({columns})", metrics)
    alpha = 100 * (1 - level) / 2
    keep = [c for c in ("model", "dataset") if c in by]
    rng = np.random.default_rng(seed)
    rows = []
    for metric in metrics:
        higher = metric in ("relacc", "accuracy", "relacc_literal")
        wide = results.pivot_table(index=by + ["trial"], columns="scheme", values=metric).reset_index()
        for key, net in wide.groupby(keep, sort=True):
            key = key if isinstance(key, tuple) else (key,)
            family = family_of(str(net["model"].iloc[0]))
            paper = PAPER_IMPROVEMENT.get(family, {})
            paper_pct = paper.get("relacc" if higher else "rmse", np.nan) if metric != "loss" else np.nan
            reps = []
            for config, g in net.groupby(by, sort=True):
                a, b = g[scheme].to_numpy(float), g[baseline].to_numpy(float)
                idx = rng.integers(0, len(a), size=(n_boot, len(a)))
                boot = _bootstrap_pct(a, b, higher, idx)
                reps.append(boot)
                point = float(_bootstrap_pct(a, b, higher, np.arange(len(a))[None, :])[0])
                lo, hi = np.nanpercentile(boot, [alpha, 100 - alpha])
                sign = band_verdict(lo, hi, 0.0, 0.0)
                rows.append({**dict(zip(by, config)), "metric": metric, "improvement_pct": point, "ci_low": lo,
                             "ci_high": hi, "n": len(a), "paper_model": paper.get("paper_model", ""),
                             "paper_pct": np.nan, "config_source": CONFIG_SOURCES.get(family, "companion"),
                             "verdict": {"above": "GCC better", "below": "BACC better"}.get(sign, "undecided")})
            points = [r["improvement_pct"] for r in rows[-len(reps):]]
            avg = np.mean(np.vstack(reps), axis=0)
            lo, hi = np.nanpercentile(avg, [alpha, 100 - alpha])
            where = band_verdict(paper_pct, paper_pct, lo, hi) if np.isfinite(paper_pct) else "not measured"
            words = {"inside": "reproduces the paper's figure", "below": "above the paper's figure",
                     "above": "below the paper's figure"}.get(where, "no paper figure")
            rows.append({**dict(zip(keep, key)), **{c: "mean" for c in by if c not in keep}, "metric": metric,
                         "improvement_pct": float(np.mean(points)), "ci_low": lo, "ci_high": hi, "n": len(reps),
                         "paper_model": paper.get("paper_model", ""), "paper_pct": paper_pct,
                         "config_source": CONFIG_SOURCES.get(family, "companion"), "verdict": words})
    out = pd.DataFrame(rows)
    return out.astype({c: object for c in by if c not in keep})


def quoted_values(intervals) -> list[dict]:
    """The numbers the pages quote from :func:`improvement_intervals`, as keyword arguments of ``RunContext.value``.

    Parameters
    ----------
    intervals : pandas.DataFrame
        :func:`improvement_intervals`.

    Returns
    -------
    list of dict
    """
    means = intervals[intervals["n_workers"] == "mean"]
    out = []
    for _, row in means.iterrows():
        key = f"{row['model']}_{row['metric']}"
        out += [{"key": f"{key}_pct", "number": row["improvement_pct"], "unit": "%", "digits": 2,
                 "note": f"GCC's mean improvement over BACC, {row['metric']}, {row['model']}"},
                {"key": f"{key}_ci", "number": f"[{row['ci_low']:.1f}, {row['ci_high']:.1f}] %",
                 "note": f"bootstrap 95% interval of that mean, {row['metric']}, {row['model']}"},
                {"key": f"{key}_verdict", "number": row["verdict"], "note": f"against the paper's {row['paper_pct']:g}%"}]
    configs = intervals[intervals["n_workers"] != "mean"]
    out += [{"key": "gcc_better_configs", "number": int((configs["verdict"] == "GCC better").sum()),
             "note": "(network, configuration, metric) rows where GCC is significantly better"},
            {"key": "bacc_better_configs", "number": int((configs["verdict"] == "BACC better").sum()),
             "note": "... where BACC is significantly better"},
            {"key": "config_rows", "number": len(configs), "note": "(network, configuration, metric) rows"},
            {"key": "reproduced", "number": int((means["verdict"] == "reproduces the paper's figure").sum()),
             "note": f"averages whose interval covers the paper's figure (of {len(means)})"}]
    return out


def plot_improvement(intervals):
    """Table 1 as a figure: GCC's improvement over BACC (%) per network, one panel per metric.

    Parameters
    ----------
    intervals : pandas.DataFrame
        :func:`improvement_intervals`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .plotting import figure, finish, legend_outside, scheme_color

    metrics = [m for m in ("rmse_norms", "rmse_rms", "relacc") if m in set(intervals["metric"])]
    models = list(dict.fromkeys(intervals["model"]))
    fig, axes = figure(len(metrics), height=0.45 * len(models) + 1.6, sharey=True)
    for ax, metric in zip(axes, metrics):
        part = intervals[intervals["metric"] == metric]
        for y, model in enumerate(models):
            rows = part[part["model"] == model]
            configs = rows[rows["n_workers"].astype(str) != "mean"]
            ax.plot(configs["improvement_pct"], np.full(len(configs), y + 0.22), "o", color="0.6", ms=3,
                    label="one configuration")
            mean = rows[rows["n_workers"].astype(str) == "mean"]
            if len(mean):
                m = mean.iloc[0]
                ax.errorbar([m["improvement_pct"]], [y], xerr=[[m["improvement_pct"] - m["ci_low"]],
                                                               [m["ci_high"] - m["improvement_pct"]]],
                            fmt="o", color=scheme_color("gcc"), capsize=3, label="mean, 95% interval")
                if np.isfinite(float(m["paper_pct"])):
                    ax.plot([m["paper_pct"]], [y], "x", color="black", ms=7, mew=1.5, label="the paper's figure")
        ax.axvline(0, color="0.35", lw=0.8)
        ax.set_yticks(range(len(models)), models)
        ax.set_ylim(len(models) - 0.5, -0.6)
        ax.set_title(METRIC_LABELS.get(metric, metric))
        ax.set_xlabel("GCC over BACC (%)")
    legend_outside(fig, axes[:1], ncol=3)
    return finish(fig)
