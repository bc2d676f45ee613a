"""Argument constraints of :mod:`gcc.dnn` and the DNN experiments, and the frozen Splits and Setting.

Torch is imported only where a check needs it, so the experiments import this module without torch.
"""
from __future__ import annotations

import difflib
import numbers
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import (COLUMNS, LAM, NAME, TEXT, Callable, Constraint, Frame, InstanceOf, Interval, ListOf, NoneOr,
                          Rejected, Satisfies, as_array, check_labels, invalid)

__all__ = ["PATH", "MODULE", "NAME", "MAPPING", "DEVICE", "Device", "INT_TUPLE", "available_devices", "check_images",
           "check_keys", "real_tensor", "F", "LEVEL", "LAM", "TRIALS", "COUNT", "TEXT", "Frame", "SCHEMES", "NAMES",
           "COLUMNS", "GRID", "As", "Splits", "SPLITS", "TEST_SPLITS", "PREPARED", "Setting", "REGIMES"]


def _is_module(value) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.nn.Module)


#: a torch module (a network); a mapping (a configuration, a recipe); a path
MODULE = Satisfies(_is_module, "a torch.nn.Module")
MAPPING = InstanceOf(Mapping, "a mapping")
PATH = Satisfies(lambda v: isinstance(v, os.PathLike) or (isinstance(v, str) and bool(v) and "\x00" not in v),
                 "a path (a non-empty str or an os.PathLike)")
#: the workers' function, a confidence level, trials (repeats, draws), a count (K, N), ints >= 1 as a tuple (a shape)
F = Callable()
LEVEL = Interval(numbers.Real, 0, 1, closed="neither")
TRIALS = COUNT = Interval(numbers.Integral, 1, None)
INT_TUPLE = ListOf(COUNT, as_tuple=True)


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
        if device is None or (f"cuda:{device.index or 0}" if device.type == "cuda" else device.type) not in available_devices():
            raise Rejected()
        return value


DEVICE = Device()


class _SchemeName(Constraint):
    def describe(self) -> str:
        return "a scheme name"

    def convert(self, value, name: str = "value"):
        from ..codes import canonical

        try:
            return canonical(value)
        except ValueError:
            raise Rejected(f"{name} = {value!r} is no scheme") from None


#: distinct scheme names (keys or aliases, as keys), names (of networks), a lambda grid or None (the default)
SCHEMES = ListOf(_SchemeName(), distinct=True,
                 description="a non-empty sequence of distinct scheme names (gcc, bacc, bspline, lcc)")
NAMES = ListOf(TEXT, description="a non-empty sequence of names (str)")
GRID = NoneOr(ListOf(Interval(numbers.Real, 0, None), distinct=True))


def real_tensor(x, name: str, owner: str, ndim: int | None = None, min_ndim: int = 1):
    """A batch of real numbers: a torch tensor (returned as it is) or an array-like (``numpy.asarray``,
    dtype kept). Complex values, strings and objects are refused; NaN is data."""
    words = f"a {ndim}-D batch" if ndim is not None else f"a batch with at least {min_ndim} ax{'i' if min_ndim == 1 else 'e'}s"
    requirement = f"{words} of real numbers (a numpy array or a torch tensor)"
    torch = sys.modules.get("torch")
    is_tensor = torch is not None and isinstance(x, torch.Tensor)
    try:
        arr = x if is_tensor else as_array(x, name)
    except Rejected:
        raise invalid(name, owner, requirement, x) from None
    kind = ("c" if x.is_complex() else "f") if is_tensor else arr.dtype.kind
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


def As(make, description: str) -> Constraint:
    """A value that ``make(value)`` turns into a typed object (a frozen dataclass); ``make`` raises Rejected."""
    return Satisfies(lambda v: True, description, to=make)


@dataclass(frozen=True)
class Splits:
    """The images a runner draws its batches from (:meth:`of` an ImageData or a mapping)."""

    x_test: Any
    y_test: Any
    x_val: Any = None
    y_val: Any = None
    name: str = ""

    @classmethod
    def of(cls, value, need_val: bool = True) -> "Splits":
        """``value``'s splits, each x at least one image and its y as many int labels >= 0 (else Rejected)."""
        if isinstance(value, Splits):
            value = vars(value)
        get = value.get if isinstance(value, Mapping) else (lambda key: getattr(value, key, None))
        fields = {key: get(key) for key in ("x_test", "y_test", "x_val", "y_val")}
        for split in ("test", "val") if need_val else ("test",):
            x, y = fields[f"x_{split}"], fields[f"y_{split}"]
            if x is None or y is None:
                raise Rejected(f"it has no 'x_{split}' and 'y_{split}'")
            n = len(x) if hasattr(x, "__len__") and np.ndim(x) >= 1 else 0
            if not n:
                raise Rejected(f"its x_{split} holds no image")
            try:
                check_labels(y, n, "y", "Splits")
            except ValueError:
                raise Rejected(f"its y_{split} is not {n} int labels >= 0") from None
        return cls(**fields, name=str(get("name") or ""))


SPLITS = As(Splits.of, "an ImageData or a mapping with x_val, y_val, x_test, y_test (images and their int labels)")
TEST_SPLITS = As(lambda v: Splits.of(v, need_val=False),
                 "an ImageData or a mapping with x_test, y_test (images and their int labels)")


def _prepared(value):
    if not isinstance(value, Mapping) or not value:
        raise Rejected()
    for net, entry in value.items():
        where = f"prepared[{net!r}]"
        if not isinstance(entry, Mapping) or not {"f", "splits", "info"} <= set(entry):
            raise Rejected(f"{where} has no 'f', 'splits' and 'info'")
        if not callable(entry["f"]) or not isinstance(entry["info"], Mapping):
            raise Rejected(f"{where}['f'] is not callable or {where}['info'] is not a mapping")
        try:
            Splits.of(entry["splits"])
        except Rejected as err:
            raise Rejected(f"{where}['splits']: {err.detail}") from None
    return value


#: networks as :func:`gcc.experiments.dnn_models.prepare_models` gives them
PREPARED = As(_prepared, "a non-empty mapping name -> {'f', 'splits', 'info'} (prepare_models())")


def _ints(value, size: int):
    """``value`` as a tuple of ``size`` ints, or None."""
    if isinstance(value, (str, bytes, Mapping)) or np.ndim(value) != 1 or len(value) != size:
        return None
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in value):
        return None
    return tuple(int(v) for v in value)


@dataclass(frozen=True)
class Setting:
    """One simulated configuration: N workers, K inputs, S stragglers (1 <= K <= N, 0 <= S < N), its regime."""

    n_workers: int
    n_inputs: int
    stragglers: int
    regime: str = ""

    @property
    def received(self) -> int:
        """|F| = N - S."""
        return self.n_workers - self.stragglers

    @classmethod
    def of(cls, triple, received: bool = False, regime: str | None = None) -> "Setting":
        """``(N, K, S)`` (``(N, K, |F|)`` with ``received``) as a Setting (else Rejected)."""
        values = _ints(triple, 3)
        if values is None:
            raise Rejected(f"{triple!r} is not three ints")
        n, k, third = values
        s = n - third if received else third
        if not (1 <= k <= n and 0 <= s < n):
            raise Rejected(f"{triple!r} is out of range")
        return cls(n, k, s, f"N={n},K={k}" if regime is None else regime)


def _regimes(value) -> dict:
    if not isinstance(value, Mapping) or not value:
        raise Rejected()
    pairs = {key: _ints(pair, 2) for key, pair in value.items()}
    for key, pair in pairs.items():
        if pair is None or not 1 <= pair[1] <= pair[0]:
            raise Rejected(f"regimes[{key!r}] = {value[key]!r}")
    return pairs


#: ``{name: (N, K)}`` with ints 1 <= K <= N, as a dict of int pairs
REGIMES = As(_regimes, "a non-empty mapping name -> (N, K) with ints 1 <= K <= N")
