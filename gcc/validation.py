"""The library's one validator (the model: scikit-learn's ``utils/_param_validation.py``).

Constraints test and describe a value and convert it without loss (``np.int64(4)`` -> ``4``, never
``1.7`` -> ``1`` nor complex -> real); :func:`invalid` builds the one message, an
:class:`InvalidParameterError` (a ``ValueError`` and a ``TypeError``); ``@validate_params`` checks a
public entry point's arguments (``skip_nested=True``: the decorated functions it calls skip theirs).

>>> from numbers import Integral
>>> @validate_params({"n": Interval(Integral, 1, None), "kind": Options({"a", "b"})})
... def f(n, kind="a"):
...     return n, kind
>>> f(3, "b")
(3, 'b')
>>> f(0)
Traceback (most recent call last):
...
gcc.validation.InvalidParameterError: The 'n' parameter of f must be an int >= 1. Got 0 instead.
"""
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

__all__ = [
    "InvalidParameterError", "Rejected", "Constraint", "Interval", "Options", "InstanceOf", "AnyOf",
    "NoneOr", "Callable", "ArrayLike", "Points", "ListOf", "HasAttributes", "Satisfies", "Frame",
    "make_constraint", "as_array", "COLUMNS", "GENERATOR", "BOOL", "SEED", "SEED_OR_GENERATOR", "NAME",
    "TEXT", "LAM", "LAM_OR_GCV", "short_repr", "invalid", "raise_invalid", "validate", "validate_params",
    "entry", "caller", "check_int", "check_real", "check_lam", "check_received", "check_finite",
    "check_leading_dim", "check_choice", "check_rng", "check_labels",
]


class InvalidParameterError(ValueError, TypeError):
    """The library's argument error: both a ``ValueError`` and a ``TypeError``."""


class Rejected(Exception):
    """A value a constraint rejects: ``detail`` says what is wrong, ``requirement`` rewords the constraint."""

    def __init__(self, detail: str | None = None, requirement: str | None = None):
        super().__init__(detail)
        self.detail, self.requirement = detail, requirement


# --------------------------------------------------------------------------- the message
def short_repr(value) -> str:
    """Short representation of a (possibly large) argument for an error message."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        flat = value.detach().reshape(-1)[:6].cpu().tolist()
        return (f"tensor of shape {tuple(value.shape)}, dtype {value.dtype}, device {value.device}"
                f" (first entries {flat})")
    if isinstance(value, np.ndarray) and value.size > 12:
        body = np.array2string(value, threshold=8, edgeitems=3, precision=6)
        return f"array of shape {value.shape} and dtype {value.dtype}: {body}"
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def invalid(name: str, owner: str, constraint, value, detail: str | None = None) -> InvalidParameterError:
    """Build (not raise) the library's error, the one message builder; ``detail`` goes in parentheses."""
    if isinstance(constraint, Constraint):
        constraint = constraint.description
    extra = f" ({detail})" if detail else ""
    return InvalidParameterError(f"The '{name}' parameter of {owner} must be {constraint}{extra}. "
                                 f"Got {short_repr(value)} instead.")


def raise_invalid(name: str, owner: str, constraint, value, detail: str | None = None):
    """Raise :func:`invalid`'s error."""
    raise invalid(name, owner, constraint, value, detail)


# --------------------------------------------------------------------------- constraints
def _is_bool(value) -> bool:
    """A Python or numpy bool."""
    return isinstance(value, (bool, np.bool_))


class Constraint:
    """A requirement that tests a value and describes itself (``description`` overrides the words)."""

    def __init__(self, description: str | None = None):
        self._description = description

    @property
    def description(self) -> str:
        """The requirement in words, as it follows "must be" in the message."""
        return self._description if self._description is not None else self.describe()

    def convert(self, value, name: str = "value"):
        """Return ``value`` (normalised: a Python int, an array) or raise :class:`Rejected`."""
        raise NotImplementedError

    def is_satisfied_by(self, value) -> bool:
        try:
            self.convert(value)
        except Rejected:
            return False
        return True


class Interval(Constraint):
    """A number of type Integral (never a bool) or Real (finite) within bounds; ``closed`` is "both",
    "left", "right" or "neither", ``None`` leaves a side unbounded."""

    def __init__(self, type, left=None, right=None, *, closed: str = "both", description: str | None = None):
        super().__init__(description)
        self.type = {int: numbers.Integral, float: numbers.Real}.get(type, type)
        if self.type not in (numbers.Integral, numbers.Real) or closed not in ("both", "left", "right",
                                                                               "neither"):
            raise TypeError(f"Interval needs Integral or Real, and a closed side: {type!r}, {closed!r}")
        self.left, self.right, self.closed = left, right, closed

    def describe(self) -> str:
        integral = self.type is numbers.Integral
        lc, rc = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.left is not None and self.right is not None:
            return (f"{'an int' if integral else 'a float'} in {'[' if lc else '('}{self.left}, "
                    f"{self.right}{']' if rc else ')'}")
        kind = "an int" if integral else "a finite real number"
        if self.left is not None:
            return f"{kind} {'>=' if lc else '>'} {self.left}"
        if self.right is not None:
            return f"{kind} {'<=' if rc else '<'} {self.right}"
        return kind

    def convert(self, value, name: str = "value"):
        if _is_bool(value) or not isinstance(value, self.type):
            raise Rejected()
        try:
            x = int(value) if self.type is numbers.Integral else float(value)
        except (OverflowError, TypeError, ValueError):     # 10**400 is no finite float
            raise Rejected() from None
        if self.type is numbers.Real and not math.isfinite(x):
            raise Rejected()
        lc, rc = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.left is not None and (x < self.left or (x == self.left and not lc)):
            raise Rejected()
        if self.right is not None and (x > self.right or (x == self.right and not rc)):
            raise Rejected()
        return x


class Options(Constraint):
    """One of a fixed set of values (a set is described sorted); a bool never matches the int 1.
    ``case_sensitive=False`` (scheme names) returns the choice as spelled in ``choices``."""

    def __init__(self, choices, *, case_sensitive: bool = True, description: str | None = None):
        super().__init__(description)
        self.choices = tuple(sorted(choices, key=str) if isinstance(choices, (set, frozenset)) else choices)
        self.case_sensitive = bool(case_sensitive)

    def describe(self) -> str:
        if len(self.choices) == 1:
            return repr(self.choices[0])
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def convert(self, value, name: str = "value"):
        try:
            hash(value)             # arrays, lists, dicts: never a choice
        except TypeError:
            raise Rejected() from None
        for c in self.choices:
            if isinstance(value, str) and isinstance(c, str) and not self.case_sensitive:
                if c.lower() == value.lower():
                    return c
            elif (_is_bool(value) == isinstance(c, bool) and isinstance(value, str) == isinstance(c, str)
                  and not (isinstance(c, numbers.Integral) and not isinstance(value, numbers.Integral))):
                with contextlib.suppress(TypeError, ValueError, RuntimeError):   # a tensor of several entries
                    if bool(value == c):    # 1.0 is not the int choice 1, True not 1
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
    """Any of several constraints (the first that accepts the value converts it); a list means the same."""

    def __init__(self, *constraints, description: str | None = None):
        super().__init__(description)
        self.constraints = tuple(make_constraint(c) for c in constraints)

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
        return "an object with " + (" and ".join(words) if len(words) < 3 else
                                    ", ".join(words[:-1]) + " and " + words[-1])

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
    """A sequence (a list, tuple or 1-D array; never a str or mapping) of entries that satisfy
    ``entry``, returned as a list (a tuple with ``as_tuple``) of the converted entries."""

    def __init__(self, entry, min_len: int = 1, distinct: bool = False, as_tuple: bool = False,
                 description: str | None = None):
        super().__init__(description)
        self.entry, self.min_len = make_constraint(entry), min_len
        self.distinct, self.as_tuple = distinct, as_tuple

    def describe(self) -> str:
        words = self.entry.description
        for one, many in _PLURALS:
            if words.startswith(one + " ") or words == one:
                words = many + words[len(one):]
                break
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
                not_int = integral and (_is_bool(v) or not isinstance(v, numbers.Integral))
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
    return Satisfies(lambda v: isinstance(v, getattr(sys.modules.get("pandas"), "DataFrame", ()))
                     and all(c in v.columns for c in columns), description or words)


def make_constraint(constraint) -> Constraint:
    """A constraint as it is; ``None`` -> the value None; a type (or tuple of types) ->
    :func:`InstanceOf`; a list -> :class:`AnyOf` of its items."""
    if isinstance(constraint, Constraint):
        return constraint
    if constraint is None:
        return Satisfies(lambda v: v is None, "None")
    if isinstance(constraint, type) or (isinstance(constraint, tuple) and constraint
                                        and all(isinstance(t, type) for t in constraint)):
        return InstanceOf(constraint)
    if isinstance(constraint, list):
        return AnyOf(*constraint)
    raise TypeError(f"not a constraint: {constraint!r}")


def _is_columns(value) -> bool:
    """A str, or a list or tuple of str."""
    return isinstance(value, str) or (isinstance(value, (list, tuple))
                                      and all(isinstance(c, str) for c in value))


#: a column name or a list of them, as a list
COLUMNS = Satisfies(_is_columns, "a column name or a list of column names",
                    to=lambda v: [v] if isinstance(v, str) else list(v))
#: a random generator argument (never a seed or None: the caller owns the stream)
GENERATOR = InstanceOf(np.random.Generator, "a numpy.random.Generator (np.random.default_rng(seed))")
#: a flag
BOOL = InstanceOf((bool, np.bool_), "a bool")
#: a name that must not be empty (a notebook, a model, a data set)
NAME = Satisfies(lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty str")
#: a name stored in a column (model, dataset, regime)
TEXT = InstanceOf(str, "a str")
#: a seed (an int >= 0, never None: every number is reproducible), or one or a generator
SEED = Interval(numbers.Integral, 0, None)
SEED_OR_GENERATOR = AnyOf(SEED, InstanceOf(np.random.Generator, "a numpy.random.Generator"))
#: a smoothing parameter (a finite real >= 0), or that or "gcv" (generalised cross-validation)
LAM = Interval(numbers.Real, 0, None)
LAM_OR_GCV = AnyOf(LAM, Options(("gcv",)))


# --------------------------------------------------------------------------- use
def validate(value, constraint, name: str, owner: str):
    """Return ``value`` checked against ``constraint`` (converted), or raise :func:`invalid`'s error."""
    c = make_constraint(constraint)
    try:
        return c.convert(value, name)
    except Rejected as err:
        raise invalid(name, owner, err.requirement or c.description, value, err.detail) from None


_STATE = threading.local()     # .skip: nested calls skip validation; .owner: the entry point called


@contextlib.contextmanager
def entry(owner: str):
    """Within the block, functions that report as :func:`caller` name ``owner`` (the entry point the
    user called, when it is built on another: ``select_lambdas`` on ``run_trials``)."""
    outer = getattr(_STATE, "owner", None)
    _STATE.owner = outer or owner
    try:
        yield
    finally:
        _STATE.owner = outer


def caller(default: str) -> str:
    """The name a function's messages use: the outermost :func:`entry`, else ``default``."""
    return getattr(_STATE, "owner", None) or default


def validate_params(constraints: dict, owner: str | None = None, *, skip_nested: bool = False):
    """Decorator of a public entry point: check and convert the arguments the caller passed.

    ``constraints`` maps parameters to constraints (or lists of them); defaults are trusted.
    ``owner`` names the messages (default the qualified name, the class for ``__init__``). With
    ``skip_nested``, decorated functions called while this one runs (in this thread) skip their
    validation: they get the library's own, already checked values."""
    compiled = {name: make_constraint(c) for name, c in constraints.items()}

    def decorator(func):
        sig = inspect.signature(func)
        unknown = sorted(set(compiled) - set(sig.parameters))
        if unknown:
            raise TypeError(f"validate_params: {func.__qualname__} has no parameter(s) {unknown}")
        parts = func.__qualname__.split(".")
        who = owner or (func.__name__ if "<locals>" in parts else
                        parts[-2] if func.__name__ == "__init__" and len(parts) > 1 else func.__qualname__)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if getattr(_STATE, "skip", False):
                return func(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            for name, c in compiled.items():
                if name in bound.arguments:
                    bound.arguments[name] = validate(bound.arguments[name], c, name, who)
            if not skip_nested:
                return func(*bound.args, **bound.kwargs)
            _STATE.skip = True
            try:
                return func(*bound.args, **bound.kwargs)
            finally:
                _STATE.skip = False

        wrapper.parameter_constraints = compiled
        return wrapper

    return decorator


# --------------------------------------------------------------------------- shorthands
def check_int(value, name: str, owner: str, minimum: int | None = None, maximum: int | None = None,
              constraint: str | None = None) -> int:
    """``validate(value, Interval(Integral, minimum, maximum), ...)``; ``constraint`` rewords it."""
    return validate(value, Interval(numbers.Integral, minimum, maximum, description=constraint), name, owner)


def check_real(value, name: str, owner: str, minimum: float | None = None, maximum: float | None = None,
               include_min: bool = True, include_max: bool = True, constraint: str | None = None) -> float:
    """A finite Python float within the bounds (``Interval(Real, ...)``)."""
    closed = ("neither", "right", "left", "both")[2 * bool(include_min) + bool(include_max)]
    return validate(value, Interval(numbers.Real, minimum, maximum, closed=closed, description=constraint),
                    name, owner)


def check_lam(value, name: str, owner: str, allow_gcv: bool = False):
    """A smoothing parameter (:data:`LAM`, or :data:`LAM_OR_GCV` with ``allow_gcv``)."""
    return validate(value, LAM_OR_GCV if allow_gcv else LAM, name, owner)


def check_choice(value, name: str, owner: str, choices):
    """``validate(value, Options(choices), name, owner)`` (an exact match)."""
    return validate(value, Options(choices), name, owner)


def check_rng(rng, name: str, owner: str) -> np.random.Generator:
    """A ``numpy.random.Generator`` (:data:`GENERATOR`)."""
    return validate(rng, GENERATOR, name, owner)


# --------------------------------------------------------------------------- arrays
_DTYPE_WORDS = {"f": "real numbers", "c": "real or complex numbers", "i": "ints", "u": "ints >= 0",
                "b": "booleans (True/False or 0/1)"}


def _first(bad: np.ndarray):
    """Index (tuple) of the first True entry of ``bad``, or None."""
    if bad.ndim == 0:
        return () if bool(bad) else None
    hits = np.argwhere(bad)
    return tuple(int(j) for j in hits[0]) if hits.size else None


def _entry(name: str, index) -> str:
    """``name[i, j]`` (or ``name`` for a 0-D index)."""
    return f"{name}[{', '.join(str(j) for j in index)}]" if len(index) else name


def _to_numpy(value):
    """A torch tensor as a numpy array on the CPU; anything else unchanged."""
    torch = sys.modules.get("torch")
    return value.detach().cpu().numpy() if torch is not None and isinstance(value, torch.Tensor) else value


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
    if want in "iu" and kind in "iu" and isinstance(value, (list, tuple)) and any(map(_is_bool, value)):
        i = next(i for i, v in enumerate(value) if _is_bool(v))     # numpy reads [True, 2] as [1, 2]
        raise Rejected(f"{name}[{i}] = {value[i]!r} is not an int")
    if kind == "c" and want != "c":
        raise Rejected("it holds complex values")
    if want in "iu" and kind not in "iu" and raw.size:
        bad = ((raw != np.round(raw)) | ~np.isfinite(raw)) if kind == "f" else np.ones(raw.shape, bool)
        i = _first(bad)
        i = _first(np.ones(raw.shape, bool)) if i is None else i
        raise Rejected(f"{_entry(name, i)} = {raw[i].item()!r} is not an int")
    if want == "u" and kind == "i" and raw.size and raw.min() < 0:
        i = _first(raw < 0)
        raise Rejected(f"{_entry(name, i)} = {raw[i].item()!r} is negative")
    if want == "b" and kind != "b" and raw.size:
        i = _first((raw != 0) & (raw != 1))      # NaN compares unequal to both: caught here
        if i is not None:
            raise Rejected(f"{_entry(name, i)} = {raw[i].item()!r} is not a bool")
    return raw.astype(target, copy=False)


class ArrayLike(Constraint):
    """Anything ``numpy.asarray`` converts (losslessly, :func:`as_array`) to an array of the given
    ``dtype``, ``ndim`` and ``shape`` (``None`` entries: any length); ``finite`` rejects NaN and inf."""

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
            i = _first(~np.isfinite(arr))
            raise Rejected(f"{_entry(name, i)} = {arr[i].item()!r}")
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
            raise Rejected(f"it has length {n}", f"{self.description} of length "
                                                 f"{self.size_name or self.size} = {self.size}")
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


def check_received(received, n_workers: int, owner: str, name: str = "received") -> tuple:
    """A set of non-straggling workers as a tuple of strictly ascending indices in ``[0, n_workers)``:
    a sequence of ints, a 1-D integer array or tensor, or a boolean mask of shape ``(n_workers,)``.

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
        idx = None if isinstance(raw, Mapping) else as_array(raw, name, np.int64)
    except Rejected as err:
        raise invalid(name, owner, constraint, received, err.detail) from None
    if idx is None or idx.ndim != 1 or idx.size == 0:
        empty = idx is not None and idx.ndim == 1
        raise invalid(name, owner, constraint, received, "it is empty" if empty else None)
    if (idx.size == 1 or bool((idx[1:] > idx[:-1]).all())) and idx[0] >= 0 and idx[-1] < n_workers:
        return tuple(idx.tolist())                 # ascending: the ends bound the rest
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
        idx = _first(~np.isfinite(array))
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
    int64 array (never rounded: ``1.7`` is no label). Torch tensors are read on the CPU."""
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
