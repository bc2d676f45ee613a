"""Argument constraints shared by the modules of :mod:`gcc.dnn` (the contract of :mod:`gcc.validation`).

The DNN entry points take paths, torch modules, devices, image batches and label vectors; the
constraints here test and describe them so that every message reads like the rest of the
library's (``The 'x' parameter of evaluate_accuracy must be ... Got ... instead.``). None of them
converts an argument in a way that could change a number: arrays keep their dtype, tensors stay
tensors, configurations and recipes are checked, never rewritten (they are a model's cache key).
"""
from __future__ import annotations

import difflib
import numbers
import os
from collections.abc import Mapping

import numpy as np
import torch
from torch import nn

from ..validation import NAME, ArrayLike, Constraint, InstanceOf, Rejected, invalid, validate

__all__ = ["PATH", "MODULE", "NAME", "MAPPING", "DEVICE", "Device", "PathArg", "IntTuple", "available_devices",
           "check_images", "check_labels", "check_keys", "real_tensor"]

#: a torch module (a network)
MODULE = InstanceOf(nn.Module, "a torch.nn.Module")
#: a mapping (a configuration, a recipe)
MAPPING = InstanceOf(Mapping, "a mapping")


class PathArg(Constraint):
    """A path: a non-empty ``str`` or an ``os.PathLike``; returned as it is.

    Examples
    --------
    >>> from gcc.dnn._checks import PATH
    >>> PATH.is_satisfied_by("/tmp"), PATH.is_satisfied_by(""), PATH.is_satisfied_by(3)
    (True, False, False)
    """

    def describe(self) -> str:
        return "a path (a non-empty str or an os.PathLike)"

    def convert(self, value, name: str = "value"):
        if isinstance(value, os.PathLike):
            return value
        if not isinstance(value, str) or not value or "\x00" in value:
            raise Rejected()
        return value


#: a path argument
PATH = PathArg()




class Device(Constraint):
    """A torch device this machine has: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or a ``torch.device``.

    ``auto=True`` also accepts ``"auto"`` (the automatic choice). The value is returned as it is.

    Examples
    --------
    >>> from gcc.dnn._checks import Device
    >>> Device().is_satisfied_by("cpu"), Device().is_satisfied_by("gpu"), Device(auto=True).is_satisfied_by("auto")
    (True, False, True)
    """

    def __init__(self, auto: bool = False, description: str | None = None):
        super().__init__(description)
        self.auto = bool(auto)

    def describe(self) -> str:
        return "a torch device of this machine (" + ", ".join(available_devices()) + (
            ", or 'auto')" if self.auto else ")")

    def convert(self, value, name: str = "value"):
        if self.auto and isinstance(value, str) and value == "auto":
            return value
        if not isinstance(value, (str, torch.device)):
            raise Rejected()
        try:
            device = torch.device(value)
        except (RuntimeError, TypeError, ValueError):
            raise Rejected() from None
        if device.type == "cuda":
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if (device.index or 0) >= count:
                raise Rejected(f"this machine has {count} CUDA device(s)")
        elif device.type == "mps":
            mps = getattr(torch.backends, "mps", None)
            if mps is None or not mps.is_available():
                raise Rejected("MPS is not available here")
        elif device.type != "cpu":
            raise Rejected(f"device type {device.type!r} is not supported")
        return value


#: a device argument
DEVICE = Device()


def available_devices() -> list[str]:
    """The device names this machine offers (``cpu``, ``cuda:i`` ..., ``mps``)."""
    names = ["cpu"]
    if torch.cuda.is_available():
        names += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        names.append("mps")
    return names


class IntTuple(Constraint):
    """A non-empty sequence of ints >= ``minimum`` (a shape, widths, depths); returned as a tuple of int.

    Examples
    --------
    >>> from gcc.dnn._checks import IntTuple
    >>> IntTuple().convert([1, 28, 28])
    (1, 28, 28)
    >>> IntTuple().is_satisfied_by((0, 16)), IntTuple().is_satisfied_by(3)
    (False, False)
    """

    def __init__(self, minimum: int = 1, description: str | None = None):
        super().__init__(description)
        self.minimum = minimum

    def describe(self) -> str:
        return f"a non-empty sequence of ints >= {self.minimum}"

    def convert(self, value, name: str = "value"):
        if isinstance(value, (str, bytes, Mapping)) or np.ndim(value) != 1:
            raise Rejected()
        out = []
        for i, v in enumerate(value):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
                raise Rejected(f"{name}[{i}] = {v!r} is not an int")
            if v < self.minimum:
                raise Rejected(f"{name}[{i}] = {v!r}")
            out.append(int(v))
        if not out:
            raise Rejected("it is empty")
        return tuple(out)


def real_tensor(x, name: str, owner: str, ndim: int | None = None, min_ndim: int = 1):
    """Check a batch held as a torch tensor or an array-like of real numbers; return a tensor or an array.

    A tensor is returned as it is (same device and dtype); anything else as ``numpy.asarray`` of
    it (same dtype). Complex values, strings and objects are refused (a network's input is
    real: casting would drop the imaginary part). NaN is data, not an argument error.
    """
    if ndim is not None:
        shape_words = f"a {ndim}-D batch"
    else:
        shape_words = f"a batch with at least {min_ndim} ax{'i' if min_ndim == 1 else 'e'}s"
    requirement = f"{shape_words} of real numbers (a numpy array or a torch tensor)"
    if isinstance(x, torch.Tensor):
        if x.is_complex():
            raise invalid(name, owner, requirement, x, "it holds complex values")
        arr = x
    else:
        if isinstance(x, (str, bytes)) or x is None:
            raise invalid(name, owner, requirement, x)
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError, RuntimeError):
            raise invalid(name, owner, requirement, x) from None
        if arr.dtype.kind == "c":
            raise invalid(name, owner, requirement, x, "it holds complex values")
        if arr.dtype.kind not in "biuf":
            raise invalid(name, owner, requirement, x, f"it holds {arr.dtype} values")
    if (ndim is not None and arr.ndim != ndim) or arr.ndim < min_ndim:
        raise invalid(name, owner, requirement, x, f"its shape is {tuple(arr.shape)}")
    return arr


def check_images(x, name: str, owner: str):
    """Images of shape (n, C, H, W), n >= 1 (array or tensor, real); returned as :func:`real_tensor` does."""
    arr = real_tensor(x, name, owner, ndim=4)
    if arr.shape[0] == 0:
        raise invalid(name, owner, "a 4-D batch (n, C, H, W) of real numbers with n >= 1", x, "it holds no image")
    return arr


def check_labels(y, n: int, name: str, owner: str, n_classes: int | None = None) -> np.ndarray:
    """Labels: ``n`` ints >= 0 (< ``n_classes`` when given), as an int64 array (never rounded)."""
    if isinstance(y, torch.Tensor):
        y = y.detach().cpu().numpy()
    top = f" in [0, {n_classes})" if n_classes is not None else " >= 0"
    requirement = f"a 1-D array of {n} int labels{top}"
    labels = validate(y, ArrayLike(dtype=np.int64, description=requirement), name, owner)
    if labels.ndim != 1 or len(labels) != n:
        raise invalid(name, owner, requirement, y, f"its shape is {labels.shape}")
    if labels.size and labels.min() < 0:
        i = int(np.argmin(labels))
        raise invalid(name, owner, requirement, y, f"{name}[{i}] = {int(labels[i])}")
    if n_classes is not None and labels.size and labels.max() >= n_classes:
        i = int(np.argmax(labels))
        raise invalid(name, owner, requirement, y, f"{name}[{i}] = {int(labels[i])} is no class of the model")
    return labels


def check_keys(mapping: Mapping, allowed, name: str, owner: str, what: str) -> None:
    """Every key of ``mapping`` is among ``allowed``; an unknown one gets the closest allowed name."""
    for key in mapping:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), [str(a) for a in allowed], n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"{key!r} is unknown"
            raise invalid(name, owner, f"a mapping whose keys are {what} ({', '.join(map(str, allowed))})",
                          dict(mapping), hint)
