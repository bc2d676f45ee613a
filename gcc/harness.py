"""Simulation harness: run coded computing schemes side by side under a straggler model.

One trial of a comparison:

1. draw (or take) a batch ``X`` of ``K`` data points and compute ``f(X)`` once;
2. draw one received set ``F`` from the straggler model (shared by every scheme)
   and, with ``noise_std > 0``, one noise array ``eps`` of shape ``(N, *out)``
   (shared too);
3. for every scheme: encode, evaluate ``f`` on all ``N`` coded inputs in one
   vectorised call, add ``eps``, decode from the workers in ``F``, and score the
   estimates with the metrics of :mod:`gcc.metrics`.

So every scheme sees identical inputs, identical straggler sets and identical
noise: differences between schemes are paired, as in the paper's experiments
("both schemes see identical inputs and straggler sets", Figs. 3-4 of [1]_).

Randomness: ``np.random.SeedSequence(seed)`` is split into one child per
trial, and each child into three independent streams (data, stragglers,
noise). Trial ``t`` is therefore the same whatever the number of trials, and
changing the data source does not change the straggler sets.

References
----------
.. [1] P. Moradi, B. Tahmasebi, M. A. Maddah-Ali, "Coded Computing for
   Resilient Distributed Computing: A Learning-Theoretic Framework",
   NeurIPS 2024, arXiv:2406.00300.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import metrics as _m
from .backend import to_numpy
from .stragglers import WorstCase, DelayModel, worst_case_stragglers
from .validation import check_int, check_real, invalid

__all__ = ["simulate", "evaluate", "summarize", "trial_rngs"]


def trial_rngs(seed: int, trial: int) -> tuple[np.random.Generator, np.random.Generator,
                                               np.random.Generator]:
    """The (data, stragglers, noise) generators of one trial.

    Parameters
    ----------
    seed : int >= 0
    trial : int >= 0

    Returns
    -------
    tuple of three numpy.random.Generator
    """
    children = np.random.SeedSequence([int(seed), int(trial)]).spawn(3)
    return tuple(np.random.default_rng(c) for c in children)


def _check_codes(codes: Any, owner: str):
    if not isinstance(codes, Mapping) or len(codes) == 0:
        raise invalid("codes", owner, "a non-empty dict {scheme name: code}", codes)
    for name, code in codes.items():
        if not isinstance(name, str):
            raise invalid("codes", owner, "a dict with str keys (scheme names)", name)
        for attr in ("n_inputs", "n_workers", "encode", "decode"):
            if not hasattr(code, attr):
                raise invalid("codes", owner, f"a dict of codes with '{attr}' "
                              f"(scheme {name!r} has none)", type(code).__name__)
    sizes = {(int(c.n_inputs), int(c.n_workers)) for c in codes.values()}
    if len(sizes) != 1:
        raise invalid("codes", owner, "codes with the same n_inputs and n_workers (they share "
                      "inputs and straggler sets)",
                      {k: (c.n_inputs, c.n_workers) for k, c in codes.items()})
    return sizes.pop()


def _check_labels(labels: Any, K: int, owner: str) -> np.ndarray | None:
    if labels is None:
        return None
    lab = to_numpy(labels)
    if lab.shape != (K,) or not np.issubdtype(lab.dtype, np.integer):
        raise invalid("labels", owner, f"an int array of shape ({K},) (one label per input)",
                      f"{lab.dtype} array of shape {lab.shape}")
    return lab


def _batch(X: Any, rng: np.random.Generator, trial: int, K: int, owner: str):
    """The trial's inputs (and labels when the source returns them)."""
    out = X(rng, trial) if callable(X) else X
    labels = None
    if isinstance(out, tuple):
        if len(out) != 2:
            raise invalid("X", owner, "an array, or a callable returning an array or "
                          "(array, labels)", f"a tuple of length {len(out)}")
        out, labels = out
    shape = tuple(getattr(out, "shape", ()))
    if len(shape) == 0 or shape[0] != K:
        raise invalid("X", owner, f"an array of shape (n_inputs={K}, ...)",
                      f"an object of shape {shape}")
    return out, labels


def _noise_like(Y: Any, noise: np.ndarray):
    """``noise`` as the type of ``Y`` (numpy array or torch tensor on Y's device)."""
    if hasattr(Y, "detach") and hasattr(Y, "device"):
        import torch

        return torch.as_tensor(noise, dtype=Y.dtype, device=Y.device)
    return noise.astype(np.result_type(Y.dtype, np.float64) if Y.dtype.kind not in "fc"
                        else Y.dtype, copy=False)


def _scores(est: Any, true: Any, labels: np.ndarray | None) -> dict:
    row = {
        "loss": _m.mse_loss(est, true),
        "rmse_norms": _m.rmse_mean_of_norms(est, true),
        "rmse_rms": _m.rmse_root_mean_square(est, true),
    }
    if labels is not None:
        acc, base = _m.accuracy(est, labels), _m.accuracy(true, labels)
        row.update(accuracy=acc, accuracy_base=base,
                   relacc=acc / base if base > 0 else np.nan,
                   relacc_literal=base / acc if acc > 0 else np.nan)
    return row


def evaluate(code, f: Callable, X: Any, received: Sequence[int], *, labels: Any = None,
             noise: Any = None) -> dict:
    """Run one scheme once, for a given received set.

    Parameters
    ----------
    code : coded-computing scheme
        ``encode(X)`` and ``decode(Y, received)``.
    f : callable
        Vectorised over the leading axis: ``(n, *in) -> (n, *out)`` (numpy or torch).
    X : array (K, *in)
    received : sequence of int
        Ascending indices of the workers that returned.
    labels : int array (K,), optional
        Adds ``accuracy``, ``accuracy_base``, ``relacc`` and ``relacc_literal``.
    noise : array (N, *out), optional
        Added to every worker's output before decoding.

    Returns
    -------
    dict
        ``estimate`` (K, *out), ``true`` (K, *out) and the metrics ``loss``,
        ``rmse_norms``, ``rmse_rms`` (see :mod:`gcc.metrics`).
    """
    received = np.asarray(received, dtype=np.int64)
    true = f(X)
    Y = f(code.encode(X))
    if noise is not None:
        Y = Y + _noise_like(Y, to_numpy(noise))
    est = code.decode(Y[received], received)
    labels = _check_labels(labels, int(code.n_inputs), "evaluate")
    return {"estimate": est, "true": true, **_scores(est, true, labels)}


def simulate(codes: Mapping[str, Any], f: Callable, X: Any, straggler_model, trials: int,
             seed: int, labels: Any = None, noise_std: float = 0.0, *,
             extra_columns: Mapping[str, Any] | None = None, progress: bool = False):
    """Compare schemes on identical inputs, straggler sets and noise.

    Parameters
    ----------
    codes : dict {scheme name: code}
        Codes with the same ``n_inputs`` (K) and ``n_workers`` (N).
    f : callable
        The computation, vectorised over the leading axis:
        ``f(A)`` maps ``(n, *in)`` to ``(n, *out)``, numpy or torch.
        It is evaluated once on the true inputs and once per scheme on all
        ``N`` coded inputs per trial.
    X : array (K, *in), or callable ``(rng, trial) -> array`` or ``-> (array, labels)``
        The data points. A callable gives each trial its own batch (drawn from
        the trial's data generator, so reproducible from ``seed``).
    straggler_model : a model of :mod:`gcc.stragglers`
        ``FixedCount``, ``Bernoulli``, ``ContiguousBlock``, a delay model
        (adds a ``time`` column: the time of waiting for the fastest ``N - S``)
        or ``WorstCase`` (each scheme faces its own adversarial set, or that of
        ``WorstCase.against`` for all; chosen on noiseless outputs).
    trials : int >= 1
    seed : int >= 0
    labels : int array (K,), optional
        Class labels; adds ``accuracy``, ``accuracy_base``, ``relacc``
        (accuracy ratio) and ``relacc_literal`` (see :func:`gcc.metrics.relacc`).
    noise_std : float >= 0
        Standard deviation of i.i.d. Gaussian noise added to every worker output
        (the noisy setting of Theorem 2); one noise draw per trial, shared.
    extra_columns : dict, optional
        Constant columns added to every row (e.g. ``{"model": "vit"}``).
    progress : bool
        Show a tqdm bar over trials (needs tqdm).

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, trial): ``scheme``, ``n_workers``, ``n_inputs``,
        ``stragglers`` (``N - |F|``), ``received`` (``|F|``), ``trial``,
        ``seed``, ``straggler_model``, ``too_few_survivors``, ``loss``,
        ``rmse_norms``, ``rmse_rms`` [, ``accuracy``, ``accuracy_base``,
        ``relacc``, ``relacc_literal``] [, ``time``].
        Draws with fewer received workers than ``straggler_model.min_survivors``
        keep their rows with ``too_few_survivors = True`` and NaN metrics; their
        number is in ``df.attrs["n_too_few_survivors"]`` (per trial, not per
        scheme) and a ``RuntimeWarning`` reports it. They are never dropped.

    Raises
    ------
    ValueError
        For bad ``codes``, ``X``, ``trials``, ``seed``, ``noise_std`` or ``labels``.
    """
    import pandas as pd

    owner = "simulate"
    K, N = _check_codes(codes, owner)
    trials = check_int(trials, "trials", owner, minimum=1)
    seed = check_int(seed, "seed", owner, minimum=0)
    noise_std = check_real(noise_std, "noise_std", owner, minimum=0,
                           constraint="a finite float >= 0")
    if not callable(f):
        raise invalid("f", owner, "a callable (vectorised over the leading axis)", f)
    if not hasattr(straggler_model, "sample_many") and not isinstance(straggler_model,
                                                                      WorstCase):
        raise invalid("straggler_model", owner, "a straggler model of gcc.stragglers",
                      straggler_model)
    if not callable(X):
        _batch(X, None, 0, K, owner)  # shape check before any work
    fixed_labels = _check_labels(labels, K, owner)
    worst = isinstance(straggler_model, WorstCase)
    if worst:
        S = straggler_model.stragglers
        if S >= N:
            raise invalid("straggler_model", owner,
                          f"a model with stragglers < n_workers (= {N})", straggler_model)
        if straggler_model.against is not None and straggler_model.against not in codes:
            raise invalid("straggler_model", owner,
                          f"a WorstCase whose 'against' is one of {list(codes)}",
                          straggler_model.against)
    delay = isinstance(straggler_model, DelayModel)
    min_survivors = int(getattr(straggler_model, "min_survivors", 1))
    model_repr = repr(straggler_model)

    rows = []
    n_too_few = 0
    iterator = range(trials)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="trials")
    for t in iterator:
        rng_data, rng_strag, rng_noise = trial_rngs(seed, t)
        Xt, batch_labels = _batch(X, rng_data, t, K, owner)
        lab = fixed_labels if batch_labels is None else _check_labels(batch_labels, K, owner)
        true = f(Xt)

        waited = None
        shared = None
        if worst:
            if straggler_model.against is not None:
                shared = worst_case_stragglers(codes[straggler_model.against], f, Xt,
                                               straggler_model.stragglers,
                                               straggler_model.search)
        elif delay:
            mask, time = straggler_model.sample_many_with_time(
                rng_strag, N, N - straggler_model.stragglers, 1)
            shared, waited = np.flatnonzero(mask[0]), float(time[0])
        else:
            shared = np.flatnonzero(straggler_model.sample_many(rng_strag, N, 1)[0])
        too_few = shared is not None and shared.size < min_survivors
        n_too_few += bool(too_few)

        noise = None
        for name, code in codes.items():
            received = shared
            Y = None
            if received is None:  # WorstCase against each scheme
                Y = f(code.encode(Xt))
                received = worst_case_stragglers(code, f, Xt, straggler_model.stragglers,
                                                 straggler_model.search, outputs=(true, Y))
            row = {"scheme": name, "n_workers": N, "n_inputs": K,
                   "stragglers": N - int(received.size), "received": int(received.size),
                   "trial": t, "seed": seed, "straggler_model": model_repr,
                   "too_few_survivors": bool(too_few)}
            if too_few:
                row.update(loss=np.nan, rmse_norms=np.nan, rmse_rms=np.nan)
                if lab is not None:
                    row.update(accuracy=np.nan, accuracy_base=np.nan, relacc=np.nan,
                               relacc_literal=np.nan)
            else:
                if Y is None:
                    Y = f(code.encode(Xt))
                if noise_std > 0:
                    if noise is None:  # one draw per trial, shared by every scheme
                        noise = noise_std * rng_noise.standard_normal(tuple(Y.shape))
                    Y = Y + _noise_like(Y, noise)
                est = code.decode(Y[received], received)
                row.update(_scores(est, true, lab))
            if waited is not None:
                row["time"] = waited
            if extra_columns:
                row.update(extra_columns)
            rows.append(row)

    df = pd.DataFrame(rows)
    df.attrs["n_too_few_survivors"] = n_too_few
    df.attrs["trials"] = trials
    df.attrs["seed"] = seed
    if n_too_few:
        warnings.warn(f"simulate: {n_too_few} of {trials} trials drew fewer than "
                      f"{min_survivors} received workers under {model_repr}; their rows are "
                      "kept with too_few_survivors=True and NaN metrics.", RuntimeWarning,
                      stacklevel=2)
    return df


def summarize(df, value: str = "loss", by: Sequence[str] = ("scheme", "stragglers"),
              level: float = 0.95):
    """Mean and t confidence interval of ``value`` per group (NaN rows are counted apart).

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`simulate` (or any tidy table with the columns used).
    value : str
        Column to summarise.
    by : sequence of str
        Grouping columns.
    level : float in (0, 1)

    Returns
    -------
    pandas.DataFrame
        ``by`` columns plus ``mean``, ``low``, ``high``, ``half_width``, ``n``
        (values used) and ``n_nan`` (e.g. draws with too few survivors).
    """
    import pandas as pd

    if value not in df.columns:
        raise invalid("value", "summarize", f"a column of df ({list(df.columns)})", value)
    missing = [c for c in by if c not in df.columns]
    if missing:
        raise invalid("by", "summarize", f"columns of df ({list(df.columns)})", missing)
    out = []
    for key, group in df.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        vals = group[value].to_numpy(dtype=float)
        n_nan = int(np.isnan(vals).sum())
        if n_nan == vals.size:
            ci = _m.ConfidenceInterval(np.nan, np.nan, np.nan, np.nan, 0)
        else:
            ci = _m.mean_ci(vals, level=level)
        out.append({**dict(zip(by, key)), "mean": ci.mean, "low": ci.low, "high": ci.high,
                    "half_width": ci.half_width, "n": ci.n, "n_nan": n_nan})
    return pd.DataFrame(out)


#: The name the rest of the library uses (``gcc.cpgc.simulate`` is a different function).
run_trials = simulate
