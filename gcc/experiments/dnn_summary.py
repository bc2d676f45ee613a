"""GCC against BACC on deep networks at several (N, K, |F|): the paper's Table 1.

Contents
--------
table_runs
    Simulations at several (N, K, |F|) for one model, each with its own cross-validated lambdas.
summary_table, wide_summary
    Mean loss, both RMSE readings and RelAcc with intervals per (model, N, K, |F|, scheme)
    (:func:`gcc.summary.summarize`), and its Table-1-like wide form for display.
improvement_table, PAPER_IMPROVEMENT
    GCC's improvement over BACC in percent, beside the averages the paper reports.
run_tables
    :func:`table_runs` for every prepared model.

The runners underneath (tuning, simulation, paired comparison) are in
:mod:`gcc.experiments.dnn_stragglers`.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Coded Computing for Resilient Distributed
   Computing: A Learning-Theoretic Framework", NeurIPS 2024, arXiv:2406.00300, Sec. 5.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..validation import SEED, Constraint, NoneOr, Rejected, invalid, validate_params
from .dnn_checks import COLUMNS, F, GRID, LEVEL, PREPARED, SCHEMES, SPLITS, TEXT, TRIALS, Frame, check_scheme_pair, is_int
from .dnn_models import family_of
from .dnn_stragglers import COMPARED_SCHEMES, front_columns, lambdas_at, run_config, split_getter, tune_lambdas

__all__ = ["PAPER_IMPROVEMENT", "TABLE_METRICS", "CONFIG_COLUMNS", "CONFIGS", "Configs", "table_runs", "run_tables", "summary_table",
           "wide_summary", "improvement_table"]

#: The columns that identify one Table-1 configuration.
CONFIG_COLUMNS = ("model", "dataset", "n_workers", "n_inputs", "received")

#: The paper's average improvement of LeTCC over BACC (NeurIPS 2024, Sec. 5), in percent.
PAPER_IMPROVEMENT = {
    "lenet5": {"paper_model": "LeNet5 / MNIST", "rmse": 15.0, "relacc": 2.0},
    "repvgg": {"paper_model": "RepVGG / CIFAR-10", "rmse": 17.0, "relacc": 5.0},
    "vit": {"paper_model": "ViT-B/16 / ImageNet-1K", "rmse": 9.0, "relacc": 4.0},
}

#: The metrics of Table 1, in display order (those present in the results are used).
TABLE_METRICS = ("loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal")


class Configs(Constraint):
    """A non-empty sequence of (N, K, |F|) triples of ints with 1 <= K and 1 <= |F| <= N, as a list of int triples."""

    def describe(self) -> str:
        return "a non-empty sequence of (N, K, |F|) triples of ints with K >= 1 and 1 <= |F| <= N"

    def convert(self, value, name: str = "value"):
        if isinstance(value, (str, bytes)) or np.ndim(value) not in (1, 2) or len(value) == 0:
            raise Rejected()
        out = []
        for i, triple in enumerate(value):
            if isinstance(triple, (str, bytes)) or np.ndim(triple) != 1 or len(triple) != 3 \
                    or not all(is_int(v) for v in triple):
                raise Rejected(f"{name}[{i}] = {triple!r} is not three ints")
            n_workers, n_inputs, received = (int(v) for v in triple)
            if n_inputs < 1 or not 1 <= received <= n_workers:
                raise Rejected(f"{name}[{i}] = {triple!r}")
            out.append((n_workers, n_inputs, received))
        return out


#: Table-1 configurations
CONFIGS = Configs()
#: a lambdas table to reuse
LAMBDAS = NoneOr(Frame(("model", "n_workers", "n_inputs", "stragglers", "lam_enc", "lam_dec")))


@validate_params({"f": F, "model": TEXT, "splits": SPLITS, "configs": CONFIGS, "trials": TRIALS, "seed": SEED,
                  "lam_enc_grid": GRID, "lam_dec_grid": GRID, "tune_trials": TRIALS, "schemes": SCHEMES,
                  "dataset": NoneOr(TEXT), "lambdas": LAMBDAS})
def table_runs(f, model: str, splits, configs: Sequence[Sequence[int]], trials: int, seed: int,
               lam_enc_grid=None, lam_dec_grid=None, tune_trials: int = 10,
               schemes: Sequence[str] = COMPARED_SCHEMES, dataset: str | None = None, lambdas=None):
    """Simulations at several (N, K, |F|) for one model (the paper's Table 1).

    Each configuration gets its own cross-validated (lambda_enc, lambda_dec), tuned on validation
    batches at its S = N - |F|, or taken from ``lambdas`` when that table holds the pair (the
    straggler sweep's, tuned by the same protocol with the same validation seed).

    Parameters
    ----------
    f : callable
        The workers' function.
    model : str
        Name for the ``model`` column.
    splits : gcc.dnn.data.ImageData or mapping
        With ``x_val, y_val, x_test, y_test``.
    configs : sequence of (N, K, |F|)
    trials, seed, lam_enc_grid, lam_dec_grid, tune_trials, schemes, dataset
        As in :func:`gcc.experiments.dnn_stragglers.straggler_sweep`.
    lambdas : pandas.DataFrame, optional
        A lambdas table (:data:`~gcc.experiments.dnn_stragglers.LAMBDA_COLUMNS`) to reuse.

    Returns
    -------
    results : pandas.DataFrame
        Tidy rows as ``straggler_sweep``'s, with ``regime`` = ``"N=..,K=.."``.
    lambdas : pandas.DataFrame
        The selected (lambda_enc, lambda_dec) per configuration:
        :data:`gcc.experiments.dnn_stragglers.LAMBDA_COLUMNS` and ``reused`` (taken from
        ``lambdas``; its ``validation_loss`` is then NaN).
    """
    import pandas as pd

    from .dnn_stragglers import LAMBDA_COLUMNS

    get = split_getter(splits)
    dataset = dataset if dataset is not None else str(getattr(splits, "name", ""))
    for n_workers, n_inputs, _ in configs:
        for key in ("val", "test"):
            if n_inputs > len(get(f"x_{key}")):
                raise invalid("configs", "table_runs", f"(N, K, |F|) triples with K <= the images in x_{key} "
                              f"({len(get(f'x_{key}'))})", configs, f"K = {n_inputs}")
    frames, chosen = [], []
    for n_workers, n_inputs, received in configs:
        s = n_workers - received
        found = lambdas_at(lambdas, model, n_workers, n_inputs, s) if lambdas is not None else None
        if found is None:
            sel = tune_lambdas(f, get("x_val"), get("y_val"), n_inputs, n_workers, s, lam_enc_grid, lam_dec_grid,
                               trials=tune_trials, seed=seed + 1000)
            lam_enc, lam_dec, score = sel.lam_enc, sel.lam_dec, sel.score
        else:
            (lam_enc, lam_dec), score = found, np.nan
        regime = f"N={n_workers},K={n_inputs}"
        chosen.append({"model": model, "dataset": dataset, "regime": regime, "stragglers": s,
                       "lam_enc": lam_enc, "lam_dec": lam_dec, "n_workers": n_workers, "n_inputs": n_inputs,
                       "received": received, "tuned_at": s, "validation_loss": score,
                       "reused": found is not None})
        frames.append(run_config(f, get("x_test"), get("y_test"), n_inputs, n_workers, [s], trials, seed,
                                 lam_enc, lam_dec, schemes,
                                 extra_columns={"model": model, "dataset": dataset, "regime": regime}))
    return (front_columns(pd.concat(frames, ignore_index=True)),
            pd.DataFrame(chosen, columns=LAMBDA_COLUMNS + ["reused"]))


@validate_params({"prepared": PREPARED, "configs": CONFIGS, "trials": TRIALS, "seed": SEED, "lam_grid": GRID,
                  "tune_trials": TRIALS, "schemes": SCHEMES, "lambdas": LAMBDAS})
def run_tables(prepared, configs: Sequence[Sequence[int]], trials: int, seed: int, lam_grid=None,
               tune_trials: int = 10, schemes: Sequence[str] = COMPARED_SCHEMES, lambdas=None):
    """:func:`table_runs` for every prepared model (:func:`gcc.experiments.dnn_models.prepare_models`).

    ``lambdas`` (the straggler sweep's table) supplies the pairs it holds; the others are tuned.

    Returns
    -------
    results, lambdas : pandas.DataFrame
        Concatenated over the models.
    """
    import pandas as pd

    outs = [table_runs(p["f"], name, p["splits"], configs, trials=trials, seed=seed, lam_enc_grid=lam_grid,
                       lam_dec_grid=lam_grid, tune_trials=tune_trials, schemes=schemes,
                       dataset=p["info"].get("dataset"), lambdas=lambdas)
            for name, p in prepared.items()]
    return (pd.concat([o[0] for o in outs], ignore_index=True),
            pd.concat([o[1] for o in outs], ignore_index=True))


@validate_params({"results": Frame(), "by": COLUMNS, "level": LEVEL})
def summary_table(results, by: Sequence[str] = CONFIG_COLUMNS + ("scheme",),
                  level: float = 0.95):
    """Table-1 statistics: mean and interval of loss, both RMSE readings and RelAcc per configuration.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`table_runs` / ``straggler_sweep``.
    by : sequence of str
        Grouping; ``received`` is |F| = N - S.
    level : float in (0, 1)
        Confidence level.

    Returns
    -------
    pandas.DataFrame
        Long table of :func:`gcc.summary.summarize`: ``by`` columns, ``metric`` (the
        :data:`TABLE_METRICS` present) and ``mean``, ``std``, ``ci_low``, ``ci_high``,
        ``half_width``, ``n``, ``n_nan``. RelAcc is NaN in a trial where the uncoded model gets
        the whole batch wrong; such trials count in ``n_nan``, not in the mean.
    """
    from ..summary import summarize

    metrics = [m for m in TABLE_METRICS if m in results.columns]
    if not metrics:
        raise invalid("results", "summary_table", f"a table with at least one of the columns {', '.join(TABLE_METRICS)}",
                      results, f"its columns are {list(results.columns)}")
    table = summarize(results, metrics, by=by, level=level)
    if len(metrics) == 1:  # summarize names the metric only when there are several
        table.insert(len(by), "metric", metrics[0])
    return table


#: Display suffixes of the statistics in :func:`wide_summary`.
_SUFFIX = {"half_width": "±"}


_STATISTICS = ("mean", "std", "ci_low", "ci_high", "half_width", "n", "n_nan")


@validate_params({"summary": Frame(("metric",) + _STATISTICS), "values": COLUMNS, "metrics": NoneOr(COLUMNS)})
def wide_summary(summary, values: Sequence[str] = ("mean", "half_width"), metrics: Sequence[str] | None = None):
    """The Table-1-like display of a :func:`summary_table`: one row per configuration and scheme.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`summary_table`.
    values : sequence of str
        Statistics shown per metric (columns of the summary).
    metrics : sequence of str, optional
        Metrics shown, in this order; default all, in :data:`TABLE_METRICS` order.

    Returns
    -------
    pandas.DataFrame
        The grouping columns, then one column per (metric, statistic) named ``<metric>`` for the
        mean, ``<metric> ±`` for the half-width and ``<metric> <statistic>`` for the others (e.g.
        ``"loss"``, ``"loss ±"``, ``"loss n"``). For display only: the saved table is the long one.
    """
    index = [c for c in summary.columns if c not in ("metric",) + _STATISTICS]
    present = set(summary["metric"])
    bad = [v for v in values if v not in _STATISTICS]
    if bad or not values:
        raise invalid("values", "wide_summary", f"a non-empty list of statistics among {', '.join(_STATISTICS)}", values)
    if metrics is None:
        metrics = [m for m in TABLE_METRICS if m in present] + sorted(present - set(TABLE_METRICS))
    elif [m for m in metrics if m not in present]:
        raise invalid("metrics", "wide_summary", f"metrics of the summary ({', '.join(sorted(map(str, present)))})",
                      metrics)
    wide = summary.pivot(index=index, columns="metric", values=list(values))
    out = wide.index.to_frame(index=False)
    for m in metrics:
        for v in values:
            out[m if v == "mean" else f"{m} " + _SUFFIX.get(v, v)] = wide[(v, m)].to_numpy()
    return out


@validate_params({"results": Frame(("scheme", "loss", "rmse_norms", "rmse_rms", "relacc")), "by": COLUMNS})
def improvement_table(results, scheme: str = "gcc", baseline: str = "bacc",
                      by: Sequence[str] = CONFIG_COLUMNS):
    """GCC's improvement over BACC in percent per configuration, beside the paper's averages.

    RMSE (both readings) and the loss improve when they decrease:
    100 (baseline - scheme) / baseline; RelAcc improves when it increases:
    100 (scheme - baseline) / baseline. The last rows per model (``n_workers`` = "mean") average
    the configurations, which is what the paper reports (NeurIPS 2024, Sec. 5: RMSE better by
    15 / 17 / 9 % and RelAcc by 2 / 5 / 4 % for LeNet5 / RepVGG / ViT).

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`table_runs`.
    scheme, baseline : str
        Scheme keys (aliases accepted).
    by : sequence of str
        The configuration columns; must include ``model``.

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, ``scheme``, ``baseline``, ``loss_pct``, ``rmse_norms_pct``,
        ``rmse_rms_pct``, ``relacc_pct``, ``paper_model``, ``paper_rmse_pct``,
        ``paper_relacc_pct``.
    """
    import pandas as pd

    owner = "improvement_table"
    scheme, baseline = check_scheme_pair(results, scheme, baseline, owner)
    if "model" not in by or [c for c in by if c not in results.columns]:
        raise invalid("by", owner, f"columns of results that include 'model' ({', '.join(map(str, results.columns))})",
                      by)
    idx = list(by)
    means = summary_table(results, by=tuple(idx) + ("scheme",)).pivot(index=idx + ["scheme"], columns="metric",
                                                                        values="mean")
    a = means.xs(scheme, level="scheme")
    b = means.xs(baseline, level="scheme")
    out = pd.DataFrame(index=a.index)
    for m in ("loss", "rmse_norms", "rmse_rms"):
        out[f"{m}_pct"] = 100.0 * (b[m] - a[m]) / b[m]
    out["relacc_pct"] = 100.0 * (a["relacc"] - b["relacc"]) / b["relacc"]
    out = out.reset_index()
    pct = ["loss_pct", "rmse_norms_pct", "rmse_rms_pct", "relacc_pct"]
    keep = [c for c in ("model", "dataset") if c in idx]
    averages = out.groupby(keep, sort=True)[pct].mean().reset_index()
    for col in idx:
        if col not in keep:
            averages[col] = "mean"
    out = pd.concat([out.astype({c: object for c in idx if c not in keep}), averages[out.columns]],
                    ignore_index=True)
    out.insert(len(idx), "scheme", scheme)
    out.insert(len(idx) + 1, "baseline", baseline)
    family = out["model"].map(family_of)
    out["paper_model"] = family.map(lambda m: PAPER_IMPROVEMENT.get(m, {}).get("paper_model", ""))
    out["paper_rmse_pct"] = family.map(lambda m: PAPER_IMPROVEMENT.get(m, {}).get("rmse", np.nan))
    out["paper_relacc_pct"] = family.map(lambda m: PAPER_IMPROVEMENT.get(m, {}).get("relacc", np.nan))
    return out
