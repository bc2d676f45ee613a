"""Constraint objects of the declarative validator (re-exported by :mod:`gcc.validation`).

Each constraint tests a value, converts it (``numpy.int64(4)`` -> ``4``, a list -> an array)
and describes itself in words for the one error message of the library, built by
:func:`gcc.validation.invalid`::

    The 'n_workers' parameter of SplineCode must be an int >= n_inputs. Got 3 instead.

A constraint never formats that message: :meth:`Constraint.convert` raises :class:`Rejected`
(optionally with a detail such as ``"alphas[2] = 0.1 is not greater than alphas[1] = 0.2"``)
and :func:`gcc.validation.validate` turns it into the ``ValueError``. The array constraints
(``ArrayLike``, ``Points``) are in :mod:`gcc._array_constraints`. This module imports numpy
only, so that :mod:`gcc.validation` stays at the bottom of the library.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "Rejected",
    "Constraint",
    "Interval",
    "Options",
    "InstanceOf",
    "AnyOf",
    "NoneOr",
    "IsNone",
    "Callable",
    "Seed",
    "HasAttributes",
    "make_constraint",
]

_CLOSED = ("both", "left", "right", "neither")


class Rejected(Exception):
    """Raised by :meth:`Constraint.convert` for a value that does not satisfy the constraint.

    Parameters
    ----------
    detail : str, optional
        What exactly is wrong, shown in parentheses after the requirement.
    requirement : str, optional
        Replaces the constraint's description in the message (a compound constraint names the
        part that failed, e.g. ``"... of length n_inputs = 4"``).
    """

    def __init__(self, detail: str | None = None, requirement: str | None = None):
        super().__init__(detail)
        self.detail = detail
        self.requirement = requirement


class Constraint:
    """Base class: a requirement that can test, convert and describe a value.

    Subclasses implement :meth:`convert` and :meth:`describe`. ``description`` (a keyword of
    every subclass) overrides the generated wording, e.g. ``"an int >= n_inputs"``.
    """

    def __init__(self, description: str | None = None):
        self._description = description

    @property
    def description(self) -> str:
        """The requirement in words, as it follows "must be" in the error message."""
        return self._description if self._description is not None else self.describe()

    def describe(self) -> str:
        """Generated description (used when none was given)."""
        raise NotImplementedError

    def convert(self, value, name: str = "value"):
        """Return ``value`` normalised, or raise :class:`Rejected`.

        ``name`` is the argument's name, for details that point at an entry (``x[2]``).
        """
        raise NotImplementedError

    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` satisfies the constraint."""
        try:
            self.convert(value)
        except Rejected:
            return False
        return True

    def __str__(self) -> str:
        return self.description

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.description}>"


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


class Interval(Constraint):
    """A number of a given type within (possibly open, possibly unbounded) bounds.

    Parameters
    ----------
    type : numbers.Integral or numbers.Real (or int, float)
        Integral accepts Python and numpy integers (never bools) and returns an ``int``;
        Real accepts any finite real number (never a bool, NaN or inf) and returns a ``float``.
    left, right : number or None
        Bounds; ``None`` leaves that side unbounded.
    closed : {"both", "left", "right", "neither"}
        Which bounds belong to the interval.
    description : str, optional
        Wording override, e.g. ``"an int >= n_inputs"`` for a bound that is another argument.

    Examples
    --------
    >>> from numbers import Integral, Real
    >>> import numpy as np
    >>> from gcc.validation import Interval
    >>> Interval(Integral, 1, None, closed="left").description
    'an int >= 1'
    >>> Interval(Real, 0, None, closed="left").description
    'a finite real number >= 0'
    >>> Interval(Real, 0, 1, closed="neither").description
    'a float in (0, 1)'
    >>> Interval(Integral, 0, 8).convert(np.int64(3)), Interval(Real, 0, 1).convert(1)
    (3, 1.0)
    >>> Interval(Integral, 1, None).is_satisfied_by(2.0)
    False
    """

    def __init__(self, type, left=None, right=None, *, closed: str = "both",
                 description: str | None = None):
        super().__init__(description)
        if type is int:
            type = numbers.Integral
        elif type is float:
            type = numbers.Real
        if type not in (numbers.Integral, numbers.Real):
            raise TypeError(f"Interval type must be numbers.Integral or numbers.Real, not {type!r}")
        if closed not in _CLOSED:
            raise ValueError(f"Interval closed must be one of {_CLOSED}, not {closed!r}")
        # An empty interval (right < left) is allowed: it rejects every value with its message.
        self.type, self.left, self.right, self.closed = type, left, right, closed

    @property
    def _left_closed(self) -> bool:
        return self.closed in ("both", "left")

    @property
    def _right_closed(self) -> bool:
        return self.closed in ("both", "right")

    def describe(self) -> str:
        integral = self.type is numbers.Integral
        if self.left is not None and self.right is not None:
            open_, close = "[" if self._left_closed else "(", "]" if self._right_closed else ")"
            kind = "an int" if integral else "a float"
            return f"{kind} in {open_}{self.left}, {self.right}{close}"
        kind = "an int" if integral else "a finite real number"
        if self.left is not None:
            return f"{kind} {'>=' if self._left_closed else '>'} {self.left}"
        if self.right is not None:
            return f"{kind} {'<=' if self._right_closed else '<'} {self.right}"
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
        if self.left is not None and (x < self.left or (x == self.left and not self._left_closed)):
            raise Rejected()
        if self.right is not None and (x > self.right or (x == self.right and not self._right_closed)):
            raise Rejected()
        return x


class Options(Constraint):
    """One of a fixed set of values (strings, ints, ...).

    Parameters
    ----------
    choices : iterable
        Allowed values; a set is described in sorted order, a sequence in its own order.
    case_sensitive : bool
        False compares strings case-insensitively and returns the choice as spelled in
        ``choices``. The library uses it for names of schemes only (``"GCC"``, ``"RCSC"``);
        options of a function (``setting``, ``points``, ...) are exact.
    description : str, optional

    Examples
    --------
    >>> from gcc.validation import Options
    >>> Options({"chebyshev", "equispaced"}).description
    "one of 'chebyshev', 'equispaced'"
    >>> Options(("rcsc", "mds"), case_sensitive=False).convert("RCSC")
    'rcsc'
    >>> Options((1, 2)).is_satisfied_by(True)      # a bool is not the int 1
    False
    """

    def __init__(self, choices, *, case_sensitive: bool = True, description: str | None = None):
        super().__init__(description)
        if isinstance(choices, (set, frozenset)):
            choices = sorted(choices, key=str)
        self.choices = tuple(choices)
        if not self.choices:
            raise ValueError("Options needs at least one choice")
        self.case_sensitive = bool(case_sensitive)

    def describe(self) -> str:
        if len(self.choices) == 1:
            return repr(self.choices[0])
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def convert(self, value, name: str = "value"):
        if isinstance(value, str) and not self.case_sensitive:
            key = value.lower()
            for c in self.choices:
                if isinstance(c, str) and c.lower() == key:
                    return c
            raise Rejected()
        try:
            hash(value)             # arrays, lists, dicts: never a choice
        except TypeError:
            raise Rejected() from None
        for c in self.choices:
            # True == 1 in Python: a bool only matches a bool choice
            if _is_bool(value) != isinstance(c, bool) or isinstance(value, str) != isinstance(c, str):
                continue
            if isinstance(c, numbers.Integral) and not isinstance(value, numbers.Integral):
                continue                    # 1.0 is not the int choice 1 (nor an array of it)
            try:
                if bool(value == c):
                    return c
            except (TypeError, ValueError, RuntimeError):   # e.g. a tensor of several entries
                continue
        raise Rejected()


class InstanceOf(Constraint):
    """An instance of a type (or of one of several types); the value is returned unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.validation import InstanceOf
    >>> InstanceOf(dict).description
    'an instance of dict'
    >>> InstanceOf((bool, np.bool_), "a bool").description
    'a bool'
    """

    def __init__(self, types, description: str | None = None):
        super().__init__(description)
        self.types = types if isinstance(types, tuple) else (types,)

    def describe(self) -> str:
        return "an instance of " + " or ".join(t.__name__ for t in self.types)

    def convert(self, value, name: str = "value"):
        if not isinstance(value, self.types):
            raise Rejected()
        return value


class IsNone(Constraint):
    """The value ``None`` (what ``None`` in a list of constraints means)."""

    def describe(self) -> str:
        return "None"

    def convert(self, value, name: str = "value"):
        if value is not None:
            raise Rejected()
        return None


class AnyOf(Constraint):
    """Any of several constraints (the first that accepts the value converts it).

    A list of constraints given to :func:`gcc.validation.validate` means the same.

    Examples
    --------
    >>> from numbers import Real
    >>> from gcc.validation import AnyOf, Interval, Options
    >>> lam = AnyOf(Interval(Real, 0, None), Options({"gcv"}))
    >>> lam.description
    "a finite real number >= 0 or 'gcv'"
    >>> lam.convert("gcv"), lam.convert(0)
    ('gcv', 0.0)
    """

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
                if err.detail:
                    details.append(err.detail)
        # A detail is shown only when one alternative alone explains the failure.
        raise Rejected(details[0] if len(details) == 1 else None)


class NoneOr(AnyOf):
    """``None`` or a value satisfying ``constraint``.

    Examples
    --------
    >>> from numbers import Integral
    >>> from gcc.validation import Interval, NoneOr
    >>> NoneOr(Interval(Integral, 1, None)).description
    'an int >= 1 or None'
    """

    def __init__(self, constraint, description: str | None = None):
        super().__init__(constraint, IsNone(), description=description)


class Callable(Constraint):
    """A callable (function, class, object with ``__call__``).

    Examples
    --------
    >>> from gcc.validation import Callable
    >>> Callable().is_satisfied_by(len), Callable().description
    (True, 'a callable')
    """

    def describe(self) -> str:
        return "a callable"

    def convert(self, value, name: str = "value"):
        if not callable(value):
            raise Rejected()
        return value


class Seed(Constraint):
    """A seed: an int >= 0 (numpy's ``SeedSequence`` entropy), or also a Generator if allowed.

    ``None`` (fresh OS entropy) is never a seed: every number of the library is reproducible.

    Parameters
    ----------
    generator : bool
        Also accept a ``numpy.random.Generator`` (returned as it is).

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.validation import Seed
    >>> Seed().convert(np.int64(3)), Seed(generator=True).description
    (3, 'an int >= 0 or a numpy.random.Generator')
    >>> Seed().is_satisfied_by(-1), Seed().is_satisfied_by(1.0), Seed().is_satisfied_by(None)
    (False, False, False)
    """

    def __init__(self, generator: bool = False, description: str | None = None):
        super().__init__(description)
        self.generator = bool(generator)

    def describe(self) -> str:
        return "an int >= 0 or a numpy.random.Generator" if self.generator else "an int >= 0"

    def convert(self, value, name: str = "value"):
        if self.generator and isinstance(value, np.random.Generator):
            return value
        if _is_bool(value) or not isinstance(value, numbers.Integral) or value < 0:
            raise Rejected()
        return int(value)


class HasAttributes(Constraint):
    """An object with the given attributes (duck typing), e.g. a code's ``encode`` and ``decode``.

    Parameters
    ----------
    names : sequence of str
        Attributes the value must have.
    callables : sequence of str
        Those of ``names`` that must be callable (methods).
    description : str, optional

    Examples
    --------
    >>> from gcc.validation import HasAttributes
    >>> code = HasAttributes(("n_workers", "decode"), callables=("decode",))
    >>> code.description
    'an object with n_workers and decode()'
    >>> code.is_satisfied_by(3)
    False
    """

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


def make_constraint(constraint) -> Constraint:
    """The :class:`Constraint` a shorthand stands for.

    A constraint is returned as it is; ``None`` means :class:`IsNone`; a type (or tuple of
    types) means :class:`InstanceOf`; a list means :class:`AnyOf` of its items.

    Examples
    --------
    >>> from numbers import Integral
    >>> from gcc.validation import Interval, make_constraint
    >>> make_constraint([Interval(Integral, 1, None), None]).description
    'an int >= 1 or None'
    """
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


class NonEmptyStr(Constraint):
    """A str with at least one non-blank character (a name: a notebook, a model, a data set)."""

    def describe(self) -> str:
        return "a non-empty str"

    def convert(self, value, name: str = "value"):
        if not isinstance(value, str) or not value.strip():
            raise Rejected()
        return value
