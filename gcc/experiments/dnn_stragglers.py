"""Deep networks under stragglers: RelAcc and loss against S (the paper's Figs. 3 and 4).

The workers compute f = the softmax output of a trained classifier (:mod:`gcc.dnn`) on their
coded images. Every runner returns a tidy :class:`pandas.DataFrame` (one row per measurement)
that a notebook saves with :func:`gcc.results.save_table` and plots from. The simulations are
done by :func:`gcc.harness.run_trials` (identical inputs and straggler sets for every scheme in
a trial); GCC's (lambda_enc, lambda_dec) are chosen by :func:`gcc.tuning.select_lambdas` on
held-out batches.

Contents
--------
prepare_models
    The trained (cached) models as workers' functions f, with their validation / test splits
    (shared by the DNN notebooks and ``scripts/gpu_paper_run.py``).
batch_source, tune_regime, run_config
    A fresh batch of K test images per trial; cross-validated lambdas; one (N, K) for several S.
straggler_sweep, plot_sweep
    RelAcc and loss against the number of stragglers S (Figs. 3 and 4).
compare_schemes
    Paired GCC-vs-BACC verdict per (model, regime, S).

The Table-1 runner and tables are in :mod:`gcc.experiments.dnn_summary`.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Coded Computing for Resilient Distributed
   Computing: A Learning-Theoretic Framework", NeurIPS 2024, arXiv:2406.00300, Sec. 5 and
   App. C-E.
.. [2] T. Jahani-Nezhad, M. A. Maddah-Ali, "Berrut Approximated Coded Computing: Straggler
   Resistance Beyond Polynomial Computing", IEEE TPAMI 45(1), 2022.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..backend import to_numpy
from ..codes import LABELS, canonical, make_many
from ..validation import check_int, invalid

# Never let timm / huggingface_hub reach the network: weights must already be on disk.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

__all__ = ["LAMBDA_GRID", "COMPARED_SCHEMES", "HIGHER_IS_BETTER", "METRIC_LABELS", "prepare_models",
           "batch_source", "tune_regime", "run_config", "split_getter", "front_columns", "straggler_sweep",
           "compare_schemes", "plot_sweep"]

#: Default (lambda_enc, lambda_dec) grid: 0 (interpolation) and 1e-12 .. 1e-6. On [-1, 1] with
#: tens of points the eq. (4) penalty already smooths visibly at 1e-8 (the data term is an
#: average, the knots are ~1/N apart), so the grid of gcc.tuning (1e-8 .. 1) would only probe
#: over-smoothed codes here.
LAMBDA_GRID = (0.0, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6)

#: The schemes the DNN experiments compare (keys of :data:`gcc.codes.SCHEMES`).
COMPARED_SCHEMES = ("gcc", "bacc", "bspline")

#: Metrics where larger is better (the rest are losses).
HIGHER_IS_BETTER = ("relacc", "accuracy")

#: Columns put first in the results tables.
_FRONT = ["model", "regime", "scheme", "n_workers", "n_inputs", "stragglers", "trial", "loss", "relacc"]


def prepare_models(names: Sequence[str] = ("vit", "lenet5"), seed: int = 0, threads: int | None = None,
                   device: str | None = None, train_device: str | None = None,
                   recipes: Mapping[str, Mapping[str, Any]] | None = None,
                   configs: Mapping[str, Mapping[str, Any]] | None = None, paper_model: str | None = None,
                   paper_weights: str | None = None, paper_checkpoint: str | None = None,
                   paper_data: str | None = None, paper_images: int | None = 2000,
                   paper_kwargs: Mapping[str, Any] | None = None):
    """Train (or load from the cache) the embedded models and, optionally, set up a paper-scale model.

    Parameters
    ----------
    names : sequence of {"vit", "lenet5", "vit_large"}
        Embedded digits models (:func:`gcc.dnn.training.train_digits_model`).
    seed : int
        Training seed.
    threads : int, optional
        Torch CPU threads for training (bit-identical weights need the same count).
    device : str, optional
        Device of f; default automatic (:func:`gcc.dnn.inference.best_device`).
    train_device : str, optional
        Training device (default CPU; ``"auto"``: the GPU when there is one).
    recipes, configs : dict name -> mapping, optional
        Per-model overrides of the training recipe / model configuration (e.g. a smoke test's
        ``{"vit": {"epochs": 1}}``).
    paper_model : str, optional
        A timm model name for the paper profile (e.g. ``"vit_base_patch16_224"``); needs
        ``paper_data`` and weights from ``paper_weights`` (timm pretrained file) or
        ``paper_checkpoint`` (state dict). Nothing is downloaded.
    paper_data : str, optional
        ImageFolder root (e.g. ImageNet-1K validation, one folder per class); split in half into
        validation (lambda tuning) and test batches.
    paper_images : int, optional
        Use this many images of the folder (seeded subset).
    paper_kwargs : mapping, optional
        Extra ``timm.create_model`` arguments.

    Returns
    -------
    models : dict name -> dict
        ``{"f": SoftmaxFunction, "splits": dict(x_val, y_val, x_test, y_test), "info": dict}``;
        ``info`` has the model's accuracies, parameter count and training time.
    """
    from ..dnn.data import image_folder, load_digits16
    from ..dnn.inference import SoftmaxFunction
    from ..dnn.models import n_parameters, timm_model
    from ..dnn.training import evaluate_accuracy, train_digits_model

    out = {}
    if names:
        digits = load_digits16()
        splits = {"x_val": digits.x_val, "y_val": digits.y_val, "x_test": digits.x_test, "y_test": digits.y_test}
        for name in names:
            trained = train_digits_model(name, seed=seed, data=digits, threads=threads, device=train_device,
                                         recipe=(recipes or {}).get(name), config=(configs or {}).get(name))
            info = trained.summary()
            info["data"] = "digits 16x16"
            out[name] = {"f": SoftmaxFunction(trained.model, device=device), "splits": splits, "info": info}
    if paper_model:
        if not paper_data:
            raise invalid("paper_data", "prepare_models", "an ImageFolder root when 'paper_model' is set",
                          paper_data)
        model = timm_model(paper_model, pretrained=paper_weights is not None, weights_file=paper_weights,
                           checkpoint_path=paper_checkpoint, **dict(paper_kwargs or {}))
        x, y, _ = image_folder(paper_data, model=model, max_images=paper_images, seed=seed)
        x = to_numpy(x)
        half = len(y) // 2
        perm = np.random.default_rng(seed).permutation(len(y))
        val, test = perm[:half], perm[half:]
        splits = {"x_val": x[val], "y_val": y[val], "x_test": x[test], "y_test": y[test]}
        f = SoftmaxFunction(model, device=device, max_batch=256)
        info = {"model": paper_model, "n_parameters": n_parameters(model),
                "test_accuracy": evaluate_accuracy(f.model, x[test], y[test], batch_size=128),
                "val_accuracy": evaluate_accuracy(f.model, x[val], y[val], batch_size=128),
                "train_accuracy": np.nan, "train_seconds": np.nan, "cache_hit": True, "seed": seed,
                "key": "", "data": str(paper_data)}
        out[paper_model] = {"f": f, "splits": splits, "info": info}
    return out


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
    x = np.asarray(x)
    y = np.asarray(y, dtype=np.int64)
    n_inputs = check_int(n_inputs, "n_inputs", "batch_source", minimum=1, maximum=len(x),
                         constraint=f"an int in [1, {len(x)}] (the pool size)")

    def source(rng, trial):
        idx = rng.choice(len(x), size=n_inputs, replace=False)
        return x[idx], y[idx]

    return source


def tune_regime(f, x_val, y_val, n_inputs: int, n_workers: int, stragglers: int,
                lam_enc_grid: Sequence[float] | None = None, lam_dec_grid: Sequence[float] | None = None,
                trials: int = 10, seed: int = 1000, metric: str = "loss"):
    """Choose GCC's (lambda_enc, lambda_dec) by grid search on held-out (validation) batches.

    Parameters
    ----------
    f : callable
        The workers' function (e.g. :class:`gcc.dnn.inference.SoftmaxFunction`).
    x_val, y_val : array_like
        Validation images (n, C, H, W) and labels; never the batches of the reported results.
    n_inputs, n_workers, stragglers : int
        K, N and the S at which to tune (the paper finds the optimum nearly independent of S,
        App. E, so one S per (N, K) suffices).
    lam_enc_grid, lam_dec_grid : sequence of float, optional
        Grids; default :data:`LAMBDA_GRID`.
    trials : int
        Held-out draws (batch and straggler set) per grid point, shared by all grid points.
    seed : int
        Seed of those draws (keep it distinct from the evaluation seed).
    metric : str
        Criterion of :func:`gcc.tuning.select_lambdas` (``"loss"``: the paper's eq. (1)).

    Returns
    -------
    gcc.tuning.LambdaSelection
    """
    from ..codes import make
    from ..stragglers import FixedCount
    from ..tuning import select_lambdas

    lam_enc_grid = LAMBDA_GRID if lam_enc_grid is None else lam_enc_grid
    lam_dec_grid = LAMBDA_GRID if lam_dec_grid is None else lam_dec_grid
    return select_lambdas(lambda le, ld: make("gcc", n_inputs, n_workers, lam_enc=le, lam_dec=ld), f,
                          batch_source(x_val, y_val, n_inputs), FixedCount(stragglers),
                          lam_enc_grid=lam_enc_grid, lam_dec_grid=lam_dec_grid, trials=trials, seed=seed,
                          metric=metric)


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


def split_getter(splits) -> Callable[[str], Any]:
    """``get(name)`` for ``x_val, y_val, x_test, y_test`` held as keys or as attributes of ``splits``."""
    if isinstance(splits, Mapping):
        return lambda key: splits[key]
    return lambda key: getattr(splits, key)


def front_columns(results):
    """``results`` with the identifying columns (model, regime, scheme, N, K, S, trial, ...) first."""
    return results[_FRONT + [c for c in results.columns if c not in _FRONT]]


def straggler_sweep(f, model: str, splits, regimes: Mapping[str, tuple[int, int]],
                    stragglers: Mapping[str, Sequence[int]], trials: int, seed: int,
                    lam_enc_grid=None, lam_dec_grid=None, tune_trials: int = 10,
                    tune_stragglers: Mapping[str, int] | None = None, schemes: Sequence[str] = COMPARED_SCHEMES):
    """RelAcc and loss against the number of stragglers S (the paper's Figs. 3 and 4).

    For each regime (N, K): choose GCC's lambdas on validation batches (:func:`tune_regime`), then
    simulate every scheme for every S on test batches (:func:`run_config`).

    Parameters
    ----------
    f : callable
        The workers' function.
    model : str
        Model name for the ``model`` column.
    splits : gcc.dnn.data.DigitsData or mapping
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
    tune_stragglers : dict name -> int, optional
        S at which each regime is tuned; default the middle positive S of the sweep.
    schemes : sequence of str
        Scheme keys.

    Returns
    -------
    results : pandas.DataFrame
        Tidy rows (model, regime, scheme, n_workers, n_inputs, stragglers, trial, loss, rmse_norms,
        rmse_rms, relacc, relacc_literal, accuracy, accuracy_base, lam_enc, lam_dec, ...).
    lambdas : pandas.DataFrame
        The tuning tables of every regime (grid point, mean held-out loss, rank) with
        ``model``, ``regime``, ``tune_stragglers``.
    """
    import pandas as pd

    get = split_getter(splits)
    frames, tables = [], []
    for regime, (n_workers, n_inputs) in regimes.items():
        s_values = list(stragglers[regime])
        positive = [s for s in s_values if s > 0] or [0]
        s_tune = (tune_stragglers or {}).get(regime, positive[len(positive) // 2])
        sel = tune_regime(f, get("x_val"), get("y_val"), n_inputs, n_workers, s_tune, lam_enc_grid,
                          lam_dec_grid, trials=tune_trials, seed=seed + 1000)
        table = sel.table.copy()
        table["model"], table["regime"], table["tune_stragglers"] = model, regime, s_tune
        table["n_workers"], table["n_inputs"] = n_workers, n_inputs
        tables.append(table)
        frames.append(run_config(f, get("x_test"), get("y_test"), n_inputs, n_workers, s_values, trials, seed,
                                 sel.lam_enc, sel.lam_dec, schemes,
                                 extra_columns={"model": model, "regime": regime}))
    results = front_columns(pd.concat(frames, ignore_index=True))
    return results, pd.concat(tables, ignore_index=True)


def compare_schemes(results, metric: str = "loss", scheme: str = "gcc", baseline: str = "bacc",
                    by: Sequence[str] = ("model", "regime", "n_workers", "n_inputs", "stragglers"),
                    level: float = 0.95):
    """Paired comparison of two schemes per group: is ``scheme``'s mean ``metric`` below the baseline's?

    Trials are paired (same inputs and straggler set), so the interval is that of the mean of
    the per-trial differences ``metric[scheme] - metric[baseline]`` (:func:`gcc.summary.summarize`).

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`straggler_sweep` or :func:`gcc.experiments.dnn_summary.table_runs`.
    metric : str
        Column compared.
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

    scheme, baseline = canonical(scheme, "compare_schemes"), canonical(baseline, "compare_schemes")
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
    import matplotlib.pyplot as plt

    from ..summary import summarize
    from .plotting import band, finish, scheme_color

    sub = results[results["regime"] == regime]
    model_names = list(dict.fromkeys(sub["model"]))
    fig, axes = plt.subplots(len(metrics), len(model_names), figsize=(4.2 * len(model_names), 3.0 * len(metrics)),
                             squeeze=False, sharex="col")
    for j, model in enumerate(model_names):
        reg = sub[sub["model"] == model]
        n, k = int(reg["n_workers"].iloc[0]), int(reg["n_inputs"].iloc[0])
        for i, metric in enumerate(metrics):
            ax = axes[i, j]
            summ = summarize(reg, value=metric, by=("scheme", "stragglers"), level=level)
            for scheme in dict.fromkeys(reg["scheme"]):
                sc = summ[summ["scheme"] == scheme]
                color = scheme_color(scheme)
                ax.plot(sc["stragglers"], sc["mean"], marker="o", ms=3, color=color, label=LABELS.get(scheme, scheme))
                band(ax, sc["stragglers"], sc, color, alpha=0.2)
            if metric in logy:
                ax.set_yscale("log")
            ax.set_ylabel(METRIC_LABELS.get(metric, metric))
            if i == 0:
                ax.set_title(f"{model}: N={n}, K={k}")
            if i == len(metrics) - 1:
                ax.set_xlabel("number of stragglers S")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"{regime} redundancy", y=1.02)
    return finish(fig)
