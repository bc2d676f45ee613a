"""Deep networks under probabilistic stragglers: the loss against N (the ISIT 2025 experiment).

Each worker straggles independently with probability p; :func:`run_sweeps` runs K fixed, N on a
grid, and :func:`convergence_verdicts` asks whether GCC's log-log slope in N is steeper than
BACC's, as the rates O(log^3(N) N^-3) against O(log^4(N) N^-2) predict.

References
----------
.. [1] P. Moradi, M. A. Maddah-Ali, "General Coded Computing in a Probabilistic Straggler Regime", ISIT 2025.
.. [2] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, arXiv:2608.28910 (abstract).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..codes import LABELS, make_many
from ..harness import run_trials
from ..stragglers import Bernoulli
from ..summary import slope_table, summarize
from ..validation import SEED, Interval, ListOf, NoneOr, invalid, validate_params
from ..dnn._checks import COUNT, GRID, LEVEL, NAMES, PREPARED, TRIALS, Frame, Setting, Splits
from .dnn_claims import claim_rows
from .dnn_runs import (batch_source, check_pool_sizes, dataset_of, scheme_pair, selection_columns,
                       tune_lambdas)

__all__ = ["SWEEP_COLUMNS", "SWEPT_SCHEMES", "run_sweeps", "sweep_summary", "sweep_slopes", "convergence_verdicts",
           "verdict_rows", "plot_bernoulli"]

#: The first columns of the N-sweep table (the table contract).
SWEEP_COLUMNS = ["model", "dataset", "p", "n_workers", "scheme", "loss"]

#: The schemes of the ISIT comparison.
SWEPT_SCHEMES = ("gcc", "bacc")


def _bernoulli_sweep(f, splits: Splits, model: str, n_inputs: int, n_workers: Sequence[int],
                     p_values: Sequence[float], trials: int, seed: int, lam_grid, tune_trials: int,
                     dataset: str):
    """One network's rows: at every (p, N), GCC's lambdas tuned under Bernoulli(p), then the schemes."""
    frames = []
    for p in p_values:
        model_p = Bernoulli(float(p))
        for n in n_workers:
            n = int(n)
            sel = tune_lambdas(f, splits, n_inputs, n, 0, lam_grid, tune_trials, seed + 1000, straggler_model=model_p)
            codes = make_many(SWEPT_SCHEMES, n_inputs, n, lam_enc=sel.lam_enc, lam_dec=sel.lam_dec)
            table = run_trials(codes, f, batch_source(splits.x_test, splits.y_test, n_inputs), model_p,
                               trials=trials, seed=seed,
                               extra_columns={"model": model, "dataset": dataset, "p": float(p)})
            table["lam_enc"] = np.where(table["scheme"] == "gcc", sel.lam_enc, np.nan)
            table["lam_dec"] = np.where(table["scheme"] == "gcc", sel.lam_dec, np.nan)
            for column, value in selection_columns(sel).items():
                table[column] = [value if scheme == "gcc" else None for scheme in table["scheme"]]
            frames.append(table)
    out = pd.concat(frames, ignore_index=True)
    return out[SWEEP_COLUMNS + [c for c in out.columns if c not in SWEEP_COLUMNS]]


@validate_params({"prepared": PREPARED, "models": NAMES, "n_inputs": COUNT,
                  "n_workers": ListOf(Interval(int, 1, None), distinct=True),
                  "p_values": ListOf(Interval(float, 0, 1, closed="left"), distinct=True), "trials": TRIALS,
                  "seed": SEED, "lam_grid": GRID, "tune_trials": TRIALS})
def run_sweeps(prepared, models: Sequence[str], n_inputs: int, n_workers: Sequence[int], p_values: Sequence[float],
               trials: int, seed: int, lam_grid=None, tune_trials: int = 6):
    """Loss against N under Bernoulli(p) stragglers for the networks ``models`` of ``prepared``.

    GCC's lambdas are cross-validated at every (p, N) under the same straggler model.

    Parameters
    ----------
    prepared : gcc.experiments.dnn_models.PreparedModels
    models : sequence of str
        Names among ``prepared``'s.
    n_inputs : int
        K (fixed), at most the images of each split.
    n_workers : sequence of int
        The N grid.
    p_values : sequence of float in [0, 1)
        Straggling probabilities.
    trials, seed : int
        Test trials per point and their seed (tuning uses ``seed + 1000``).
    lam_grid : sequence of float, optional
        Grid of both lambdas (default :data:`gcc.experiments.dnn_runs.LAMBDA_GRID`).
    tune_trials : int
        Validation draws per grid point.

    Returns
    -------
    pandas.DataFrame
        :data:`SWEEP_COLUMNS` first, then :func:`gcc.harness.run_trials`' columns and GCC's lambdas.
    """
    if [m for m in models if m not in prepared]:
        raise invalid("models", "run_sweeps", f"a non-empty sequence of networks of prepared ({', '.join(prepared)})",
                      models)
    chosen = list(dict.fromkeys(models))
    splits = {m: Splits.of(prepared[m]["splits"]) for m in chosen}
    for m in chosen:
        check_pool_sizes(splits[m], [Setting(n_inputs, n_inputs, 0)], "n_inputs", n_inputs, "run_sweeps")
    return pd.concat([_bernoulli_sweep(prepared[m]["f"], splits[m], m, n_inputs, n_workers, p_values, trials, seed,
                                       lam_grid, tune_trials, dataset=dataset_of(prepared[m], splits[m]))
                      for m in chosen], ignore_index=True)


@validate_params({"table": Frame(("model", "dataset", "p", "scheme", "n_workers", "loss")), "level": LEVEL})
def sweep_summary(table, level: float = 0.95):
    """Mean loss with its interval per (model, dataset, p, scheme, N); NaN draws count in ``n_nan``."""
    return summarize(table, "loss", by=("model", "dataset", "p", "scheme", "n_workers"), level=level)


@validate_params({"summary": Frame(("model", "dataset", "p", "scheme", "n_workers", "mean")), "level": LEVEL})
def sweep_slopes(summary, level: float = 0.95):
    """Log-log slope of the mean loss against N per (model, dataset, p, scheme), with interval."""
    return slope_table(summary, "n_workers", by=("model", "dataset", "p", "scheme"), level=level)


@validate_params({"slopes": Frame(("model", "dataset", "p", "scheme", "slope", "ci_low", "ci_high"))})
def convergence_verdicts(slopes, scheme: str = "gcc", baseline: str = "bacc"):
    """Does ``scheme``'s loss decay faster in N than ``baseline``'s (disjoint slope intervals)?

    Examples
    --------
    >>> import pandas as pd
    >>> from gcc.experiments.dnn_probabilistic import convergence_verdicts
    >>> s = pd.DataFrame({"model": "m", "dataset": "d", "p": 0.1, "scheme": ["gcc", "bacc"],
    ...                   "slope": [-3.0, -2.0], "ci_low": [-3.2, -2.3], "ci_high": [-2.8, -1.7]})
    >>> convergence_verdicts(s)["verdict"].tolist()
    ['GCC faster']
    """
    scheme, baseline = scheme_pair(slopes, scheme, baseline, "convergence_verdicts", "slopes")
    keys = ["model", "dataset", "p"]
    a = slopes[slopes["scheme"] == scheme].set_index(keys)
    b = slopes[slopes["scheme"] == baseline].set_index(keys)
    rows = []
    name_a, name_b = LABELS.get(scheme, scheme), LABELS.get(baseline, baseline)
    for key in a.index.intersection(b.index):
        ra, rb = a.loc[key], b.loc[key]
        if not np.all(np.isfinite([ra["ci_low"], ra["ci_high"], rb["ci_low"], rb["ci_high"]])):
            verdict = "not measured"
        elif ra["ci_high"] < rb["ci_low"]:
            verdict = f"{name_a} faster"
        elif ra["ci_low"] > rb["ci_high"]:
            verdict = f"{name_b} faster"
        else:
            verdict = "not distinguishable"
        rows.append({**dict(zip(keys, key)), "slope": ra["slope"], "ci_low": ra["ci_low"], "ci_high": ra["ci_high"],
                     "baseline_slope": rb["slope"], "baseline_ci_low": rb["ci_low"],
                     "baseline_ci_high": rb["ci_high"], "verdict": verdict})
    return pd.DataFrame(rows)


@validate_params({"verdicts": Frame(("model", "dataset", "p", "slope", "ci_low", "ci_high", "baseline_slope",
                                      "baseline_ci_low", "baseline_ci_high", "verdict"))})
def verdict_rows(verdicts):
    """:func:`convergence_verdicts` as rows of the claims table (claim ``dnn-isit-faster``)."""
    rows = [{"claim": "dnn-isit-faster", "model": r["model"],
             "quantity": "slope of log mean loss vs log N (GCC's; BACC's in the note)",
             "context": f"{r['model']} on {r['dataset']}, p={r['p']:g}", "claimed": np.nan,
             "measured": r["slope"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "n_points": np.nan,
             "verdict": r["verdict"],
             "note": f"BACC's slope {r['baseline_slope']:.2f} [{r['baseline_ci_low']:.2f}, {r['baseline_ci_high']:.2f}]; "
                     "'faster' = the 95% intervals do not overlap"} for _, r in verdicts.iterrows()]
    return claim_rows(rows, "dnn_probabilistic")


@validate_params({"summary": Frame(("model", "p", "scheme", "n_workers", "mean", "ci_low", "ci_high")),
                  "slopes": NoneOr(Frame(("model", "p", "scheme", "slope")))})
def plot_bernoulli(summary, slopes=None):
    """Mean loss against N (log-log) per p, one panel per (model, p), with 95% bands and fits."""
    from .plotting import band, figure, finish, log_ticks, scheme_color, scheme_marker

    panels = list(dict.fromkeys(zip(summary["model"], summary["p"])))
    fig, axes = figure(len(panels), height=2.6 * -(-len(panels) // 3) + 0.3, sharey=True)
    for ax, (model, p) in zip(axes, panels):
        sub = summary[(summary["model"] == model) & (summary["p"] == p)]
        for scheme in dict.fromkeys(sub["scheme"]):
            sc = sub[sub["scheme"] == scheme].sort_values("n_workers")
            color = scheme_color(scheme)
            label = LABELS.get(scheme, scheme)
            if slopes is not None:  # two entries per panel: the scheme and its fitted slope
                hit = slopes[(slopes["model"] == model) & (slopes["p"] == p) & (slopes["scheme"] == scheme)]
                if len(hit) and np.isfinite(hit["slope"].iloc[0]):
                    label += f" {hit['slope'].iloc[0]:.2f}"
            ax.plot(sc["n_workers"], sc["mean"], "-", marker=scheme_marker(scheme), ms=3, color=color, label=label)
            band(ax, sc["n_workers"], sc, color, alpha=0.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        log_ticks(ax, sub["n_workers"].unique())
        ax.set_title(f"{model}, p = {p:g}")
        ax.set_xlabel("N (workers)")
        ax.legend(title="slope" if slopes is not None else None, loc="best")
    axes[0].set_ylabel("loss (eq. 1)")
    return finish(fig)
