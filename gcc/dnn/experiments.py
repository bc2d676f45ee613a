"""Runners for the DNN figures and tables (the paper's Figs. 3, 4, 7 and Tables 1, 2).

Every runner returns a tidy :class:`pandas.DataFrame` (one row per measurement) that a notebook
saves with :func:`gcc.results.save_table` and plots from. The simulations themselves are done by
:func:`gcc.harness.simulate` (identical inputs and straggler sets for every scheme in a trial);
(lambda_enc, lambda_dec) are chosen by :func:`gcc.tuning.select_lambdas` on held-out batches.

Runners
-------
schemes_for
    The compared codes for one (N, K): GCC (SplineCode), BACC (BerrutCode), B-spline.
prepare_models
    The trained (cached) models as workers' functions f, with their validation / test splits.
tune_regime
    Cross-validated (lambda_enc, lambda_dec) for GCC on validation batches.
straggler_sweep, plot_sweep
    RelAcc and loss against the number of stragglers S (Figs. 3 and 4).
compare_schemes
    Paired GCC-vs-BACC verdict per (model, regime, S).
table_runs, summary_table
    Mean loss, both RMSE readings and RelAcc per (model, N, K, |F|, scheme), and GCC's
    improvement over BACC in percent (Table 1).
coded_samples, coded_roughness, plot_coded_samples
    The coded images x̃_n the workers receive (Fig. 7) and their roughness.
coding_cost, cost_summary
    Encode / decode time per batch next to the workers' forward time (App. C.2, Table 2).

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
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

__all__ = ["PAPER_IMPROVEMENT", "SCHEME_LABELS", "schemes_for", "prepare_models", "batch_source", "tune_regime",
           "run_config", "straggler_sweep", "table_runs", "compare_schemes", "summary_table", "improvement_table", "paper_family",
           "plot_sweep", "plot_coded_samples", "cost_summary", "LAMBDA_GRID", "coded_samples", "coded_roughness", "coding_cost", "stack_images"]

#: The paper's average improvement of LeTCC over BACC (NeurIPS 2024, Sec. 5), in percent.
PAPER_IMPROVEMENT = {
    "lenet5": {"paper_model": "LeNet5 / MNIST", "rmse": 15.0, "relacc": 2.0},
    "repvgg": {"paper_model": "RepVGG / CIFAR-10", "rmse": 17.0, "relacc": 5.0},
    "vit": {"paper_model": "ViT-B/16 / ImageNet-1K", "rmse": 9.0, "relacc": 4.0},
}

#: Metrics where larger is better (the rest are losses).
_HIGHER_IS_BETTER = ("relacc", "accuracy")

#: Default (lambda_enc, lambda_dec) grid: 0 (interpolation) and 1e-12 .. 1e-6. On [-1, 1] with
#: tens of points the eq. (4) penalty already smooths visibly at 1e-8 (the data term is an
#: average, the knots are ~1/N apart), so the grid of gcc.tuning (1e-8 .. 1) would only probe
#: over-smoothed codes here.
LAMBDA_GRID = (0.0, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6)

#: Display names of the schemes (result tables use the short keys).
SCHEME_LABELS = {"gcc": "GCC (LeTCC)", "bacc": "BACC (Berrut)", "bspline": "B-spline"}


def schemes_for(n_inputs: int, n_workers: int, lam_enc: float = 0.0, lam_dec: float = 0.0,
                include: Sequence[str] = ("gcc", "bacc", "bspline")) -> dict:
    """The compared codes for one (N, K), with the paper's Chebyshev points.

    Parameters
    ----------
    n_inputs, n_workers : int
        K and N.
    lam_enc, lam_dec : float
        GCC's smoothing parameters (eq. (4) convention).
    include : sequence of {"gcc", "bacc", "bspline", "lcc"}
        Which schemes, in this order.

    Returns
    -------
    dict
        scheme key -> :class:`gcc.Code`.
    """
    import gcc

    makers = {
        "gcc": lambda: gcc.SplineCode(n_inputs, n_workers, lam_enc=lam_enc, lam_dec=lam_dec),
        "bacc": lambda: gcc.BerrutCode(n_inputs, n_workers),
        "bspline": lambda: gcc.BSplineCode(n_inputs, n_workers),
        "lcc": lambda: gcc.LagrangeCode(n_inputs, n_workers),
    }
    unknown = [s for s in include if s not in makers]
    if unknown:
        raise ValueError(
            f"The 'include' parameter of schemes_for must list schemes from {sorted(makers)}. Got {unknown[0]!r} instead."
        )
    return {s: makers[s]() for s in include}


def prepare_models(names: Sequence[str] = ("vit", "lenet5"), seed: int = 0, threads: int | None = None,
                   device: str | None = None, train_device: str | None = None,
                   recipes: Mapping[str, Mapping[str, Any]] | None = None,
                   configs: Mapping[str, Mapping[str, Any]] | None = None, paper_model: str | None = None, paper_weights: str | None = None,
                   paper_checkpoint: str | None = None, paper_data: str | None = None,
                   paper_images: int | None = 2000, paper_kwargs: Mapping[str, Any] | None = None):
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
    from .data import image_folder, load_digits16
    from .inference import SoftmaxFunction
    from .models import n_parameters, timm_model
    from .training import evaluate_accuracy, train_digits_model

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
            raise ValueError("The 'paper_data' parameter of prepare_models must be an ImageFolder root when "
                             f"'paper_model' is set. Got {paper_data!r} instead.")
        model = timm_model(paper_model, pretrained=paper_weights is not None, weights_file=paper_weights,
                           checkpoint_path=paper_checkpoint, **dict(paper_kwargs or {}))
        x, y, _ = image_folder(paper_data, model=model, max_images=paper_images, seed=seed)
        x = x.numpy()
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
    """A data source for :func:`gcc.harness.simulate`: a fresh batch of K distinct images per trial.

    Parameters
    ----------
    x : array_like, shape (n, C, H, W)
        The pool (e.g. the test split).
    y : array_like of int, shape (n,)
        Labels.
    n_inputs : int
        K.

    Returns
    -------
    callable ``(rng, trial) -> (x_batch (K, C, H, W), y_batch (K,))``
        Draws from the harness's per-trial data generator, so the batch of trial t is the same
        for every scheme and every S run with the same seed.
    """
    x = np.asarray(x)
    y = np.asarray(y, dtype=np.int64)
    if n_inputs > len(x):
        raise ValueError(
            f"The 'n_inputs' parameter of batch_source must be an int <= {len(x)} (the pool size). Got {n_inputs} instead."
        )

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
    import gcc
    from gcc.stragglers import FixedCount
    from gcc.tuning import select_lambdas

    lam_enc_grid = LAMBDA_GRID if lam_enc_grid is None else lam_enc_grid
    lam_dec_grid = LAMBDA_GRID if lam_dec_grid is None else lam_dec_grid
    return select_lambdas(lambda le, ld: gcc.SplineCode(n_inputs, n_workers, lam_enc=le, lam_dec=ld), f,
                          batch_source(x_val, y_val, n_inputs), FixedCount(stragglers),
                          lam_enc_grid=lam_enc_grid, lam_dec_grid=lam_dec_grid, trials=trials, seed=seed,
                          metric=metric)


def run_config(f, x_test, y_test, n_inputs: int, n_workers: int, stragglers: Sequence[int], trials: int,
               seed: int, lam_enc: float, lam_dec: float, schemes: Sequence[str] = ("gcc", "bacc", "bspline"),
               extra_columns: Mapping[str, Any] | None = None):
    """Simulate the schemes at one (N, K) for several S with :func:`gcc.harness.simulate`.

    The same ``seed`` is used for every S, so trial t has the same input batch for every S and
    every scheme; for each (S, trial) all schemes share the straggler set.

    Returns
    -------
    pandas.DataFrame
        :func:`gcc.harness.simulate`'s rows for every S, plus ``lam_enc``/``lam_dec`` (GCC's; NaN
        for the other schemes) and ``extra_columns``.
    """
    import pandas as pd
    from gcc.harness import simulate
    from gcc.stragglers import FixedCount

    codes = schemes_for(n_inputs, n_workers, lam_enc, lam_dec, include=schemes)
    source = batch_source(x_test, y_test, n_inputs)
    frames = []
    for s in stragglers:
        df = simulate(codes, f, source, FixedCount(int(s)), trials=trials, seed=seed,
                      extra_columns=dict(extra_columns or {}))
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out["lam_enc"] = np.where(out["scheme"] == "gcc", lam_enc, np.nan)
    out["lam_dec"] = np.where(out["scheme"] == "gcc", lam_dec, np.nan)
    return out


def straggler_sweep(f, model: str, splits, regimes: Mapping[str, tuple[int, int]],
                    stragglers: Mapping[str, Sequence[int]], trials: int, seed: int,
                    lam_enc_grid=None, lam_dec_grid=None, tune_trials: int = 10,
                    tune_stragglers: Mapping[str, int] | None = None,
                    schemes: Sequence[str] = ("gcc", "bacc", "bspline")):
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

    get = (lambda k: splits[k]) if isinstance(splits, Mapping) else (lambda k: getattr(splits, k))
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
    results = pd.concat(frames, ignore_index=True)
    front = ["model", "regime", "scheme", "n_workers", "n_inputs", "stragglers", "trial", "loss", "relacc"]
    results = results[front + [c for c in results.columns if c not in front]]
    return results, pd.concat(tables, ignore_index=True)


def table_runs(f, model: str, splits, configs: Sequence[Sequence[int]], trials: int, seed: int,
               lam_enc_grid=None, lam_dec_grid=None, tune_trials: int = 10,
               schemes: Sequence[str] = ("gcc", "bacc", "bspline")):
    """Simulations at several (N, K, |F|) for one model (the paper's Table 1).

    Each configuration gets its own cross-validated (lambda_enc, lambda_dec), tuned on validation
    batches at its S = N - |F|.

    Parameters
    ----------
    f : callable
        The workers' function.
    model : str
        Name for the ``model`` column.
    splits : DigitsData or mapping
        With ``x_val, y_val, x_test, y_test``.
    configs : sequence of (N, K, |F|)
    trials, seed, lam_enc_grid, lam_dec_grid, tune_trials, schemes
        As in :func:`straggler_sweep`.

    Returns
    -------
    results : pandas.DataFrame
        Tidy rows as :func:`straggler_sweep`'s, with ``regime`` = ``"N=..,K=.."``.
    lambdas : pandas.DataFrame
        The selected (lambda_enc, lambda_dec) per configuration.
    """
    import pandas as pd

    get = (lambda k: splits[k]) if isinstance(splits, Mapping) else (lambda k: getattr(splits, k))
    frames, chosen = [], []
    for n_workers, n_inputs, received in configs:
        n_workers, n_inputs, received = int(n_workers), int(n_inputs), int(received)
        if not 1 <= received <= n_workers:
            raise ValueError(
                f"The 'configs' parameter of table_runs must hold (N, K, |F|) with 1 <= |F| <= N. "
                f"Got {(n_workers, n_inputs, received)} instead."
            )
        s = n_workers - received
        sel = tune_regime(f, get("x_val"), get("y_val"), n_inputs, n_workers, s, lam_enc_grid, lam_dec_grid,
                          trials=tune_trials, seed=seed + 1000)
        chosen.append({"model": model, "n_workers": n_workers, "n_inputs": n_inputs, "received": received,
                       "lam_enc": sel.lam_enc, "lam_dec": sel.lam_dec, "validation_loss": sel.score})
        frames.append(run_config(f, get("x_test"), get("y_test"), n_inputs, n_workers, [s], trials, seed,
                                 sel.lam_enc, sel.lam_dec, schemes,
                                 extra_columns={"model": model, "regime": f"N={n_workers},K={n_inputs}"}))
    results = pd.concat(frames, ignore_index=True)
    front = ["model", "regime", "scheme", "n_workers", "n_inputs", "stragglers", "trial", "loss", "relacc"]
    results = results[front + [c for c in results.columns if c not in front]]
    return results, pd.DataFrame(chosen)


def compare_schemes(results, metric: str = "loss", scheme: str = "gcc", baseline: str = "bacc",
                    by: Sequence[str] = ("model", "regime", "n_workers", "n_inputs", "stragglers"),
                    level: float = 0.95):
    """Paired comparison of two schemes per group: is ``scheme``'s mean ``metric`` below the baseline's?

    Trials are paired (same inputs and straggler set), so the interval is that of the mean of
    the per-trial differences ``metric[scheme] - metric[baseline]``.

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, ``<scheme>_mean``, ``<baseline>_mean``, ``diff_mean``, ``diff_low``,
        ``diff_high``, ``n``, ``improvement_pct`` (positive = scheme better: 100 (baseline - scheme)
        / baseline for losses, 100 (scheme - baseline) / baseline for accuracies), ``below``
        (scheme's mean < baseline's), ``better`` (below for losses, above for accuracies) and
        ``significant`` (the paired interval excludes 0).
    """
    import pandas as pd
    from gcc.metrics import mean_ci

    by = [c for c in by if c in results.columns]
    wide = results.pivot_table(index=by + ["trial"], columns="scheme", values=metric).reset_index()
    rows = []
    for key, grp in wide.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        a, b = grp[scheme].to_numpy(float), grp[baseline].to_numpy(float)
        d = a - b
        ok = ~np.isnan(d)
        ci = mean_ci(d[ok], level=level) if ok.sum() > 0 else None
        am, bm = float(np.nanmean(a)), float(np.nanmean(b))
        rows.append({**dict(zip(by, key)), "metric": metric, f"{scheme}_mean": am, f"{baseline}_mean": bm,
                     "diff_mean": ci.mean if ci else np.nan, "diff_low": ci.low if ci else np.nan,
                     "diff_high": ci.high if ci else np.nan, "n": int(ok.sum()),
                     "improvement_pct": (100.0 * (am - bm if metric in _HIGHER_IS_BETTER else bm - am) / bm
                                         if bm != 0 else np.nan),
                     "below": bool(am < bm),
                     "better": bool(am > bm) if metric in _HIGHER_IS_BETTER else bool(am < bm),
                     "significant": bool(ci is not None and (ci.high < 0 or ci.low > 0))})
    return pd.DataFrame(rows)


def summary_table(results, by: Sequence[str] = ("model", "n_workers", "n_inputs", "received", "scheme")):
    """Table-1-like means: loss, both RMSE readings, RelAcc (both readings) per configuration.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`run_config` / :func:`straggler_sweep`.
    by : sequence of str
        Grouping; ``received`` is |F| = N - S.

    Returns
    -------
    pandas.DataFrame
        ``by`` columns plus the mean and the 95% half-width of ``loss``, ``rmse_norms``,
        ``rmse_rms``, ``relacc`` and ``relacc_literal`` (``<metric>`` and ``<metric>_ci``).
    """
    import pandas as pd
    from gcc.metrics import mean_ci

    metrics = [m for m in ("loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal") if m in results.columns]
    rows = []
    for key, grp in results.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        for m in metrics:
            vals = grp[m].to_numpy(float)
            # RelAcc is NaN when the uncoded model gets a whole batch wrong; keep the row.
            ci = mean_ci(vals) if np.any(~np.isnan(vals)) else None
            row[m], row[f"{m}_ci"] = (ci.mean, ci.half_width) if ci else (np.nan, np.nan)
        row["trials"] = int(len(grp))
        rows.append(row)
    return pd.DataFrame(rows)


def paper_family(model: str) -> str:
    """The paper model a model of ours is compared with: ``"vit"``, ``"lenet5"``, ``"repvgg"`` or ``""``.

    Any name containing "vit" (the digits ViTs, a timm ViT) maps to the paper's ViT, "lenet" to
    LeNet5 and "repvgg" to RepVGG.
    """
    name = str(model).lower()
    for key, family in (("lenet", "lenet5"), ("repvgg", "repvgg"), ("vit", "vit")):
        if key in name:
            return family
    return ""


def improvement_table(results, scheme: str = "gcc", baseline: str = "bacc",
                      by: Sequence[str] = ("model", "n_workers", "n_inputs", "received")):
    """GCC's improvement over BACC in percent per configuration, beside the paper's averages.

    RMSE (both readings) and the loss improve when they decrease:
    100 (baseline - scheme) / baseline; RelAcc improves when it increases:
    100 (scheme - baseline) / baseline. The last rows per model (``n_workers`` = "mean") average
    the configurations, which is what the paper reports (NeurIPS 2024, Sec. 5: RMSE better by
    15 / 17 / 9 % and RelAcc by 2 / 5 / 4 % for LeNet5 / RepVGG / ViT).

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, ``loss_pct``, ``rmse_norms_pct``, ``rmse_rms_pct``, ``relacc_pct``,
        ``paper_rmse_pct``, ``paper_relacc_pct``, ``paper_model``.
    """
    import pandas as pd

    table = summary_table(results, by=tuple(by) + ("scheme",))
    idx = list(by)
    a = table[table["scheme"] == scheme].set_index(idx)
    b = table[table["scheme"] == baseline].set_index(idx)
    out = pd.DataFrame(index=a.index)
    for m in ("loss", "rmse_norms", "rmse_rms"):
        out[f"{m}_pct"] = 100.0 * (b[m] - a[m]) / b[m]
    out["relacc_pct"] = 100.0 * (a["relacc"] - b["relacc"]) / b["relacc"]
    out = out.reset_index()
    means = out.groupby("model", sort=True)[["loss_pct", "rmse_norms_pct", "rmse_rms_pct", "relacc_pct"]].mean()
    means = means.reset_index()
    for col in idx:
        if col != "model":
            means[col] = "mean"
    out = pd.concat([out.astype({c: object for c in idx if c != "model"}), means[out.columns]], ignore_index=True)
    family = out["model"].map(paper_family)
    out["paper_model"] = family.map(lambda m: PAPER_IMPROVEMENT.get(m, {}).get("paper_model", ""))
    out["paper_rmse_pct"] = family.map(lambda m: PAPER_IMPROVEMENT.get(m, {}).get("rmse", np.nan))
    out["paper_relacc_pct"] = family.map(lambda m: PAPER_IMPROVEMENT.get(m, {}).get("relacc", np.nan))
    return out


def plot_sweep(results, regime: str, metrics: Sequence[str] = ("relacc", "loss"), level: float = 0.95,
               logy: Sequence[str] = ("loss", "rmse_norms", "rmse_rms")):
    """Figure of ``metrics`` against S in one regime: rows = metrics, columns = models (Figs. 3-4).

    Lines are means over trials, bands the ``level`` t-intervals (:func:`gcc.harness.summarize`).

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`straggler_sweep`.
    regime : str
        Which regime (``"low"``: the paper's Fig. 3, ``"high"``: Fig. 4).
    metrics : sequence of str
        Columns to plot, one row of panels each.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    from gcc.harness import summarize

    sub = results[results["regime"] == regime]
    model_names = list(dict.fromkeys(sub["model"]))
    fig, axes = plt.subplots(len(metrics), len(model_names), figsize=(4.2 * len(model_names), 3.0 * len(metrics)),
                             squeeze=False, sharex="col")
    colors = {"gcc": "C0", "bacc": "C3", "bspline": "C2", "lcc": "C4"}
    for j, model in enumerate(model_names):
        reg = sub[sub["model"] == model]
        n, k = int(reg["n_workers"].iloc[0]), int(reg["n_inputs"].iloc[0])
        for i, metric in enumerate(metrics):
            ax = axes[i, j]
            summ = summarize(reg, value=metric, by=("scheme", "stragglers"), level=level)
            for scheme in dict.fromkeys(reg["scheme"]):
                sc = summ[summ["scheme"] == scheme]
                ax.plot(sc["stragglers"], sc["mean"], marker="o", ms=3, color=colors.get(scheme),
                        label=SCHEME_LABELS.get(scheme, scheme))
                ax.fill_between(sc["stragglers"], sc["low"], sc["high"], color=colors.get(scheme), alpha=0.2)
            if metric in logy:
                ax.set_yscale("log")
            ax.set_ylabel({"relacc": "RelAcc", "loss": "loss (eq. 1)", "rmse_norms": "RMSE (mean of norms)",
                           "rmse_rms": "RMSE (root mean square)"}.get(metric, metric))
            if i == 0:
                ax.set_title(f"{model}: N={n}, K={k}")
            if i == len(metrics) - 1:
                ax.set_xlabel("number of stragglers S")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"{regime} redundancy", y=1.02)
    fig.tight_layout()
    return fig


def plot_coded_samples(table, n_show: int = 10, schemes: Sequence[str] = ("gcc", "bacc")):
    """Fig. 7-like grid: ``n_show`` inputs, then ``n_show`` coded images of each scheme.

    The coded images shown are those of the workers whose points beta_n are closest to evenly
    spaced positions in [-1, 1], so each row spans the whole interval.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    rows = ["input"] + [s for s in schemes if s in set(table["scheme"])]
    fig, axes = plt.subplots(len(rows), n_show, figsize=(1.1 * n_show, 1.25 * len(rows)), squeeze=False)
    base, _ = stack_images(table, "input")
    vmin, vmax = float(base.min()), float(base.max())
    for i, scheme in enumerate(rows):
        imgs, points = stack_images(table, scheme)
        picks = np.unique([int(np.argmin(np.abs(points - t))) for t in np.linspace(points.min(), points.max(), n_show)])
        for j in range(n_show):
            ax = axes[i, j]
            ax.set_xticks([])
            ax.set_yticks([])
            if j < len(picks):
                ax.imshow(imgs[picks[j], 0], cmap="gray_r", vmin=vmin, vmax=vmax)
                sym = "α" if scheme == "input" else "β"
                ax.set_xlabel(f"{sym}={points[picks[j]]:+.2f}", fontsize=6)
            else:
                ax.axis("off")
        axes[i, 0].set_ylabel(SCHEME_LABELS.get(scheme, "inputs x_k"), fontsize=7)
    fig.tight_layout()
    return fig


def cost_summary(timings):
    """Mean and standard deviation of the times of :func:`coding_cost` per (model, device, scheme).

    Returns
    -------
    pandas.DataFrame
        ``encode_ms``, ``decode_ms``, ``encode_decode_ms`` (mean and ``_std``), ``forward_ms``
        (batched), ``forward_workers_ms`` (N single-image passes), ``overhead`` (mean of per-batch
        ratios to the batched forward), ``overhead_of_medians`` (median encode + median decode over
        the median batched forward: robust to a busy machine) and ``overhead_workers`` (the same
        over the median of N single-image forwards).
    """
    import pandas as pd

    rows = []
    keys = ["model", "device", "scheme", "n_workers", "n_inputs", "stragglers"]
    for key, g in timings.groupby(keys, sort=False):
        ed = (g["encode_s"] + g["decode_s"]) * 1e3
        rows.append({**dict(zip(keys, key)),
                     "encode_ms": 1e3 * g["encode_s"].mean(), "encode_ms_std": 1e3 * g["encode_s"].std(),
                     "decode_ms": 1e3 * g["decode_s"].mean(), "decode_ms_std": 1e3 * g["decode_s"].std(),
                     "decode_apply_ms": 1e3 * g["decode_apply_s"].mean(),
                     "encode_decode_ms": ed.mean(), "encode_decode_ms_std": ed.std(),
                     "forward_ms": 1e3 * g["forward_s"].mean(), "forward_ms_std": 1e3 * g["forward_s"].std(),
                     "forward_workers_ms": 1e3 * g["forward_workers_s"].mean(),
                     "overhead": g["overhead"].mean(),
                     "overhead_of_medians": float((g["encode_s"].median() + g["decode_s"].median())
                                                  / g["forward_s"].median()),
                     "overhead_workers": float((g["encode_s"].median() + g["decode_s"].median())
                                               / g["forward_workers_s"].median()),
                     "repeats": len(g)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------- Fig. 7
def coded_samples(x, n_workers: int, lam_enc: float = 0.0, schemes: Sequence[str] = ("gcc", "bacc"),
                  labels=None):
    """The coded images the workers receive, as a tidy pixel table.

    Parameters
    ----------
    x : array_like, shape (K, C, H, W)
        The K input images of one round.
    n_workers : int
        N.
    lam_enc : float
        GCC's encoder smoothing parameter (BACC has none).
    schemes : sequence of str
        Schemes to encode with (see :func:`schemes_for`).
    labels : array_like of int, shape (K,), optional
        Labels of the inputs, stored with the ``"input"`` rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme`` (``"input"`` for the originals), ``index`` (k or n), ``point``
        (alpha_k or beta_n), ``label``, ``channel``, ``row``, ``col``, ``value``: one row per pixel,
        so the figure can be redrawn from the saved table alone.
    """
    import pandas as pd

    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 4:
        raise ValueError(f"The 'x' parameter of coded_samples must have shape (K, C, H, W). Got shape {x.shape} instead.")
    k = x.shape[0]
    codes = schemes_for(k, n_workers, lam_enc=lam_enc, include=schemes)
    frames = [_pixel_frame(x, "input", next(iter(codes.values())).alphas,
                           labels if labels is not None else np.full(k, -1))]
    for name, code in codes.items():
        frames.append(_pixel_frame(code.encode(x), name, code.betas, np.full(n_workers, -1)))
    return pd.concat(frames, ignore_index=True)


def _pixel_frame(images: np.ndarray, scheme: str, points: np.ndarray, labels) -> "Any":
    import pandas as pd

    n, c, h, w = images.shape
    idx, ch, row, col = np.meshgrid(np.arange(n), np.arange(c), np.arange(h), np.arange(w), indexing="ij")
    return pd.DataFrame({
        "scheme": scheme, "index": idx.ravel(), "point": np.asarray(points)[idx.ravel()],
        "label": np.asarray(labels)[idx.ravel()], "channel": ch.ravel(), "row": row.ravel(),
        "col": col.ravel(), "value": images.ravel(),
    })


def stack_images(table, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    """Rebuild the image stack of one scheme from a :func:`coded_samples` table.

    Returns
    -------
    images : numpy.ndarray, shape (n, C, H, W)
    points : numpy.ndarray, shape (n,)
        alpha_k for ``"input"``, beta_n for a code.
    """
    sub = table[table["scheme"] == scheme].sort_values(["index", "channel", "row", "col"])
    if sub.empty:
        raise ValueError(f"The 'scheme' parameter of stack_images must be one of {sorted(table['scheme'].unique())}. Got {scheme!r} instead.")
    n, c, h, w = (int(sub[a].max()) + 1 for a in ("index", "channel", "row", "col"))
    points = sub.groupby("index")["point"].first().to_numpy()
    return sub["value"].to_numpy().reshape(n, c, h, w), points


def coded_roughness(table) -> "Any":
    """How rough the coded images are, per scheme (quantifies Fig. 7's visual impression).

    Two numbers per scheme, both relative to the inputs so that they are scale-free:

    ``spatial_hf``
        Mean squared discrete Laplacian of the images (high spatial frequencies: the
        "high-frequency noise" the paper sees in BACC's coded images) divided by that of the
        inputs.
    ``range_ratio``
        (max - min) of the coded pixel values over that of the inputs: values far outside the
        inputs' range mean the encoder over- or under-shoots between data points.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`coded_samples`.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme``, ``spatial_hf``, ``range_ratio``, ``min``, ``max``.
    """
    import pandas as pd

    def lap_energy(img):
        lap = (-4 * img[..., 1:-1, 1:-1] + img[..., :-2, 1:-1] + img[..., 2:, 1:-1]
               + img[..., 1:-1, :-2] + img[..., 1:-1, 2:])
        return float(np.mean(lap ** 2))

    base, _ = stack_images(table, "input")
    base_hf, base_range = lap_energy(base), float(base.max() - base.min())
    rows = []
    for scheme in table["scheme"].unique():
        imgs, _ = stack_images(table, scheme)
        rows.append({"scheme": scheme, "spatial_hf": lap_energy(imgs) / base_hf,
                     "range_ratio": float(imgs.max() - imgs.min()) / base_range,
                     "min": float(imgs.min()), "max": float(imgs.max())})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------- Table 2
def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def coding_cost(f, x, n_workers: int, stragglers: int, schemes: Sequence[str] = ("gcc", "bacc"),
                lam_enc: float = 1e-4, lam_dec: float = 1e-4, repeats: int = 20, warmup: int = 3,
                seed: int = 0, model: str = "vit") -> "Any":
    """Time encoding and decoding per batch next to the workers' forward passes.

    One batch = one round: encode the K inputs for N workers, run f on the N coded inputs (the
    workers' compute, simulated as one batched forward pass), decode from N - S survivors.
    Each repeat draws a fresh straggler set, so the decoder is *built* for it (its spline or
    Berrut weights computed) as well as applied: the cost a master pays for a new set F.

    Parameters
    ----------
    f : gcc.dnn.inference.SoftmaxFunction
        The workers' function; its ``device`` is where everything runs (the inputs are moved
        there, as a master on that device would hold them).
    x : array_like, shape (K, C, H, W)
        One batch of inputs.
    n_workers, stragglers : int
        N and S.
    schemes : sequence of str
        Schemes to time.
    lam_enc, lam_dec : float
        GCC's smoothing parameters (the cost does not depend on their values, but 0 and > 0
        take the same code path, so any positive value is representative).
    repeats, warmup : int
        Timed and untimed rounds per scheme.
    seed : int
        Seed of the straggler sets.
    model : str
        Model name stored in the table.

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, repeat): ``model``, ``device``, ``scheme``, ``n_workers``,
        ``n_inputs``, ``stragglers``, ``repeat``, ``encode_s``, ``decode_s`` (build + apply),
        ``decode_apply_s`` (apply only, decoder cached), ``forward_s`` (f on the N coded
        inputs in one batched call), ``forward_workers_s`` (N times the forward pass of one
        coded input: what N workers compute, one image each), ``overhead`` =
        (encode_s + decode_s) / forward_s and ``overhead_workers`` =
        (encode_s + decode_s) / forward_workers_s.

    Notes
    -----
    Two denominators, because "the workers' forward time" can be read two ways. Each worker
    runs the network on one image, so the workers' compute is N single-image forward passes
    (``forward_workers_s``); simulating them as one batched call (``forward_s``) is several
    times cheaper on a CPU (better cache and vector use), so ``overhead`` against it is the
    stricter, conservative figure.

    Notes
    -----
    The encoder matrix depends only on (N, K, lambda_enc) and is built once, before timing (a
    deployed master builds it once). On a GPU every timed interval ends with
    ``torch.cuda.synchronize``.
    """
    import pandas as pd
    import torch

    device = f.device
    xt = torch.as_tensor(np.asarray(x), dtype=torch.float32).to(device)
    k = xt.shape[0]
    rng = np.random.default_rng(seed)
    rows = []
    for scheme, code in schemes_for(k, n_workers, lam_enc, lam_dec, include=schemes).items():
        for r in range(warmup + repeats):
            received = np.sort(rng.choice(n_workers, n_workers - stragglers, replace=False))
            # Drop the cached decoders (a new F must be built, as for a master that never sees
            # the same straggler set twice) but rebuild the encoder untimed: a deployed master
            # builds it once for its fixed (N, K).
            code.clear_cache()
            code.encode(xt, check_finite=False)
            _sync(device)
            t0 = time.perf_counter()
            coded = code.encode(xt, check_finite=False)
            _sync(device)
            t1 = time.perf_counter()
            y = f.forward_tensor(coded)
            _sync(device)
            t2 = time.perf_counter()
            est = code.decode(y[torch.as_tensor(received, device=device)], received, check_finite=False)
            _sync(device)
            t3 = time.perf_counter()
            code.decode(y[torch.as_tensor(received, device=device)], received, check_finite=False)
            _sync(device)
            t4 = time.perf_counter()
            # What one worker really computes: the forward pass of its own single coded input.
            n = r % n_workers
            f.forward_tensor(coded[n:n + 1])
            _sync(device)
            t5 = time.perf_counter()
            del est
            if r >= warmup:
                rows.append({"model": model, "device": str(device.type), "scheme": scheme,
                             "n_workers": n_workers, "n_inputs": k, "stragglers": stragglers,
                             "repeat": r - warmup, "encode_s": t1 - t0, "decode_s": t3 - t2,
                             "decode_apply_s": t4 - t3, "forward_s": t2 - t1,
                             "forward_workers_s": n_workers * (t5 - t4)})
    out = pd.DataFrame(rows)
    out["overhead"] = (out["encode_s"] + out["decode_s"]) / out["forward_s"]
    out["overhead_workers"] = (out["encode_s"] + out["decode_s"]) / out["forward_workers_s"]
    return out
