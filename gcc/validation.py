"""The one validator (as scikit-learn's ``_param_validation``): constraints that test, describe and convert
without loss (never 1.7 -> 1), the one message (:func:`invalid`) and ``@validate_params``."""
from __future__ import annotations

import contextlib
import functools
import inspect
import math
import numbers
import sys
import threading
from collections.abc import Mapping

import numpy as np

__all__ = ["InvalidParameterError", "Rejected", "Constraint", "Interval", "Options", "InstanceOf", "AnyOf",
           "NoneOr", "Callable", "ArrayLike", "Points", "ListOf", "HasAttributes", "Satisfies", "Frame", "as_array",
           "COLUMNS", "GENERATOR", "BOOL", "SEED", "SEED_OR_GENERATOR", "NAME", "TEXT", "LAM", "short_repr",
           "invalid", "validate", "validate_params", "entry", "caller", "check_int", "check_real",
           "check_received", "check_finite", "check_labels"]


class InvalidParameterError(ValueError, TypeError):
    """The library's argument error: both a ``ValueError`` and a ``TypeError``."""


class Rejected(Exception):
    """A value a constraint rejects: ``detail`` says what is wrong."""

    def __init__(self, detail: str | None = None):
        super().__init__(detail)
        self.detail = detail


def short_repr(value) -> str:
    """Short representation of a (possibly large) argument for an error message."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        flat = value.detach().reshape(-1)[:6].cpu().tolist()
        return (f"tensor of shape {tuple(value.shape)}, dtype {value.dtype}, device {value.device}"
                f" (first entries {flat})")
    if isinstance(value, np.ndarray) and value.size > 12:
        # a summary of an image batch (4-d) would run to a hundred lines: its first entries instead
        body = (np.array2string(value, threshold=8, edgeitems=3, precision=6) if value.ndim <= 2
                else f"first entries {value.reshape(-1)[:6].tolist()}")
        return f"array of shape {value.shape} and dtype {value.dtype}: {body}"
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def invalid(name: str, owner: str, constraint, value, detail: str | None = None) -> InvalidParameterError:
    """Build (not raise) the library's error, the one message builder; ``detail`` goes in parentheses.

    >>> str(invalid("n_workers", "SplineCode", "an int >= n_inputs", 3))
    "The 'n_workers' parameter of SplineCode must be an int >= n_inputs. Got 3 instead."
    """
    if isinstance(constraint, Constraint):
        constraint = constraint.description
    extra = f" ({detail})" if detail else ""
    return InvalidParameterError(f"The '{name}' parameter of {owner} must be {constraint}{extra}. "
                                 f"Got {short_repr(value)} instead.")


_BOOLS = (bool, np.bool_)


class Constraint:
    """A requirement that tests a value and describes itself (``description`` overrides the words)."""

    def __init__(self, description: str | None = None):
        self._description = description

    @property
    def description(self) -> str:
        return self._description if self._description is not None else self.describe()

    def convert(self, value, name: str = "value"):    # the value normalised (a Python int, an array)
        raise NotImplementedError

    def is_satisfied_by(self, value) -> bool:
        with contextlib.suppress(Rejected):
            self.convert(value)
            return True
        return False


class Interval(Constraint):
    """An Integral (never a bool) or finite Real within bounds (``None``: unbounded), ``closed`` on a side."""

    def __init__(self, type, left=None, right=None, *, closed: str = "both", description: str | None = None):
        super().__init__(description)
        self.type = {int: numbers.Integral, float: numbers.Real}.get(type, type)    # Integral or Real
        self.left, self.right, self.closed = left, right, closed

    def describe(self) -> str:
        integral = self.type is numbers.Integral
        lc, rc = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.left is not None and self.right is not None:
            return f"{'an int' if integral else 'a float'} in {'(['[lc]}{self.left}, {self.right}{')]'[rc]}"
        text = "an int" if integral else "a finite real number"
        text += f" {'>' + '=' * lc} {self.left}" if self.left is not None else ""
        return text + (f" {'<' + '=' * rc} {self.right}" if self.right is not None else "")

    def convert(self, value, name: str = "value"):
        if isinstance(value, _BOOLS) or not isinstance(value, self.type):
            raise Rejected()
        try:
            x = int(value) if self.type is numbers.Integral else float(value)
        except (OverflowError, TypeError, ValueError):     # 10**400 is no finite float
            raise Rejected() from None
        if self.type is numbers.Real and not math.isfinite(x):
            raise Rejected()
        lc, rc = self.closed in ("both", "left"), self.closed in ("both", "right")
        if (self.left is not None and (x < self.left or (x == self.left and not lc))) or (
                self.right is not None and (x > self.right or (x == self.right and not rc))):
            raise Rejected()
        return x


class Options(Constraint):
    """One of a fixed set of values (a bool is not 1); ``case_sensitive=False``: returned as spelled."""

    def __init__(self, choices, *, case_sensitive: bool = True, description: str | None = None):
        super().__init__(description)
        self.choices = tuple(sorted(choices, key=str) if isinstance(choices, (set, frozenset)) else choices)
        self.case_sensitive = bool(case_sensitive)

    def describe(self) -> str:
        words = ", ".join(map(repr, self.choices))
        return words if len(self.choices) == 1 else "one of " + words

    def convert(self, value, name: str = "value"):
        is_bool, is_str = isinstance(value, _BOOLS), isinstance(value, str)
        for c in self.choices if getattr(type(value), "__hash__", None) else ():   # arrays, lists: no choice
            if is_str and isinstance(c, str) and not self.case_sensitive:
                if c.lower() == value.lower():
                    return c
            elif is_bool == isinstance(c, bool) and is_str == isinstance(c, str) and (
                    isinstance(value, numbers.Integral) or not isinstance(c, numbers.Integral)):   # 1.0 != 1
                with contextlib.suppress(TypeError, ValueError, RuntimeError):   # a tensor of several entries
                    if bool(value == c):
                        return c
        raise Rejected()


class Satisfies(Constraint):
    """A value for which ``test(value)`` is true, described by ``description``, returned as ``to(value)``."""

    def __init__(self, test, description: str, to=None):
        super().__init__(description)
        self.test, self.to = test, to

    def convert(self, value, name: str = "value"):
        if not self.test(value):
            raise Rejected()
        return value if self.to is None else self.to(value)


def InstanceOf(types, description: str | None = None) -> Constraint:
    """An instance of a type or of one of several types."""
    types = types if isinstance(types, tuple) else (types,)
    return Satisfies(lambda v: isinstance(v, types),
                     description or "an instance of " + " or ".join(t.__name__ for t in types))


def Callable(description: str | None = None) -> Constraint:
    """A callable (function, class, object with ``__call__``)."""
    return Satisfies(callable, description or "a callable")


class AnyOf(Constraint):
    """Any of several constraints (the first that accepts the value converts it); ``None``: the value None."""

    def __init__(self, *constraints, description: str | None = None):
        super().__init__(description)
        self.constraints = tuple(Satisfies(lambda v: v is None, "None") if c is None else c for c in constraints)

    def describe(self) -> str:
        return " or ".join(c.description for c in self.constraints)

    def convert(self, value, name: str = "value"):
        details = []
        for c in self.constraints:
            try:
                return c.convert(value, name)
            except Rejected as err:
                details += [err.detail] if err.detail else []
        raise Rejected(details[0] if len(details) == 1 else None)   # a detail only if one explains it


def NoneOr(constraint, description: str | None = None) -> Constraint:
    """``None`` or a value satisfying ``constraint`` (described as "... or None")."""
    return AnyOf(constraint, None, description=description)


class HasAttributes(Constraint):
    """An object with the given attributes (duck typing); ``callables`` must be methods."""

    def __init__(self, names, callables=(), description: str | None = None):
        super().__init__(description)
        self.names, self.callables = tuple(names), tuple(callables)

    def describe(self) -> str:
        words = [f"{n}()" if n in self.callables else n for n in self.names]
        return "an object with " + " and ".join(filter(None, [", ".join(words[:-1]), words[-1]]))

    def convert(self, value, name: str = "value"):
        for attr in self.names:
            try:
                got = getattr(value, attr)
            except Exception:     # a property that fails is a missing attribute here
                raise Rejected(f"it has no {attr!r}") from None
            if attr in self.callables and not callable(got):
                raise Rejected(f"its {attr!r} is not callable")
        return value


_PLURALS = (("an int", "ints"), ("a finite real number", "finite reals"), ("a float", "floats"),
            ("a str", "str"), ("a non-empty str", "non-empty str"))


class ListOf(Constraint):
    """A list, tuple or 1-D array of entries satisfying ``entry``, as a list (a tuple with ``as_tuple``)."""

    def __init__(self, entry, min_len: int = 1, distinct: bool = False, as_tuple: bool = False,
                 description: str | None = None):
        super().__init__(description)
        self.entry, self.min_len = entry, min_len
        self.distinct, self.as_tuple = distinct, as_tuple

    def describe(self) -> str:
        w = self.entry.description
        words = next((many + w[len(one):] for one, many in _PLURALS if w == one or w.startswith(one + " ")),
                     w)
        size = {0: "a sequence", 1: "a non-empty sequence"}.get(self.min_len,
                                                                 f"a sequence of at least {self.min_len}")
        return f"{size} of {'distinct ' if self.distinct else ''}{words}"

    def convert(self, value, name: str = "value"):
        if isinstance(value, (str, bytes, Mapping)) or np.ndim(value) != 1:
            raise Rejected()
        out = []
        for i, v in enumerate(value):
            try:
                out.append(self.entry.convert(v, f"{name}[{i}]"))
            except Rejected as err:
                integral = isinstance(self.entry, Interval) and self.entry.type is numbers.Integral
                not_int = integral and (isinstance(v, _BOOLS) or not isinstance(v, numbers.Integral))
                raise Rejected(err.detail or f"{name}[{i}] = {v!r}" + (" is not an int" * not_int)) from None
        if len(out) < self.min_len:
            raise Rejected(f"it has {len(out)} entries")
        if self.distinct and len(set(out)) != len(out):
            raise Rejected("it repeats an entry")
        return tuple(out) if self.as_tuple else out


def Frame(columns=(), description: str | None = None) -> Constraint:
    """A pandas DataFrame with the given columns (returned as it is)."""
    columns = tuple(columns)
    words = "a pandas.DataFrame" + (f" with columns {', '.join(columns)}" if columns else "")

    def test(value):
        if not isinstance(value, getattr(sys.modules.get("pandas"), "DataFrame", ())):
            return False
        missing = [c for c in columns if c not in value.columns]
        if missing:
            raise Rejected(f"it has no column {missing[0]!r}")
        return True

    return Satisfies(test, description or words)


#: a random generator argument (never a seed or None: the caller owns the stream)
GENERATOR = InstanceOf(np.random.Generator, "a numpy.random.Generator (np.random.default_rng(seed))")
#: a flag
BOOL = InstanceOf((bool, np.bool_), "a bool")
#: a name that must not be empty (a notebook, a model, a data set)
NAME = Satisfies(lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty str")
#: a name stored in a column (model, dataset, regime)
TEXT = InstanceOf(str, "a str")
#: a column name or a list of them, as a list
COLUMNS = AnyOf(Satisfies(lambda v: isinstance(v, str), "a str", to=lambda v: [v]), ListOf(TEXT, min_len=0),
                description="a column name or a list of column names")
#: a seed (an int >= 0, never None: every number is reproducible), or one or a generator
SEED = Interval(numbers.Integral, 0, None)
SEED_OR_GENERATOR = AnyOf(SEED, InstanceOf(np.random.Generator, "a numpy.random.Generator"))
#: a smoothing parameter (a finite real >= 0)
LAM = Interval(numbers.Real, 0, None)


def validate(value, constraint, name: str, owner: str):
    """Return ``value`` checked against ``constraint`` (converted), or raise :func:`invalid`'s error."""
    try:
        return constraint.convert(value, name)
    except Rejected as err:
        raise invalid(name, owner, constraint.description, value, err.detail) from None


_STATE = threading.local()     # .skip: nested calls skip validation; .owner: the entry point called


@contextlib.contextmanager
def entry(owner: str):
    """Within the block, :func:`caller` names ``owner``, the entry point the user called."""
    outer = getattr(_STATE, "owner", None)
    _STATE.owner = outer or owner
    try:
        yield
    finally:
        _STATE.owner = outer


def caller(default: str) -> str:
    """The name a function's messages use: the outermost :func:`entry`, else ``default``."""
    return getattr(_STATE, "owner", None) or default


def validate_params(constraints: dict, *, skip_nested: bool = False):
    """Decorator of a public entry point: check and convert the arguments passed (defaults are trusted).

    Messages name the qualified name (the class for ``__init__``; within :func:`entry`, its name). With
    ``skip_nested``, decorated functions called while this one runs (in this thread) skip theirs."""

    def decorator(func):
        sig = inspect.signature(func)
        unknown = sorted(set(constraints) - set(sig.parameters))
        if unknown:
            raise TypeError(f"validate_params: {func.__qualname__} has no parameter(s) {unknown}")
        parts = func.__qualname__.split(".")
        who = (func.__name__ if "<locals>" in parts else
               parts[-2] if func.__name__ == "__init__" and len(parts) > 1 else func.__qualname__)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if getattr(_STATE, "skip", False):
                return func(*args, **kwargs)
            bound, named = sig.bind(*args, **kwargs), caller(who)
            for name, c in constraints.items():
                if name in bound.arguments:
                    bound.arguments[name] = validate(bound.arguments[name], c, name, named)
            _STATE.skip = skip_nested
            try:
                return func(*bound.args, **bound.kwargs)
            finally:
                _STATE.skip = False

        return wrapper

    return decorator


def check_int(value, name: str, owner: str, minimum: int | None = None, maximum: int | None = None,
              constraint: str | None = None) -> int:
    """``validate(value, Interval(Integral, minimum, maximum), ...)``; ``constraint`` rewords it."""
    return validate(value, Interval(numbers.Integral, minimum, maximum, description=constraint), name, owner)


def check_real(value, name: str, owner: str, minimum: float | None = None, maximum: float | None = None,
               include_min: bool = True, include_max: bool = True, constraint: str | None = None) -> float:
    """A finite Python float within the bounds (``Interval(Real, ...)``)."""
    closed = ("neither", "right", "left", "both")[2 * bool(include_min) + bool(include_max)]
    return validate(value, Interval(float, minimum, maximum, closed=closed, description=constraint),
                    name, owner)


_DTYPE_WORDS = {"f": "real numbers", "c": "real or complex numbers", "i": "ints",
                "b": "booleans (True/False or 0/1)"}


def _at(name: str, arr: np.ndarray, bad) -> str:
    """``"name[i, j] = value"`` of the first True entry of ``bad`` (``name`` alone for 0-D)."""
    i = tuple(int(j) for j in np.argwhere(bad)[0])        # 0-D: one empty row when True
    where = f"{name}[{', '.join(map(str, i))}]" if i else name
    return f"{where} = {arr[i].item()!r}"


def _increasing(name: str, arr: np.ndarray) -> str | None:
    """The message of the first entry of a 1-D ``arr`` not greater than the one before, or None."""
    bad = np.diff(arr) <= 0
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    what = "is duplicated" if arr[i + 1] == arr[i] else f"is not greater than {name}[{i}] = {arr[i].item()!r}"
    return f"{name}[{i + 1}] = {arr[i + 1].item()!r} {what}"


def _to_numpy(value):
    """A torch tensor as a numpy array on the CPU; anything else unchanged."""
    torch = sys.modules.get("torch")
    return value.detach().cpu().numpy() if torch is not None and isinstance(value, torch.Tensor) else value


def as_array(value, name: str, dtype=None) -> np.ndarray:
    """``numpy.asarray(value)`` cast to ``dtype`` without loss (no complex -> real, float or bool -> int,
    NaN -> True, str -> number), or raise :class:`Rejected`."""
    if isinstance(value, (str, bytes)):
        raise Rejected()
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, RuntimeError):     # ragged lists, CUDA tensors, ...
        raise Rejected() from None
    if dtype is None:
        return raw
    kind, want = raw.dtype.kind, np.dtype(dtype).kind
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
    if want in "iu" and kind in "iu" and isinstance(value, (list, tuple)):     # numpy: [True, 2] -> [1, 2]
        i = next((i for i, v in enumerate(value) if isinstance(v, _BOOLS)), None)
        if i is not None:
            raise Rejected(f"{name}[{i}] = {value[i]!r} is not an int")
    if kind == "c" and want != "c":
        raise Rejected("it holds complex values")
    if want in "iu" and kind not in "iu" and raw.size:
        bad = ((raw != np.round(raw)) | ~np.isfinite(raw)) if kind == "f" else np.ones(raw.shape, bool)
        raise Rejected(_at(name, raw, bad if bad.any() else np.ones(raw.shape, bool)) + " is not an int")
    if want == "b" and kind != "b" and raw.size and ((raw != 0) & (raw != 1)).any():   # NaN: caught here
        raise Rejected(_at(name, raw, (raw != 0) & (raw != 1)) + " is not a bool")
    return raw.astype(dtype, copy=False)


class ArrayLike(Constraint):
    """An array (:func:`as_array`) of ``dtype``, ``ndim``, ``shape`` (``None``: any length), ``finite``."""

    def __init__(self, ndim: int | None = None, shape=None, dtype=None, finite: bool = False,
                 description: str | None = None):
        super().__init__(description)
        self.shape = None if shape is None else tuple(shape)
        self.ndim = ndim if shape is None else len(self.shape)
        self.dtype, self.finite = dtype, bool(finite)

    def describe(self) -> str:
        if self.shape is not None:
            inner = ", ".join("..." if s is None else str(s) for s in self.shape)
            text = f"an array of shape ({inner}{',' if len(self.shape) == 1 else ''})"
        else:
            text = f"a {self.ndim}-D array" if self.ndim is not None else "an array"
        if self.dtype is not None or self.finite:
            dtype = np.dtype(self.dtype) if self.dtype is not None else None
            kind = "numbers" if dtype is None else _DTYPE_WORDS.get(dtype.kind, str(dtype))
            text += " of " + "finite " * self.finite + kind
        return text

    def convert(self, value, name: str = "value"):
        arr = as_array(value, name, self.dtype)
        if (self.ndim is not None and arr.ndim != self.ndim) or (self.shape is not None and any(
                s is not None and s != a for s, a in zip(self.shape, arr.shape))):
            raise Rejected(f"it has shape {arr.shape}")
        if self.finite and arr.dtype.kind in "fc" and arr.size and not np.isfinite(arr).all():
            raise Rejected(_at(name, arr, ~np.isfinite(arr)))
        return arr


class Points(Constraint):
    """Increasing finite floats in ``[low, high]`` of length ``size`` (named ``size_name``), ``min_size``."""

    def __init__(self, low: float | None = -1.0, high: float | None = 1.0, size: int | None = None,
                 size_name: str | None = None, min_size: int = 1, description: str | None = None):
        super().__init__(description)
        self.low, self.high, self.size, self.size_name, self.min_size = low, high, size, size_name, min_size

    def describe(self) -> str:
        bounds = f" in [{self.low:g}, {self.high:g}]" if None not in (self.low, self.high) else ""
        length = (f" of length {self.size_name or self.size} = {self.size}" if self.size is not None else
                  f" of length >= {self.min_size}" if self.min_size > 1 else "")
        return "a 1-D array of strictly increasing finite points" + bounds + length

    def convert(self, value, name: str = "value"):
        arr = ArrayLike(1, dtype=np.float64, finite=True).convert(value, name)   # complex, strings: rejected, not cast
        n = arr.shape[0]
        if (self.size is not None and n != self.size) or n < self.min_size:
            raise Rejected(f"it has length {n}")
        if None not in (self.low, self.high) and ((arr < self.low) | (arr > self.high)).any():
            outside = (arr < self.low) | (arr > self.high)
            raise Rejected(_at(name, arr, outside) + f" is outside [{self.low:g}, {self.high:g}]")
        if _increasing(name, arr):
            raise Rejected(_increasing(name, arr))
        return arr


def check_received(received, n_workers: int, owner: str, name: str = "received") -> tuple:
    """Received workers (ints, an int array or tensor, a mask (N,)) as ascending indices in [0, N)."""
    constraint = f"a non-empty, strictly ascending sequence of worker indices in [0, {n_workers})"
    raw = _to_numpy(received)
    if isinstance(raw, np.ndarray) and raw.dtype == np.bool_:
        if raw.shape != (n_workers,):
            raise invalid(name, owner, f"a boolean mask of shape ({n_workers},) or " + constraint,
                          received, f"mask shape {raw.shape}")
        raw = np.flatnonzero(raw)
    idx = validate(raw, ArrayLike(1, dtype=np.int64, description=constraint), name, owner)
    outside = (idx < 0) | (idx >= n_workers)
    detail = ("it is empty" if idx.size == 0 else _at(name, idx, outside) + f" is outside [0, {n_workers - 1}]"
              if outside.any() else _increasing(name, idx))
    if detail:
        raise invalid(name, owner, constraint, received, detail)
    return tuple(idx.tolist())


def check_finite(array, name: str, owner: str):
    """Raise if a numpy array or torch tensor holds NaN or inf (integer arrays are skipped); return it."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(array, torch.Tensor):
        if not (array.is_floating_point() or array.is_complex()) or bool(torch.isfinite(array).all()):
            return array
    else:
        array = array if isinstance(array, np.ndarray) else validate(array, ArrayLike(), name, owner)
        if array.dtype.kind not in "fc" or np.isfinite(array).all():
            return array
    values = _to_numpy(array)
    raise invalid(name, owner, "free of NaN and inf", array, _at(name, values, ~np.isfinite(values)))


def check_labels(y, n: int | None, name: str, owner: str, n_classes: int | None = None) -> np.ndarray:
    """``n`` (None: any number) int labels in [0, ``n_classes``) as an int64 array (``1.7`` is no label)."""
    top = f" in [0, {n_classes})" if n_classes is not None else " >= 0"
    requirement = f"a 1-D array of {'' if n is None else f'{n} '}int labels{top}"
    labels = validate(_to_numpy(y), ArrayLike(dtype=np.int64, description=requirement), name, owner)
    if labels.ndim != 1 or (n is not None and len(labels) != n):
        raise invalid(name, owner, requirement, y, f"its shape is {labels.shape}")
    bad = (labels < 0) | (labels >= (np.inf if n_classes is None else n_classes))
    if bad.any():
        raise invalid(name, owner, requirement, y, _at(name, labels, bad)
                      + (" is no class of the model" if labels[bad].min() >= 0 else ""))
    return labels
