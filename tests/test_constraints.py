"""The declarative validator: constraint objects, their wording, validate and validate_params.

Messages are compared exactly: the wording is the library's contract
("The 'n_workers' parameter of SplineCode must be an int >= n_inputs. Got 3 instead.").
"""
import doctest
import importlib
import re
from numbers import Integral, Real

import numpy as np
import pytest

from gcc import validation as v
from gcc.validation import (AnyOf, ArrayLike, Callable, InstanceOf, Interval, NoneOr, Options, Points,
                            make_constraint, validate, validate_params)


def _message(value, constraint, name="x", owner="f"):
    with pytest.raises(ValueError) as info:
        validate(value, constraint, name, owner)
    return str(info.value)


@pytest.mark.parametrize("constraint,text", [
    (Interval(Integral, 1, None, closed="left"), "an int >= 1"),
    (Interval(Integral, None, 5), "an int <= 5"),
    (Interval(Integral, 0, 8), "an int in [0, 8]"),
    (Interval(Integral, 0, None, closed="neither"), "an int > 0"),
    (Interval(Integral, None, None), "an int"),
    (Interval(Real, 0, None, closed="left"), "a finite real number >= 0"),
    (Interval(Real, 0, None, closed="neither"), "a finite real number > 0"),
    (Interval(Real, None, 1, closed="left"), "a finite real number < 1"),
    (Interval(Real, 0, 1, closed="neither"), "a float in (0, 1)"),
    (Interval(Real, 0, 1, closed="left"), "a float in [0, 1)"),
    (Interval(Real, 0, 1, closed="right"), "a float in (0, 1]"),
    (Interval(float, None, None), "a finite real number"),
    (Interval(Integral, 1, None, description="an int >= n_inputs"), "an int >= n_inputs"),
    (Options({"b", "a"}), "one of 'a', 'b'"),
    (Options(("rcsc", "mds")), "one of 'rcsc', 'mds'"),
    (Options(("gcv",)), "'gcv'"),
    (Options((1, 2)), "one of 1, 2"),
    (InstanceOf(dict), "an instance of dict"),
    (InstanceOf((list, tuple)), "an instance of list or tuple"),
    (InstanceOf(bool, "a bool"), "a bool"),
    (NoneOr(Interval(Integral, 1, None)), "an int >= 1 or None"),
    (AnyOf(Interval(Real, 0, None), Options(("gcv",))), "a finite real number >= 0 or 'gcv'"),
    ([Interval(Integral, 1, None), Options(("auto",)), None], "an int >= 1 or 'auto' or None"),
    (Callable(), "a callable"),
    (ArrayLike(shape=(None, 3)), "an array of shape (..., 3)"),
    (ArrayLike(shape=(4,)), "an array of shape (4,)"),
    (ArrayLike(ndim=2), "a 2-D array"),
    (Points(), "a 1-D array of strictly increasing finite points in [-1, 1]"),
    (Points(None, None), "a 1-D array of strictly increasing finite points"),
])
def test_descriptions(constraint, text):
    assert make_constraint(constraint).description == text
    assert str(make_constraint(constraint)) == text


@pytest.mark.parametrize("value,constraint,expected", [
    (np.int64(4), Interval(Integral, 1, None), 4),
    (3, Interval(Real, 0, None), 3.0),
    (np.float32(0.5), Interval(Real, 0, 1), 0.5),
    (0, Interval(Real, 0, 1, closed="left"), 0.0),
    (8, Interval(Integral, 0, 8), 8),
    ("RCSC", Options(("rcsc", "mds"), case_sensitive=False), "rcsc"),
    ("mds", Options(("rcsc", "mds")), "mds"),
    (np.int64(2), Options((1, 2)), 2),
    (None, NoneOr(Interval(Integral, 1, None)), None),
    (5, NoneOr(Interval(Integral, 1, None)), 5),
    ("gcv", [Interval(Real, 0, None), Options(("gcv",))], "gcv"),
])
def test_conversions(value, constraint, expected):
    out = validate(value, constraint, "x", "f")
    assert out == expected and type(out) is type(expected)


@pytest.mark.parametrize("value,constraint", [
    (True, Interval(Integral, 0, None)),            # a bool is not an int
    (np.bool_(True), Interval(Real, None, None)),
    (2.0, Interval(Integral, 1, None)),
    (float("nan"), Interval(Real, None, None)),
    (float("inf"), Interval(Real, 0, None)),
    (0, Interval(Real, 0, None, closed="neither")),
    (1, Interval(Real, 0, 1, closed="left")),
    ("3", Interval(Integral, None, None)),
    (3, Interval(Integral, 1, 0)),                  # an empty interval rejects everything
    (True, Options((1, 2))),
    ("1", Options((1, 2))),
    ("RCSC", Options(("rcsc",))),                   # exact by default
    (["a"], Options(("a",))),
    (np.array(["a"]), Options(("a",))),
    (1, Callable()),
    (0, InstanceOf(str)),
    ([[1, 2], [3]], ArrayLike(dtype=float)),
])
def test_rejections(value, constraint):
    c = make_constraint(constraint)
    assert not c.is_satisfied_by(value)
    with pytest.raises(ValueError, match=r"^The 'x' parameter of f must be .* instead\.$"):
        validate(value, c, "x", "f")


def test_the_contract_message_exactly():
    c = Interval(Integral, 5, None, description="an int >= n_inputs")
    assert _message(3, c, "n_workers", "SplineCode") == (
        "The 'n_workers' parameter of SplineCode must be an int >= n_inputs. Got 3 instead.")
    assert _message(1.2, Interval(Real, 0, 1, closed="left"), "tolerance", "simulate") == (
        "The 'tolerance' parameter of simulate must be a float in [0, 1). Got 1.2 instead.")
    assert _message("x", Options({"a", "b"}), "kind", "g") == (
        "The 'kind' parameter of g must be one of 'a', 'b'. Got 'x' instead.")
    assert _message(0, [Interval(Integral, 1, None), None], "load", "h") == (
        "The 'load' parameter of h must be an int >= 1 or None. Got 0 instead.")


def test_details_of_arrays_and_points():
    assert _message(np.zeros(3), ArrayLike(ndim=3, dtype=bool, description="a boolean array of shape (s, t, k)"),
                    "masks", "gradient_descent") == (
        "The 'masks' parameter of gradient_descent must be a boolean array of shape (s, t, k) "
        "(it has shape (3,)). Got array([0., 0., 0.]) instead.")
    assert _message([[1.0, 2.0]], ArrayLike(shape=(None, 3)), "speeds", "completion") == (
        "The 'speeds' parameter of completion must be an array of shape (..., 3) (it has shape (1, 2)). "
        "Got [[1.0, 2.0]] instead.")
    assert _message([-0.5, 0.5], Points(size=4, size_name="n_inputs"), "alphas", "SplineCode") == (
        "The 'alphas' parameter of SplineCode must be a 1-D array of strictly increasing finite points "
        "in [-1, 1] of length n_inputs = 4 (it has length 2). Got [-0.5, 0.5] instead.")
    assert _message([0.0, 1.0, 1.0], Points(None, None), "x", "smoother_matrix") == (
        "The 'x' parameter of smoother_matrix must be a 1-D array of strictly increasing finite points "
        "(x[2] = 1.0 is duplicated). Got [0.0, 1.0, 1.0] instead.")
    # AnyOf passes the detail on when only one alternative explains the failure
    assert "(it has length 1)" in _message([0.0], NoneOr(Points(min_size=2)))


def test_check_helpers_share_the_wording():
    with pytest.raises(ValueError, match=re.escape("must be an int in [0, 8]. Got 9 instead.")):
        v.check_int(9, "n", "f", 0, 8)
    with pytest.raises(ValueError, match=re.escape("must be an int >= 1. Got 0 instead.")):
        v.check_int(0, "n", "f", minimum=1)
    with pytest.raises(ValueError, match=re.escape("must be a finite real number > 0. Got 0 instead.")):
        v.check_real(0, "rate", "f", minimum=0, include_min=False)
    with pytest.raises(ValueError, match=re.escape("must be a float in (0, 1). Got 1 instead.")):
        v.check_real(1, "p", "f", 0, 1, include_min=False, include_max=False)
    with pytest.raises(ValueError, match=re.escape("must be one of 'a', 'b'. Got 'A' instead.")):
        v.check_choice("A", "k", "f", ("a", "b"))
    with pytest.raises(ValueError, match=re.escape("must be a finite real number >= 0 or 'gcv'. Got 'x'")):
        v.check_lam("x", "lam", "f", allow_gcv=True)
    with pytest.raises(ValueError, match=re.escape("must be a finite real number >= 0. Got 'gcv'")):
        v.check_lam("gcv", "lam", "f")
    # a constraint object is described by the message builder itself
    assert str(v.invalid("n", "f", Interval(Integral, 1, None), 0)) == (
        "The 'n' parameter of f must be an int >= 1. Got 0 instead.")


class _Model:
    @validate_params({"rate": Interval(Real, 0, None, closed="neither"), "kind": Options(("a", "b"))})
    def __init__(self, rate=1.0, kind="a"):
        self.rate, self.kind = rate, kind

    @validate_params({"n": Interval(Integral, 0, None)})
    def step(self, n):
        return n


@validate_params({"n": Interval(Integral, 1, None), "load": NoneOr(Interval(Integral, 1, None))})
def _f(n, load=None, *, label="x"):
    return n, load, label


def test_validate_params_decorator():
    assert _f(np.int64(3)) == (3, None, "x") and type(_f(np.int64(3))[0]) is int
    assert _f(3, load=2, label="y") == (3, 2, "y")
    with pytest.raises(ValueError, match=re.escape("The 'n' parameter of _f must be an int >= 1. Got 0 instead.")):
        _f(0)
    with pytest.raises(ValueError, match=re.escape("The 'load' parameter of _f must be an int >= 1 or None.")):
        _f(1, 0)
    assert _Model(2).rate == 2.0 and type(_Model(2).rate) is float
    with pytest.raises(ValueError, match=re.escape("The 'kind' parameter of _Model must be one of 'a', 'b'.")):
        _Model(kind="c")
    with pytest.raises(ValueError, match=re.escape("The 'n' parameter of _Model.step must be an int >= 0.")):
        _Model().step(-1)
    with pytest.raises(TypeError):                         # a wrong call is still a TypeError
        _f()
    assert set(_f.parameter_constraints) == {"n", "load"} and _f.__name__ == "_f"


def test_validate_params_with_positional_only_and_var_arguments():
    @validate_params({"n": Interval(Integral, 1, None), "scale": Interval(Real, 0, None)})
    def g(n, /, *values, scale=1.0, **extra):
        return n, values, scale, extra

    assert g(np.int64(2), 5, 6, scale=2, tag="t") == (2, (5, 6), 2.0, {"tag": "t"})
    with pytest.raises(ValueError, match=re.escape("The 'n' parameter of g must be an int >= 1. Got 0 instead.")):
        g(0)
    with pytest.raises(ValueError, match="'scale' parameter"):
        g(1, scale=-1)


def test_validate_params_rejects_unknown_names_and_owner_override():
    with pytest.raises(TypeError, match="no parameter"):
        validate_params({"m": Interval(Integral, 1, None)})(lambda n: n)

    @validate_params({"n": Interval(Integral, 1, None)}, owner="simulate")
    def inner(n):
        return n

    with pytest.raises(ValueError, match="^The 'n' parameter of simulate must"):
        inner(0)


def test_make_constraint_shorthands():
    assert make_constraint(None).description == "None"
    assert make_constraint(str).description == "an instance of str"
    assert make_constraint((int, float)).description == "an instance of int or float"
    with pytest.raises(TypeError):
        make_constraint("an int")


@pytest.mark.parametrize("module", ["gcc._constraints", "gcc._array_constraints", "gcc.validation",
                                    "gcc.points"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("value,constraint,detail", [
    ([1.0, 2j], ArrayLike(dtype=float), "it holds complex values"),
    ([0, 1.7], ArrayLike(dtype=int), "x[1] = 1.7 is not an int"),
    ([2.0], ArrayLike(dtype=int), "x[0] = 2.0 is not an int"),
    ([True, False], ArrayLike(dtype=int), "x[0] = True is not an int"),
    ([1, -1], ArrayLike(dtype=np.uint8), "x[1] = -1 is negative"),
    ([[0.0, np.nan]], ArrayLike(dtype=bool), "x[0, 1] = nan is not a bool"),
    ([0, 2], ArrayLike(dtype=bool), "x[1] = 2 is not a bool"),
    (["1", "2"], ArrayLike(dtype=float), "it holds strings"),
    ([1.0, np.inf], ArrayLike(dtype=float, finite=True), "x[1] = inf"),
    ([0.5, 0.25j], Points(), "it holds complex values"),
])
def test_arrays_are_never_cast_with_a_loss(value, constraint, detail):
    assert f"({detail}" in _message(value, constraint)


def test_arrays_that_convert_without_loss():
    assert ArrayLike(dtype=bool).convert([1, 0]).dtype == bool
    assert ArrayLike(dtype=int).convert(np.array([], dtype=float)).dtype.kind == "i"
    assert ArrayLike(dtype=complex).convert([1, 2j]).dtype == np.complex128
    assert ArrayLike(dtype=float).convert([True, 2]).tolist() == [1.0, 2.0]
    assert ArrayLike(ndim=2, dtype=float, finite=True).description == "a 2-D array of finite real numbers"
    assert "x = nan" in _message(np.nan, ArrayLike(dtype=float, finite=True))


def test_seed_and_attribute_constraints():
    from gcc.validation import SEED, SEED_OR_GENERATOR, HasAttributes, Seed

    rng = np.random.default_rng(0)
    assert validate(np.uint8(3), SEED, "seed", "f") == 3
    assert validate(rng, SEED_OR_GENERATOR, "seed", "f") is rng
    for bad in (-1, 1.0, "1", None, True, rng):
        assert not Seed().is_satisfied_by(bad)
    assert _message(None, SEED_OR_GENERATOR, "seed", "rcsc_code") == (
        "The 'seed' parameter of rcsc_code must be an int >= 0 or a numpy.random.Generator. Got None instead.")
    code = HasAttributes(("n_inputs", "n_workers", "encode", "decode"), callables=("encode", "decode"))
    assert code.description == "an object with n_inputs, n_workers, encode() and decode()"
    assert "(it has no 'n_inputs')" in _message(3, code)

    class Broken:
        n_inputs = n_workers = 1
        encode = decode = 3

    assert "(its 'encode' is not callable)" in _message(Broken(), code)


def test_huge_ints_are_no_finite_reals():
    assert not Interval(Real, None, None).is_satisfied_by(10 ** 400)
    assert Interval(Integral, 0, None).convert(10 ** 400) == 10 ** 400
