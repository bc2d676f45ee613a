"""Deep networks under stragglers: RelAcc and loss against S (the paper's Figs. 3 and 4).

The workers compute f = the softmax output of a trained classifier (:mod:`gcc.dnn`, set up by
:func:`gcc.experiments.dnn_models.prepare_models`) on their coded images. Every runner returns
a tidy :class:`pandas.DataFrame` (one row per measurement, with ``model`` and ``dataset``
columns) that a notebook saves and plots from. The simulations are done by
:func:`gcc.harness.run_trials` (identical inputs and straggler sets for every scheme in a
trial); GCC's (lambda_enc, lambda_dec) are chosen by :func:`gcc.tuning.select_lambdas` on
validation batches for each (model, regime, S), as the paper does (its App. E, Table 3, lists
the optimum per S).

Contents
--------
batch_source, tune_lambdas, run_config
    A fresh batch of K images per trial; cross-validated lambdas; one (N, K) for several S.
straggler_sweep, run_sweeps
    RelAcc and loss against the number of stragglers S for one model / every prepared model,
    with the lambdas chosen per S (``tuning="per_s"``) or once per regime (``"single"``).
compare_schemes
    Paired GCC-vs-BACC verdict per (model, regime, S).
plot_sweep
    The Figs. 3-4 panels.

The Table-1 runner is in :mod:`gcc.experiments.dnn_summary`, the lambda study (Table 3, Fig. 6,
the recovery limit) in :mod:`gcc.experiments.dnn_lambda`.

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
from ..validation import SEED, InstanceOf, Interval, NoneOr, Options, check_int, invalid, validate, validate_params
from ..dnn._checks import (COLUMNS, COUNT, F, GRID, LAM, LEVEL, PREPARED, SCHEMES, SPLITS, TEST_SPLITS, TEXT, TRIALS,
                         TUNING_METRICS, Frame, IntList, check_per_regime, check_pool, check_regimes, check_scheme_pair,
                         check_sizes, check_straggler_list, check_stragglers, check_sweep, validate_model)

__all__ = ["LAMBDA_GRID", "EXTEND", "require_interior", "selection_columns", "COMPARED_SCHEMES", "HIGHER_IS_BETTER", "METRIC_LABELS", "LAMBDA_COLUMNS",
           "batch_source", "tune_lambdas", "run_config", "split_getter", "front_columns", "straggler_sweep",
           "run_sweeps", "compare_schemes", "plot_sweep", "middle_stragglers", "lambdas_at", "lambda_pivot"]

#: Default (lambda_enc, lambda_dec) grid: 0 (interpolation) and 1e-12 .. 1e-6, one point per
#: decade (so "off by x10" is one grid step). On [-1, 1] with tens of points the eq. (4) penalty
#: already smooths visibly at 1e-8 (the data term is an average, the knots are ~1/N apart), so
#: the grid of gcc.tuning (1e-8 .. 1) would only probe over-smoothed codes here.
LAMBDA_GRID = (0.0, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6)

#: Grid steps (decades) :func:`tune_lambdas` may add beyond each edge of each grid
#: (:func:`gcc.tuning.select_lambdas`' ``extend``) until every choice is interior; a choice still
#: on an edge is recorded (``lam_enc_edge``, ``lam_dec_edge``) and fails :func:`require_interior`.
EXTEND = 6

#: The schemes the DNN experiments compare (keys of :data:`gcc.codes.SCHEMES`).
COMPARED_SCHEMES = ("gcc", "bacc", "bspline")

#: Metrics where larger is better (the rest are losses).
HIGHER_IS_BETTER = ("relacc", "accuracy")

#: Columns of a lambdas table (one row per tuned (model, regime, S)).
LAMBDA_COLUMNS = ["model", "dataset", "regime", "stragglers", "lam_enc", "lam_dec", "n_workers", "n_inputs",
                  "received", "tuned_at", "validation_loss", "lam_enc_edge", "lam_dec_edge", "grid_points", "lam_enc_tol", "lam_dec_tol"]

#: Columns put first in the results tables.
_FRONT = ["model", "dataset", "regime", "scheme", "n_workers", "n_inputs", "stragglers", "trial", "loss", "relacc"]


@validate_params({"n_inputs": COUNT})
def batch_source(x, y, n_inputs: int) -> Callable:
    """A data source for :func:`gcc.harness.run_trials`: a fresh batch of K distinct images per trial.

    Parameters
    ----------
    x : array_like, shape (n, C, H, W)
        The pool (e.g. the test split).
    y : array_like of int, shape (n,)
        Labels.
    n_inputs : int
        K, at most n.

    Returns
    -------
    callable ``(rng, trial) -> (x_batch (K, C, H, W), y_batch (K,))``
        Draws from the harness's per-trial data generator, so the batch of trial t is the same
        for every scheme and every S run with the same seed.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.experiments.dnn_stragglers import batch_source
    >>> source = batch_source(np.zeros((10, 1, 4, 4)), np.arange(10), 3)
    >>> xb, yb = source(np.random.default_rng(0), 0)
    >>> xb.shape, len(set(yb.tolist()))
    ((3, 1, 4, 4), 3)
    """
    x, y = check_pool(x, y, "batch_source")
    n_inputs = check_int(n_inputs, "n_inputs", "batch_source", minimum=1, maximum=len(x),
                         constraint=f"an int in [1, {len(x)}] (the pool size)")

    def source(rng, trial):
        idx = rng.choice(len(x), size=n_inputs, replace=False)
        return x[idx], y[idx]

    return source


@validate_params({"f": F, "lam_enc_grid": GRID, "lam_dec_grid": GRID, "trials": TRIALS, "seed": SEED,
                  "metric": Options(TUNING_METRICS), "extend": Interval(int, 0, None)})
def tune_lambdas(f, x_val, y_val, n_inputs: int, n_workers: int, stragglers: int,
                 lam_enc_grid: Sequence[float] | None = None, lam_dec_grid: Sequence[float] | None = None,
                 trials: int = 10, seed: int = 1000, metric: str = "loss", straggler_model=None,
                 extend: int = EXTEND):
    """Choose GCC's (lambda_enc, lambda_dec) by grid search on held-out (validation) batches.

    Parameters
    ----------
    f : callable
        The workers' function (e.g. :class:`gcc.dnn.inference.SoftmaxFunction`).
    x_val, y_val : array_like
        Validation images (n, C, H, W) and labels; never the batches of the reported results.
    n_inputs, n_workers, stragglers : int
        K, N and the S at which to tune (S random stragglers, :class:`gcc.stragglers.FixedCount`).
    lam_enc_grid, lam_dec_grid : sequence of float, optional
        Grids; default :data:`LAMBDA_GRID`.
    trials : int
        Held-out draws (batch and straggler set) per grid point, shared by all grid points.
    seed : int
        Seed of those draws (keep it distinct from the evaluation seed).
    metric : str
        Criterion of :func:`gcc.tuning.select_lambdas` (``"loss"``: the paper's eq. (1)).
    straggler_model : gcc.stragglers model, optional
        Tune under this model instead (e.g. :class:`gcc.stragglers.Bernoulli`); ``stragglers``
        is then ignored.
    extend : int
        Grid steps that may be added beyond each edge (:data:`EXTEND`; see
        :func:`gcc.tuning.select_lambdas`).

    Returns
    -------
    gcc.tuning.LambdaSelection
        With ``enc_edge`` / ``dec_edge`` (:func:`gcc.tuning.grid_edge`) and the final grids.
    """
    from ..codes import make
    from ..stragglers import FixedCount
    from ..tuning import select_lambdas

    owner = "tune_lambdas"
    n_workers = check_sizes(x_val, y_val, n_inputs, n_workers, owner, "x_val", "y_val")
    straggler_model = validate_model(straggler_model, owner)
    if straggler_model is None:
        stragglers = check_stragglers(stragglers, n_workers, owner)
    lam_enc_grid = LAMBDA_GRID if lam_enc_grid is None else lam_enc_grid
    lam_dec_grid = LAMBDA_GRID if lam_dec_grid is None else lam_dec_grid
    model = straggler_model if straggler_model is not None else FixedCount(int(stragglers))
    return select_lambdas(lambda le, ld: make("gcc", n_inputs, n_workers, lam_enc=le, lam_dec=ld), f,
                          batch_source(x_val, y_val, n_inputs), model, lam_enc_grid=lam_enc_grid,
                          lam_dec_grid=lam_dec_grid, trials=trials, seed=seed, metric=metric, extend=extend)


def selection_columns(sel) -> dict:
    """The edge columns of a lambdas-table row for one :class:`gcc.tuning.LambdaSelection`, and the
    largest lambdas within 0.1% of the best score (:func:`gcc.tuning.tolerant_optimum`)."""
    from ..tuning import tolerant_optimum

    return {"lam_enc_edge": sel.enc_edge, "lam_dec_edge": sel.dec_edge,
            "grid_points": len(sel.lam_enc_grid) * len(sel.lam_dec_grid),
            "lam_enc_tol": tolerant_optimum(sel.table, "enc"), "lam_dec_tol": tolerant_optimum(sel.table, "dec")}


@validate_params({"lambdas": Frame(("lam_enc_edge", "lam_dec_edge")), "name": TEXT})
def require_interior(lambdas, name: str = "lambdas") -> None:
    """Fail (the library's ValueError) when a tuned lambda of a lambdas table sits on an edge of its grid.

    The notebooks call it on every table of tuned lambdas, so that a batch whose grid search
    ended on an edge fails instead of reporting an optimum that may lie beyond the grid
    (:func:`gcc.tuning.require_interior`; rows not tuned here, e.g. ``reused``, carry the
    tuning's own edge columns).
    """
    from ..tuning import require_interior as check

    check(lambdas.reset_index(drop=True), "require_interior", name)


@validate_params({"f": F, "trials": TRIALS, "seed": SEED, "lam_enc": LAM, "lam_dec": LAM, "schemes": SCHEMES,
                  "extra_columns": NoneOr(InstanceOf(Mapping, "a mapping column -> value"))})
def run_config(f, x_test, y_test, n_inputs: int, n_workers: int, stragglers: Sequence[int], trials: int,
               seed: int, lam_enc: float, lam_dec: float, schemes: Sequence[str] = COMPARED_SCHEMES,
               extra_columns: Mapping[str, Any] | None = None):
    """Simulate the schemes at one (N, K) for several S with :func:`gcc.harness.run_trials`.

    The same ``seed`` is used for every S, so trial t has the same input batch for every S and
    every scheme; for each (S, trial) all schemes share the straggler set.

    Parameters
    ----------
    f : callable
        The workers' function.
    x_test, y_test : array_like, shapes (n, C, H, W) and (n,)
        The pool of test images and their labels.
    n_inputs, n_workers : int
        K and N.
    stragglers : sequence of int
        The S values.
    trials, seed : int
        Trials per S and their seed.
    lam_enc, lam_dec : float
        GCC's smoothing parameters (ignored when GCC is not among ``schemes``).
    schemes : sequence of str
        Scheme keys of :func:`gcc.codes.make_many`.
    extra_columns : mapping, optional
        Constant columns (e.g. ``{"model": "vit"}``).

    Returns
    -------
    pandas.DataFrame
        :func:`gcc.harness.run_trials`'s rows for every S, plus ``lam_enc``/``lam_dec`` (GCC's;
        NaN for the other schemes) and ``extra_columns``.
    """
    import pandas as pd

    from ..harness import run_trials
    from ..stragglers import FixedCount

    owner = "run_config"
    n_workers = check_sizes(x_test, y_test, n_inputs, n_workers, owner, "x_test", "y_test")
    stragglers = check_straggler_list(stragglers, n_workers, owner)
    # make_many rejects a parameter that no listed code takes: GCC's lambdas go with GCC only.
    lams = {"lam_enc": lam_enc, "lam_dec": lam_dec} if "gcc" in map(canonical, schemes) else {}
    codes = make_many(schemes, n_inputs, n_workers, **lams)
    source = batch_source(x_test, y_test, n_inputs)
    frames = [run_trials(codes, f, source, FixedCount(int(s)), trials=trials, seed=seed,
                         extra_columns=dict(extra_columns or {}))
              for s in stragglers]
    out = pd.concat(frames, ignore_index=True)
    out["lam_enc"] = np.where(out["scheme"] == "gcc", lam_enc, np.nan)
    out["lam_dec"] = np.where(out["scheme"] == "gcc", lam_dec, np.nan)
    return out


@validate_params({"splits": TEST_SPLITS})
def split_getter(splits) -> Callable[[str], Any]:
    """``get(name)`` for ``x_val, y_val, x_test, y_test`` held as keys or as attributes of ``splits``.

    Parameters
    ----------
    splits : gcc.dnn.data.ImageData or mapping
        Holds at least ``x_test`` and ``y_test``.

    Returns
    -------
    callable ``get(name)``
        Raises the library's ValueError naming ``splits`` for a split it does not hold.
    """
    def get(key):
        try:
            return splits[key] if isinstance(splits, Mapping) else getattr(splits, key)
        except (KeyError, AttributeError):
            raise invalid("splits", "split_getter", f"data holding {key!r}", type(splits).__name__,
                          f"it has no {key!r}") from None
    return get


@validate_params({"results": Frame()})
def front_columns(results):
    """``results`` with the identifying columns (model, dataset, regime, scheme, N, K, S, trial, ...) first."""
    front = [c for c in _FRONT if c in results.columns]
    return results[front + [c for c in results.columns if c not in front]]


@validate_params({"lambdas": Frame(("model", "n_workers", "n_inputs", "stragglers", "lam_enc", "lam_dec")),
                  "model": TEXT, "n_workers": COUNT, "n_inputs": COUNT, "stragglers": Interval(int, 0, None)})
def lambdas_at(lambdas, model: str, n_workers: int, n_inputs: int, stragglers: int) -> tuple[float, float] | None:
    """``(lam_enc, lam_dec)`` of one (model, N, K, S) in a lambdas table, or None when it was not tuned."""
    hit = lambdas[(lambdas["model"] == model) & (lambdas["n_workers"] == n_workers)
                  & (lambdas["n_inputs"] == n_inputs) & (lambdas["stragglers"] == stragglers)]
    if hit.empty:
        return None
    return float(hit["lam_enc"].iloc[0]), float(hit["lam_dec"].iloc[0])


def lambda_pivot(lambdas, values: Sequence[str] = ("lam_dec_tol", "lam_dec", "lam_enc_tol", "lam_enc")):
    """The tuned lambdas as a page shows them: one row per (model, regime, value), one column per S.

    `lambdas` is a lambdas table of :func:`run_sweeps` (columns ``model, regime, stragglers`` and `values`).
    """
    import pandas as pd

    return pd.concat([lambdas.pivot_table(index=["model", "regime"], columns="stragglers", values=column)
                      .reset_index().assign(value=column) for column in values], ignore_index=True)


@validate_params({"s_values": IntList(0, min_len=0)})
def middle_stragglers(s_values: Sequence[int]) -> int:
    """The S at which ``tuning="single"`` tunes: the middle positive S of the sweep (0 if none).

    Examples
    --------
    >>> from gcc.experiments.dnn_stragglers import middle_stragglers
    >>> middle_stragglers([0, 5, 10, 15, 20, 25, 30, 35, 40])
    25
    """
    positive = [int(s) for s in s_values if s > 0] or [0]
    return positive[len(positive) // 2]


@validate_params({"f": F, "model": TEXT, "splits": SPLITS, "trials": TRIALS, "seed": SEED, "lam_enc_grid": GRID,
                  "lam_dec_grid": GRID, "tune_trials": TRIALS, "tuning": Options(("per_s", "single")),
                  "schemes": SCHEMES, "dataset": NoneOr(TEXT)})
def straggler_sweep(f, model: str, splits, regimes: Mapping[str, tuple[int, int]],
                    stragglers: Mapping[str, Sequence[int]], trials: int, seed: int,
                    lam_enc_grid=None, lam_dec_grid=None, tune_trials: int = 10, tuning: str = "per_s",
                    tune_stragglers: Mapping[str, int] | None = None, schemes: Sequence[str] = COMPARED_SCHEMES,
                    dataset: str | None = None):
    """RelAcc and loss against the number of stragglers S (the paper's Figs. 3 and 4).

    For each regime (N, K) and each S: choose GCC's lambdas on validation batches
    (:func:`tune_lambdas`), then simulate every scheme on test batches (:func:`run_config`).
    Trial t has the same input batch for every S and scheme; at each (S, t) every scheme
    sees the same straggler set.

    Parameters
    ----------
    f : callable
        The workers' function.
    model : str
        Model name for the ``model`` column.
    splits : gcc.dnn.data.ImageData or mapping
        Anything with ``x_val, y_val, x_test, y_test`` (attributes or keys).
    regimes : dict name -> (N, K)
        E.g. ``{"low": (100, 60), "high": (60, 20)}`` (low / high redundancy N/K).
    stragglers : dict name -> sequence of int
        The S values of each regime.
    trials, seed : int
        Repetitions per S (the paper: 20) and the evaluation seed.
    lam_enc_grid, lam_dec_grid : sequence of float, optional
        Tuning grids.
    tune_trials : int
        Held-out draws per grid point.
    tuning : {"per_s", "single"}
        ``"per_s"``: tune at every S (the paper's protocol); ``"single"``: tune once per regime at
        ``tune_stragglers`` (default the middle positive S) and use those lambdas for every S.
    tune_stragglers : dict name -> int, optional
        The S of ``"single"`` tuning.
    schemes : sequence of str
        Scheme keys.
    dataset : str, optional
        The ``dataset`` column; default ``splits.name`` (or ``""``).

    Returns
    -------
    results : pandas.DataFrame
        Tidy rows (model, dataset, regime, scheme, n_workers, n_inputs, stragglers, trial, loss,
        relacc, rmse_norms, rmse_rms, relacc_literal, accuracy, accuracy_base, lam_enc, lam_dec, ...).
    lambdas : pandas.DataFrame
        One row per (regime, S): :data:`LAMBDA_COLUMNS` (``tuned_at`` = the S tuned at).
    grid : pandas.DataFrame
        Every grid point's held-out statistics (:func:`gcc.tuning.select_lambdas`' table) per
        tuning, with ``model``, ``dataset``, ``regime``, ``stragglers`` (the S tuned at),
        ``n_workers``, ``n_inputs``.
    """
    import pandas as pd

    owner = "straggler_sweep"
    regimes = check_sweep(regimes, stragglers, splits, owner)
    if tune_stragglers is not None:
        tune_stragglers = check_per_regime(tune_stragglers, regimes, owner, "tune_stragglers",
                                           Interval(int, 0, None), required=False)
        for regime, s in tune_stragglers.items():
            check_stragglers(s, regimes[regime][0], owner, "tune_stragglers")
    get = split_getter(splits)
    dataset = dataset if dataset is not None else str(getattr(splits, "name", ""))
    frames, chosen, tables = [], [], []
    for regime, (n_workers, n_inputs) in regimes.items():
        s_values = [int(s) for s in stragglers[regime]]
        single = (tune_stragglers or {}).get(regime, middle_stragglers(s_values))
        selections = {}
        for s in ([single] if tuning == "single" else s_values):
            sel = tune_lambdas(f, get("x_val"), get("y_val"), n_inputs, n_workers, s, lam_enc_grid, lam_dec_grid,
                               trials=tune_trials, seed=seed + 1000)
            selections[s] = sel
            table = sel.table.copy()
            table.insert(0, "model", model)
            table.insert(1, "dataset", dataset)
            table.insert(2, "regime", regime)
            table.insert(3, "stragglers", s)
            table["n_workers"], table["n_inputs"] = n_workers, n_inputs
            tables.append(table)
        for s in s_values:
            at = single if tuning == "single" else s
            sel = selections[at]
            chosen.append({"model": model, "dataset": dataset, "regime": regime, "stragglers": s,
                           "lam_enc": sel.lam_enc, "lam_dec": sel.lam_dec, "n_workers": n_workers,
                           "n_inputs": n_inputs, "received": n_workers - s, "tuned_at": at,
                           "validation_loss": sel.score, **selection_columns(sel)})
            frames.append(run_config(f, get("x_test"), get("y_test"), n_inputs, n_workers, [s], trials, seed,
                                     sel.lam_enc, sel.lam_dec, schemes,
                                     extra_columns={"model": model, "dataset": dataset, "regime": regime}))
    results = front_columns(pd.concat(frames, ignore_index=True))
    return results, pd.DataFrame(chosen, columns=LAMBDA_COLUMNS), pd.concat(tables, ignore_index=True)


@validate_params({"prepared": PREPARED, "trials": TRIALS, "seed": SEED, "lam_grid": GRID, "tune_trials": TRIALS,
                  "tuning": Options(("per_s", "single")), "schemes": SCHEMES})
def run_sweeps(prepared: Mapping[str, Mapping[str, Any]], regimes: Mapping[str, Sequence[int]],
               stragglers: Mapping[str, Sequence[int]], trials: int, seed: int, lam_grid=None,
               tune_trials: int = 10, tuning: str = "per_s", schemes: Sequence[str] = COMPARED_SCHEMES):
    """:func:`straggler_sweep` for every prepared model; the three tables concatenated.

    Parameters
    ----------
    prepared : gcc.experiments.dnn_models.PreparedModels
        ``{name: {"f", "splits", "info"}}``.
    regimes : dict name -> (N, K)
    stragglers : dict name -> sequence of int
        S values per regime; those with N - S < 2 are dropped (a decoder needs two points).
    trials, seed, tune_trials, tuning, schemes
        As :func:`straggler_sweep`.
    lam_grid : sequence of float, optional
        The grid of both lambdas (default :data:`LAMBDA_GRID`).

    Returns
    -------
    results, lambdas, grid : pandas.DataFrame
    """
    import pandas as pd

    regimes = check_regimes(regimes, "run_sweeps")
    stragglers = check_per_regime(stragglers, regimes, "run_sweeps", "stragglers", IntList(0))
    stragglers = {r: [s for s in stragglers[r] if regimes[r][0] - s >= 2] for r in regimes}
    empty = [r for r, values in stragglers.items() if not values]
    if empty:
        raise invalid("stragglers", "run_sweeps", "a mapping regime -> numbers of stragglers S with N - S >= 2",
                      dict(stragglers), f"no S of regime {empty[0]!r} leaves two workers")
    outs = [straggler_sweep(p["f"], name, p["splits"], regimes, stragglers, trials=trials, seed=seed,
                            lam_enc_grid=lam_grid, lam_dec_grid=lam_grid, tune_trials=tune_trials, tuning=tuning,
                            schemes=schemes, dataset=p["info"].get("dataset"))
            for name, p in prepared.items()]
    return tuple(pd.concat([o[i] for o in outs], ignore_index=True) for i in range(3))


@validate_params({"results": Frame(("scheme", "trial")), "by": COLUMNS, "level": LEVEL})
def compare_schemes(results, metric: str = "loss", scheme: str = "gcc", baseline: str = "bacc",
                    by: Sequence[str] = ("model", "dataset", "regime", "n_workers", "n_inputs", "stragglers"),
                    level: float = 0.95):
    """Paired comparison of two schemes per group: is ``scheme``'s mean ``metric`` below the baseline's?

    Trials are paired (same inputs and straggler set), so the interval is that of the mean of
    the per-trial differences ``metric[scheme] - metric[baseline]`` (:func:`gcc.summary.summarize`).

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`straggler_sweep` or :func:`gcc.experiments.dnn_summary.table_runs`.
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
    metrics = validate(metric, COLUMNS, "metric", owner)
    missing = [m for m in metrics if m not in results.columns]
    if missing or not metrics:
        raise invalid("metric", owner, f"columns of results ({', '.join(map(str, results.columns))})", metric)
    if not isinstance(metric, str):
        return pd.concat([compare_schemes(results, m, scheme, baseline, by, level) for m in metric],
                         ignore_index=True)
    scheme, baseline = check_scheme_pair(results, scheme, baseline, owner)
    by = [c for c in by if c in results.columns]
    wide = results.pivot_table(index=by + ["trial"], columns="scheme", values=metric).reset_index()
    wide["diff"] = wide[scheme] - wide[baseline]
    paired = summarize(wide, "diff", by=by, level=level)
    # np.nanmean, not pandas' mean: pandas sums in another order, which changes the last bits.
    means = [(float(np.nanmean(g[scheme].to_numpy(float))), float(np.nanmean(g[baseline].to_numpy(float))))
             for _, g in wide.groupby(by, sort=True)]
    rows = []
    for ci, (am, bm) in zip(paired.to_dict("records"), means):
        higher = metric in HIGHER_IS_BETTER
        rows.append({**{c: ci[c] for c in by}, "scheme": scheme, "baseline": baseline, "metric": metric,
                     "scheme_mean": am, "baseline_mean": bm, "diff_mean": ci["mean"],
                     "diff_ci_low": ci["ci_low"], "diff_ci_high": ci["ci_high"], "n": int(ci["n"]),
                     "improvement_pct": 100.0 * (am - bm if higher else bm - am) / bm if bm != 0 else np.nan,
                     "below": bool(am < bm), "better": bool(am > bm) if higher else bool(am < bm),
                     "significant": bool(ci["ci_high"] < 0 or ci["ci_low"] > 0)})
    return pd.DataFrame(rows)


#: Axis labels of the metrics of the harness tables.
METRIC_LABELS = {"relacc": "RelAcc", "loss": "loss (eq. 1)", "rmse_norms": "RMSE (mean of norms)",
                 "rmse_rms": "RMSE (root mean square)"}


@validate_params({"results": Frame(("regime", "model", "scheme", "stragglers", "n_workers", "n_inputs")),
                  "metrics": COLUMNS, "level": LEVEL, "logy": COLUMNS})
def plot_sweep(results, regime: str, metrics: Sequence[str] = ("relacc", "loss"), level: float = 0.95,
               logy: Sequence[str] = ("loss", "rmse_norms", "rmse_rms")):
    """Figure of ``metrics`` against S in one regime: rows = metrics, columns = models (Figs. 3-4).

    Lines are means over trials, bands the ``level`` t-intervals (:func:`gcc.summary.summarize`).

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`straggler_sweep`.
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
    missing = [m for m in metrics if m not in results.columns]
    if missing or not metrics:
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
