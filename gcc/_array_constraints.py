"""Array constraints and checks of the validator, part of :mod:`gcc.validation` (which re-exports them).

Their conversion never loses information silently (:func:`as_array`): complex values are not cast
to reals, floats or booleans not to ints, NaN not to ``True``; worker indices, labels and finite
data are checked with one vectorised pass each.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping

import numpy as np

from .validation import Constraint, Rejected, invalid, validate

__all__ = ["ArrayLike", "Points", "as_array", "first_index", "entry_name", "check_points", "check_received",
           "check_finite", "check_leading_dim", "check_labels"]


_DTYPE_WORDS = {"f": "real numbers", "c": "real or complex numbers", "i": "ints", "u": "ints >= 0",
                "b": "booleans (True/False or 0/1)"}


def first_index(bad: np.ndarray):
    """Index (tuple) of the first True entry of ``bad``, or None."""
    if bad.ndim == 0:
        return () if bool(bad) else None
    hits = np.argwhere(bad)
    return tuple(int(j) for j in hits[0]) if hits.size else None


def entry_name(name: str, index) -> str:
    return f"{name}[{', '.join(str(j) for j in index)}]" if len(index) else name


def as_array(value, name: str, dtype=None) -> np.ndarray:
    """``numpy.asarray(value)`` cast to ``dtype`` without silent loss, or raise :class:`Rejected`:
    never complex to real, floats or booleans to ints, anything but 0/1 to booleans (NaN -> True),
    negative ints to unsigned ones, strings to numbers."""
    if isinstance(value, (str, bytes)):
        raise Rejected()
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, RuntimeError):     # ragged lists, CUDA tensors, ...
        raise Rejected() from None
    if dtype is None:
        return raw
    target = np.dtype(dtype)
    kind, want = raw.dtype.kind, target.kind
    if kind in "USV":
        raise Rejected("it holds strings")
    if kind == "O":
        try:
            raw = np.asarray(raw.tolist(), dtype=np.complex128 if want == "c" else None)
        except (TypeError, ValueError):
            raise Rejected() from None
        kind = raw.dtype.kind
        if kind == "O":
            raise Rejected("it holds objects that are not numbers")
    if kind not in "biufc":
        raise Rejected()
    if want in "iu" and kind in "iu" and isinstance(value, (list, tuple)) and not {bool, np.bool_}.isdisjoint(
            map(type, value)):                          # numpy reads [True, 2] as [1, 2]
        i = next(i for i, v in enumerate(value) if isinstance(v, (bool, np.bool_)))
        raise Rejected(f"{name}[{i}] = {value[i]!r} is not an int")
    if kind == "c" and want != "c":
        raise Rejected("it holds complex values")
    if want in "iu" and kind not in "iu" and raw.size:
        bad = ((raw != np.round(raw)) | ~np.isfinite(raw)) if kind == "f" else np.ones(raw.shape, bool)
        i = first_index(bad)
        i = first_index(np.ones(raw.shape, bool)) if i is None else i
        raise Rejected(f"{entry_name(name, i)} = {raw[i].item()!r} is not an int")
    if want == "u" and kind == "i" and raw.size and raw.min() < 0:
        i = first_index(raw < 0)
        raise Rejected(f"{entry_name(name, i)} = {raw[i].item()!r} is negative")
    if want == "b" and kind != "b" and raw.size:
        i = first_index((raw != 0) & (raw != 1))      # NaN compares unequal to both: caught here
        if i is not None:
            raise Rejected(f"{entry_name(name, i)} = {raw[i].item()!r} is not a bool")
    return raw.astype(target, copy=False)


def _format_shape(shape) -> str:
    inner = ", ".join("..." if s is None else str(s) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


class ArrayLike(Constraint):
    """Anything ``numpy.asarray`` converts (losslessly, :func:`as_array`) to an array of the given
    ``dtype``, ``ndim`` and ``shape`` (``None`` entries: any length); ``finite`` rejects NaN and inf.

    >>> ArrayLike(shape=(None, 3), dtype=float).convert([[1, 2, 3]])
    array([[1., 2., 3.]])
    >>> ArrayLike(dtype=int).is_satisfied_by([0, 1.7]), ArrayLike(dtype=float).is_satisfied_by([1j])
    (False, False)
    """

    def __init__(self, ndim: int | None = None, shape=None, dtype=None, finite: bool = False,
                 description: str | None = None):
        super().__init__(description)
        if shape is not None:
            shape = tuple(shape)
            ndim = len(shape)
        self.ndim, self.shape, self.dtype, self.finite = ndim, shape, dtype, bool(finite)

    def describe(self) -> str:
        if self.shape is not None:
            text = f"an array of shape {_format_shape(self.shape)}"
        else:
            text = f"a {self.ndim}-D array" if self.ndim is not None else "an array"
        if self.dtype is not None:
            kind = np.dtype(self.dtype).kind
            text += " of " + ("finite " if self.finite else "") + _DTYPE_WORDS.get(kind, str(np.dtype(self.dtype)))
        elif self.finite:
            text += " of finite numbers"
        return text

    def convert(self, value, name: str = "value"):
        arr = as_array(value, name, self.dtype)
        if (self.ndim is not None and arr.ndim != self.ndim) or (self.shape is not None and any(
                s is not None and s != a for s, a in zip(self.shape, arr.shape))):
            raise Rejected(f"it has shape {arr.shape}")
        if self.finite and arr.dtype.kind in "fc" and arr.size and not np.isfinite(arr).all():
            i = first_index(~np.isfinite(arr))
            raise Rejected(f"{entry_name(name, i)} = {arr[i].item()!r}")
        return arr


class Points(Constraint):
    """A 1-D float64 array of strictly increasing finite points in ``[low, high]`` (``None``:
    unbounded), of length ``size`` (named ``size_name`` in the message) and at least ``min_size``."""

    def __init__(self, low: float | None = -1.0, high: float | None = 1.0, size: int | None = None,
                 size_name: str | None = None, min_size: int = 1, description: str | None = None):
        super().__init__(description)
        self.low, self.high, self.size, self.size_name, self.min_size = low, high, size, size_name, min_size

    def describe(self) -> str:
        bounded = self.low is not None and self.high is not None
        return "a 1-D array of strictly increasing finite points" + (
            f" in [{self.low:g}, {self.high:g}]" if bounded else "")

    def convert(self, value, name: str = "value"):
        arr = as_array(value, name, np.float64)     # complex or strings: rejected, not cast
        if arr.ndim != 1:
            raise Rejected(f"it has shape {arr.shape}")
        n = arr.shape[0]
        if self.size is not None and n != self.size:
            label = self.size_name if self.size_name else str(self.size)
            raise Rejected(f"it has length {n}", f"{self.description} of length {label} = {self.size}")
        if n < self.min_size:
            raise Rejected(f"it has length {n}", f"{self.description} of length >= {self.min_size}")
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise Rejected(f"{name}[{bad[0]}] = {float(arr[bad[0]])!r}")
        if self.low is not None and self.high is not None:
            bad = np.flatnonzero((arr < self.low) | (arr > self.high))
            if bad.size:
                raise Rejected(f"{name}[{bad[0]}] = {float(arr[bad[0]])!r} is outside [{self.low:g}, {self.high:g}]")
        steps = np.diff(arr)
        bad = np.flatnonzero(steps <= 0)
        if bad.size:
            i = int(bad[0])
            what = "is duplicated" if steps[i] == 0 else f"is not greater than {name}[{i}] = {float(arr[i])!r}"
            raise Rejected(f"{name}[{i + 1}] = {float(arr[i + 1])!r} {what}")
        return arr


def check_points(points, name: str, owner: str, low: float | None = -1.0, high: float | None = 1.0,
                 size: int | None = None, size_name: str | None = None, min_size: int = 1) -> np.ndarray:
    """``validate(points, Points(low, high, size, size_name, min_size), name, owner)``."""
    return validate(points, Points(low, high, size, size_name, min_size), name, owner)


def _to_numpy(value):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return value


def check_received(received, n_workers: int, owner: str, name: str = "received") -> tuple:
    """A set of non-straggling workers as a tuple of strictly ascending indices in ``[0, n_workers)``.

    A sequence of ints, a 1-D integer array or tensor, or a boolean mask of shape ``(n_workers,)``.

    >>> check_received(np.array([True, False, True]), 3, "f")
    (0, 2)
    >>> check_received([3, 1], 8, "SplineCode.decode")
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'received' parameter of SplineCode.decode must be a non-empty, strictly ascending sequence of worker indices in [0, 8) (index 1 comes after 3). Got [3, 1] instead.
    """
    constraint = f"a non-empty, strictly ascending sequence of worker indices in [0, {n_workers})"
    raw = _to_numpy(received)
    if isinstance(raw, np.ndarray) and raw.dtype == np.bool_:
        if raw.shape != (n_workers,):
            raise invalid(name, owner, f"a boolean mask of shape ({n_workers},) or " + constraint,
                          received, f"mask shape {raw.shape}")
        raw = np.flatnonzero(raw)
    try:
        idx = as_array(raw, name, np.int64) if not isinstance(raw, Mapping) else None
    except Rejected as err:
        raise invalid(name, owner, constraint, received, err.detail) from None
    if idx is None or idx.ndim != 1:
        raise invalid(name, owner, constraint, received)
    if idx.size == 0:
        raise invalid(name, owner, constraint, received, "it is empty")
    ascending = idx.size == 1 or bool((idx[1:] > idx[:-1]).all())
    if ascending and idx[0] >= 0 and idx[-1] < n_workers:      # ascending: the ends bound the rest
        return tuple(idx.tolist())
    bad = np.flatnonzero((idx < 0) | (idx >= n_workers))
    if bad.size:
        raise invalid(name, owner, constraint, received,
                      f"index {idx[bad[0]]} is out of range for n_workers = {n_workers}")
    bad = np.flatnonzero(idx[1:] <= idx[:-1])
    v, before = idx[bad[0] + 1], idx[bad[0]]
    raise invalid(name, owner, constraint, received,
                  f"index {v} " + ("is duplicated" if v == before else f"comes after {before}"))


def check_finite(array, name: str, owner: str):
    """Raise if a numpy array or torch tensor holds NaN or inf (integer arrays are skipped); return it."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(array, torch.Tensor):
        if not (array.is_floating_point() or array.is_complex()) or bool(torch.isfinite(array).all()):
            return array
        idx = tuple(torch.nonzero(~torch.isfinite(array))[0].cpu().tolist())
    else:
        if not isinstance(array, np.ndarray):
            array = validate(array, ArrayLike(), name, owner)
        if array.dtype.kind not in "fc" or bool(np.isfinite(array).all()):
            return array
        idx = first_index(~np.isfinite(array))
    raise invalid(name, owner, "free of NaN and inf", array, f"{name}{list(idx)} = {array[idx].item()!r}")


def check_leading_dim(array, size: int, name: str, owner: str, size_name: str) -> None:
    """Require an array whose first axis has length ``size`` (named ``size_name``)."""
    shape = getattr(array, "shape", None)
    requirement = f"an array of shape ({size_name}, ...) with {size_name} = {size}"
    if shape is None:
        raise invalid(name, owner, requirement, array, f"it is a {type(array).__name__}")
    if len(tuple(shape)) == 0 or shape[0] != size:
        raise invalid(name, owner, requirement, array, f"its shape is {tuple(shape)}")


def check_labels(y, n: int | None, name: str, owner: str, n_classes: int | None = None,
                 requirement: str | None = None) -> np.ndarray:
    """Labels: ``n`` ints >= 0 (< ``n_classes`` when given; any number when ``n`` is None), as an
    int64 array (never rounded: ``1.7`` is no label). Torch tensors are read on the CPU.

    >>> check_labels([0, 3], 2, "y", "f", n_classes=3)
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'y' parameter of f must be a 1-D array of 2 int labels in [0, 3) (y[1] = 3 is no class of the model). Got [0, 3] instead.
    """
    top = f" in [0, {n_classes})" if n_classes is not None else " >= 0"
    requirement = requirement or f"a 1-D array of {'' if n is None else f'{n} '}int labels{top}"
    labels = validate(_to_numpy(y), ArrayLike(dtype=np.int64, description=requirement), name, owner)
    if labels.ndim != 1 or (n is not None and len(labels) != n):
        raise invalid(name, owner, requirement, y, f"its shape is {labels.shape}")
    if labels.size and labels.min() < 0:
        i = int(np.argmin(labels))
        raise invalid(name, owner, requirement, y, f"{name}[{i}] = {int(labels[i])}")
    if n_classes is not None and labels.size and labels.max() >= n_classes:
        i = int(np.argmax(labels))
        raise invalid(name, owner, requirement, y, f"{name}[{i}] = {int(labels[i])} is no class of the model")
    return labels
