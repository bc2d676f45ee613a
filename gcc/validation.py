"""The library's one validator: constraint objects, one message builder, ``check_*`` helpers.

Every public function of :mod:`gcc` checks its arguments here so that all errors read the
same way (the scikit-learn convention)::

    The 'n_workers' parameter of LagrangeCode must be an int >= n_inputs. Got 3 instead.

:func:`invalid` is the only place that message is formatted. Arguments are described by
constraint objects (:class:`Interval`, :class:`Options`, :class:`InstanceOf`, :class:`NoneOr`,
:class:`AnyOf`, :class:`Callable`, :class:`ArrayLike`, :class:`Points`, defined in
:mod:`gcc._constraints` and re-exported here), which test, convert and describe a value.
There are three ways to use them:

* ``@validate_params({"n": Interval(Integral, 1, None), ...})`` on a function: every argument
  the caller passed is checked and converted before the body runs (defaults are trusted);
* ``x = validate(x, constraint, "x", owner)`` inside a function, where the constraint depends
  on other arguments (``Interval(Integral, 0, n_workers - 1)``) or the owner is dynamic;
* the ``check_*`` helpers, shorthands for the common cases (and the array checks that need
  more than a constraint: :func:`check_received`, :func:`check_finite`,
  :func:`check_leading_dim`).

What every public function promises: a ``ValueError`` (a ``TypeError`` only where Python
raises one itself, e.g. for a missing argument) in the form above, or a correct result.
Never a silent NaN, a truncation (``1.7`` read as worker ``1``, a complex value read as its
real part) or a wrong answer. Seeds are ints >= 0 (:class:`Seed`; where documented also a
``numpy.random.Generator``), never ``None``; a random generator argument is a
``numpy.random.Generator`` (:data:`GENERATOR`).

Complex data, decided once for the library: they are **supported where the operation is
linear or a norm** -- the codes' encoders and decoders, the smoothing splines, the harness,
the adversary and the losses (the loss of eq. (1) is ``|e|^2``, the RMSE its root) -- and
**rejected with the contract message where they have no meaning**: labels and class scores
(:func:`gcc.metrics.accuracy`), smoothing parameters, points, probabilities, delays, times
and speeds (:mod:`gcc.cpgc`, :mod:`gcc.distributed`), summaries and intervals
(:func:`gcc.metrics.mean_ci`, :func:`gcc.summary.summarize`). A constraint never casts a
complex value to a real one: ``ArrayLike(dtype=float)`` and :class:`Points` reject it.
NaN in data is not an argument error: a NaN estimate gives a NaN loss (and a NaN accuracy,
never a guessed class), which the summaries count in ``n_nan``.

Examples
--------
>>> from numbers import Integral, Real
>>> from gcc.validation import Interval, Options, validate, validate_params
>>> @validate_params({"n": Interval(Integral, 1, None), "kind": Options({"a", "b"})})
... def f(n, kind="a"):
...     return n, kind
>>> f(3, "b")
(3, 'b')
>>> f(0)
Traceback (most recent call last):
...
ValueError: The 'n' parameter of f must be an int >= 1. Got 0 instead.
>>> validate(0.5, Interval(Real, 0, 1, closed="left"), "q", "g")
0.5
"""
from __future__ import annotations

import functools
import inspect
import numbers
import sys

import numpy as np

from ._array_constraints import ArrayLike, Points
from ._constraints import (AnyOf, Callable, Constraint, HasAttributes, InstanceOf, Interval, IsNone,
                           NonEmptyStr, NoneOr, Options, Rejected, Seed, make_constraint)

__all__ = [
    # constraints
    "Constraint", "Rejected", "Interval", "Options", "InstanceOf", "AnyOf", "NoneOr", "IsNone",
    "Callable", "ArrayLike", "Points", "Seed", "HasAttributes", "make_constraint",
    "NonEmptyStr", "GENERATOR", "BOOL", "SEED", "SEED_OR_GENERATOR", "NAME",
    # the message and its use
    "short_repr", "invalid", "raise_invalid", "validate", "validate_params",
    # shorthands
    "check_int", "check_real", "check_lam", "check_points", "check_received", "check_finite",
    "check_leading_dim", "check_choice", "check_rng", "check_seed",
]

#: a random generator argument (never a seed or None: the caller owns the stream)
GENERATOR = InstanceOf(np.random.Generator, "a numpy.random.Generator (np.random.default_rng(seed))")
#: a flag
BOOL = InstanceOf((bool, np.bool_), "a bool")
#: a name that must not be empty (a notebook, a model, a data set)
NAME = NonEmptyStr()
#: a seed (an int >= 0)
SEED = Seed()
#: a seed or the generator to draw from
SEED_OR_GENERATOR = Seed(generator=True)


def short_repr(value) -> str:
    """Short, readable representation of a (possibly large) argument for error messages.

    (How a number reads on a page is :func:`gcc.display.format_value`.)

    Arrays are printed with at most a few entries per axis; torch tensors are described by
    their shape, dtype and device plus their first entries.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.validation import short_repr
    >>> short_repr(np.zeros((20, 30)))[:43]
    'array of shape (20, 30) and dtype float64: '
    >>> short_repr("gcv")
    "'gcv'"
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


def invalid(name: str, owner: str, constraint, value, detail: str | None = None) -> ValueError:
    """Build (without raising) the library's standard ValueError: the one message builder.

    For code that raises the error itself, e.g. ``raise invalid(...) from None``.

    Parameters
    ----------
    name : str
        Name of the offending argument.
    owner : str
        Class or function that received it (e.g. ``"SplineCode"`` or ``"smoother_matrix"``).
    constraint : str or Constraint
        What the argument must be (e.g. ``"an int >= 1"``); a constraint object is described by
        its :attr:`~Constraint.description`.
    value : object
        The bad value; shown with :func:`short_repr`.
    detail : str, optional
        Extra explanation (e.g. which entry is wrong), inserted in parentheses.

    Returns
    -------
    ValueError

    Examples
    --------
    >>> from gcc.validation import invalid
    >>> str(invalid("n_workers", "SplineCode", "an int >= n_inputs", 3))
    "The 'n_workers' parameter of SplineCode must be an int >= n_inputs. Got 3 instead."
    """
    if isinstance(constraint, Constraint):
        constraint = constraint.description
    extra = f" ({detail})" if detail else ""
    return ValueError(
        f"The '{name}' parameter of {owner} must be {constraint}{extra}. "
        f"Got {short_repr(value)} instead."
    )


def raise_invalid(name: str, owner: str, constraint, value, detail: str | None = None):
    """Raise the library's standard ValueError (the arguments are those of :func:`invalid`).

    Examples
    --------
    >>> from gcc.validation import raise_invalid
    >>> raise_invalid("kind", "chebyshev_points", "1 or 2", 3)
    Traceback (most recent call last):
    ...
    ValueError: The 'kind' parameter of chebyshev_points must be 1 or 2. Got 3 instead.
    """
    raise invalid(name, owner, constraint, value, detail)


def validate(value, constraint, name: str, owner: str):
    """Check ``value`` against a constraint and return it converted, or raise the ValueError.

    Parameters
    ----------
    value : object
    constraint : Constraint, list, type or None
        A constraint object, or a shorthand of :func:`make_constraint` (a list means "any of").
    name, owner : str
        Argument and receiver, for the message.

    Returns
    -------
    object
        The converted value (``int`` for :class:`Interval` of Integral, ``float`` for Real,
        an ndarray for :class:`ArrayLike` and :class:`Points`, the choice for :class:`Options`).

    Examples
    --------
    >>> from numbers import Integral
    >>> import numpy as np
    >>> from gcc.validation import Interval, validate
    >>> validate(np.int64(4), Interval(Integral, 1, None), "n", "f")
    4
    >>> validate(None, [Interval(Integral, 1, None), None], "load", "f") is None
    True
    >>> validate(0, Interval(Integral, 1, None, description="an int >= n_inputs"), "n_workers", "SplineCode")
    Traceback (most recent call last):
    ...
    ValueError: The 'n_workers' parameter of SplineCode must be an int >= n_inputs. Got 0 instead.
    """
    c = make_constraint(constraint)
    try:
        return c.convert(value, name)
    except Rejected as err:
        raise invalid(name, owner, err.requirement or c.description, value, err.detail) from None


def _owner_of(func) -> str:
    parts = func.__qualname__.split(".")
    if "<locals>" in parts:
        return func.__name__
    if func.__name__ == "__init__" and len(parts) > 1:
        return parts[-2]                 # a constructor's errors name the class
    return func.__qualname__


def validate_params(constraints: dict, owner: str | None = None):
    """Decorator: validate and convert the arguments of a function before it runs.

    Parameters
    ----------
    constraints : dict
        ``{parameter name: constraint or list of constraints}``; parameters left out are not
        checked. Every name must be a parameter of the decorated function.
    owner : str, optional
        Name in the messages; default the function's qualified name (the class name for
        ``__init__``).

    Returns
    -------
    callable
        The decorator. The wrapped function receives the converted values of the arguments
        the caller passed; defaults are passed as they are (the author chose them). The
        constraints are kept in the wrapper's ``parameter_constraints`` attribute.

    Notes
    -----
    Binding the arguments costs a few microseconds per call: for a function called once per
    message in an inner loop, call :func:`validate` or the ``check_*`` helpers instead.

    Examples
    --------
    >>> from numbers import Integral, Real
    >>> from gcc.validation import Interval, validate_params
    >>> class Model:
    ...     @validate_params({"rate": Interval(Real, 0, None, closed="neither")})
    ...     def __init__(self, rate=1.0):
    ...         self.rate = rate
    >>> Model(2).rate
    2.0
    >>> Model(rate=-1)
    Traceback (most recent call last):
    ...
    ValueError: The 'rate' parameter of Model must be a finite real number > 0. Got -1 instead.
    """
    compiled = {name: make_constraint(c) for name, c in constraints.items()}

    def decorator(func):
        sig = inspect.signature(func)
        unknown = sorted(set(compiled) - set(sig.parameters))
        if unknown:
            raise TypeError(f"validate_params: {func.__qualname__} has no parameter(s) {unknown}")
        who = owner or _owner_of(func)
        kinds = [p.kind for p in sig.parameters.values()]
        # Without *args/**kwargs/positional-only parameters an argument is found by its position
        # or its keyword directly (several times faster than Signature.bind).
        plain = all(k in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
                    for k in kinds)
        position = {name: i for i, (name, p) in enumerate(sig.parameters.items())
                    if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if plain:
                args = list(args)
                for name, c in compiled.items():
                    i = position.get(name)
                    if i is not None and i < len(args):
                        args[i] = validate(args[i], c, name, who)
                    elif name in kwargs:
                        kwargs[name] = validate(kwargs[name], c, name, who)
                return func(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            given = bound.arguments
            for name, c in compiled.items():
                if name in given:
                    given[name] = validate(given[name], c, name, who)
            return func(*bound.args, **bound.kwargs)

        wrapper.parameter_constraints = compiled
        return wrapper

    return decorator


def check_int(value, name: str, owner: str, minimum: int | None = None,
              maximum: int | None = None, constraint: str | None = None) -> int:
    """Return ``value`` as a Python int if it is an integer (not a bool) in ``[minimum, maximum]``.

    ``constraint`` overrides the wording of the requirement, e.g. ``"an int >= n_inputs"``.
    The same as ``validate(value, Interval(Integral, minimum, maximum), name, owner)``.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.validation import check_int
    >>> check_int(np.int64(4), "n", "f", minimum=1)
    4
    >>> check_int(9, "n_random_slow", "Injection", 0, 8)
    Traceback (most recent call last):
    ...
    ValueError: The 'n_random_slow' parameter of Injection must be an int in [0, 8]. Got 9 instead.
    """
    return validate(value, Interval(numbers.Integral, minimum, maximum, description=constraint),
                    name, owner)


def check_real(value, name: str, owner: str, minimum: float | None = None,
               maximum: float | None = None, include_min: bool = True,
               include_max: bool = True, constraint: str | None = None) -> float:
    """Return ``value`` as a finite Python float within the given bounds.

    The same as ``validate(value, Interval(Real, minimum, maximum, closed=...), name, owner)``.

    Examples
    --------
    >>> from gcc.validation import check_real
    >>> check_real(1, "shift", "f", minimum=0)
    1.0
    >>> check_real(1.0, "p", "f", 0, 1, include_max=False)
    Traceback (most recent call last):
    ...
    ValueError: The 'p' parameter of f must be a float in [0, 1). Got 1.0 instead.
    """
    closed = {(True, True): "both", (True, False): "left", (False, True): "right",
              (False, False): "neither"}[(bool(include_min), bool(include_max))]
    return validate(value, Interval(numbers.Real, minimum, maximum, closed=closed,
                                    description=constraint), name, owner)


#: a smoothing parameter: a finite real >= 0
LAM = Interval(numbers.Real, 0, None)
#: a smoothing parameter or "gcv" (chosen by generalised cross-validation)
LAM_OR_GCV = AnyOf(LAM, Options(("gcv",)))


def check_lam(value, name: str, owner: str, allow_gcv: bool = False):
    """Validate a smoothing parameter: a finite real ``>= 0`` (or ``"gcv"`` if allowed).

    Examples
    --------
    >>> from gcc.validation import check_lam
    >>> check_lam(0, "lam", "f"), check_lam("gcv", "lam", "f", allow_gcv=True)
    (0.0, 'gcv')
    >>> check_lam("auto", "lam", "f", allow_gcv=True)
    Traceback (most recent call last):
    ...
    ValueError: The 'lam' parameter of f must be a finite real number >= 0 or 'gcv'. Got 'auto' instead.
    """
    return validate(value, LAM_OR_GCV if allow_gcv else LAM, name, owner)


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

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> from gcc.validation import check_points
    >>> check_points([-0.5, 0.2, 0.1], "alphas", "SplineCode")
    Traceback (most recent call last):
    ...
    ValueError: The 'alphas' parameter of SplineCode must be a 1-D array of strictly increasing finite points in [-1, 1] (alphas[2] = 0.1 is not greater than alphas[1] = 0.2). Got [-0.5, 0.2, 0.1] instead.
    """
    return validate(points, Points(low, high, size, size_name, min_size), name, owner)


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

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.validation import check_received
    >>> check_received(np.array([0, 3, 7]), 8, "f"), check_received(np.array([True, False, True]), 3, "f")
    ((0, 3, 7), (0, 2))
    >>> check_received([3, 1], 8, "SplineCode.decode")
    Traceback (most recent call last):
    ...
    ValueError: The 'received' parameter of SplineCode.decode must be a non-empty, strictly ascending sequence of worker indices in [0, 8) (index 1 comes after 3). Got [3, 1] instead.
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

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.validation import check_finite
    >>> check_finite(np.array([[0.0], [np.nan]]), "X", "SplineCode.encode")
    Traceback (most recent call last):
    ...
    ValueError: The 'X' parameter of SplineCode.encode must be free of NaN and inf (X[1, 0] = nan). Got array([[ 0.],
           [nan]]) instead.
    """
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(array, torch.Tensor):
        if not (array.is_floating_point() or array.is_complex()):
            return array
        ok = bool(torch.isfinite(array).all())
    else:
        if not isinstance(array, np.ndarray):
            array = validate(array, ArrayLike(), name, owner)
        if array.dtype.kind not in "fc":
            return array
        ok = bool(np.isfinite(array).all())
    if not ok:
        idx, val = _first_nonfinite(array)
        raise_invalid(name, owner, "free of NaN and inf", array, f"{name}{list(idx)} = {val!r}")
    return array


def check_leading_dim(array, size: int, name: str, owner: str, size_name: str) -> None:
    """Require an array with at least one axis whose first axis has length ``size``.

    Examples
    --------
    >>> import numpy as np
    >>> from gcc.validation import check_leading_dim
    >>> check_leading_dim(np.ones((3, 2)), 4, "X", "SplineCode.encode", "n_inputs")
    Traceback (most recent call last):
    ...
    ValueError: The 'X' parameter of SplineCode.encode must be an array of shape (n_inputs, ...) with n_inputs = 4 (its shape is (3, 2)). Got array([[1., 1.],
           [1., 1.],
           [1., 1.]]) instead.
    """
    shape = getattr(array, "shape", None)
    if shape is None:
        raise_invalid(name, owner, f"an array of shape ({size_name}, ...) with {size_name} = {size}",
                      array, f"it is a {type(array).__name__}")
    shape = tuple(shape)
    if len(shape) == 0 or shape[0] != size:
        raise_invalid(name, owner, f"an array of shape ({size_name}, ...) with {size_name} = {size}",
                      array, f"its shape is {shape}")


def check_choice(value, name: str, owner: str, choices) -> str:
    """Require ``value`` to be one of ``choices`` (exact match; see :class:`Options`).

    Examples
    --------
    >>> from gcc.validation import check_choice
    >>> check_choice("natural", "bc_type", "BSplineCode", ("not-a-knot", "natural"))
    'natural'
    >>> check_choice("Natural", "bc_type", "BSplineCode", ("not-a-knot", "natural"))
    Traceback (most recent call last):
    ...
    ValueError: The 'bc_type' parameter of BSplineCode must be one of 'not-a-knot', 'natural'. Got 'Natural' instead.
    """
    return validate(value, Options(choices), name, owner)


def check_rng(rng, name: str, owner: str) -> np.random.Generator:
    """Require a ``numpy.random.Generator`` (:data:`GENERATOR`); return it.

    Examples
    --------
    >>> from gcc.validation import check_rng
    >>> check_rng(0, "rng", "worker_speeds")
    Traceback (most recent call last):
    ...
    ValueError: The 'rng' parameter of worker_speeds must be a numpy.random.Generator (np.random.default_rng(seed)). Got 0 instead.
    """
    return validate(rng, GENERATOR, name, owner)


def check_seed(seed, name: str, owner: str, generator: bool = False):
    """Require a seed: an int >= 0 (or, with ``generator=True``, also a Generator).

    Examples
    --------
    >>> from gcc.validation import check_seed
    >>> check_seed(7, "seed", "run_trials")
    7
    >>> check_seed("7", "seed", "rcsc_code", generator=True)
    Traceback (most recent call last):
    ...
    ValueError: The 'seed' parameter of rcsc_code must be an int >= 0 or a numpy.random.Generator. Got '7' instead.
    """
    return validate(seed, SEED_OR_GENERATOR if generator else SEED, name, owner)
