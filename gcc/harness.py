"""Simulation harness: coded computing schemes side by side on shared inputs, straggler sets and noise.

Trial ``t`` draws from ``SeedSequence([seed, t])`` (:func:`trial_rngs`), so it does not depend on the
number of trials.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np

from . import metrics as _m
from .stragglers import WorstCase, DelayModel
from .validation import (BOOL, SEED, Callable as CallableC, HasAttributes, Interval, NoneOr, Rejected, caller,
                         check_int, check_labels, check_received, invalid, validate_params)

__all__ = ["run_trials", "evaluate", "scores", "trial_rngs", "TrialContext", "CODE", "MEASURED_COLUMNS"]

#: Every column :func:`run_trials` measures; ``extra_columns`` and the hook may not use them.
MEASURED_COLUMNS = ("scheme", "n_workers", "n_inputs", "stragglers", "received", "trial",
                    "seed", "straggler_model", "too_few_survivors", "loss", "rmse_norms",
                    "rmse_rms", "accuracy", "accuracy_base", "relacc", "relacc_literal", "time")
_NAN_SCORES = dict.fromkeys(("loss", "rmse_norms", "rmse_rms"), np.nan)
_NAN_LABEL_SCORES = dict.fromkeys(("accuracy", "accuracy_base", "relacc", "relacc_literal"), np.nan)


@validate_params({"seed": SEED, "trial": Interval(int, 0, None)})
def trial_rngs(seed: int, trial: int) -> tuple[np.random.Generator, np.random.Generator,
                                               np.random.Generator]:
    """The (data, stragglers, noise) generators of one trial of :func:`run_trials`.

    Parameters
    ----------
    seed : int >= 0
    trial : int >= 0

    Returns
    -------
    tuple of three numpy.random.Generator
        Independent children of ``np.random.SeedSequence([seed, trial])``.

    Examples
    --------
    The received set of trial 2 of ``run_trials(..., gcc.FixedCount(3), seed=0)``:

    >>> import gcc
    >>> from gcc.harness import trial_rngs
    >>> data, stragglers, noise = trial_rngs(0, 2)
    >>> gcc.FixedCount(3).sample(stragglers, 8).tolist()
    [0, 2, 4, 6, 7]
    """
    return _rngs(seed, trial)


def _rngs(seed: int, trial: int) -> tuple:
    """:func:`trial_rngs` of checked arguments."""
    return tuple(np.random.default_rng(c) for c in np.random.SeedSequence([seed, trial]).spawn(3))


#: what the harness needs of a code
CODE = HasAttributes(("n_inputs", "n_workers", "encode", "decode"), callables=("encode", "decode"),
                     description="a code (with n_inputs, n_workers, encode() and decode())")
_F = CallableC("a callable (vectorised over the leading axis)")
_SIZE = Interval(int, 1, None)
_MODEL = HasAttributes(("sample_many",), callables=("sample_many",), description=(
    "a straggler model of gcc.stragglers (with sample_many(rng, n_workers, trials))"))


def _check_codes(codes: Any, owner: str):
    """``(K, N)`` of a non-empty dict of codes that share them."""
    if not isinstance(codes, Mapping) or len(codes) == 0:
        raise invalid("codes", owner, "a non-empty dict {scheme name: code}", codes)
    for name, code in codes.items():
        if not isinstance(name, str) or not name:
            raise invalid("codes", owner, "a dict with non-empty str keys (scheme names)", name)
        try:
            CODE.convert(code)
            _SIZE.convert(code.n_inputs), _SIZE.convert(code.n_workers)
        except Rejected as err:
            detail = err.detail or "n_inputs or n_workers is no int >= 1"
            raise invalid("codes", owner, "a dict of codes (with n_inputs, n_workers, encode() and decode())",
                          code, f"scheme {name!r}: {detail}") from None
    sizes = {(int(c.n_inputs), int(c.n_workers)) for c in codes.values()}
    if len(sizes) != 1:
        raise invalid("codes", owner, "codes with the same n_inputs and n_workers (they share "
                      "inputs and straggler sets)",
                      {k: (c.n_inputs, c.n_workers) for k, c in codes.items()})
    return sizes.pop()


def _check_output(out: Any, f: Callable, n: int, what: str, owner: str, like=None):
    """``f``'s output for ``n`` input rows: an array of shape (n, *out) (``like``'s trailing axes)."""
    shape = getattr(out, "shape", None)
    if shape is None or len(shape) == 0 or shape[0] != n or (
            like is not None and tuple(shape[1:]) != tuple(like.shape[1:])):
        got = f"a {type(out).__name__}" if shape is None else f"shape {tuple(shape)}"
        want = f"(n, *out) with out = {tuple(like.shape[1:])}" if like is not None else "(n, *out)"
        raise invalid("f", owner, f"a callable vectorised over the leading axis, returning an array of "
                      f"shape {want} for n input rows", f, f"{what} of {n} rows gave {got}")
    if getattr(getattr(out, "dtype", None), "kind", "f") not in "biufc":    # torch dtypes: no kind
        raise invalid("f", owner, "a callable returning numbers", f,
                      f"{what} has dtype {out.dtype}")
    return out


def _labels(labels: Any, K: int, owner: str, true=None) -> np.ndarray | None:
    """``K`` labels as an int array (indices of ``true``'s class scores when given), or None."""
    if labels is not None and true is not None and true.ndim < 2:
        raise invalid("labels", owner, "given only with an f that returns class scores of shape (n, C)",
                      labels, f"f(X) has shape {tuple(true.shape)}")
    n_classes = None if true is None else int(true.shape[-1])
    return None if labels is None else check_labels(labels, K, "labels", owner, n_classes=n_classes)


def _check_new_columns(columns: Any, name: str, owner: str, taken) -> dict:
    """``columns`` as a dict of columns that are neither measured nor in ``taken``."""
    if not isinstance(columns, Mapping):
        raise invalid(name, owner, "a dict of new columns" if name == "extra_columns" else
                      "a callable returning None or a dict of new columns", columns)
    for key in columns:
        if not isinstance(key, str):
            raise invalid(name, owner, "a dict with str keys (column names)", columns, f"{key!r} is no str")
        if key in MEASURED_COLUMNS or key in taken:
            what = "a measured column" if key in MEASURED_COLUMNS else "an extra column"
            raise invalid(name, owner, "new columns only (never overwriting the table's)", key,
                          f"{key!r} is {what}")
    return dict(columns)


def _batch(X: Any, rng: np.random.Generator, trial: int, K: int, owner: str):
    """The trial's inputs (and labels when the source returns them)."""
    out = X(rng, trial) if callable(X) else X
    labels = None
    if isinstance(out, tuple):
        if len(out) != 2:
            raise invalid("X", owner, "an array, or a callable returning an array or (array, labels)", out,
                          f"a tuple of length {len(out)}")
        out, labels = out
    return _check_inputs(out, K, owner), labels


def _check_inputs(X: Any, K: int, owner: str):
    """``X`` as given: an array of numbers of shape (K, ...) with no empty axis."""
    shape = tuple(getattr(X, "shape", ()))
    if len(shape) == 0 or shape[0] != K or 0 in shape:
        raise invalid("X", owner, f"an array of shape (n_inputs={K}, ...) with no empty axis", X,
                      f"its shape is {shape}")
    if getattr(X.dtype, "kind", "f") not in "biufc":    # torch dtypes: no kind
        raise invalid("X", owner, "an array of numbers (bool, int, float or complex)", X,
                      f"its dtype is {X.dtype}")
    return X


def _noise_like(Y: Any, noise: np.ndarray):
    """``noise`` as the type of ``Y`` (numpy array or torch tensor on Y's device)."""
    if hasattr(Y, "detach") and hasattr(Y, "device"):
        import torch

        return torch.as_tensor(noise, dtype=Y.dtype, device=Y.device)
    return noise.astype(np.result_type(Y.dtype, np.float64) if Y.dtype.kind not in "fc"
                        else Y.dtype, copy=False)


def scores(est: Any, true: Any, labels: Any = None) -> dict:
    """The metric columns of one row of :func:`run_trials`.

    Parameters
    ----------
    est : array (K, *out)
        Decoded estimates (numpy or torch).
    true : array (K, *out)
        Exact outputs ``f(x_k)``.
    labels : int array (K,), optional
        Class labels; add the accuracy columns.

    Returns
    -------
    dict
        ``loss``, ``rmse_norms``, ``rmse_rms`` (:mod:`gcc.metrics`); with labels also ``accuracy``,
        ``accuracy_base`` (of ``true``), ``relacc`` (their ratio) and ``relacc_literal`` (its inverse).

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.harness import scores
    >>> s = scores(np.array([[1.0, 0.0], [0.0, 3.0]]), np.zeros((2, 2)))
    >>> {k: float(v) for k, v in s.items()}
    {'loss': 5.0, 'rmse_norms': 2.0, 'rmse_rms': 2.23606797749979}
    """
    row = {
        "loss": _m.mse_loss(est, true),
        "rmse_norms": _m.rmse_mean_of_norms(est, true),
        "rmse_rms": _m.rmse_root_mean_square(est, true),
    }
    if labels is not None:
        if np.ndim(true) < 2:
            raise invalid("labels", "scores", "given only for class scores of shape (K, C)", labels,
                          f"true has shape {np.shape(true)}")
        acc, base = _m.accuracy(est, labels), _m.accuracy(true, labels)
        row.update(accuracy=acc, accuracy_base=base,
                   relacc=acc / base if base > 0 else np.nan,
                   relacc_literal=base / acc if acc > 0 else np.nan)
    return row


@validate_params({"code": CODE, "f": _F})
def evaluate(code, f: Callable, X: Any, received: Sequence[int]) -> dict:
    """Run one scheme once, for a given received set.

    Parameters
    ----------
    code : coded-computing scheme
        ``encode(X)`` and ``decode(Y, received)``.
    f : callable
        Vectorised over the leading axis: ``(n, *in) -> (n, *out)`` (numpy or torch).
    X : array (K, *in)
    received : sequence of int
        Strictly ascending indices of the workers that returned.

    Returns
    -------
    dict
        ``estimate`` (K, *out), ``true`` (K, *out) and the metrics of :func:`scores`.

    Examples
    --------
    LCC recovers a polynomial ``f`` of degree ``d`` exactly from
    ``(K - 1) d + 1`` workers (here ``K = 4``, ``d = 2``, 7 of 8 workers):

    >>> import numpy as np, gcc
    >>> from gcc.harness import evaluate
    >>> code = gcc.LagrangeCode(4, 8)
    >>> out = evaluate(code, lambda x: x ** 2, np.linspace(-1, 1, 4), range(7))
    >>> out["estimate"].shape, bool(out["loss"] < 1e-20)
    ((4,), True)
    """
    owner = "evaluate"
    N = check_int(code.n_workers, "code.n_workers", owner, minimum=1)
    received = np.array(check_received(received, N, owner), dtype=np.int64)
    K = int(code.n_inputs)
    true = _check_output(f(_check_inputs(X, K, owner)), f, K, "f(X)", owner)
    Y = _check_output(f(code.encode(X)), f, N, "f(code.encode(X))", owner, like=true)
    est = code.decode(Y[received], received)
    return {"estimate": est, "true": true, **scores(est, true)}


class TrialContext(NamedTuple):
    """What one (trial, scheme) of :func:`run_trials` computed: the argument of its hook.

    ``outputs`` (N, *out) hold the worker outputs with the trial's ``noise`` added (the decoder sees
    ``outputs[received]``); ``outputs``, ``noise`` and ``estimate`` are None when too few workers
    survived (``noise`` also without noise). ``row`` is a copy of the measured row; ``rngs`` the
    trial's generators (:func:`trial_rngs`) after the harness's own draws.
    """

    trial: int
    scheme: str
    code: Any
    inputs: Any
    labels: np.ndarray | None
    received: np.ndarray
    true: Any
    outputs: Any
    noise: np.ndarray | None
    estimate: Any
    row: dict
    rngs: tuple


def _shared_received(straggler_model, codes, f, Xt, rng, N: int, owner: str):
    """The trial's received set shared by every scheme (``None``: one per scheme) and its time."""
    if isinstance(straggler_model, WorstCase):
        if straggler_model.against is None:
            return None, None
        return straggler_model.resolve(codes[straggler_model.against], f, Xt), None
    if isinstance(straggler_model, DelayModel):
        mask, time = straggler_model.sample_many_with_time(
            rng, N, N - straggler_model.stragglers, 1)
        return np.flatnonzero(mask[0]), float(time[0])
    mask = straggler_model.sample_many(rng, N, 1)
    if not (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (1, N)):
        raise invalid("straggler_model", owner, f"a model whose sample_many(rng, {N}, 1) "
                      f"returns a boolean array of shape (1, {N})", straggler_model,
                      f"it returned {mask!r}"[:160])
    return np.flatnonzero(mask[0]), None


def _check_model(straggler_model, codes, N: int, owner: str) -> int:
    """Check the model against the codes; return its ``min_survivors``."""
    S = getattr(straggler_model, "stragglers", None)
    if isinstance(S, numbers.Integral) and S >= N:
        raise invalid("straggler_model", owner, f"a model with stragglers < n_workers (= {N})",
                      straggler_model)
    if isinstance(straggler_model, WorstCase):
        if straggler_model.against is not None and straggler_model.against not in codes:
            raise invalid("straggler_model", owner,
                          f"a WorstCase whose 'against' is one of {list(codes)}",
                          straggler_model.against)
    return check_int(getattr(straggler_model, "min_survivors", 1), "straggler_model.min_survivors",
                     owner, minimum=1, maximum=N, constraint=f"an int in [1, n_workers = {N}]")


@validate_params({"f": _F, "trials": Interval(int, 1, None), "seed": SEED, "straggler_model": _MODEL,
                  "noise_std": Interval(float, 0, None, description="a finite float >= 0"),
                  "on_trial": NoneOr(CallableC("a callable (TrialContext) -> dict or None")),
                  "return_received": BOOL})
def run_trials(codes: Mapping[str, Any], f: Callable, X: Any, straggler_model, trials: int,
               seed: int, labels: Any = None, noise_std: float = 0.0, *,
               extra_columns: Mapping[str, Any] | None = None,
               on_trial: Callable[[TrialContext], Mapping[str, Any] | None] | None = None,
               return_received: bool = False):
    """Compare schemes on identical inputs, straggler sets and noise.

    Parameters
    ----------
    codes : dict {scheme name: code}
        Codes with the same ``n_inputs`` (K) and ``n_workers`` (N).
    f : callable
        Vectorised over the leading axis: ``(n, *in) -> (n, *out)``, numpy or torch.
    X : array (K, *in), or callable ``(rng, trial) -> array`` or ``-> (array, labels)``
        The data points; a callable draws each trial's batch from the trial's data generator.
    straggler_model : a model of :mod:`gcc.stragglers`
        A delay model adds a ``time`` column; ``WorstCase`` gives each scheme its own adversarial
        set (that of ``against`` for all), chosen on noiseless outputs.
    trials : int >= 1
    seed : int >= 0
    labels : int array (K,), optional
        Class labels; adds the accuracy columns of :func:`scores`.
    noise_std : float >= 0
        Standard deviation of i.i.d. Gaussian noise on every worker output (one draw per trial).
    extra_columns : dict, optional
        Constant columns added to every row; a name of :data:`MEASURED_COLUMNS` is an error.
    on_trial : callable ``(TrialContext) -> dict or None``, optional
        Called per (trial, scheme) in row order; a returned dict adds new columns to the row.
    return_received : bool
        Also return the received sets.

    Returns
    -------
    table : pandas.DataFrame
        One row per (scheme, trial): the :data:`MEASURED_COLUMNS` it measured, then
        ``extra_columns`` and the hook's. Draws with fewer than ``straggler_model.min_survivors``
        received workers keep NaN metrics and ``too_few_survivors = True`` (counted in
        ``table.attrs["n_too_few_survivors"]``, with a ``RuntimeWarning``).
    received : list of dict, only with ``return_received=True``
        ``received[t][scheme]``: ascending indices of the workers that answered in trial ``t``.

    Examples
    --------
    >>> import numpy as np, gcc
    >>> from gcc.harness import run_trials
    >>> codes = {"gcc": gcc.SplineCode(6, 20), "bacc": gcc.BerrutCode(6, 20)}
    >>> X = np.linspace(-2, 2, 6)
    >>> table, received = run_trials(codes, np.sin, X, gcc.FixedCount(4), trials=3, seed=0,
    ...                              return_received=True)
    >>> table[["scheme", "trial", "stragglers"]].head(2)
      scheme  trial  stragglers
    0    gcc      0           4
    1   bacc      0           4
    >>> len(received), received[0]["gcc"] is received[0]["bacc"], received[0]["gcc"].size
    (3, True, 16)

    A hook adds columns (here the worst error over the K estimates):

    >>> def worst(ctx):
    ...     return {"max_error": float(np.abs(ctx.estimate - ctx.true).max())}
    >>> table = run_trials(codes, np.sin, X, gcc.FixedCount(4), 3, 0, on_trial=worst)
    >>> bool((table.max_error ** 2 >= table.loss).all())
    True
    """
    import pandas as pd

    owner = caller("run_trials")   # a function built on this one names itself (validation.entry)
    K, N = _check_codes(codes, owner)
    min_survivors = _check_model(straggler_model, codes, N, owner)
    extra = _check_new_columns(extra_columns or {}, "extra_columns", owner, ())
    if not callable(X):
        _batch(X, None, 0, K, owner)  # shape check before any work
    fixed_labels = _labels(labels, K, owner)
    model_repr = repr(straggler_model)

    rows, received_sets = [], []
    n_too_few = 0
    for t in range(trials):
        rngs = _rngs(seed, t)
        rng_data, rng_strag, rng_noise = rngs
        Xt, batch_labels = _batch(X, rng_data, t, K, owner)
        true = _check_output(f(Xt), f, K, "f(X)", owner)
        lab = _labels(fixed_labels if batch_labels is None else batch_labels, K, owner, true)
        shared, waited = _shared_received(straggler_model, codes, f, Xt, rng_strag, N, owner)
        too_few = shared is not None and shared.size < min_survivors
        n_too_few += bool(too_few)

        noise = None
        sets = {}
        for name, code in codes.items():
            received, Y, est = shared, None, None
            if received is None:  # WorstCase against each scheme
                Y = _check_output(f(code.encode(Xt)), f, N, "f(code.encode(X))", owner, like=true)
                received = straggler_model.resolve(code, f, Xt, outputs=(true, Y))
            sets[name] = received
            row = {"scheme": name, "n_workers": N, "n_inputs": K,
                   "stragglers": N - int(received.size), "received": int(received.size),
                   "trial": t, "seed": seed, "straggler_model": model_repr,
                   "too_few_survivors": bool(too_few)}
            if too_few:
                row.update(_NAN_SCORES)
                if lab is not None:
                    row.update(_NAN_LABEL_SCORES)
            else:
                if Y is None:
                    Y = _check_output(f(code.encode(Xt)), f, N, "f(code.encode(X))", owner,
                                      like=true)
                if noise_std > 0:
                    if noise is None:  # one draw per trial, shared by every scheme
                        noise = noise_std * rng_noise.standard_normal(tuple(Y.shape))
                    Y = Y + _noise_like(Y, noise)
                est = code.decode(Y[received], received)
                row.update(scores(est, true, lab))
            if waited is not None:
                row["time"] = waited
            row.update(extra)
            if on_trial is not None:
                added = on_trial(TrialContext(t, name, code, Xt, lab, received, true,
                                              None if too_few else Y,
                                              None if too_few else noise, est, dict(row), rngs))
                if added is not None:
                    row.update(_check_new_columns(added, "on_trial", owner, extra))
            rows.append(row)
        if return_received:
            received_sets.append(sets)

    df = pd.DataFrame(rows)
    df.attrs["n_too_few_survivors"] = n_too_few
    if n_too_few:
        warnings.warn(f"{owner}: {n_too_few} of {trials} trials drew fewer than "
                      f"{min_survivors} received workers under {model_repr}; their rows are "
                      "kept with too_few_survivors=True and NaN metrics.", RuntimeWarning,
                      stacklevel=2)
    return (df, received_sets) if return_received else df
