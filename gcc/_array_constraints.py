"""Array constraints of the declarative validator: :class:`ArrayLike` and :class:`Points`.

Split from :mod:`gcc._constraints` (same contract, re-exported by :mod:`gcc.validation`). Their
conversion never loses information silently (:func:`as_array`): complex values are not cast
to reals, floats or booleans not to ints, NaN not to ``True``.
"""
from __future__ import annotations

import numpy as np

from ._constraints import Constraint, Rejected

__all__ = ["ArrayLike", "Points", "as_array", "first_index", "entry_name"]


def _format_shape(shape) -> str:
    inner = ", ".join("..." if s is None else str(s) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


_DTYPE_WORDS = {"f": "real numbers", "c": "real or complex numbers", "i": "ints", "u": "ints >= 0",
                "b": "booleans (True/False or 0/1)"}


def as_array(value, name: str, dtype=None) -> np.ndarray:
    """``numpy.asarray(value)`` cast to ``dtype`` without silent loss, or raise ``Rejected``.

    A cast that would drop information is refused: complex to real (the imaginary part),
    floats or booleans to ints (1.7 -> 1, True -> 1), anything but 0/1 to booleans (NaN -> True),
    negative ints to unsigned ones, strings to numbers.
    """
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
    if want in "iu" and kind in "iu" and isinstance(value, (list, tuple)):
        i = _first_bool(value)              # numpy reads [True, 2] as [1, 2]
        if i is not None:
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


def _first_bool(values) -> int | None:
    """Position of the first bool of a flat list, or None."""
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)):
            return i
    return None


def first_index(bad: np.ndarray):
    """Index (tuple) of the first True entry of ``bad``, or None."""
    if bad.ndim == 0:
        return () if bool(bad) else None
    hits = np.argwhere(bad)
    return tuple(int(j) for j in hits[0]) if hits.size else None


def entry_name(name: str, index) -> str:
    return f"{name}[{', '.join(str(j) for j in index)}]" if len(index) else name


class ArrayLike(Constraint):
    """Anything ``numpy.asarray`` converts to an array of the given dtype, ndim and shape.

    The conversion never loses information silently: with a real ``dtype``, complex values are
    rejected (not truncated to their real part); with an integer ``dtype``, floats (``1.7``)
    and booleans are rejected; with ``dtype=bool``, only ``True``/``False`` or ``0``/``1``
    (a NaN is not ``True``); strings are never numbers.

    Parameters
    ----------
    ndim : int, optional
        Required number of axes.
    shape : tuple of int or None, optional
        Required shape; ``None`` entries accept any length (implies ``ndim = len(shape)``).
    dtype : numpy dtype, optional
        The dtype of the result (float, complex, int, bool, ...).
    finite : bool
        Also reject NaN and inf.
    description : str, optional
        Wording override; name the axes there, e.g. ``"an array of shape (trials, n_workers)"``.

    Examples
    --------
    >>> from gcc.validation import ArrayLike
    >>> ArrayLike(shape=(None, 3), dtype=float).convert([[1, 2, 3]])
    array([[1., 2., 3.]])
    >>> ArrayLike(ndim=3, dtype=bool).description
    'a 3-D array of booleans (True/False or 0/1)'
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
            text += " of " + ("finite " if self.finite else "") + _DTYPE_WORDS.get(
                np.dtype(self.dtype).kind, str(np.dtype(self.dtype)))
        elif self.finite:
            text += " of finite numbers"
        return text

    def convert(self, value, name: str = "value"):
        arr = as_array(value, name, self.dtype)
        if self.ndim is not None and arr.ndim != self.ndim:
            raise Rejected(f"it has shape {arr.shape}")
        if self.shape is not None and any(s is not None and s != a for s, a in zip(self.shape, arr.shape)):
            raise Rejected(f"it has shape {arr.shape}")
        if self.finite and arr.dtype.kind in "fc" and arr.size and not np.isfinite(arr).all():
            i = first_index(~np.isfinite(arr))
            raise Rejected(f"{entry_name(name, i)} = {arr[i].item()!r}")
        return arr


class Points(Constraint):
    """A 1-D float64 array of strictly increasing finite points in ``[low, high]``.

    Parameters
    ----------
    low, high : float or None
        Closed bounds (``None``: unbounded).
    size : int, optional
        Required length; ``size_name`` names it in the message (e.g. ``"n_inputs"``).
    size_name : str, optional
    min_size : int
        Minimum length.

    Examples
    --------
    >>> from gcc.validation import Points
    >>> Points().description
    'a 1-D array of strictly increasing finite points in [-1, 1]'
    >>> Points(size=2).convert([-0.5, 0.5])
    array([-0.5,  0.5])
    """

    def __init__(self, low: float | None = -1.0, high: float | None = 1.0, size: int | None = None,
                 size_name: str | None = None, min_size: int = 1, description: str | None = None):
        super().__init__(description)
        self.low, self.high = low, high
        self.size, self.size_name, self.min_size = size, size_name, min_size

    def _bounded(self) -> bool:
        return self.low is not None and self.high is not None

    def describe(self) -> str:
        bounds = f" in [{self.low:g}, {self.high:g}]" if self._bounded() else ""
        return f"a 1-D array of strictly increasing finite points{bounds}"

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
            i = int(bad[0])
            raise Rejected(f"{name}[{i}] = {float(arr[i])!r}")
        if self._bounded():
            bad = np.flatnonzero((arr < self.low) | (arr > self.high))
            if bad.size:
                i = int(bad[0])
                raise Rejected(f"{name}[{i}] = {float(arr[i])!r} is outside [{self.low:g}, {self.high:g}]")
        steps = np.diff(arr)
        bad = np.flatnonzero(steps <= 0)
        if bad.size:
            i = int(bad[0])
            if steps[i] == 0:
                raise Rejected(f"{name}[{i + 1}] = {float(arr[i + 1])!r} is duplicated")
            raise Rejected(f"{name}[{i + 1}] = {float(arr[i + 1])!r} is not greater than "
                           f"{name}[{i}] = {float(arr[i])!r}")
        return arr
