"""Argument constraints of :mod:`gcc.dnn` and of the DNN experiments (the contract of :mod:`gcc.validation`).

Paths, torch modules and devices, image batches, labels, data splits, prepared networks, scheme
names, lambda grids and counts of stragglers. Torch is imported only where a check needs it, so
the experiments import this module without loading torch. No check changes a number: arrays keep
their dtype, tensors stay tensors, configurations are checked, never rewritten (a cache key).
"""
from __future__ import annotations

import difflib
import numbers
import os
import sys
from collections.abc import Mapping

import numpy as np

from ..validation import (COLUMNS, LAM, NAME, TEXT, ArrayLike, Callable, Constraint, Frame, InstanceOf, Interval, ListOf,
                          NoneOr, Rejected, Satisfies, check_int, check_labels, invalid, validate)

__all__ = ["PATH", "MODULE", "NAME", "MAPPING", "DEVICE", "Device", "IntTuple", "available_devices", "check_images",
           "check_labels", "check_keys", "real_tensor", "F", "LEVEL", "LAM", "TRIALS", "COUNT", "TEXT", "Frame",
           "IntList", "RealList", "AsGiven", "SCHEMES", "NAMES", "COLUMNS", "GRID", "SPLITS", "TEST_SPLITS",
           "PREPARED", "Splits", "TUNING_METRICS", "is_int", "check_pool", "check_sizes", "check_stragglers",
           "check_straggler_list", "check_scheme_pair", "validate_model", "check_regimes", "check_per_regime", "check_sweep",
           "check_band", "check_grid", "check_metric", "check_lambda_pairs", "check_family_triples", "check_columns",
           "check_lambda_columns"]


def _is_module(value) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.nn.Module)


#: a torch module (a network); a mapping (a configuration, a recipe); a path
MODULE = Satisfies(_is_module, "a torch.nn.Module")
MAPPING = InstanceOf(Mapping, "a mapping")
PATH = Satisfies(lambda v: isinstance(v, os.PathLike) or (isinstance(v, str) and bool(v) and "\x00" not in v),
                 "a path (a non-empty str or an os.PathLike)")
#: the workers' function, a confidence level, trials (repeats, draws), a count (K, N)
F = Callable()
LEVEL = Interval(numbers.Real, 0, 1, closed="neither")
TRIALS = COUNT = Interval(numbers.Integral, 1, None)
#: the criteria of :func:`gcc.tuning.select_lambdas`
TUNING_METRICS = ("loss", "rmse_norms", "rmse_rms", "relacc", "relacc_literal", "accuracy")


def available_devices() -> list[str]:
    """The device names this machine offers (``cpu``, ``cuda:i`` ..., ``mps``)."""
    import torch

    names = ["cpu"] + ([f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else [])
    mps = getattr(torch.backends, "mps", None)
    return names + (["mps"] if mps is not None and mps.is_available() else [])


class Device(Constraint):
    """A torch device this machine has (``"cpu"``, ``"cuda:1"``, a ``torch.device``; ``"auto"`` with
    ``auto=True``); returned as it is."""

    def __init__(self, auto: bool = False, description: str | None = None):
        super().__init__(description)
        self.auto = bool(auto)

    def describe(self) -> str:
        return f"a torch device of this machine ({', '.join(available_devices())}{', or ' + repr('auto') if self.auto else ''})"

    def convert(self, value, name: str = "value"):
        import torch

        if self.auto and isinstance(value, str) and value == "auto":
            return value
        try:
            device = torch.device(value) if isinstance(value, (str, torch.device)) else None
        except (RuntimeError, TypeError, ValueError):
            device = None
        if device is None:
            raise Rejected()
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        mps = getattr(torch.backends, "mps", None)
        if device.type == "cuda" and (device.index or 0) >= count:
            raise Rejected(f"this machine has {count} CUDA device(s)")
        if device.type == "mps" and (mps is None or not mps.is_available()):
            raise Rejected("MPS is not available here")
        if device.type not in ("cpu", "cuda", "mps"):
            raise Rejected(f"device type {device.type!r} is not supported")
        return value


DEVICE = Device()


def IntTuple(minimum: int = 1) -> Constraint:
    """A non-empty sequence of ints >= ``minimum`` (a shape, widths), as a tuple."""
    return ListOf(Interval(numbers.Integral, minimum, None), as_tuple=True)


def IntList(low=None, high=None, min_len: int = 1, distinct: bool = False, description=None) -> Constraint:
    """A sequence of ints in [low, high], as a list of Python ints."""
    return ListOf(Interval(numbers.Integral, low, high), min_len, distinct, description=description)


def RealList(low=None, high=None, closed: str = "both", min_len: int = 1, distinct: bool = False,
             description=None) -> Constraint:
    """A sequence of finite reals in an interval, as a list of Python floats."""
    return ListOf(Interval(numbers.Real, low, high, closed=closed), min_len, distinct, description=description)


class AsGiven(Constraint):
    """``constraint``'s test, the value returned as the caller gave it (a grid stays an array)."""

    def __init__(self, constraint, description: str | None = None):
        super().__init__(description or constraint.description)
        self.constraint = constraint

    def convert(self, value, name: str = "value"):
        self.constraint.convert(value, name)
        return value


class _SchemeName(Constraint):
    def describe(self) -> str:
        return "a scheme name"

    def convert(self, value, name: str = "value"):
        from ..codes import canonical

        try:
            return canonical(value)
        except ValueError:
            raise Rejected(f"{name} = {value!r} is no scheme") from None


#: distinct scheme names (keys or aliases), names (of networks), a lambda grid or None (the default)
SCHEMES = AsGiven(ListOf(_SchemeName(), distinct=True),
                  "a non-empty sequence of distinct scheme names (gcc, bacc, bspline, lcc)")
NAMES = ListOf(TEXT, description="a non-empty sequence of names (str)")
GRID = NoneOr(AsGiven(RealList(0, None, distinct=True)))


def _sequence(value) -> bool:
    return not isinstance(value, (str, bytes, Mapping)) and np.ndim(value) == 1


def is_int(v) -> bool:
    """An int (Python or numpy), never a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def real_tensor(x, name: str, owner: str, ndim: int | None = None, min_ndim: int = 1):
    """A batch of real numbers: a torch tensor (returned as it is) or an array-like (``numpy.asarray``,
    dtype kept). Complex values, strings and objects are refused; NaN is data."""
    words = f"a {ndim}-D batch" if ndim is not None else f"a batch with at least {min_ndim} ax{'i' if min_ndim == 1 else 'e'}s"
    requirement = f"{words} of real numbers (a numpy array or a torch tensor)"
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        arr, kind = x, "c" if x.is_complex() else "f"
    else:
        try:
            arr = validate(x, ArrayLike(), name, owner) if x is not None else None
        except ValueError:
            arr = None
        if arr is None:
            raise invalid(name, owner, requirement, x)
        kind = arr.dtype.kind
    if kind not in "biuf":
        raise invalid(name, owner, requirement, x, "it holds complex values" if kind == "c" else f"it holds {arr.dtype} values")
    if (ndim is not None and arr.ndim != ndim) or arr.ndim < min_ndim:
        raise invalid(name, owner, requirement, x, f"its shape is {tuple(arr.shape)}")
    return arr


def check_images(x, name: str, owner: str):
    """Images of shape (n, C, H, W), n >= 1 (array or tensor, real); returned as :func:`real_tensor` does."""
    arr = real_tensor(x, name, owner, ndim=4)
    if arr.shape[0] == 0:
        raise invalid(name, owner, "a 4-D batch (n, C, H, W) of real numbers with n >= 1", x, "it holds no image")
    return arr


def check_keys(mapping: Mapping, allowed, name: str, owner: str, what: str) -> None:
    """Every key of ``mapping`` is among ``allowed``; an unknown one gets the closest allowed name."""
    for key in mapping:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), [str(a) for a in allowed], n=1)
            raise invalid(name, owner, f"a mapping whose keys are {what} ({', '.join(map(str, allowed))})",
                          dict(mapping), f"did you mean {close[0]!r}?" if close else f"{key!r} is unknown")


def check_pool(x, y, owner: str, x_name: str = "x", y_name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """A pool of inputs and their labels: ``x`` with n >= 1 real rows (dtype kept), ``y`` n ints >= 0 (int64)."""
    arr = real_tensor(x, x_name, owner)
    if len(arr) == 0:
        raise invalid(x_name, owner, "an array of real inputs, shape (n, ...) with n >= 1", x, "it is empty")
    return arr, check_labels(y, len(arr), y_name, owner, requirement=(
        f"a 1-D array of {len(arr)} int labels >= 0 (one per row of {x_name})"))


def check_sizes(x, y, n_inputs, n_workers, owner: str, x_name: str, y_name: str) -> int:
    """The pool of a run (:func:`check_pool`), K in [1, its size] and N >= 1 (the codes check the rest); returns N."""
    x, y = check_pool(x, y, owner, x_name, y_name)
    check_int(n_inputs, "n_inputs", owner, 1, len(x), f"an int in [1, {len(x)}] (the images in {x_name})")
    return check_int(n_workers, "n_workers", owner, minimum=1)


def check_stragglers(stragglers, n_workers: int, owner: str, name: str = "stragglers") -> int:
    """A number of stragglers S in [0, N - 1] (at least one worker returns)."""
    return check_int(stragglers, name, owner, 0, n_workers - 1,
                     f"an int in [0, n_workers - 1] with n_workers = {n_workers}")


def check_straggler_list(stragglers, n_workers: int, owner: str, name: str = "stragglers") -> list:
    """A non-empty sequence of numbers of stragglers in [0, N - 1], as a list of ints."""
    words = f"a non-empty sequence of ints in [0, n_workers - 1] with n_workers = {n_workers}"
    return validate(stragglers, IntList(0, n_workers - 1, description=words), name, owner)


def check_scheme_pair(table, scheme, baseline, owner: str, table_name: str = "results") -> tuple[str, str]:
    """Two different schemes (keys or aliases) of ``table["scheme"]``, as their canonical keys."""
    from ..codes import canonical

    scheme, baseline = canonical(scheme, owner, "scheme"), canonical(baseline, owner, "baseline")
    present = set(table["scheme"])
    for arg, key in (("scheme", scheme), ("baseline", baseline)):
        if key not in present:
            raise invalid(arg, owner, f"a scheme of {table_name} ({', '.join(sorted(map(str, present)))})", key)
    if scheme == baseline:
        raise invalid("baseline", owner, f"a scheme other than scheme={scheme!r}", baseline)
    return scheme, baseline


def validate_model(model, owner: str):
    """A straggler model of :mod:`gcc.stragglers` or None; returned as it is."""
    from ..stragglers import StragglerModel

    return validate(model, NoneOr(InstanceOf(StragglerModel, "a gcc.stragglers model (FixedCount, Bernoulli, ...)")),
                    "straggler_model", owner)


def _get(value, key):
    return value[key] if isinstance(value, Mapping) else getattr(value, key)


class Splits(Constraint):
    """The data of a network: a :class:`gcc.dnn.data.ImageData` or a mapping with ``x_val, y_val, x_test,
    y_test`` (each x at least one image, its y as many int labels >= 0). Returned as it is."""

    def __init__(self, keys=("x_val", "y_val", "x_test", "y_test"), description: str | None = None):
        super().__init__(description)
        self.keys = tuple(keys)

    def describe(self) -> str:
        return f"an ImageData or a mapping with {', '.join(self.keys)} (images and their int labels)"

    def convert(self, value, name: str = "value"):
        for key in self.keys:
            try:
                _get(value, key)
            except (KeyError, AttributeError, TypeError):
                raise Rejected(f"it has no {key!r}") from None
        for split in [k[2:] for k in self.keys if k.startswith("x_")]:
            x, y = _get(value, f"x_{split}"), _get(value, f"y_{split}")
            n = len(x) if hasattr(x, "__len__") and np.ndim(x) >= 1 else None
            if not n:
                raise Rejected(f"its x_{split} holds no image")
            try:
                check_labels(y, n, "y", "Splits")
            except ValueError:
                raise Rejected(f"its y_{split} is not {n} int labels >= 0") from None
        return value


SPLITS, TEST_SPLITS = Splits(), Splits(("x_test", "y_test"))


class _Prepared(Constraint):
    def describe(self) -> str:
        return "a non-empty mapping name -> {'f', 'splits', 'info'} (prepare_models())"

    def convert(self, value, name: str = "value"):
        if not isinstance(value, Mapping) or not value:
            raise Rejected()
        for net, entry in value.items():
            where = f"{name}[{net!r}]"
            if not isinstance(entry, Mapping) or not {"f", "splits", "info"} <= set(entry):
                raise Rejected(f"{where} has no 'f', 'splits' and 'info'")
            if not callable(entry["f"]) or not isinstance(entry["info"], Mapping):
                raise Rejected(f"{where}['f'] is not callable or {where}['info'] is not a mapping")
            try:
                SPLITS.convert(entry["splits"], "splits")
            except Rejected as err:
                raise Rejected(f"{where}['splits']: {err.detail}") from None
        return value


#: networks as :func:`gcc.experiments.dnn_models.prepare_models` gives them
PREPARED = _Prepared()


def _pairs(value, size: int, test) -> bool:
    return _sequence(value) and len(value) == size and all(is_int(v) for v in value) and test(*value)


def check_regimes(regimes, owner: str, name: str = "regimes") -> dict:
    """``{name: (N, K)}`` with ints 1 <= K <= N, as a dict of int pairs."""
    if not isinstance(regimes, Mapping) or not regimes:
        raise invalid(name, owner, "a non-empty mapping name -> (N, K) with ints 1 <= K <= N", regimes)
    for key, pair in regimes.items():
        if not _pairs(pair, 2, lambda n, k: 1 <= k <= n):
            raise invalid(name, owner, "a non-empty mapping name -> (N, K) with ints 1 <= K <= N", dict(regimes),
                          f"{name}[{key!r}] = {pair!r}")
    return {key: (int(n), int(k)) for key, (n, k) in regimes.items()}


def check_per_regime(values, regimes: Mapping, owner: str, name: str, entry: Constraint, required: bool = True) -> dict:
    """A mapping with one entry per regime (every one when ``required``, no other), each checked by ``entry``."""
    requirement = (f"a mapping with an entry for {'every' if required else 'some'} regime of 'regimes' "
                   f"({', '.join(map(repr, regimes))})")
    if not isinstance(values, Mapping):
        raise invalid(name, owner, requirement, values)
    wrong = [f"{k!r} is no regime" for k in values if k not in regimes] + (
        [f"{k!r} is missing" for k in regimes if k not in values] if required else [])
    if wrong:
        raise invalid(name, owner, requirement, dict(values), wrong[0])
    try:
        return {key: entry.convert(value, f"{name}[{key!r}]") for key, value in values.items()}
    except Rejected as err:
        raise invalid(name, owner, f"a mapping regime -> {entry.description}", dict(values), err.detail) from None


def check_sweep(regimes, stragglers, splits, owner: str) -> dict:
    """``regimes`` (:func:`check_regimes`) with K within the validation and test pools of ``splits`` (unless
    None) and ``stragglers`` holding S values in [0, N - 1] for every regime."""
    regimes = check_regimes(regimes, owner)
    for regime, (n_workers, n_inputs) in regimes.items():
        for key in (("x_val", "x_test") if splits is not None else ()):
            if n_inputs > len(_get(splits, key)):
                raise invalid("regimes", owner, f"a mapping name -> (N, K) with K <= the images in {key} "
                              f"({len(_get(splits, key))})", dict(regimes), f"regimes[{regime!r}] has K = {n_inputs}")
    for regime, s_values in check_per_regime(stragglers, regimes, owner, "stragglers", IntList(0)).items():
        bad = [s for s in s_values if s > regimes[regime][0] - 1]
        if bad:
            raise invalid("stragglers", owner, "a mapping regime -> numbers of stragglers in [0, N - 1]",
                          dict(stragglers), f"stragglers[{regime!r}] has {bad[0]} with N = {regimes[regime][0]}")
    return regimes


_BAND = RealList(min_len=2, description="a pair (low, high) of finite reals with low < high")
_PAIR = RealList(0, None, min_len=2, description="a pair (lam_enc, lam_dec) of finite reals >= 0")


def check_band(band, owner: str) -> tuple[float, float]:
    """A band ``(low, high)`` of finite reals with low < high, as a pair of floats."""
    lo_hi = validate(band, _BAND, "band", owner)
    if len(lo_hi) != 2 or not lo_hi[0] < lo_hi[1]:
        raise invalid("band", owner, _BAND, band)
    return lo_hi[0], lo_hi[1]


def check_grid(grid, owner: str, needed: bool = True, name: str = "grid") -> list:
    """A lambda grid (distinct finite reals >= 0) as a list; with ``needed``, it must hold a positive value."""
    values = validate(grid, RealList(0, None, distinct=True), name, owner)
    if needed and not any(g > 0 for g in values):
        raise invalid(name, owner, "a grid with a positive value (the reference of a lambda of 0)", grid)
    return values


def check_metric(table, metric: str, owner: str, table_name: str = "summary") -> None:
    """``metric`` is one of the values of ``table["metric"]``."""
    present = sorted(map(str, set(table["metric"])))
    if metric not in present:
        raise invalid("metric", owner, f"a metric of {table_name} ({', '.join(present)})", metric)


def check_lambda_pairs(per_s, single, stragglers, owner: str) -> tuple[float, float]:
    """``per_s``: S -> (lam_enc, lam_dec) for every S of ``stragglers``; ``single`` one such pair (returned)."""
    pair = validate(single, _PAIR, "single", owner)
    if len(pair) != 2:
        raise invalid("single", owner, _PAIR, single)
    if not isinstance(per_s, Mapping):
        raise invalid("per_s", owner, "a mapping S -> (lam_enc, lam_dec)", per_s)
    for s in stragglers:
        if s not in per_s:
            raise invalid("per_s", owner, "a mapping with an entry for every S", dict(per_s), f"S = {s} is missing")
        if not _PAIR.is_satisfied_by(per_s[s]) or len(per_s[s]) != 2:
            raise invalid("per_s", owner, "a mapping S -> (lam_enc, lam_dec) of finite reals >= 0", dict(per_s),
                          f"per_s[{s}] = {per_s[s]!r}")
    return pair[0], pair[1]


def check_family_triples(configs, families, owner: str, name: str = "configs") -> dict:
    """None or ``{family: (N, K, S)}`` with families among ``families``, ints 1 <= K <= N, 0 <= S < N."""
    requirement = f"a mapping family ({', '.join(families)}) -> (N, K, S) with 1 <= K <= N and 0 <= S < N"
    if configs is None:
        return {}
    if not isinstance(configs, Mapping):
        raise invalid(name, owner, requirement, configs)
    for family, triple in configs.items():
        if family not in families or not _pairs(triple, 3, lambda n, k, s: 1 <= k <= n and 0 <= s < n):
            raise invalid(name, owner, requirement, dict(configs), f"{name}[{family!r}] = {triple!r}")
    return dict(configs)


def check_columns(table, arguments: Mapping, owner: str, table_name: str) -> None:
    """Every argument ``{name: column or list of columns}`` names columns of ``table``."""
    for arg, names in arguments.items():
        if [c for c in ([names] if isinstance(names, str) else list(names)) if c not in table.columns]:
            raise invalid(arg, owner, f"columns of {table_name} ({', '.join(map(str, table.columns))})", names)


def check_lambda_columns(lambdas, owner: str, name: str = "lambdas") -> None:
    """The ``lam_enc`` and ``lam_dec`` columns of a lambdas table hold finite reals >= 0."""
    for column in ("lam_enc", "lam_dec"):
        values = lambdas[column].to_numpy()
        if values.dtype.kind not in "iuf" or not (np.isfinite(values) & (values >= 0)).all():
            raise invalid(name, owner, f"a lambdas table whose {column} are finite reals >= 0", values)
