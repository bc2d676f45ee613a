"""The library's one validator (the model: scikit-learn's ``utils/_param_validation.py``).

Every public entry point checks its arguments here, so that every error reads
``The 'n_workers' parameter of LagrangeCode must be an int >= n_inputs. Got 3 instead.``
:func:`invalid` builds it, an :class:`InvalidParameterError` (both ``ValueError`` and
``TypeError``). Constraints test and describe a value and never change a number (``np.int64(4)``
comes back as ``4``, a list as an array; never ``1.7`` as ``1`` nor complex as real).
``@validate_params`` checks a public entry point's arguments (``skip_nested=True``: the decorated
functions it calls skip theirs); ``validate(x, constraint, "x", owner)`` and the ``check_*``
shorthands check inside a body. Complex data are accepted where the operation is linear or a norm
(codes, splines, harness, losses) and rejected where they have no meaning (labels, smoothing
parameters, points, probabilities, times). NaN in data is no argument error (summaries count it).

Examples
--------
>>> from numbers import Integral
>>> from gcc.validation import Interval, Options, validate_params
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
    "NoneOr", "IsNone", "Callable", "ArrayLike", "Points", "ListOf", "Seed", "HasAttributes",
    "NonEmptyStr", "Satisfies", "Frame", "make_constraint", "as_array", "first_index", "entry_name",
    "COLUMNS", "GENERATOR", "BOOL", "SEED", "SEED_OR_GENERATOR", "NAME", "TEXT", "LAM", "LAM_OR_GCV",
    "short_repr", "invalid", "raise_invalid", "validate", "validate_params", "entry", "caller",
    "check_int", "check_real", "check_lam", "check_points", "check_received", "check_finite",
    "check_leading_dim", "check_choice", "check_rng", "check_seed", "check_labels",
]


class InvalidParameterError(ValueError, TypeError):
    """The library's argument error: both a ``ValueError`` and a ``TypeError``."""


class Rejected(Exception):
    """Raised by :meth:`Constraint.convert`; ``detail`` says what is wrong, ``requirement``
    replaces the constraint's description (a compound constraint names the part that failed)."""

    def __init__(self, detail: str | None = None, requirement: str | None = None):
        super().__init__(detail)
        self.detail, self.requirement = detail, requirement


# --------------------------------------------------------------------------- the message
def short_repr(value) -> str:
    """Short representation of a (possibly large) argument for error messages (a number on a page: :func:`gcc.display.format_value`)."""
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
    return text if len(text) <= 200 else text[:197] + "..."


def invalid(name: str, owner: str, constraint, value, detail: str | None = None) -> InvalidParameterError:
    """Build (not raise) the library's error: the one message builder.

    ``constraint`` is the requirement in words or a :class:`Constraint`; ``detail`` (which entry
    is wrong, ...) goes in parentheses.

    >>> str(invalid("n_workers", "SplineCode", "an int >= n_inputs", 3))
    "The 'n_workers' parameter of SplineCode must be an int >= n_inputs. Got 3 instead."
    """
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
    return isinstance(value, (bool, np.bool_))


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not _is_bool(value)


class Constraint:
    """A requirement that tests a value and describes itself (``description`` overrides the words)."""

    def __init__(self, description: str | None = None):
        self._description = description

    @property
    def description(self) -> str:
        """The requirement in words, as it follows "must be" in the message."""
        return self._description if self._description is not None else self.describe()

    def describe(self) -> str:
        raise NotImplementedError

    def convert(self, value, name: str = "value"):
        """Return ``value`` (normalised: a Python int, an array) or raise :class:`Rejected`."""
        raise NotImplementedError

    def is_satisfied_by(self, value) -> bool:
        try:
            self.convert(value)
        except Rejected:
            return False
        return True

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.description}>"


class Interval(Constraint):
    """A number of type Integral (an int, never a bool) or Real (finite) within bounds;
    ``closed`` is "both", "left", "right" or "neither", ``None`` leaves a side unbounded.

    >>> from numbers import Integral, Real
    >>> Interval(Integral, 1, None).description, Interval(Real, 0, 1, closed="neither").convert(0.5)
    ('an int >= 1', 0.5)
    """

    def __init__(self, type, left=None, right=None, *, closed: str = "both", description: str | None = None):
        super().__init__(description)
        type = {int: numbers.Integral, float: numbers.Real}.get(type, type)
        if type not in (numbers.Integral, numbers.Real):
            raise TypeError(f"Interval type must be numbers.Integral or numbers.Real, not {type!r}")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"Interval closed must be both, left, right or neither, not {closed!r}")
        self.type, self.left, self.right, self.closed = type, left, right, closed

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
    """One of a fixed set of values; a set is described sorted. ``case_sensitive=False`` (scheme
    names only) returns the choice as spelled in ``choices``. A bool never matches the int 1.
    """

    def __init__(self, choices, *, case_sensitive: bool = True, description: str | None = None):
        super().__init__(description)
        self.choices = tuple(sorted(choices, key=str) if isinstance(choices, (set, frozenset)) else choices)
        if not self.choices:
            raise ValueError("Options needs at least one choice")
        self.case_sensitive = bool(case_sensitive)

    def describe(self) -> str:
        if len(self.choices) == 1:
            return repr(self.choices[0])
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def convert(self, value, name: str = "value"):
        if isinstance(value, str) and not self.case_sensitive:
            for c in self.choices:
                if isinstance(c, str) and c.lower() == value.lower():
                    return c
            raise Rejected()
        try:
            hash(value)             # arrays, lists, dicts: never a choice
        except TypeError:
            raise Rejected() from None
        for c in self.choices:
            if _is_bool(value) != isinstance(c, bool) or isinstance(value, str) != isinstance(c, str):
                continue
            if isinstance(c, numbers.Integral) and not isinstance(value, numbers.Integral):
                continue                    # 1.0 is not the int choice 1
            try:
                if bool(value == c):
                    return c
            except (TypeError, ValueError, RuntimeError):   # e.g. a tensor of several entries
                continue
        raise Rejected()


class Satisfies(Constraint):
    """A value for which ``test(value)`` is true, described by ``description`` (returned unchanged)."""

    def __init__(self, test, description: str):
        super().__init__(description)
        self.test = test

    def convert(self, value, name: str = "value"):
        if not self.test(value):
            raise Rejected()
        return value


def InstanceOf(types, description: str | None = None) -> Constraint:
    """An instance of a type or of one of several types."""
    types = types if isinstance(types, tuple) else (types,)
    words = description or "an instance of " + " or ".join(t.__name__ for t in types)
    return Satisfies(lambda v: isinstance(v, types), words)


def IsNone() -> Constraint:
    """The value ``None`` (what ``None`` in a list of constraints means)."""
    return Satisfies(lambda v: v is None, "None")


def Callable(description: str | None = None) -> Constraint:
    """A callable (function, class, object with ``__call__``)."""
    return Satisfies(callable, description or "a callable")


def NonEmptyStr() -> Constraint:
    """A str with a non-blank character (a name: a notebook, a model, a data set)."""
    return Satisfies(lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty str")


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


class NoneOr(AnyOf):
    """``None`` or a value satisfying ``constraint`` (described as "... or None")."""

    def __init__(self, constraint, description: str | None = None):
        super().__init__(constraint, IsNone(), description=description)


def Seed(generator: bool = False) -> Constraint:
    """A seed: an int >= 0 (never None: every number is reproducible), or also a Generator."""
    seed = Interval(numbers.Integral, 0, None)
    return AnyOf(seed, InstanceOf(np.random.Generator, "a numpy.random.Generator")) if generator else seed


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


def _sequence(value) -> bool:
    return not isinstance(value, (str, bytes, Mapping)) and np.ndim(value) == 1


_PLURALS = (("an int", "ints"), ("a finite real number", "finite reals"), ("a float", "floats"),
            ("a str", "str"), ("a non-empty str", "non-empty str"))


class ListOf(Constraint):
    """A sequence (a list, tuple or 1-D array; never a str or mapping) of entries that satisfy
    ``entry``, returned as a list (a tuple with ``as_tuple``) of the converted entries.

    >>> from numbers import Integral
    >>> ListOf(Interval(Integral, 0, None)).convert(np.array([0, 20, 35]))
    [0, 20, 35]
    >>> ListOf(Interval(Integral, 0, None), distinct=True).description
    'a non-empty sequence of distinct ints >= 0'
    """

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
        size = {0: "a sequence", 1: "a non-empty sequence"}.get(self.min_len, f"a sequence of at least {self.min_len}")
        return f"{size} of {'distinct ' if self.distinct else ''}{words}"

    def convert(self, value, name: str = "value"):
        if not _sequence(value):
            raise Rejected()
        out = []
        for i, v in enumerate(value):
            try:
                out.append(self.entry.convert(v, f"{name}[{i}]"))
            except Rejected as err:
                integral = isinstance(self.entry, Interval) and self.entry.type is numbers.Integral
                raise Rejected(err.detail or f"{name}[{i}] = {v!r}" + (
                    " is not an int" if integral and not _is_int(v) else "")) from None
        if len(out) < self.min_len:
            raise Rejected(f"it has {len(out)} entries")
        if self.distinct and len(set(out)) != len(out):
            raise Rejected("it repeats an entry")
        return tuple(out) if self.as_tuple else out


class Frame(Constraint):
    """A pandas DataFrame with the given columns (returned as it is)."""

    def __init__(self, columns=(), description: str | None = None):
        super().__init__(description)
        self.columns = tuple(columns)

    def describe(self) -> str:
        return "a pandas.DataFrame" + (f" with columns {', '.join(self.columns)}" if self.columns else "")

    def convert(self, value, name: str = "value"):
        pd = sys.modules.get("pandas")
        if pd is None or not isinstance(value, pd.DataFrame):
            raise Rejected()
        missing = [c for c in self.columns if c not in value.columns]
        if missing:
            raise Rejected(f"it has no column {', '.join(map(repr, missing))}")
        return value


class _Columns(Constraint):
    def describe(self) -> str:
        return "a column name or a list of column names"

    def convert(self, value, name: str = "value"):
        if isinstance(value, str):
            return [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise Rejected()
        return list(value)


#: a column name or a list of them, as a list
COLUMNS = _Columns()


def make_constraint(constraint) -> Constraint:
    """A constraint as it is; ``None`` -> :class:`IsNone`; a type (or tuple of types) ->
    :class:`InstanceOf`; a list -> :class:`AnyOf` of its items."""
    if isinstance(constraint, Constraint):
        return constraint
    if constraint is None:
        return IsNone()
    if isinstance(constraint, type) or (isinstance(constraint, tuple) and constraint
                                        and all(isinstance(t, type) for t in constraint)):
        return InstanceOf(constraint)
    if isinstance(constraint, list):
        return AnyOf(*constraint)
    raise TypeError(f"not a constraint: {constraint!r}")


#: a random generator argument (never a seed or None: the caller owns the stream)
GENERATOR = InstanceOf(np.random.Generator, "a numpy.random.Generator (np.random.default_rng(seed))")
#: a flag
BOOL = InstanceOf((bool, np.bool_), "a bool")
#: a name that must not be empty (a notebook, a model, a data set)
NAME = NonEmptyStr()
#: a name stored in a column (model, dataset, regime)
TEXT = InstanceOf(str, "a str")
#: a seed (an int >= 0), or one or a generator
SEED, SEED_OR_GENERATOR = Seed(), Seed(generator=True)
#: a smoothing parameter (a finite real >= 0), or that or "gcv" (generalised cross-validation)
LAM = Interval(numbers.Real, 0, None)
LAM_OR_GCV = AnyOf(LAM, Options(("gcv",)))


# --------------------------------------------------------------------------- use
def validate(value, constraint, name: str, owner: str):
    """Return ``value`` checked against ``constraint`` (converted), or raise :func:`invalid`'s error.

    >>> validate(None, [Interval(int, 1, None), None], "load", "f") is None
    True
    """
    c = make_constraint(constraint)
    try:
        return c.convert(value, name)
    except Rejected as err:
        raise invalid(name, owner, err.requirement or c.description, value, err.detail) from None


_STATE = threading.local()     # .skip: nested calls skip validation; .owner: the entry point called


@contextlib.contextmanager
def entry(owner: str):
    """Within the block, library functions that report as :func:`caller` name ``owner`` (the entry
    point the user called, when it is built on another: ``select_lambdas`` on ``run_trials``)."""
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
    validation: they get the library's own, already checked values (what keeps hot loops cheap).

    >>> from numbers import Real
    >>> class Model:
    ...     @validate_params({"rate": Interval(Real, 0, None, closed="neither")})
    ...     def __init__(self, rate=1.0):
    ...         self.rate = rate
    >>> Model(2).rate
    2.0
    >>> Model(rate=-1)
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'rate' parameter of Model must be a finite real number > 0. Got -1 instead.
    """
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
            given = bound.arguments
            for name, c in compiled.items():
                if name in given:
                    given[name] = validate(given[name], c, name, who)
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
    """``validate(value, Interval(Integral, minimum, maximum), name, owner)``; ``constraint``
    rewords the requirement (``"an int >= n_inputs"``)."""
    return validate(value, Interval(numbers.Integral, minimum, maximum, description=constraint), name, owner)


def check_real(value, name: str, owner: str, minimum: float | None = None, maximum: float | None = None,
               include_min: bool = True, include_max: bool = True, constraint: str | None = None) -> float:
    """A finite Python float within the bounds (``Interval(Real, ...)``)."""
    closed = {(True, True): "both", (True, False): "left", (False, True): "right",
              (False, False): "neither"}[(bool(include_min), bool(include_max))]
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


def check_seed(seed, name: str, owner: str, generator: bool = False):
    """A seed (:data:`SEED`; with ``generator``, :data:`SEED_OR_GENERATOR`)."""
    return validate(seed, SEED_OR_GENERATOR if generator else SEED, name, owner)


# The array constraints and checks (ArrayLike, Points, check_received, check_finite, ...) live in
# gcc._array_constraints, which builds on the names above; they are part of this module's API.
from ._array_constraints import (ArrayLike, Points, as_array, check_finite, check_labels,  # noqa: E402
                                 check_leading_dim, check_points, check_received, entry_name, first_index)
