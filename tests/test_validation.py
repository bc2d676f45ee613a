"""The one validator (gcc.validation): its constraints, message, decorator, and a table of malformed
inputs through the public entry points, each raising the error that names the argument and the value.

Messages are compared exactly where the wording is the contract
("The 'n_workers' parameter of SplineCode must be an int >= n_inputs. Got 3 instead.").
"""
import doctest
import importlib
import re
import threading
from numbers import Integral, Real

import numpy as np
import pytest

import gcc
from gcc import validation as v
from gcc.validation import (COLUMNS, AnyOf, ArrayLike, Callable, HasAttributes, InstanceOf, Interval,
                            InvalidParameterError, ListOf, NoneOr, Options, Points, validate,
                            validate_params)

nan, inf = float("nan"), float("inf")


def _code(cls=gcc.SplineCode, K=4, N=10, **kw):
    return cls(K, N, **kw)


def _torch_with_inf():
    torch = pytest.importorskip("torch")
    X = torch.zeros(4, 3)
    X[1, 2] = inf
    return X


# (id, callable, argument name, text that must appear in the message)
CASES = [
    ("n_inputs zero", lambda: gcc.SplineCode(0, 5), "n_inputs", "Got 0 instead"),
    ("n_inputs float", lambda: gcc.SplineCode(3.0, 5), "n_inputs", "Got 3.0 instead"),
    ("n_inputs bool", lambda: gcc.BerrutCode(True, 5), "n_inputs", "Got True instead"),
    ("n_workers str", lambda: gcc.SplineCode(5, "10"), "n_workers", "Got '10' instead"),
    ("K > N for LCC", lambda: gcc.LagrangeCode(5, 3), "n_workers", ">= n_inputs. Got 3 instead"),
    ("n_workers zero", lambda: gcc.BSplineCode(2, 0), "n_workers", "Got 0 instead"),
    ("negative lam_enc", lambda: gcc.SplineCode(4, 10, lam_enc=-1e-3), "lam_enc", "-0.001"),
    ("nan lam_dec", lambda: gcc.SplineCode(4, 10, lam_dec=nan), "lam_dec", "nan"),
    ("string lam_dec", lambda: gcc.SplineCode(4, 10, lam_dec="gcv"), "lam_dec", "'gcv'"),
    ("unknown points", lambda: gcc.SplineCode(4, 10, points="random"), "points", "'random'"),
    ("alphas not ascending", lambda: _code(alphas=[-0.5, 0.2, 0.1, 0.6]), "alphas",
     "alphas[2] = 0.1 is not greater than alphas[1] = 0.2"),
    ("alphas outside [-1,1]", lambda: _code(alphas=[-0.5, 0.2, 0.3, 1.5]), "alphas", "alphas[3] = 1.5"),
    ("alphas inf", lambda: _code(alphas=[-0.5, 0.2, 0.3, inf]), "alphas", "inf"),
    ("alphas wrong length", lambda: _code(alphas=[-0.5, 0.5]), "alphas", "it has length 2"),
    ("betas duplicated", lambda: _code(K=2, N=4, betas=[-1, 0, 0, 1]), "betas", "betas[2] = 0.0 is duplicated"),
    ("betas 2-D", lambda: _code(K=2, N=4, betas=np.zeros((2, 2))), "betas", "shape (2, 2)"),
    ("X wrong leading dim", lambda: _code().encode(np.ones((3, 2))), "X", "its shape is (3, 2)"),
    ("X scalar", lambda: _code().encode(1.0), "X", "its shape is ()"),
    ("X nan", lambda: _code().encode(np.array([[0.0], [1.0], [nan], [2.0]])), "X", "X[2, 0] = nan"),
    ("X torch inf", lambda: _code().encode(_torch_with_inf()), "X", "X[1, 2] = inf"),
    ("X strings", lambda: _code().encode(np.array(["a", "b", "c", "d"])), "X", "'a'"),
    ("Y rows != len(received)", lambda: _code().decode(np.ones((3, 2)), [0, 4, 6, 8]), "Y",
     "its shape is (3, 2)"),
    ("Y nan", lambda: _code().decode(np.array([1.0, nan, 2.0]), [1, 2, 3]), "Y", "Y[1] = nan"),
    ("Y inf berrut", lambda: _code(gcc.BerrutCode).decode(np.array([1.0, -inf]), [1, 2]), "Y", "-inf"),
    ("received empty", lambda: _code().decode(np.ones((0, 2)), []), "received", "it is empty"),
    ("received unsorted", lambda: _code().decode(np.ones(2), [3, 1]), "received", "received[1] = 1 is not greater than received[0] = 3"),
    ("received duplicated", lambda: _code().decode(np.ones(2), [2, 2]), "received", "received[1] = 2 is duplicated"),
    ("received out of range", lambda: _code().decode(np.ones(2), [2, 10]), "received",
     "received[1] = 10 is outside [0, 9]"),
    ("received negative", lambda: _code().decode(np.ones(2), np.array([-1, 3])), "received", "received[0] = -1 is outside"),
    ("received float", lambda: _code().decoder_matrix([1, 2.5]), "received", "2.5 is not an int"),
    ("received 2-D", lambda: _code().decoder_matrix(np.array([[1, 2]])), "received", "[[1, 2]]"),
    ("received mask length", lambda: _code().decoder_matrix(np.ones(9, bool)), "received", "mask shape (9,)"),
    ("smoother negative lam", lambda: gcc.smoother_matrix([0, 1, 2], -1.0, [0.5]), "lam", "Got -1.0 instead"),
    ("smoother duplicated x", lambda: gcc.smoother_matrix([0, 1, 1, 2], 0.0, [0.5]), "x", "x[2] = 1.0 is duplicated"),
    ("smoother unsorted x", lambda: gcc.smoother_matrix([0, 2, 1], 0.0, [0.5]), "x",
     "x[2] = 1.0 is not greater than x[1] = 2.0"),
    ("smoother empty x", lambda: gcc.smoother_matrix([], 0.0, [0.5]), "x", "it has length 0"),
    ("smoother x_eval nan", lambda: gcc.smoother_matrix([0, 1, 2], 0.0, [0.5, nan]), "x_eval", "x_eval[1] = nan"),
    ("spline y wrong length", lambda: gcc.smoothing_spline([0, 1, 2], [1, 2], 0.1, [0.5]), "y",
     "its shape is (2,)"),
    ("spline y inf", lambda: gcc.smoothing_spline([0, 1, 2], [1, inf, 2], 0.1, [0.5]), "y", "y[1] = inf"),
    ("spline lam string", lambda: gcc.smoothing_spline([0, 1, 2], [1, 2, 3], "auto", [0.5]), "lam", "'auto'"),
    ("gcv too few points", lambda: gcc.gcv_lambda([0, 1], [1, 2]), "x", "it has length 2"),
    ("gcv negative grid", lambda: gcc.gcv_lambda([0, 1, 2, 3], [1, 2, 0, 1], grid=[1e-3, -1.0]), "grid", "-1."),
    ("chebyshev n zero", lambda: gcc.chebyshev_points(0), "n", "Got 0 instead"),
    ("chebyshev n float", lambda: gcc.chebyshev_points(2.5), "n", "Got 2.5 instead"),
    ("chebyshev kind 3", lambda: gcc.chebyshev_points(5, kind=3), "kind", "Got 3 instead"),
    ("equispaced endpoints", lambda: gcc.equispaced_points(5, endpoints="yes"), "endpoints", "'yes'"),
    ("lagrange degree", lambda: gcc.LagrangeCode(3, 6, degree=-1), "degree", "Got -1 instead"),
    ("threshold deg_f", lambda: gcc.LagrangeCode(3, 6).recovery_threshold(-2, 1), "deg_f", "Got -2 instead"),
    ("threshold stragglers", lambda: gcc.LagrangeCode(3, 6).recovery_threshold(2, 1.5), "stragglers", "1.5"),
    ("with_params unknown", lambda: gcc.SplineCode(3, 6).with_params(lam=1.0), "lam", "'lam': 1.0"),
]


@pytest.mark.parametrize("call,name,text", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_input_raises_named_value_error(call, name, text):
    with pytest.raises(ValueError) as info:
        call()
    msg = str(info.value)
    assert f"The '{name}' parameter of " in msg, msg
    assert text in msg, msg
    assert msg.rstrip().endswith("instead."), msg


def test_at_least_25_cases():
    assert len(CASES) >= 25


def test_message_format_matches_convention():
    with pytest.raises(ValueError, match=re.escape(
            "The 'n_workers' parameter of LagrangeCode must be an int >= n_inputs. Got 3 instead.")):
        gcc.LagrangeCode(5, 3)


def test_the_error_is_both_a_value_error_and_a_type_error():
    with pytest.raises(InvalidParameterError) as info:
        gcc.SplineCode(3.0, 5)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    for kind in (ValueError, TypeError):
        with pytest.raises(kind, match="'n_workers' parameter of LagrangeCode"):
            gcc.LagrangeCode(5, 3)


def _message(value, constraint, name="x", owner="f"):
    with pytest.raises(InvalidParameterError) as info:
        validate(value, constraint, name, owner)
    return str(info.value)


@pytest.mark.parametrize("constraint,text", [
    (Interval(Integral, 1, None), "an int >= 1"), (Interval(Integral, None, 5), "an int <= 5"),
    (Interval(Integral, 0, 8), "an int in [0, 8]"), (Interval(Integral, 0, None, closed="neither"), "an int > 0"),
    (Interval(Integral, None, None), "an int"), (Interval(Real, 0, None), "a finite real number >= 0"),
    (Interval(Real, None, 1, closed="left"), "a finite real number < 1"),
    (Interval(Real, 0, 1, closed="neither"), "a float in (0, 1)"), (Interval(Real, 0, 1, closed="right"), "a float in (0, 1]"),
    (Interval(Integral, 1, None, description="an int >= n_inputs"), "an int >= n_inputs"),
    (Options({"b", "a"}), "one of 'a', 'b'"), (Options(("rcsc", "mds")), "one of 'rcsc', 'mds'"),
    (Options(("gcv",)), "'gcv'"), (InstanceOf((list, tuple)), "an instance of list or tuple"),
    (InstanceOf(bool, "a bool"), "a bool"), (NoneOr(Interval(Integral, 1, None)), "an int >= 1 or None"),
    (AnyOf(Interval(Integral, 1, None), Options(("auto",)), None), "an int >= 1 or 'auto' or None"),
    (Callable(), "a callable"), (ArrayLike(shape=(None, 3)), "an array of shape (..., 3)"),
    (ArrayLike(shape=(4,)), "an array of shape (4,)"), (ArrayLike(ndim=2, dtype=float, finite=True),
                                                        "a 2-D array of finite real numbers"),
    (Points(), "a 1-D array of strictly increasing finite points in [-1, 1]"),
    (Points(None, None), "a 1-D array of strictly increasing finite points"),
    (ListOf(Interval(Integral, 0, 5)), "a non-empty sequence of ints in [0, 5]"),
    (ListOf(Interval(Real, 0, None), distinct=True), "a non-empty sequence of distinct finite reals >= 0"),
    (ListOf(InstanceOf(str, "a str"), min_len=0), "a sequence of str"),
    (v.SEED_OR_GENERATOR, "an int >= 0 or a numpy.random.Generator"), (COLUMNS, "a column name or a list of column names"),
    (HasAttributes(("n_inputs", "encode", "decode"), callables=("encode", "decode")),
     "an object with n_inputs, encode() and decode()"), (InstanceOf(str), "an instance of str"),
])
def test_descriptions(constraint, text):
    assert constraint.description == text


@pytest.mark.parametrize("value,constraint,expected", [
    (np.int64(4), Interval(Integral, 1, None), 4), (3, Interval(Real, 0, None), 3.0),
    (np.float32(0.5), Interval(Real, 0, 1), 0.5), (8, Interval(Integral, 0, 8), 8),
    ("RCSC", Options(("rcsc", "mds"), case_sensitive=False), "rcsc"), (np.int64(2), Options((1, 2)), 2),
    (None, NoneOr(Interval(Integral, 1, None)), None), ("gcv", AnyOf(Interval(Real, 0, None), Options(("gcv",))), "gcv"),
    (np.array([0, 20]), ListOf(Interval(Integral, 0, None)), [0, 20]), ((1, 28), ListOf(Interval(Integral, 1, None),
                                                                                         as_tuple=True), (1, 28)),
    ("loss", COLUMNS, ["loss"]), (np.uint8(3), v.SEED, 3), (10 ** 400, Interval(Integral, 0, None), 10 ** 400),
])
def test_conversions(value, constraint, expected):
    out = validate(value, constraint, "x", "f")
    assert out == expected and type(out) is type(expected)


@pytest.mark.parametrize("value,constraint", [
    (True, Interval(Integral, 0, None)), (np.bool_(True), Interval(Real, None, None)), (2.0, Interval(Integral, 1, None)),
    (float("nan"), Interval(Real, None, None)), (float("inf"), Interval(Real, 0, None)), (10 ** 400, Interval(Real)),
    (0, Interval(Real, 0, None, closed="neither")), (1, Interval(Real, 0, 1, closed="left")),
    ("3", Interval(Integral, None, None)), (3, Interval(Integral, 1, 0)), (True, Options((1, 2))), (1.0, Options((1, 2))),
    ("RCSC", Options(("rcsc",))), (np.array(["a"]), Options(("a",))), (1, Callable()), (0, InstanceOf(str)),
    ([[1, 2], [3]], ArrayLike(dtype=float)), ([0, 1.5], ListOf(Interval(Integral, 0, None))), ("ab", ListOf(COLUMNS)),
    ([], ListOf(Interval(Integral, 0, None))), ([1, 1], ListOf(Interval(Integral, 0, None), distinct=True)),
    (-1, v.SEED), (None, v.SEED), (np.random.default_rng(0), v.SEED), (3, COLUMNS), ("", v.NAME),
])
def test_rejections(value, constraint):
    assert not constraint.is_satisfied_by(value)
    assert re.match(r"^The 'x' parameter of f must be .* instead\.$", _message(value, constraint), re.S)


def test_the_contract_message_exactly():
    assert _message(3, Interval(Integral, 5, None, description="an int >= n_inputs"), "n_workers", "SplineCode") == (
        "The 'n_workers' parameter of SplineCode must be an int >= n_inputs. Got 3 instead.")
    assert _message(0, NoneOr(Interval(Integral, 1, None)), "load", "h") == (
        "The 'load' parameter of h must be an int >= 1 or None. Got 0 instead.")
    assert _message([-0.5, 0.5], Points(size=4, size_name="n_inputs"), "alphas", "SplineCode") == (
        "The 'alphas' parameter of SplineCode must be a 1-D array of strictly increasing finite points "
        "in [-1, 1] of length n_inputs = 4 (it has length 2). Got [-0.5, 0.5] instead.")
    assert _message([0, 1.5], ListOf(Interval(Integral, 0, None)), "stragglers", "g") == (
        "The 'stragglers' parameter of g must be a non-empty sequence of ints >= 0 (stragglers[1] = 1.5 is not an "
        "int). Got [0, 1.5] instead.")
    assert "(it has length 1)" in _message([0.0], NoneOr(Points(min_size=2)))   # one alternative explains it
    assert "(it has no 'encode')" in _message(3, HasAttributes(("encode",)))
    assert str(v.invalid("n", "f", Interval(Integral, 1, None), 0)) == (
        "The 'n' parameter of f must be an int >= 1. Got 0 instead.")
    assert "shape (20, 30)" in v.short_repr(np.zeros((20, 30)))


@pytest.mark.parametrize("value,constraint,detail", [
    ([1.0, 2j], ArrayLike(dtype=float), "it holds complex values"), ([0, 1.7], ArrayLike(dtype=int), "x[1] = 1.7 is not an int"),
    ([True, False], ArrayLike(dtype=int), "x[0] = True is not an int"),
    ([[0.0, np.nan]], ArrayLike(dtype=bool), "x[0, 1] = nan is not a bool"), (["1", "2"], ArrayLike(dtype=float), "it holds strings"),
    ([1.0, np.inf], ArrayLike(dtype=float, finite=True), "x[1] = inf"), ([0.5, 0.25j], Points(), "it holds complex values"),
    ([0.0, 1.0, 1.0], Points(None, None), "x[2] = 1.0 is duplicated"),
])
def test_arrays_are_never_cast_with_a_loss(value, constraint, detail):
    assert f"({detail}" in _message(value, constraint)


def test_shorthands():
    assert v.check_int(np.int64(4), "n", "f", minimum=1) == 4 and type(v.check_int(np.int64(4), "n", "f")) is int
    with pytest.raises(ValueError, match=re.escape("'p' parameter of f must be a float in [0, 1). Got 1.0")):
        v.check_real(1.0, "p", "f", 0, 1, include_max=False)
    assert v.check_received(np.array([0, 3, 7]), 8, "f") == v.check_received([0, 3, 7], 8, "f") == (0, 3, 7)
    assert v.check_received(np.array([True, False, True]), 3, "f") == (0, 2)
    with pytest.raises(ValueError, match=re.escape("must be a finite real number >= 0. Got 'gcv'")):
        validate("gcv", v.LAM, "lam", "f")
    rng = np.random.default_rng(1)
    assert validate(rng, v.GENERATOR, "rng", "f") is rng and validate(rng, v.SEED_OR_GENERATOR, "seed", "f") is rng
    with pytest.raises(ValueError, match=r"^The 'X' parameter of g must be free of NaN and inf \(X\[1\] = nan\)"):
        v.check_finite([0.0, float("nan")], "X", "g")
    assert v.check_labels([0, 2], 2, "y", "f", n_classes=3).dtype == np.int64
    for bad, detail in (([0, 1.5], "y[1] = 1.5 is not an int"), ([0, -1], "y[1] = -1"), ([0], "its shape is (1,)")):
        with pytest.raises(ValueError, match=re.escape(detail)):
            v.check_labels(bad, 2, "y", "f")


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
    with pytest.raises(ValueError, match=re.escape("The 'load' parameter of _f must be an int >= 1 or None.")):
        _f(1, 0)
    assert type(_Model(2).rate) is float
    with pytest.raises(ValueError, match=re.escape("The 'kind' parameter of _Model must be one of 'a', 'b'.")):
        _Model(kind="c")
    with pytest.raises(ValueError, match=re.escape("The 'n' parameter of _Model.step must be an int >= 0.")):
        _Model().step(-1)
    with pytest.raises(TypeError):                         # a wrong call is still Python's TypeError
        _f()
    assert _f.__name__ == "_f"
    with pytest.raises(TypeError, match="no parameter"):
        validate_params({"m": Interval(Integral, 1, None)})(lambda n: n)

    @validate_params({"n": Interval(Integral, 1, None), "scale": Interval(Real, 0, None)})
    def g(n, /, *values, scale=1.0, **extra):
        return n, values, scale, extra

    assert g(np.int64(2), 5, scale=2, tag="t") == (2, (5,), 2.0, {"tag": "t"})
    with pytest.raises(ValueError, match="^The 'n' parameter of g must"):
        g(0)


def test_nested_calls_skip_validation_only_inside_an_entry_point_that_asks():
    calls = []

    @validate_params({"n": Interval(Integral, 0, None)})
    def inner(n):
        calls.append(n)
        return n

    @validate_params({"n": Interval(Integral, 0, None)}, skip_nested=True)
    def outer(n):
        return inner(-n - 1)           # the library's own value: not checked again

    assert outer(2) == -3 and calls == [-3]
    with pytest.raises(ValueError, match="'n' parameter of outer"):
        outer(-1)
    with pytest.raises(ValueError, match="'n' parameter of inner"):     # the flag is reset after the call
        inner(-1)
    seen = []                       # a call in another thread validates again

    def in_thread():
        try:
            inner(-1)
        except ValueError as err:
            seen.append(str(err))

    @validate_params({}, skip_nested=True)
    def spawns():
        thread = threading.Thread(target=in_thread)
        thread.start()
        thread.join()

    spawns()
    assert len(seen) == 1 and "'n' parameter of inner" in seen[0]


def test_entry_names_the_function_the_user_called():
    assert v.caller("run_trials") == "run_trials"
    with v.entry("select_lambdas"), v.entry("inner"):
        assert v.caller("run_trials") == "select_lambdas"
    assert v.caller("run_trials") == "run_trials"


@pytest.mark.parametrize("module", ["gcc.validation", "gcc.points"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
