"""Choosing the smoothing parameters (lambda_enc, lambda_dec) by grid search on held-out batches.

The paper's experiments state that "the sole hyper-parameters ... (lambda_enc,
lambda_dec) ... are determined using cross-validation and grid search" [1]_,
without the grid or the folds. This module does the obvious protocol:

* a grid of ``lambda_enc`` and of ``lambda_dec`` (default ``0`` and
  ``10^-8 .. 10^0``, one point per decade; digest item 7.5);
* every grid point is scored by the mean loss over ``trials`` draws on
  *held-out* batches (pass batches that are not used for the reported
  results), with identical batches, straggler sets and noise for every grid
  point (paired comparison, so the ranking is not blurred by draw-to-draw
  variation);
* the best pair minimises the mean score (maximises it for accuracies).

``f`` is evaluated once per trial and ``lambda_enc`` (the workers' outputs do
not depend on ``lambda_dec``), so the grid costs ``len(lam_enc_grid)`` forward
passes per trial, not ``len(lam_enc_grid) * len(lam_dec_grid)``.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Coded Computing for
   Resilient Distributed Computing: A Learning-Theoretic Framework",
   NeurIPS 2024, arXiv:2406.00300, Sec. 5 and App. E.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from . import metrics as _m
from .harness import _batch, _check_labels, _noise_like, _scores, trial_rngs
from .stragglers import WorstCase, DelayModel
from .validation import check_choice, check_int, check_real, invalid

__all__ = ["select_lambdas", "default_lambda_grid", "LambdaSelection"]

_MAXIMISE = ("relacc", "accuracy")
_METRICS = ("loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal", "accuracy")


def default_lambda_grid() -> np.ndarray:
    """``[0, 1e-8, 1e-7, ..., 1e0]``: zero (interpolation) and one point per decade."""
    return np.concatenate([[0.0], np.logspace(-8, 0, 9)])


class LambdaSelection(NamedTuple):
    """Result of :func:`select_lambdas`."""

    lam_enc: float
    lam_dec: float
    score: float
    table: Any  # pandas.DataFrame


def _check_grid(grid: Any, name: str) -> np.ndarray:
    if grid is None:
        return default_lambda_grid()
    g = np.asarray(grid, dtype=float).ravel() if not isinstance(grid, str) else None
    if g is None or g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise invalid(name, "select_lambdas", "a non-empty sequence of finite floats >= 0", grid)
    if np.unique(g).size != g.size:
        raise invalid(name, "select_lambdas", "a sequence without duplicates", grid)
    return g


def select_lambdas(make_code: Callable[[float, float], Any] | Any, f: Callable,
                   batches: Sequence[Any] | Callable, straggler_model,
                   lam_enc_grid: Sequence[float] | None = None,
                   lam_dec_grid: Sequence[float] | None = None,
                   trials: int = 20, seed: int = 0, *, labels: Any = None,
                   noise_std: float = 0.0, metric: str = "loss",
                   level: float = 0.95) -> LambdaSelection:
    """Grid search of (lambda_enc, lambda_dec) scored on held-out batches.

    Parameters
    ----------
    make_code : callable ``(lam_enc, lam_dec) -> code``, or a code with ``with_params``
        Builds the scheme for one grid point (e.g.
        ``lambda le, ld: gcc.SplineCode(K, N, lam_enc=le, lam_dec=ld)``); a
        ``SplineCode`` instance is used through ``code.with_params``.
    f : callable
        Vectorised over the leading axis (numpy or torch).
    batches : sequence of arrays (K, *in) (or of ``(array, labels)``), or callable
        Held-out batches; trial ``t`` uses ``batches[t % len(batches)]``. A
        callable ``(rng, trial) -> array or (array, labels)`` draws them.
    straggler_model : a random model of :mod:`gcc.stragglers` (not ``WorstCase``)
    lam_enc_grid, lam_dec_grid : sequence of float >= 0, optional
        Default :func:`default_lambda_grid`.
    trials : int >= 1
        Draws per grid point (the same draws for every grid point).
    seed : int >= 0
    labels : int array (K,), optional
        Labels for a fixed batch (needed for ``metric="relacc"`` or ``"accuracy"``
        unless the batches carry their own).
    noise_std : float >= 0
        Worker noise (Theorem 2 setting); shared by every grid point.
    metric : {"loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal", "accuracy"}
        Score; accuracies and ``relacc`` are maximised, the others minimised.
    level : float
        Level of the intervals in the table.

    Returns
    -------
    LambdaSelection
        ``lam_enc``, ``lam_dec``, ``score`` (mean of ``metric`` at the best
        pair) and ``table``: a DataFrame with one row per grid point,
        ``lam_enc``, ``lam_dec``, ``metric``, ``mean``, ``low``, ``high``,
        ``n``, ``n_nan``, ``rank`` (1 = best); ties go to the first pair in
        grid order (smaller ``lam_enc``, then smaller ``lam_dec``).
    """
    import pandas as pd

    owner = "select_lambdas"
    check_choice(metric, "metric", owner, _METRICS)
    ge = _check_grid(lam_enc_grid, "lam_enc_grid")
    gd = _check_grid(lam_dec_grid, "lam_dec_grid")
    trials = check_int(trials, "trials", owner, minimum=1)
    seed = check_int(seed, "seed", owner, minimum=0)
    noise_std = check_real(noise_std, "noise_std", owner, minimum=0,
                           constraint="a finite float >= 0")
    if isinstance(straggler_model, WorstCase) or not hasattr(straggler_model, "sample_many"):
        raise invalid("straggler_model", owner, "a random straggler model (FixedCount, "
                      "Bernoulli, ContiguousBlock, ShiftedExponential, SlowWorkers)",
                      straggler_model)
    if hasattr(make_code, "with_params") and not callable(make_code):
        template = make_code
        make_code = lambda le, ld: template.with_params(lam_enc=le, lam_dec=ld)  # noqa: E731
    if not callable(make_code):
        raise invalid("make_code", owner, "a callable (lam_enc, lam_dec) -> code, or a code "
                      "with with_params", make_code)
    if callable(batches):
        source = batches
    else:
        if isinstance(batches, (str, bytes)) or not isinstance(batches, Sequence) \
                or len(batches) == 0:
            raise invalid("batches", owner, "a non-empty sequence of arrays (K, ...) or a "
                          "callable (rng, trial) -> array", type(batches).__name__)
        source = lambda rng, t: batches[t % len(batches)]  # noqa: E731

    codes = {(le, ld): make_code(float(le), float(ld)) for le in ge for ld in gd}
    first = next(iter(codes.values()))
    K, N = int(first.n_inputs), int(first.n_workers)
    for code in codes.values():
        if (int(code.n_inputs), int(code.n_workers)) != (K, N):
            raise invalid("make_code", owner, "a factory whose codes share n_inputs and "
                          "n_workers", (code.n_inputs, code.n_workers))
    fixed_labels = _check_labels(labels, K, owner)
    delay = isinstance(straggler_model, DelayModel)
    min_survivors = int(getattr(straggler_model, "min_survivors", 1))

    scores = {key: [] for key in codes}
    for t in range(trials):
        rng_data, rng_strag, rng_noise = trial_rngs(seed, t)
        Xt, batch_labels = _batch(source, rng_data, t, K, owner)
        lab = fixed_labels if batch_labels is None else _check_labels(batch_labels, K, owner)
        if metric in ("relacc", "relacc_literal", "accuracy") and lab is None:
            raise invalid("labels", owner, f"given (metric={metric!r} needs labels)", None)
        if delay:
            mask = straggler_model.sample_many_with_time(
                rng_strag, N, N - straggler_model.stragglers, 1)[0]
        else:
            mask = straggler_model.sample_many(rng_strag, N, 1)
        received = np.flatnonzero(mask[0])
        if received.size < min_survivors:
            for key in codes:
                scores[key].append(np.nan)
            continue
        true = f(Xt)
        noise = None
        for le in ge:
            enc_code = codes[(le, gd[0])]
            Y = f(enc_code.encode(Xt))
            if noise_std > 0:
                if noise is None:
                    noise = noise_std * rng_noise.standard_normal(tuple(Y.shape))
                Y = Y + _noise_like(Y, noise)
            Yr = Y[received]
            for ld in gd:
                est = codes[(le, ld)].decode(Yr, received)
                scores[(le, ld)].append(_scores(est, true, lab)[metric])

    rows = []
    for (le, ld), vals in scores.items():
        v = np.asarray(vals, dtype=float)
        n_nan = int(np.isnan(v).sum())
        if n_nan == v.size:
            ci = _m.ConfidenceInterval(np.nan, np.nan, np.nan, np.nan, 0)
        else:
            ci = _m.mean_ci(v, level=level)
        rows.append({"lam_enc": float(le), "lam_dec": float(ld), "metric": metric,
                     "mean": ci.mean, "low": ci.low, "high": ci.high, "n": ci.n,
                     "n_nan": n_nan})
    table = pd.DataFrame(rows)
    key = -table["mean"] if metric in _MAXIMISE else table["mean"]
    table["rank"] = key.rank(method="first", na_option="bottom").astype(int)
    best = table.loc[table["rank"] == 1].iloc[0]
    return LambdaSelection(float(best["lam_enc"]), float(best["lam_dec"]), float(best["mean"]),
                           table)
