"""The runners the DNN experiments share: batches, lambda tuning, the sweep loop.

Called with arguments the experiments' entry points have checked; nothing is checked again.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..codes import canonical, make, make_many
from ..harness import run_trials
from ..stragglers import FixedCount
from ..summary import summarize
from ..tuning import select_lambdas, tolerant_optimum
from ..validation import invalid
from ..dnn._checks import Setting, Splits

__all__ = ["LAMBDA_GRID", "EXTEND", "COMPARED_SCHEMES", "LAMBDA_COLUMNS", "batch_source", "tune_lambdas",
           "selection_columns", "lambdas_at", "dataset_of", "middle_stragglers",
           "check_pool_sizes", "tuned_runs", "scheme_pair", "paired_differences"]

#: Default (lambda_enc, lambda_dec) grid: 0 and 1e-12 .. 1e-6, one point per decade (so "off by x10"
#: is one grid step); gcc.tuning's grid (1e-8 .. 1) would only probe over-smoothed codes here.
LAMBDA_GRID = (0.0, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6)

#: Grid steps the tuning may add beyond each edge until every choice is interior (``extend``).
EXTEND = 6

#: The schemes the DNN experiments compare (keys of :data:`gcc.codes.SCHEMES`).
COMPARED_SCHEMES = ("gcc", "bacc", "bspline")

#: Columns of a lambdas table (one row per tuned (model, regime, S)).
LAMBDA_COLUMNS = ["model", "dataset", "regime", "stragglers", "lam_enc", "lam_dec", "n_workers", "n_inputs",
                  "received", "tuned_at", "validation_loss", "lam_enc_edge", "lam_dec_edge", "grid_points",
                  "lam_enc_tol", "lam_dec_tol"]

#: Columns put first in the results tables.
_FRONT = ["model", "dataset", "regime", "scheme", "n_workers", "n_inputs", "stragglers", "trial", "loss", "relacc"]
_EDGES = ("lam_enc_edge", "lam_dec_edge", "grid_points", "lam_enc_tol", "lam_dec_tol")


def batch_source(x, y, n_inputs: int) -> Callable:
    """A data source for :func:`gcc.harness.run_trials`: a fresh batch of K distinct images per trial.

    Parameters
    ----------
    x : array_like, shape (n, C, H, W)
        The pool.
    y : array_like of int, shape (n,)
        Labels.
    n_inputs : int
        K, at most n.

    Returns
    -------
    callable ``(rng, trial) -> (x_batch, y_batch)``

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.experiments.dnn_runs import batch_source
    >>> xb, yb = batch_source(np.zeros((10, 1, 4, 4)), np.arange(10), 3)(np.random.default_rng(0), 0)
    >>> xb.shape, len(set(yb.tolist()))
    ((3, 1, 4, 4), 3)
    """
    x, y = np.asarray(x), np.asarray(y, dtype=np.int64)

    def source(rng, trial):
        idx = rng.choice(len(x), size=n_inputs, replace=False)
        return x[idx], y[idx]

    return source


def tune_lambdas(f, splits: Splits, n_inputs: int, n_workers: int, stragglers: int, lam_grid, trials: int, seed: int,
                 straggler_model=None):
    """GCC's (lambda_enc, lambda_dec) by grid search on validation batches (S random stragglers)."""
    grid = LAMBDA_GRID if lam_grid is None else lam_grid
    return select_lambdas(lambda le, ld: make("gcc", n_inputs, n_workers, lam_enc=le, lam_dec=ld), f,
                          batch_source(splits.x_val, splits.y_val, n_inputs),
                          FixedCount(int(stragglers)) if straggler_model is None else straggler_model,
                          lam_enc_grid=grid, lam_dec_grid=grid,
                          trials=trials, seed=seed, metric="loss", extend=EXTEND)


def selection_columns(sel) -> dict:
    """The columns a lambdas table keeps of one :class:`gcc.tuning.LambdaSelection`."""
    return {"lam_enc_edge": sel.enc_edge, "lam_dec_edge": sel.dec_edge,
            "grid_points": len(sel.lam_enc_grid) * len(sel.lam_dec_grid),
            "lam_enc_tol": tolerant_optimum(sel.table, "enc"), "lam_dec_tol": tolerant_optimum(sel.table, "dec")}


def _run_config(f, splits: Splits, setting: Setting, trials: int, seed: int, lam_enc: float, lam_dec: float,
               schemes: Sequence[str], extra_columns: Mapping[str, Any]):
    """The schemes at one (N, K, S) on test batches, every scheme of a trial on the same draws."""
    # make_many rejects a parameter that no listed code takes: GCC's lambdas go with GCC only.
    lams = {"lam_enc": lam_enc, "lam_dec": lam_dec} if "gcc" in schemes else {}
    out = run_trials(make_many(schemes, setting.n_inputs, setting.n_workers, **lams), f,
                     batch_source(splits.x_test, splits.y_test, setting.n_inputs), FixedCount(setting.stragglers),
                     trials=trials, seed=seed, extra_columns=dict(extra_columns))
    out["lam_enc"] = np.where(out["scheme"] == "gcc", lam_enc, np.nan)
    out["lam_dec"] = np.where(out["scheme"] == "gcc", lam_dec, np.nan)
    return out


def lambdas_at(lambdas, model: str, setting: Setting):
    """The row of a lambdas table (or None) for ``model`` at ``setting``'s (N, K, S); None when absent."""
    if lambdas is None:
        return None
    hit = lambdas[(lambdas["model"] == model) & (lambdas["n_workers"] == setting.n_workers)
                  & (lambdas["n_inputs"] == setting.n_inputs) & (lambdas["stragglers"] == setting.stragglers)]
    return None if hit.empty else hit.iloc[0]


def dataset_of(entry: Mapping, splits: Splits) -> str:
    """The ``dataset`` column of a prepared network: its ``info["dataset"]``, else its splits' name."""
    dataset = entry["info"].get("dataset")
    return dataset if dataset is not None else splits.name


def middle_stragglers(s_values: Sequence[int]) -> int:
    """The S at which ``tuning="single"`` tunes: the middle positive S of the sweep (0 if none)."""
    positive = [int(s) for s in s_values if s > 0] or [0]
    return positive[len(positive) // 2]


def check_pool_sizes(splits: Splits, settings, arg: str, value, owner: str) -> None:
    """Raise the library's error (naming ``arg`` of ``owner``) unless every K fits the validation and test pools."""
    for st in settings:
        for key in ("x_val", "x_test"):
            if st.n_inputs > len(getattr(splits, key)):
                raise invalid(arg, owner, f"settings with K <= the images in {key} ({len(getattr(splits, key))})",
                              value, f"K = {st.n_inputs}")


def tuned_runs(f, model: str, splits: Splits, settings: Sequence[Setting], trials: int, seed: int, lam_grid,
               tune_trials: int, schemes, dataset: str, tune_at: Mapping[str, int] | None = None, lambdas=None,
               reuse: bool = False):
    """One network's sweep: per setting, GCC's lambdas (tuned or from ``lambdas``), then the schemes."""
    frames, chosen, tables, selections = [], [], [], {}
    for st in settings:
        at = tune_at[st.regime] if tune_at is not None else st.stragglers
        row = lambdas_at(lambdas, model, st)
        if row is None:
            key = (st.regime, st.n_workers, st.n_inputs, at)
            if key not in selections:
                sel = selections[key] = tune_lambdas(f, splits, st.n_inputs, st.n_workers, at, lam_grid,
                                                     tune_trials, seed + 1000)
                table = sel.table.copy()
                for i, (column, value) in enumerate((("model", model), ("dataset", dataset), ("regime", st.regime),
                                                     ("stragglers", at))):
                    table.insert(i, column, value)
                table["n_workers"], table["n_inputs"] = st.n_workers, st.n_inputs
                tables.append(table)
            sel = selections[key]
            lam_enc, lam_dec, score, edges = sel.lam_enc, sel.lam_dec, sel.score, selection_columns(sel)
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


def paired_differences(table, column: str, a, b, metric: str, by: Sequence[str], level: float):
    """Per ``by`` group, ``metric`` of the ``column == a`` rows minus that of the ``column == b`` rows of
    the same trial: :func:`gcc.summary.summarize`'s ``mean, ci_low, ci_high, n`` ... of the differences,
    with ``a_mean`` and ``b_mean``, the means of the two (sorted groups)."""
    by = list(by)
    wide = table.pivot_table(index=by + ["trial"], columns=column, values=metric).reset_index()
    wide["_diff"] = wide[a] - wide[b]
    means = wide.groupby(by, sort=True).agg(a_mean=(a, "mean"), b_mean=(b, "mean")).reset_index()
    return summarize(wide, "_diff", by=by, level=level).merge(means, on=by)
