"""Shared argument validators.

Every public function of :mod:`gcc` checks its arguments with these helpers so that all
errors read the same way (the scikit-learn convention)::

    The 'n_workers' parameter of LagrangeCode must be an int >= n_inputs. Got 3 instead.

Each helper takes the argument's ``name`` and the ``owner`` (the class or function that
received it), returns the normalised value, and raises :class:`ValueError` otherwise.
The helpers are deliberately general; other modules may append their own at the end of
this file.
"""
from __future__ import annotations

import numbers
import sys

import numpy as np

__all__ = [
    "format_value",
    "invalid",
    "raise_invalid",
    "check_int",
    "check_real",
    "check_lam",
    "check_points",
    "check_received",
    "check_finite",
    "check_leading_dim",
    "check_choice",
]


def format_value(value) -> str:
    """Short, readable representation of a (possibly large) argument for error messages.

    Arrays are printed with at most a few entries per axis; torch tensors are described by
    their shape, dtype and device plus their first entries.
    """
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        flat = value.detach().reshape(-1)[:6].cpu().tolist()
        return (f"tensor of shape {tuple(value.shape)}, dtype {value.dtype}, device {value.device}"
                f" (first entries {flat})")
    if isinstance(value, np.ndarray):
        if value.size <= 12:
            return repr(value)
        body = np.array2string(value, threshold=8, edgeitems=3, precision=6)
        return f"array of shape {value.shape} and dtype {value.dtype}: {body}"
    text = repr(value)
    if len(text) > 200:
        text = text[:197] + "..."
    return text


def invalid(name: str, owner: str, constraint: str, value,
            detail: str | None = None) -> ValueError:
    """Build (without raising) the library's standard ValueError.

    For code that raises the error itself, e.g. ``raise invalid(...) from None``.
    The arguments are those of :func:`raise_invalid`.
    """
    extra = f" ({detail})" if detail else ""
    return ValueError(
        f"The '{name}' parameter of {owner} must be {constraint}{extra}. "
        f"Got {format_value(value)} instead."
    )


def raise_invalid(name: str, owner: str, constraint: str, value, detail: str | None = None):
    """Raise the library's standard ValueError.

    Parameters
    ----------
    name : str
        Name of the offending argument.
    owner : str
        Class or function that received it (e.g. ``"SplineCode"`` or ``"smoother_matrix"``).
    constraint : str
        What the argument must be (e.g. ``"an int >= 1"``).
    value : object
        The bad value; shown with :func:`format_value`.
    detail : str, optional
        Extra explanation (e.g. which entry is wrong), inserted in parentheses.
    """
    raise invalid(name, owner, constraint, value, detail)


def check_int(value, name: str, owner: str, minimum: int | None = None,
              maximum: int | None = None, constraint: str | None = None) -> int:
    """Return ``value`` as a Python int if it is an integer (not a bool) in ``[minimum, maximum]``.

    ``constraint`` overrides the wording of the requirement, e.g. ``"an int >= n_inputs"``.
    """
    if constraint is None:
        parts = []
        if minimum is not None:
            parts.append(f">= {minimum}")
        if maximum is not None:
            parts.append(f"<= {maximum}")
        constraint = "an int" + (" " + " and ".join(parts) if parts else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise_invalid(name, owner, constraint, value)
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise_invalid(name, owner, constraint, value)
    return value


def check_real(value, name: str, owner: str, minimum: float | None = None,
               maximum: float | None = None, include_min: bool = True,
               include_max: bool = True, constraint: str | None = None) -> float:
    """Return ``value`` as a finite Python float within the given bounds."""
    if constraint is None:
        parts = []
        if minimum is not None:
            parts.append(f"{'>=' if include_min else '>'} {minimum}")
        if maximum is not None:
            parts.append(f"{'<=' if include_max else '<'} {maximum}")
        constraint = "a finite real number" + (" " + " and ".join(parts) if parts else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise_invalid(name, owner, constraint, value)
    out = float(value)
    if not np.isfinite(out):
        raise_invalid(name, owner, constraint, value)
    if minimum is not None and (out < minimum or (not include_min and out == minimum)):
        raise_invalid(name, owner, constraint, value)
    if maximum is not None and (out > maximum or (not include_max and out == maximum)):
        raise_invalid(name, owner, constraint, value)
    return out


def check_lam(value, name: str, owner: str, allow_gcv: bool = False):
    """Validate a smoothing parameter: a finite real ``>= 0`` (or ``"gcv"`` if allowed)."""
    if allow_gcv and isinstance(value, str):
        if value == "gcv":
            return value
        raise_invalid(name, owner, "a finite real number >= 0 or 'gcv'", value)
    constraint = "a finite real number >= 0" + (" or 'gcv'" if allow_gcv else "")
    return check_real(value, name, owner, minimum=0.0, constraint=constraint)


def check_points(points, name: str, owner: str, low: float | None = -1.0,
                 high: float | None = 1.0, size: int | None = None,
                 size_name: str | None = None, min_size: int = 1) -> np.ndarray:
    """Return a 1-D float64 array of strictly increasing finite points in ``[low, high]``.

    Parameters
    ----------
    points : array_like, shape (n,)
    name, owner : str
        For the error message.
    low, high : float or None
        Closed bounds (``None``: unbounded).
    size : int, optional
        Required length; ``size_name`` names it in the message (e.g. ``"n_inputs"``).
    min_size : int
        Minimum length.
    """
    bounds = ""
    if low is not None and high is not None:
        bounds = f" in [{low:g}, {high:g}]"
    constraint = f"a 1-D array of strictly increasing finite points{bounds}"
    try:
        arr = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError):
        raise_invalid(name, owner, constraint, points)
    if arr.ndim != 1:
        raise_invalid(name, owner, constraint, points, f"it has shape {arr.shape}")
    if size is not None and arr.shape[0] != size:
        label = size_name if size_name else str(size)
        raise_invalid(name, owner, constraint + f" of length {label} = {size}", points,
                      f"it has length {arr.shape[0]}")
    if arr.shape[0] < min_size:
        raise_invalid(name, owner, constraint + f" of length >= {min_size}", points,
                      f"it has length {arr.shape[0]}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        i = int(bad[0])
        raise_invalid(name, owner, constraint, points, f"{name}[{i}] = {float(arr[i])!r}")
    if low is not None and high is not None:
        bad = np.flatnonzero((arr < low) | (arr > high))
        if bad.size:
            i = int(bad[0])
            raise_invalid(name, owner, constraint, points,
                          f"{name}[{i}] = {float(arr[i])!r} is outside [{low:g}, {high:g}]")
    steps = np.diff(arr)
    bad = np.flatnonzero(steps <= 0)
    if bad.size:
        i = int(bad[0])
        what = "is duplicated" if steps[i] == 0 else "is not greater than"
        if steps[i] == 0:
            detail = f"{name}[{i + 1}] = {float(arr[i + 1])!r} {what}"
        else:
            detail = f"{name}[{i + 1}] = {float(arr[i + 1])!r} {what} {name}[{i}] = {float(arr[i])!r}"
        raise_invalid(name, owner, constraint, points, detail)
    return arr


def check_received(received, n_workers: int, owner: str, name: str = "received") -> tuple:
    """Normalise a set of non-straggling workers to a tuple of ascending unique indices.

    Parameters
    ----------
    received : sequence of int, 1-D integer array, or boolean mask of shape (n_workers,)
        Indices in ``[0, n_workers)``, strictly ascending (no duplicates), at least one.
        A boolean numpy array of length ``n_workers`` is read as a mask.
    n_workers : int
    owner, name : str

    Returns
    -------
    tuple of int
    """
    constraint = f"a non-empty, strictly ascending sequence of worker indices in [0, {n_workers})"
    if isinstance(received, np.ndarray) and received.dtype == np.bool_:
        if received.shape != (n_workers,):
            raise_invalid(name, owner, f"a boolean mask of shape ({n_workers},) or " + constraint,
                          received, f"mask shape {received.shape}")
        received = np.flatnonzero(received)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(received, torch.Tensor):
        received = received.detach().cpu().numpy()
    if isinstance(received, np.ndarray) and received.ndim == 1 and received.dtype.kind in "iu":
        # fast path (the common case in simulations): all checks vectorised
        if received.size and received[0] >= 0 and received[-1] < n_workers and (
                received.size == 1 or bool((received[1:] > received[:-1]).all())):
            return tuple(received.tolist())
    elif isinstance(received, (tuple, list)) and received and all(
            type(v) is int for v in received):
        if received[0] >= 0 and received[-1] < n_workers and all(
                a < b for a, b in zip(received, received[1:])):
            return tuple(received)
    if isinstance(received, (str, bytes)) or np.ndim(received) != 1:
        raise_invalid(name, owner, constraint, received)
    try:
        values = tuple(received)
    except TypeError:
        raise_invalid(name, owner, constraint, received)
    if len(values) == 0:
        raise_invalid(name, owner, constraint, received, "it is empty")
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise_invalid(name, owner, constraint, received, f"{v!r} is not an int")
        out.append(int(v))
    for j, v in enumerate(out):
        if v < 0 or v >= n_workers:
            raise_invalid(name, owner, constraint, received,
                          f"index {v} is out of range for n_workers = {n_workers}")
        if j and v <= out[j - 1]:
            what = "is duplicated" if v == out[j - 1] else f"comes after {out[j - 1]}"
            raise_invalid(name, owner, constraint, received, f"index {v} {what}")
    return tuple(out)


def _first_nonfinite(array):
    """Index (tuple) of the first non-finite entry of a numpy array or torch tensor."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(array, torch.Tensor):
        idx = torch.nonzero(~torch.isfinite(array))[0].cpu().tolist()
        return tuple(idx), array[tuple(idx)].item()
    idx = np.argwhere(~np.isfinite(array))[0]
    return tuple(int(i) for i in idx), array[tuple(idx)].item()


def check_finite(array, name: str, owner: str):
    """Raise if a numpy array or torch tensor holds NaN or inf; return it unchanged.

    The check is one vectorised reduction (``np.isfinite(...).all()`` or
    ``torch.isfinite(...).all()``); integer and boolean arrays are skipped.
    """
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(array, torch.Tensor):
        if not (array.is_floating_point() or array.is_complex()):
            return array
        ok = bool(torch.isfinite(array).all())
    else:
        if array.dtype.kind not in "fc":
            return array
        ok = bool(np.isfinite(array).all())
    if not ok:
        idx, val = _first_nonfinite(array)
        raise_invalid(name, owner, "free of NaN and inf", array, f"{name}{list(idx)} = {val!r}")
    return array


def check_leading_dim(array, size: int, name: str, owner: str, size_name: str) -> None:
    """Require an array with at least one axis whose first axis has length ``size``."""
    shape = tuple(array.shape)
    if len(shape) == 0 or shape[0] != size:
        raise_invalid(name, owner, f"an array of shape ({size_name}, ...) with {size_name} = {size}",
                      array, f"its shape is {shape}")


def check_choice(value, name: str, owner: str, choices) -> str:
    """Require ``value`` to be one of the strings in ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise_invalid(name, owner, "one of " + ", ".join(repr(c) for c in choices), value)
    return value
